"""Gemini batch mode (`agentcore.llm.batch`) through the real google-genai SDK against a local
server speaking the Gemini API's batch wire format (inline requests, the `batches/<id>`
operation, `BATCH_STATE_*`, inline responses keyed by `metadata.key`), and the contract every
batch provider keeps, parametrized over the OpenAI, Anthropic and Gemini servers."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import pytest

from agentcore.errors import UsageError
from agentcore.llm.batch import (
    BatchRequest,
    BatchTimeoutError,
    UnsupportedBatchError,
    batch_results,
    batch_status,
    cancel_batch,
    submit_batch,
    wait_batch,
)
from agentcore.llm.model import Model, ModelCost
from agentcore.llm.types import Context, SimpleStreamOptions, StreamOptions
from agentcore.messages import UserMessage
from agentcore.tools import Tool

from .batch_server import AnthropicBatchServer, GeminiBatchServer, OpenAIBatchServer

pytestmark = pytest.mark.anyio
OPTS = StreamOptions(api_key="gm-test")


@pytest.fixture
def server() -> Iterator[GeminiBatchServer]:
    with GeminiBatchServer() as s:
        yield s


def _model(server: GeminiBatchServer) -> Model:
    return Model(
        id="gemini-test",
        api="google-generative-ai",
        provider="google",
        base_url=server.base_url,
        cost=ModelCost(input=0.3, output=2.5, cache_read=0.03),
    )


def _request(i: str, options: StreamOptions = OPTS) -> BatchRequest:
    return BatchRequest(
        id=i,
        context=Context(system_prompt="be brief", messages=[UserMessage(content=f"question {i}")]),
        options=options,
    )


def _ok(key: str, text: str) -> dict[str, Any]:
    return {
        "metadata": {"key": key},
        "response": {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [
                            {"text": "hmm", "thought": True, "thoughtSignature": "c2ln"},
                            {"text": text},
                            {"functionCall": {"name": "look", "args": {"q": key}}},
                        ],
                    },
                    "finishReason": "STOP",
                }
            ],
            "usageMetadata": {
                "promptTokenCount": 1100,
                "cachedContentTokenCount": 1000,
                "candidatesTokenCount": 15,
                "thoughtsTokenCount": 5,
            },
            "modelVersion": "gemini-test",
        },
    }


def _errored(key: str, message: str) -> dict[str, Any]:
    return {
        "metadata": {"key": key},
        "error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"},
    }


async def test_submit_states_results_by_key(server: GeminiBatchServer) -> None:
    model = _model(server)
    ids = [f"g{i}" for i in range(5)]
    job = await submit_batch(model, [_request(i) for i in ids])
    assert job.id == "batches/batch1" and job.status == "in_progress"
    assert job.raw_status == "JOB_STATE_PENDING"
    assert server.paths[0] == "POST /v1beta/models/gemini-test:batchGenerateContent"
    assert server.headers[0]["x-goog-api-key"] == "gm-test"
    sent = server.requests(job.id)
    assert [r["metadata"] for r in sent] == [{"key": i} for i in ids]
    first = sent[0]["request"]
    assert first["model"] == "models/gemini-test"
    assert first["systemInstruction"]["parts"] == [{"text": "be brief"}]
    assert first["contents"] == [{"role": "user", "parts": [{"text": "question g0"}]}]
    assert "automaticFunctionCalling" not in str(first)
    server.set_state(job.id, "BATCH_STATE_RUNNING")
    running = await batch_status(model, job, options=OPTS)
    assert (running.status, running.raw_status) == ("in_progress", "JOB_STATE_RUNNING")
    with pytest.raises(UsageError, match="has not ended"):
        await batch_results(model, job, options=OPTS)
    lines = [_ok(i, f"answer {i}") for i in ids[:3]]
    lines.append(_errored("g3", "Request contains an invalid argument."))
    random.Random(5).shuffle(lines)
    server.finish(job.id, "BATCH_STATE_SUCCEEDED", lines)
    done = await wait_batch(model, job, timeout=5, poll_interval=0.01, options=OPTS)
    assert done.status == "ended"
    results = await batch_results(model, done, options=OPTS)
    assert list(results) == ids
    for i in ids[:3]:
        message = results[i]
        assert message.text == f"answer {i}" and message.stop_reason == "tool_use"
        assert message.tool_calls[0].name == "look" and message.tool_calls[0].arguments == {"q": i}
        assert message.content[0].thinking == "hmm"  # type: ignore[union-attr]
        assert (message.usage.input, message.usage.cache_read, message.usage.output) == (
            100,
            1000,
            20,
        )
        assert message.usage.cost.total == pytest.approx(
            (100 * 0.15 + 1000 * 0.015 + 20 * 1.25) / 1e6
        )
    assert results["g3"].error_message == "errored: 400: Request contains an invalid argument."
    assert results["g4"].error_message == "no result for request 'g4' (batch ended)"


@pytest.mark.parametrize(
    ("state", "status"),
    [
        ("BATCH_STATE_EXPIRED", "expired"),
        ("BATCH_STATE_FAILED", "failed"),
        ("BATCH_STATE_CANCELLED", "cancelled"),
    ],
)
async def test_final_states_keep_finished_answers(
    server: GeminiBatchServer, state: str, status: str
) -> None:
    model = _model(server)
    job = await submit_batch(model, [_request("a"), _request("b")])
    server.finish(job.id, state, [_ok("a", "done")])
    job = await wait_batch(model, job, timeout=5, poll_interval=0.01, options=OPTS)
    assert job.status == status
    results = await batch_results(model, job, options=OPTS)
    assert results["a"].text == "done"
    assert results["b"].error_message == f"no result for request 'b' (batch {status})"


async def test_cancel(server: GeminiBatchServer) -> None:
    model = _model(server)
    job = await submit_batch(model, [_request("a")])
    cancelled = await cancel_batch(model, job, options=OPTS)
    assert server.paths[-2] == "POST /v1beta/batches/batch1:cancel"
    assert cancelled.status == "cancelled" and cancelled.raw_status == "JOB_STATE_CANCELLED"
    results = await batch_results(model, cancelled, options=OPTS)
    assert results["a"].stop_reason == "error"


async def test_wait_and_results_are_bounded(server: GeminiBatchServer) -> None:
    model = _model(server)
    job = await submit_batch(model, [_request("a")])
    with pytest.raises(BatchTimeoutError) as info:
        await wait_batch(model, job, timeout=0.1, poll_interval=0.02, options=OPTS)
    assert info.value.job.status == "in_progress"
    server.finish(job.id, "BATCH_STATE_SUCCEEDED", [_ok("a", "x" * 5000)])
    with pytest.raises(UsageError, match="response of batch batches/batch1 is larger than 1000"):
        await batch_results(model, job, options=OPTS, max_bytes=1000)


async def test_thinking_tools_and_limits_reach_the_batch(server: GeminiBatchServer) -> None:
    model = replace(_model(server), id="gemini-2.5-flash", reasoning=True)
    tool = Tool(
        name="look",
        description="look it up",
        parameters={"type": "object", "properties": {"q": {"type": "string"}}},
    )
    thinking = BatchRequest(
        id="t",
        context=Context(messages=[UserMessage(content="think")], tools=[tool]),
        options=SimpleStreamOptions(api_key="gm-test", reasoning="high", max_tokens=2000),
    )
    job = await submit_batch(model, [thinking, _request("plain")])
    sent = {r["metadata"]["key"]: r["request"] for r in server.requests(job.id)}
    config = sent["t"]["generationConfig"]
    assert config["maxOutputTokens"] == 2000
    # the SDK sends thinkingConfig's fields by their Python names (proto JSON takes both)
    assert config["thinkingConfig"] == {"include_thoughts": True, "thinking_budget": 24576}
    assert sent["t"]["tools"][0]["functionDeclarations"][0]["name"] == "look"
    assert "thinkingConfig" not in sent["plain"]["generationConfig"]
    huge = BatchRequest(
        id="huge",
        context=Context(messages=[UserMessage(content="x" * (21 * 1024 * 1024))]),
        options=OPTS,
    )
    with pytest.raises(UsageError, match="larger than the 20971520 bytes Gemini takes inline"):
        await submit_batch(model, [huge])
    with pytest.raises(UsageError, match="request 'k' has another api_key"):
        await submit_batch(model, [_request("a"), _request("k", StreamOptions(api_key="other"))])
    assert len(server.submitted) == 1  # nothing else was sent


async def test_vertex_is_refused() -> None:
    model = Model(id="gemini-2.5-flash", api="google-generative-ai", provider="google-vertex")
    with pytest.raises(UnsupportedBatchError, match="through Vertex AI"):
        await submit_batch(model, [_request("a")])


# --- the contract of every provider ------------------------------------------------------------


@dataclass(frozen=True)
class _Provider:
    """How a contract test drives one provider's server."""

    server: Callable[[], Any]
    model: Callable[[Any], Model]
    ok: Callable[[str, str], dict[str, Any]]
    finish: Callable[[Any, str, list[dict[str, Any]]], None]


