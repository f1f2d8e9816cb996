"""Mistral, as an OpenAI-compatible model on the `openai-completions` adapter (through the real
`openai` SDK) against a replay server serving Mistral's wire format: chunks whose last one
carries the finish reason *and* the usage (no `stream_options`), whole tool calls with 9-letter
ids, and errors as `{"object": "error", "message": ..., "type": ..., "code": ...}`.

The fault suite of `test_faults.py` runs here too, with a Mistral-shaped wire (see `MistralWire`).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from agentcore.abort import AbortController
from agentcore.llm import (
    AssistantMessageEvent,
    Context,
    Model,
    OpenAICompletionsCompat,
    StreamOptions,
    Tool,
    get_model,
    get_models,
    is_context_overflow,
    stream,
)
from agentcore.messages import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolResultMessage,
    UserMessage,
)

from . import fault_server
from . import test_faults as faults
from .fault_server import Answer, Call, CompletionsWire, FaultServer
from .helpers import collect, collect_aborting
from .replay_server import FIXTURES, ReplayServer, ScriptedResponse, load_fixture

pytestmark = pytest.mark.anyio

KEY = "mistral-test-KEY-0123456789"
WEATHER = Tool(
    name="get_weather",
    description="The weather in a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)


def mistral(server: ReplayServer, model_id: str = "mistral-small-latest") -> Model:
    """A catalogue Mistral model, sent to the replay server."""
    return dataclasses.replace(get_model("mistral", model_id), base_url=server.base_url())


def sse(name: str, **kwargs: Any) -> ScriptedResponse:
    return ScriptedResponse.sse(load_fixture("mistral", name), **kwargs)


def error(name: str, status: int) -> ScriptedResponse:
    body = json.loads((FIXTURES / "mistral" / f"{name}.json").read_text())
    return ScriptedResponse.json(body, status=status)


def ask(text: str = "Hi") -> Context:
    return Context(system_prompt="Be brief.", messages=[UserMessage(content=text)], tools=[WEATHER])


async def run(
    model: Model, context: Context, **options: Any
) -> tuple[list[AssistantMessageEvent], AssistantMessage]:
    return await collect(stream(model, context, StreamOptions(api_key=KEY, **options)))


def types(events: list[AssistantMessageEvent]) -> list[str]:
    return [e.type for e in events]


def assert_no_key(events: list[AssistantMessageEvent], message: AssistantMessage) -> None:
    for text in [*(repr(e) for e in events), repr(message)]:
        assert KEY not in text


# --- the request --------------------------------------------------------------------------------


async def test_text_and_the_request_mistral_accepts(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("text"))
    events, message = await run(mistral(replay_server), ask(), max_tokens=500)
    assert types(events) == [
        "start", "text_start", "text_delta", "text_delta", "text_delta", "text_end", "done",
    ]  # fmt: skip
    assert message.content == [TextContent(text="Hello, world!")]
    assert (message.stop_reason, message.provider, message.model) == (
        "stop",
        "mistral",
        "mistral-small-latest",
    )
    request = replay_server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = request.json
    # Mistral rejects fields it does not know (422 "Extra inputs are not permitted").
    assert "stream_options" not in body and "store" not in body
    assert "max_completion_tokens" not in body and body["max_tokens"] == 500
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert body["stream"] is True and body["model"] == "mistral-small-latest"
    assert "strict" not in body["tools"][0]["function"]
    assert_no_key(events, message)


async def test_usage_arrives_with_the_finish_reason_and_is_priced(
    replay_server: ReplayServer,
) -> None:
    replay_server.enqueue(sse("text"), sse("cached_usage"))
    model = mistral(replay_server)
    _, message = await run(model, ask())
    assert (message.usage.input, message.usage.output, message.usage.total_tokens) == (21, 6, 27)
    assert message.usage.cost.total == pytest.approx(
        (21 * model.cost.input + 6 * model.cost.output) / 1e6
    )
    _, cached = await run(model, ask())
    assert (cached.usage.input, cached.usage.cache_read, cached.usage.output) == (500, 1500, 10)
    assert cached.usage.cost.cache_read == pytest.approx(1500 * model.cost.cache_read / 1e6)


# --- tool calls ---------------------------------------------------------------------------------


async def test_a_whole_tool_call_in_the_last_chunk(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("tool_call"))
    events, message = await run(mistral(replay_server), ask("Weather in Paris?"))
    assert message.stop_reason == "tool_use"
    assert message.text == "Checking."
    (call,) = message.tool_calls
    assert (call.id, call.name, call.arguments) == ("D681PevKs", "get_weather", {"city": "Paris"})
    assert types(events)[-4:] == ["toolcall_start", "toolcall_delta", "toolcall_end", "done"]
    assert (message.usage.input, message.usage.output) == (90, 22)


async def test_parallel_calls_and_their_results_go_back_with_names_and_ids(
    replay_server: ReplayServer,
) -> None:
    replay_server.enqueue(sse("tool_calls_parallel"), sse("text"))
    model = mistral(replay_server)
    context = ask("Weather in Paris and Oslo?")
    _, first = await run(model, context)
    assert [(c.id, c.arguments) for c in first.tool_calls] == [
        ("D681PevKs", {"city": "Paris"}),
        ("k2LmQ7xZp", {"city": "Oslo"}),
    ]
    results = [
        ToolResultMessage(tool_call_id=c.id, tool_name=c.name, content=[TextContent(text=f"{i}C")])
        for i, c in enumerate(first.tool_calls)
    ]
    follow = dataclasses.replace(context, messages=[*context.messages, first, *results])
    _, second = await run(model, follow)
    assert second.text == "Hello, world!"
    sent = replay_server.requests[1].json["messages"]
    (assistant,) = [m for m in sent if m["role"] == "assistant"]
    assert [c["id"] for c in assistant["tool_calls"]] == ["D681PevKs", "k2LmQ7xZp"]
    tools = [m for m in sent if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["name"]) for m in tools] == [
        ("D681PevKs", "get_weather"),
        ("k2LmQ7xZp", "get_weather"),
    ]


# --- stop reasons, errors, broken streams -------------------------------------------------------


async def test_length(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("length"))
    _, message = await run(mistral(replay_server), ask())
    assert (message.stop_reason, message.text) == ("length", "Once upon a")


async def test_model_length_is_a_length_stop(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("model_length"))
    _, message = await run(mistral(replay_server), ask())
    assert message.stop_reason == "length"


async def test_429_is_retried_then_reported(replay_server: ReplayServer) -> None:
    replay_server.enqueue(error("error_429", 429), error("error_429", 429))
    events, message = await run(mistral(replay_server), ask(), max_retries=1, max_retry_delay_ms=50)
    assert types(events) == ["error"] and message.stop_reason == "error"
    assert message.error_message is not None
    assert "429" in message.error_message
    assert "1300: Requests rate limit exceeded" in message.error_message
    assert len(replay_server.requests) == 2
    assert not is_context_overflow(message, 131_072)
    assert_no_key(events, message)


async def test_429_then_success(replay_server: ReplayServer) -> None:
    replay_server.enqueue(error("error_429", 429), sse("text"))
    _, message = await run(mistral(replay_server), ask(), max_retries=2, max_retry_delay_ms=50)
    assert (message.stop_reason, message.text) == ("stop", "Hello, world!")
    assert len(replay_server.requests) == 2


@pytest.mark.parametrize(
    ("fixture", "status", "expected"),
    [
        ("error_400", 400, "400 1500: Invalid model: mistral-nope"),
        ("error_overflow", 400, "too large for model with 131072 maximum context length"),
        ("error_422", 422, "Extra inputs are not permitted"),
    ],
)
async def test_client_errors_are_not_retried(
    replay_server: ReplayServer, fixture: str, status: int, expected: str
) -> None:
    replay_server.enqueue(error(fixture, status))
    events, message = await run(mistral(replay_server), ask(), max_retries=2)
    assert types(events) == ["error"] and message.stop_reason == "error"
    assert expected in (message.error_message or ""), message.error_message
    assert len(replay_server.requests) == 1
    assert is_context_overflow(message, 131_072) == (fixture == "error_overflow")


async def test_a_dropped_connection_keeps_what_arrived(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("text", drop_after=3))
    events, message = await run(mistral(replay_server), ask(), max_retries=2)
    assert message.stop_reason == "error" and events[-1].type == "error"
    assert message.text == "Hello, wor"
    assert "connection was lost mid-stream" in (message.error_message or "")
    assert len(replay_server.requests) == 1  # not retried after the first event


async def test_abort_mid_stream(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("text", delay=0.3))
    controller = AbortController()
    options = StreamOptions(api_key=KEY, signal=controller.signal)
    events, message = await collect_aborting(
        stream(mistral(replay_server), ask(), options), controller
    )
    assert message.stop_reason == "aborted" and message.text == "Hello"
    assert events[-1].type == "error" and events[-1].reason == "aborted"


async def test_magistral_thinking_chunks(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("thinking_chunks"))
    model = dataclasses.replace(mistral(replay_server), id="magistral-medium-latest")
    _, message = await run(model, ask())
    assert message.content == [
        ThinkingContent(thinking="The user greets me."),
        TextContent(text="Hello!"),
    ]


def test_every_catalogue_mistral_model_has_mistral_quirks() -> None:
    for model in get_models("mistral"):
        compat = model.compat
        assert isinstance(compat, OpenAICompletionsCompat)
        assert (compat.tool_call_id_format, compat.requires_tool_result_name) == ("mistral", True)
        assert not compat.supports_usage_in_streaming and not compat.supports_store
        assert compat.max_tokens_field == "max_tokens" and not compat.supports_developer_role
        assert model.structured_output is True


# --- the fault suite, on Mistral's wire ---------------------------------------------------------


class MistralWire(CompletionsWire):
    """`CompletionsWire` in Mistral's shape: the tool call whole in one chunk with the finish
    reason and the usage, a 9-character id, and Mistral's error object."""

    provider = "mistral"
    model_id = "mistral-small-latest"

    def model(self, server: ReplayServer) -> Model:
        return dataclasses.replace(
            super().model(server), compat=get_model("mistral", self.model_id).compat
        )

    def _last(self, delta: dict[str, Any], finish: str) -> bytes:
        usage = {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70}
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        payload = {
            "id": "cmpl-fault",
            "object": "chat.completion.chunk",
            "created": 1764000000,
            "model": self.model_id,
            "choices": [choice],
            "usage": usage,
        }
        return b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"

    def answer(self, texts: Any, call: Call | None = None) -> Answer:
        events = [self._chunk({"role": "assistant", "content": ""})]
        events += [self._chunk({"content": text}) for text in texts]
        middle = len(events)
        if call is not None:
            tool = {
                "id": "Nt3rQ8pLw",  # Mistral's own ids: 9 letters and digits
                "function": {"name": call.name, "arguments": call.arguments},
                "index": 0,
            }
            events.append(self._last({"tool_calls": [tool]}, "tool_calls"))
        else:
            events.append(self._last({"content": ""}, "stop"))
        events.append(b"data: [DONE]\n\n")
        return Answer(events, first=2, middle=middle)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = "rate_limited" if status == 429 else "internal_server_error"
        return {"object": "error", "message": message, "type": kind, "param": None, "code": None}


FAULT_CASES = [
    pytest.param(fault, id=fault.name)
    for fault in faults.FAULTS
    if "openai-completions" in fault.apis
]


@pytest.mark.parametrize("fault", FAULT_CASES)
async def test_fault(
    fault: Any, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each fault case of the cross-provider suite, asserted by that suite's own test body."""
    monkeypatch.setitem(fault_server.WIRES, "openai-completions", MistralWire())
    assert isinstance(faults.WIRES["openai-completions"], MistralWire)  # the suite's own table
    await faults.test_fault("openai-completions", fault, caplog)


def test_the_fault_wire_is_mistral_shaped() -> None:
    wire = MistralWire()
    with FaultServer() as server:
        model = wire.model(server)
    assert isinstance(model.compat, OpenAICompletionsCompat)
    assert model.compat.tool_call_id_format == "mistral"
    last = json.loads(wire.answer(["x"], faults.note_call()).events[-2][len(b"data: ") :])
    assert last["usage"] and last["choices"][0]["finish_reason"] == "tool_calls"
