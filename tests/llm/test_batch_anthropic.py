"""Anthropic Message Batches (`agentcore.llm.batch`) through the real anthropic SDK against a
local server speaking the Message Batches wire format."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from agentcore.errors import UsageError
from agentcore.llm.batch import (
    BatchRequest,
    batch_results,
    batch_status,
    cancel_batch,
    submit_batch,
    wait_batch,
)
from agentcore.llm.model import Model, ModelCost
from agentcore.llm.types import Context, StreamOptions
from agentcore.messages import UserMessage

from .batch_server import AnthropicBatchServer

pytestmark = pytest.mark.anyio
OPTS = StreamOptions(api_key="sk-ant-test")


@pytest.fixture
def server() -> Iterator[AnthropicBatchServer]:
    with AnthropicBatchServer() as s:
        yield s


def _model(server: AnthropicBatchServer) -> Model:
    return Model(
        id="claude-test",
        api="anthropic-messages",
        provider="anthropic",
        base_url=server.base_url,
        cost=ModelCost(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75),
    )


def _request(i: str) -> BatchRequest:
    return BatchRequest(
        id=i,
        context=Context(system_prompt="be brief", messages=[UserMessage(content=f"question {i}")]),
        options=OPTS,
    )


def _ok(custom_id: str, text: str) -> dict[str, Any]:
    return {
        "custom_id": custom_id,
        "result": {
            "type": "succeeded",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-test",
                "content": [
                    {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                    {"type": "text", "text": text},
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "look",
                        "input": {"q": custom_id},
                    },
                ],
                "stop_reason": "tool_use",
                "stop_sequence": None,
                "usage": {
                    "input_tokens": 100,
                    "output_tokens": 20,
                    "cache_read_input_tokens": 1000,
                    "cache_creation_input_tokens": 0,
                },
            },
        },
    }


async def test_submit_results_by_id_with_partial_failures(server: AnthropicBatchServer) -> None:
    model = _model(server)
    ids = [f"r{i}" for i in range(6)]
    job = await submit_batch(model, [_request(i) for i in ids])
    assert job.status == "in_progress" and job.counts["processing"] == 6
    params = server.submitted[job.id][0]
    assert server.submitted[job.id][0]["custom_id"] == "r0"
    assert params["params"]["model"] == "claude-test" and "stream" not in params["params"]
    assert params["params"]["system"][0]["text"] == "be brief"
    assert server.headers[0]["authorization"] == "Bearer sk-ant-test"
    with pytest.raises(UsageError, match="has not ended"):
        await batch_results(model, job, options=OPTS)
    lines = [_ok(i, f"answer {i}") for i in ids[:3]]
    lines.append(
        {
            "custom_id": "r3",
            "result": {
                "type": "errored",
                "error": {
                    "type": "error",
                    "error": {"type": "invalid_request_error", "message": "max_tokens: too large"},
                },
            },
        }
    )
    lines.append({"custom_id": "r4", "result": {"type": "expired"}})
    random.Random(3).shuffle(lines)
    server.finish(job.id, lines)
    done = await wait_batch(model, job, timeout=5, poll_interval=0.01, options=OPTS)
    assert done.status == "expired" and done.counts["succeeded"] == 3
    results = await batch_results(model, done, options=OPTS)
    assert list(results) == ids
    for i in ids[:3]:
        message = results[i]
        assert message.text == f"answer {i}" and message.stop_reason == "tool_use"
        assert message.tool_calls[0].arguments == {"q": i}
        assert message.content[0].thinking_signature == "sig"  # type: ignore[union-attr]
        assert message.usage.cost.total == pytest.approx((100 * 1.5 + 20 * 7.5 + 1000 * 0.15) / 1e6)
    assert results["r3"].error_message == "errored: invalid_request_error: max_tokens: too large"
    assert results["r4"].error_message == "expired: the batch ended before this request ran"
    assert results["r5"].error_message == "no result for request 'r5' (batch expired)"


async def test_cancel(server: AnthropicBatchServer) -> None:
    model = _model(server)
    job = await submit_batch(model, [_request("a"), _request("b")])
    cancelling = await cancel_batch(model, job, options=OPTS)
    assert cancelling.status == "ending" and cancelling.raw_status == "canceling"
    server.finish(job.id, [_ok("a", "early"), {"custom_id": "b", "result": {"type": "canceled"}}])
    job = await batch_status(model, job, options=OPTS)
    assert job.status == "cancelled"
    results = await batch_results(model, job, options=OPTS)
    assert results["a"].text == "early"
    assert results["b"].stop_reason == "error" and "canceled" in (results["b"].error_message or "")


async def test_results_bounded(server: AnthropicBatchServer) -> None:
    model = _model(server)
    job = await submit_batch(model, [_request("a")])
    server.finish(job.id, [_ok("a", "x" * 4000)])
    with pytest.raises(UsageError, match="larger than 500 bytes"):
        await batch_results(model, job, options=OPTS, max_bytes=500)


async def test_thinking_level_and_its_beta_reach_the_batch(server: AnthropicBatchServer) -> None:
    from dataclasses import replace

    from agentcore.llm.types import SimpleStreamOptions

    model = replace(_model(server), id="claude-sonnet-4-5", reasoning=True, max_tokens=64000)
    plain = _request("plain")
    thinking = BatchRequest(
        id="thinking",
        context=Context(messages=[UserMessage(content="think")]),
        options=SimpleStreamOptions(api_key="sk-ant-test", reasoning="high", max_tokens=2000),
    )
    job = await submit_batch(model, [plain, thinking])
    sent = {r["custom_id"]: r["params"] for r in server.submitted[job.id]}
    assert "thinking" not in sent["plain"]
    assert sent["thinking"]["thinking"]["type"] == "enabled"
    assert sent["thinking"]["thinking"]["budget_tokens"] > 0
    assert "interleaved-thinking-2025-05-14" in server.headers[-1]["anthropic-beta"]
    with pytest.raises(UsageError, match="request 'x' has another api_key"):
        await submit_batch(
            model,
            [
                plain,
                BatchRequest(id="x", context=plain.context, options=StreamOptions(api_key="k")),
            ],
        )
