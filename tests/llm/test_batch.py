"""Provider batch APIs (`agentcore.llm.batch`) through the real openai SDK against a local
server speaking the Batch API's wire format."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from agentcore.errors import UsageError
from agentcore.llm.batch import (
    BatchJob,
    BatchRequest,
    BatchTimeoutError,
    UnsupportedBatchError,
    batch_prices,
    batch_results,
    batch_status,
    cancel_batch,
    submit_batch,
    wait_batch,
)
from agentcore.llm.model import Model, ModelCost
from agentcore.llm.types import Context, StreamOptions
from agentcore.messages import UserMessage

from .batch_server import OpenAIBatchServer


@pytest.fixture
def server() -> Iterator[OpenAIBatchServer]:
    with OpenAIBatchServer() as s:
        yield s


def _model(server: OpenAIBatchServer) -> Model:
    return Model(
        id="gpt-test",
        api="openai-completions",
        provider="openai",
        base_url=server.base_url,
        cost=ModelCost(input=2.0, output=8.0),
    )


def _request(i: str) -> BatchRequest:
    return BatchRequest(
        id=i,
        context=Context(messages=[UserMessage(content=f"question {i}")]),
        options=StreamOptions(api_key="sk-test", max_tokens=50),
    )


def _ok(custom_id: str, text: str) -> dict[str, Any]:
    return {
        "id": f"req_{custom_id}",
        "custom_id": custom_id,
        "response": {
            "status_code": 200,
            "request_id": "r",
            "body": {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": "gpt-test",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 1500},
            },
        },
        "error": None,
    }


def _failed(custom_id: str, code: str, message: str) -> dict[str, Any]:
    return {
        "id": f"req_{custom_id}",
        "custom_id": custom_id,
        "response": {
            "status_code": 400,
            "request_id": "r",
            "body": {"error": {"message": message, "type": "invalid_request_error", "code": code}},
        },
        "error": None,
    }


OPTS = StreamOptions(api_key="sk-test")
pytestmark = pytest.mark.anyio


async def test_submit_wait_results_matched_by_id(server: OpenAIBatchServer) -> None:
    model = _model(server)
    ids = [f"q{i}" for i in range(8)]
    job = await submit_batch(model, [_request(i) for i in ids])
    assert job.status == "in_progress" and job.raw_status == "validating"
    lines = server.input_lines(job.id)
    assert [x["custom_id"] for x in lines] == ids
    assert lines[0]["url"] == "/v1/chat/completions" and lines[0]["method"] == "POST"
    body = lines[0]["body"]
    assert body["model"] == "gpt-test" and "stream" not in body and "stream_options" not in body
    assert body["messages"][-1] == {"role": "user", "content": "question q0"}
    server.batches[job.id]["status"] = "in_progress"
    assert (await batch_status(model, job, options=OPTS)).status == "in_progress"
    server.batches[job.id]["status"] = "finalizing"
    assert (await batch_status(model, job, options=OPTS)).status == "ending"
    with pytest.raises(UsageError, match="has not ended"):
        await batch_results(model, job, options=OPTS)
    outputs = [_ok(i, f"answer {i}") for i in ids if i != "q3"]
    random.Random(7).shuffle(outputs)
    server.finish(
        job.id, "completed", outputs, [_failed("q3", "context_length_exceeded", "too long")]
    )
    done = await wait_batch(model, job, timeout=5, poll_interval=0.01, options=OPTS)
    assert done.status == "ended"
    results = await batch_results(model, done, options=OPTS)
    assert list(results) == ids
    for i in ids:
        if i == "q3":
            assert results[i].stop_reason == "error"
            assert results[i].error_message == "400 context_length_exceeded: too long"
        else:
            assert results[i].text == f"answer {i}" and results[i].stop_reason == "stop"
            usage = results[i].usage
            assert (usage.input, usage.output) == (1000, 500)
            assert usage.cost.total == pytest.approx((1000 * 1.0 + 500 * 4.0) / 1e6)


async def test_expired_batch_keeps_finished_answers(server: OpenAIBatchServer) -> None:
    model = _model(server)
    job = await submit_batch(model, [_request("a"), _request("b"), _request("c")])
    server.finish(
        job.id,
        "expired",
        [_ok("b", "done")],
        [
            {
                "id": "x",
                "custom_id": "a",
                "response": None,
                "error": {
                    "code": "batch_expired",
                    "message": "This request could not be executed before the completion "
                    "window expired.",
                },
            }
        ],
    )
    job = await wait_batch(model, job, timeout=5, poll_interval=0.01, options=OPTS)
    assert job.status == "expired"
    results = await batch_results(model, job, options=OPTS)
    assert results["b"].text == "done"
    assert results["a"].stop_reason == "error" and "batch_expired" in (
        results["a"].error_message or ""
    )
    assert results["c"].error_message == "no result for request 'c' (batch expired)"


async def test_cancel_and_unknown_ids_ignored(server: OpenAIBatchServer) -> None:
    model = _model(server)
    job = await submit_batch(model, [_request("a"), _request("b")])
    cancelling = await cancel_batch(model, job, options=OPTS)
    assert cancelling.status == "ending" and cancelling.raw_status == "cancelling"
    server.finish(
        job.id, "cancelled", [_ok("a", "early"), _ok("zz", "not ours"), _ok("a", "again")]
    )
    results = await batch_results(model, await batch_status(model, job, options=OPTS), options=OPTS)
    assert set(results) == {"a", "b"} and results["a"].text == "early"
    assert results["b"].stop_reason == "error"


async def test_wait_is_bounded(server: OpenAIBatchServer) -> None:
    model = _model(server)
    job = await submit_batch(model, [_request("a")])
    with pytest.raises(BatchTimeoutError) as info:
        await wait_batch(model, job, timeout=0.2, poll_interval=0.05, options=OPTS)
    assert info.value.job.status == "in_progress"


async def test_results_file_size_is_bounded(server: OpenAIBatchServer) -> None:
    model = _model(server)
    job = await submit_batch(model, [_request("a")])
    server.finish(job.id, "completed", [_ok("a", "x" * 5000)])
    with pytest.raises(UsageError, match="larger than 1000 bytes"):
        await batch_results(model, job, options=OPTS, max_bytes=1000)


async def test_malformed_lines_become_errors(server: OpenAIBatchServer) -> None:
    model = _model(server)
    job = await submit_batch(model, [_request("a"), _request("b")])
    server.finish(
        job.id,
        "completed",
        [
            {
                "custom_id": "a",
                "response": {"status_code": 200, "body": {"choices": "no"}},
                "error": None,
            }
        ],
    )
    server.files[server.batches[job.id]["output_file_id"]] += b"not json\n"
    results = await batch_results(model, job, options=OPTS)
    assert results["a"].error_message == "malformed result: a response body without choices"
    assert results["b"].stop_reason == "error"


async def test_misuse() -> None:
    model = Model(id="m", api="openai-responses", provider="openai")
    with pytest.raises(UnsupportedBatchError, match="has no batch API"):
        await submit_batch(model, [_request("a")])
    openai = Model(id="m", api="openai-completions", provider="openai")
    with pytest.raises(UsageError, match="empty batch"):
        await submit_batch(openai, [])
    with pytest.raises(UsageError, match="duplicate batch request id 'a'"):
        await submit_batch(openai, [_request("a"), _request("a")])
    with pytest.raises(UsageError, match="is invalid"):
        await submit_batch(openai, [_request("a b")])
    with pytest.raises(UsageError, match="positive timeout"):
        await wait_batch(
            openai,
            BatchJob(
                id="x",
                api="openai-completions",
                provider="openai",
                model="m",
                status="in_progress",
                ids=("a",),
            ),
            timeout=0,
        )


def test_prices_and_job_round_trip() -> None:
    model = Model(
        id="m",
        api="openai-completions",
        provider="openai",
        cost=ModelCost(input=3, output=15, cache_read=0.3),
    )
    assert batch_prices(model) == ModelCost(input=1.5, output=7.5, cache_read=0.15)
    job = BatchJob(
        id="b",
        api="openai-completions",
        provider="openai",
        model="m",
        status="ended",
        ids=("a", "b"),
        counts={"total": 2},
    )
    assert BatchJob.from_dict(job.to_dict()) == job
    assert anyio is not None


async def test_requests_of_one_batch_share_key_and_headers(server: OpenAIBatchServer) -> None:
    model = _model(server)
    other_key = BatchRequest(
        id="b",
        context=Context(messages=[UserMessage(content="q")]),
        options=StreamOptions(api_key="sk-other"),
    )
    with pytest.raises(UsageError, match="request 'b' has another api_key than request 'a'"):
        await submit_batch(model, [_request("a"), other_key])
    other_headers = BatchRequest(
        id="c",
        context=Context(messages=[UserMessage(content="q")]),
        options=StreamOptions(api_key="sk-test", headers={"x-tenant": "2"}),
    )
    with pytest.raises(UsageError, match="request 'c' has other headers than request 'a'"):
        await submit_batch(model, [_request("a"), other_headers])
    assert server.paths == []  # nothing was uploaded


def test_catalogue_batch_prices() -> None:
    from agentcore.llm.models import get_model

    for provider, model_id in (
        ("openai", "gpt-5"),
        ("anthropic", "claude-sonnet-4-5"),
        ("google", "gemini-2.5-flash"),
    ):
        model = get_model(provider, model_id)
        assert model.batch_cost is not None, (provider, model_id)
        assert batch_prices(model) is model.batch_cost
        assert model.batch_cost.input == model.cost.input / 2
        assert model.batch_cost.output == model.cost.output / 2
        assert model.batch_cost.cache_read == model.cost.cache_read / 2
    stated = Model(
        id="m",
        api="openai-completions",
        provider="openai",
        cost=ModelCost(input=3, output=15),
        batch_cost=ModelCost(input=1, output=5),
    )
    assert batch_prices(stated) == ModelCost(input=1, output=5)


def test_job_from_bad_data_is_a_clear_error() -> None:
    with pytest.raises(UsageError, match="not a BatchJob"):
        BatchJob.from_dict({"id": "b"})
    good = BatchJob(
        id="b", api="openai-completions", provider="openai", model="m", status="ended", ids=()
    ).to_dict()
    with pytest.raises(UsageError, match="unknown status 'done'"):
        BatchJob.from_dict({**good, "status": "done"})


def test_a_session_keeps_a_models_batch_prices() -> None:
    import json

    from agentcore.llm.models import get_model
    from agentcore.sessions._base import model_from_json, model_to_json

    for model in (
        get_model("anthropic", "claude-sonnet-4-5"),
        Model(id="m", api="openai-completions", provider="openai"),
    ):
        restored, _ = model_from_json(json.loads(json.dumps(model_to_json(model))), "test")
        assert restored.batch_cost == model.batch_cost
        assert restored == model


async def test_a_failed_job_says_why_for_every_request(server: OpenAIBatchServer) -> None:
    model = _model(server)
    job = await submit_batch(model, [_request("a"), _request("b")])
    server.batches[job.id]["status"] = "failed"
    server.batches[job.id]["errors"] = {
        "object": "list",
        "data": [{"code": "invalid_json_line", "message": "bad line", "param": None, "line": 2}],
    }
    failed = await wait_batch(model, job, timeout=5, poll_interval=0.01, options=OPTS)
    assert failed.status == "failed"
    assert failed.error == "invalid_json_line: bad line (line 2)"
    assert BatchJob.from_dict(failed.to_dict()) == failed
    results = await batch_results(model, failed, options=OPTS)
    assert results["a"].error_message == (
        "no result for request 'a' (batch failed: invalid_json_line: bad line (line 2))"
    )
    assert results["b"].stop_reason == "error"