def _openai_ok(custom_id: str, text: str) -> dict[str, Any]:
    message = {"role": "assistant", "content": text}
    body = {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
    return {"custom_id": custom_id, "response": {"status_code": 200, "body": body}, "error": None}


def _anthropic_ok(custom_id: str, text: str) -> dict[str, Any]:
    message = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    return {"custom_id": custom_id, "result": {"type": "succeeded", "message": message}}


def _gemini_ok(key: str, text: str) -> dict[str, Any]:
    content = {"role": "model", "parts": [{"text": text}]}
    response = {"candidates": [{"content": content, "finishReason": "STOP"}]}
    return {"metadata": {"key": key}, "response": response}


PROVIDERS = {
    "openai": _Provider(
        OpenAIBatchServer,
        lambda s: Model(
            id="gpt-test", api="openai-completions", provider="openai", base_url=s.base_url
        ),
        _openai_ok,
        lambda s, job_id, lines: s.finish(job_id, "completed", lines),
    ),
    "anthropic": _Provider(
        AnthropicBatchServer,
        lambda s: Model(
            id="claude-test", api="anthropic-messages", provider="anthropic", base_url=s.base_url
        ),
        _anthropic_ok,
        lambda s, job_id, lines: s.finish(job_id, lines),
    ),
    "gemini": _Provider(
        GeminiBatchServer,
        _model,
        _gemini_ok,
        lambda s, job_id, lines: s.finish(job_id, "BATCH_STATE_SUCCEEDED", lines),
    ),
}


@pytest.mark.parametrize("name", list(PROVIDERS))
async def test_every_provider_matches_by_id_never_by_order(name: str) -> None:
    provider = PROVIDERS[name]
    with provider.server() as server:
        model = provider.model(server)
        ids = ["a", "b", "c", "d"]
        job = await submit_batch(model, [_request(i) for i in ids])
        lines = [provider.ok(i, f"answer {i}") for i in ("c", "a", "b")]
        lines.insert(1, provider.ok("zz", "not ours"))
        lines.append(provider.ok("a", "a second answer"))
        random.Random(11).shuffle(lines[:4])
        provider.finish(server, job.id, lines)
        job = await wait_batch(model, job, timeout=5, poll_interval=0.01, options=OPTS)
        results = await batch_results(model, job, options=OPTS)
        assert list(results) == ids
        assert [results[i].text for i in "abc"] == ["answer a", "answer b", "answer c"]
        assert results["d"].stop_reason == "error"
        assert results["d"].error_message == "no result for request 'd' (batch ended)"
