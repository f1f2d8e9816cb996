"""The `openai-responses` adapter, through the real `openai` SDK against the replay server.

The SSE fixtures under `fixtures/openai-responses/` follow the documented Responses streaming
format (`response.created` … `response.output_item.added` … deltas … `response.completed`).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentcore.abort import AbortController
from agentcore.errors import MissingApiKeyError, MissingExtraError
from agentcore.llm import (
    AssistantMessageEvent,
    AssistantMessageEventStream,
    Context,
    Model,
    ModelCost,
    SimpleStreamOptions,
    StreamOptions,
    Tool,
    get_api_provider,
)
from agentcore.llm.overflow import is_context_overflow
from agentcore.llm.providers import openai_responses
from agentcore.llm.providers.openai_responses import (
    OpenAIResponsesOptions,
    build_payload,
    normalize_tool_call_id,
)
from agentcore.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

from .helpers import abort_after, collect, collect_aborting, comparable
from .replay_server import ReplayServer, ScriptedResponse, load_fixture, rechunk, split_sse

pytestmark = pytest.mark.anyio

API = "openai-responses"
COST = ModelCost(input=0.25, output=2.0, cache_read=0.025, cache_write=0.0)
WEATHER = Tool(
    name="get_weather",
    description="Current weather for a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
        "required": ["city"],
    },
)


def make_model(server: ReplayServer | None = None, **overrides: Any) -> Model:
    fields: dict[str, Any] = {
        "id": "gpt-5-mini",
        "api": API,
        "provider": "openai",
        "base_url": server.base_url() if server is not None else "https://api.openai.com/v1",
        "reasoning": True,
        "input": ["text", "image"],
        "cost": COST,
        "max_tokens": 8192,
    }
    fields.update(overrides)
    return Model(**fields)


def context(*messages: Any, system: str = "", tools: Sequence[Tool] = ()) -> Context:
    return Context(
        system_prompt=system,
        messages=list(messages) or [UserMessage(content="Hi")],
        tools=list(tools),
    )


def fixture_response(name: str, **kwargs: Any) -> ScriptedResponse:
    return ScriptedResponse.sse(load_fixture(API, name), **kwargs)


def send(server: ReplayServer, **options: Any) -> AssistantMessageEventStream:
    """The default model's stream for the default context, with `options` besides the API key."""
    return openai_responses.stream(
        make_model(server), context(), StreamOptions(api_key="k", **options)
    )


def check_protocol(events: list[AssistantMessageEvent]) -> None:
    """One terminal event, last; nothing before `start` but a terminal; blocks well nested."""
    assert events, "no events"
    terminals = [e for e in events if e.type in ("done", "error")]
    assert len(terminals) == 1 and events[-1] is terminals[0]
    if len(events) > 1:
        assert events[0].type == "start"
    open_blocks: set[int] = set()
    for event in events[1:-1]:
        kind, _, phase = event.type.rpartition("_")
        index = event.content_index  # type: ignore[union-attr]
        assert kind in ("text", "thinking", "toolcall")
        if phase == "start":
            assert index not in open_blocks
            open_blocks.add(index)
        else:
            assert index in open_blocks, f"{event.type} for a block that is not open"
            if phase == "end":
                open_blocks.discard(index)
    if events[-1].type == "done":
        assert not open_blocks


# -- streaming ----------------------------------------------------------------------------------


async def test_plain_text(replay_server: ReplayServer) -> None:
    replay_server.enqueue(fixture_response("text"))
    model = make_model(replay_server, reasoning=False, headers={"x-model": "m", "x-both": "model"})
    options = StreamOptions(api_key="sk-test", headers={"x-both": "options"})
    events, message = await collect(
        openai_responses.stream(model, context(system="Be brief."), options)
    )

    check_protocol(events)
    assert [e.type for e in events[:2]] == ["start", "text_start"]
    deltas = [e.delta for e in events if e.type == "text_delta"]
    assert deltas == ["Hello", "!", " How", " can", " I", " help", " you", " today", "?"]
    assert events[-1].type == "done" and events[-1].reason == "stop"
    assert message.content == [
        TextContent(text="Hello! How can I help you today?", text_signature="msg_text_01")
    ]
    assert (message.api, message.provider, message.model) == (API, "openai", "gpt-5-mini")
    assert message.stop_reason == "stop" and message.error_message is None

    (request,) = replay_server.requests
    assert (request.method, request.path) == ("POST", "/v1/responses")
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.headers["x-model"] == "m"
    assert request.headers["x-both"] == "options"
    assert request.json == {
        "model": "gpt-5-mini",
        "instructions": "Be brief.",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "Hi"}]}],
        "stream": True,
        "store": False,
        "max_output_tokens": 8192,
    }


async def test_reasoning_summary_and_text(replay_server: ReplayServer) -> None:
    replay_server.enqueue(fixture_response("reasoning"))
    model = make_model(replay_server)
    options = SimpleStreamOptions(api_key="k", reasoning="high")
    events, message = await collect(
        openai_responses.stream_simple(model, context(system="Be brief."), options)
    )

    check_protocol(events)
    kinds = [e.type for e in events]
    assert kinds[:2] == ["start", "thinking_start"]
    assert kinds.index("thinking_end") < kinds.index("text_start")
    thinking, text = message.content
    assert isinstance(thinking, ThinkingContent) and isinstance(text, TextContent)
    assert thinking.thinking == (
        "**Adding numbers**\n\nThe user asks for 2+2.\n\n**Answering**\n\nIt is 4."
    )
    assert thinking.thinking_signature is not None
    item = json.loads(thinking.thinking_signature)
    assert item["type"] == "reasoning" and item["id"] == "rs_reason_01"
    assert item["encrypted_content"] == "gAAAAABencrypted-reasoning-blob=="
    assert text == TextContent(text="2 + 2 = 4.", text_signature="msg_reason_01")
    thinking_end = next(e for e in events if e.type == "thinking_end")
    assert thinking_end.content == thinking.thinking

    body = replay_server.requests[0].json
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"]
    assert "instructions" not in body
    assert body["input"][0] == {"role": "developer", "content": "Be brief."}


@pytest.mark.parametrize(
    ("model_id", "level", "expected"),
    [
        ("gpt-5-mini", "xhigh", "high"),
        ("gpt-5.2", "xhigh", "xhigh"),
        ("gpt-5-mini", "minimal", "minimal"),
        ("gpt-5-mini", "off", None),
        ("gpt-5-mini", None, None),
    ],
)
def test_thinking_level_maps_to_effort(
    model_id: str, level: Any, expected: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[Any] = []
    monkeypatch.setattr(
        openai_responses, "stream", lambda model, ctx, options: seen.append(options)
    )
    openai_responses.stream_simple(
        make_model(id=model_id), context(), SimpleStreamOptions(reasoning=level, api_key="k")
    )
    (options,) = seen
    assert isinstance(options, OpenAIResponsesOptions)
    assert options.reasoning_effort == expected
    assert options.api_key == "k"
    payload = build_payload(make_model(id=model_id), context(), options)
    if expected is None:
        assert "reasoning" not in payload
    else:
        assert payload["reasoning"] == {"effort": expected, "summary": "auto"}


def test_non_reasoning_model_gets_no_reasoning_fields() -> None:
    model = make_model(reasoning=False)
    payload = build_payload(model, context(), OpenAIResponsesOptions(reasoning_effort="high"))
    assert "reasoning" not in payload and "include" not in payload


async def test_one_tool_call_with_arguments_in_many_chunks(replay_server: ReplayServer) -> None:
    replay_server.enqueue(fixture_response("tool_call"))
    events, message = await collect(
        openai_responses.stream(
            make_model(replay_server), context(tools=[WEATHER]), StreamOptions(api_key="k")
        )
    )

    check_protocol(events)
    deltas = [e.delta for e in events if e.type == "toolcall_delta"]
    arguments = {"city": "Paris", "unit": "celsius", "days": 3}
    assert len(deltas) > 10 and "".join(deltas) == json.dumps(arguments)
    # the partial arguments grow as the fragments arrive
    partials = [e.partial.content[0].arguments for e in events if e.type == "toolcall_delta"]  # type: ignore[union-attr]
    assert partials[0] == {} and partials[-1] == arguments
    assert any(p not in ({}, arguments) for p in partials)
    assert message.content == [
        ToolCall(id="call_abc123|fc_call_01", name="get_weather", arguments=arguments)
    ]
    assert message.stop_reason == "tool_use"
    end = next(e for e in events if e.type == "toolcall_end")
    assert end.tool_call == message.content[0]

    body = replay_server.requests[0].json
    assert body["tools"] == [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": dict(WEATHER.parameters),
            "strict": False,
        }
    ]


async def test_several_tool_calls_after_thinking_and_text(replay_server: ReplayServer) -> None:
    replay_server.enqueue(fixture_response("tool_calls"))
    events, message = await collect(send(replay_server))

    check_protocol(events)
    thinking, text, first, second = message.content
    assert isinstance(thinking, ThinkingContent) and thinking.thinking == (
        "I should look up both files."
    )
    assert isinstance(text, TextContent) and text.text == "Let me read both files."
    assert text.text_signature is not None
    assert json.loads(text.text_signature) == {"v": 1, "id": "msg_calls_01", "phase": "commentary"}
    assert first == ToolCall(
        id="call_one|fc_calls_01", name="read_file", arguments={"path": "src/main.py"}
    )
    assert second == ToolCall(
        id="call_two|fc_calls_02", name="read_file", arguments={"path": "README.md", "limit": 50}
    )
    assert message.stop_reason == "tool_use"
    indexes = {e.content_index for e in events if e.type == "toolcall_delta"}
    assert indexes == {2, 3}


async def test_usage_and_cost(replay_server: ReplayServer) -> None:
    replay_server.enqueue(fixture_response("text"), fixture_response("tool_calls"))
    model = make_model(replay_server)
    text = await openai_responses.stream(model, context(), StreamOptions(api_key="k")).result()
    calls = await openai_responses.stream(model, context(), StreamOptions(api_key="k")).result()

    # input_tokens 1200 of which 1000 cached
    assert (text.usage.input, text.usage.cache_read, text.usage.output) == (200, 1000, 12)
    assert text.usage.cache_write == 0
    assert text.usage.total_tokens == 1212
    cost = text.usage.cost
    assert cost.input == pytest.approx(200 * 0.25 / 1e6)
    assert cost.cache_read == pytest.approx(1000 * 0.025 / 1e6)
    assert cost.output == pytest.approx(12 * 2.0 / 1e6)
    assert cost.total == pytest.approx(cost.input + cost.cache_read + cost.output)
    # input_tokens 2000 of which 1536 cached; reasoning tokens are part of the output
    assert (calls.usage.input, calls.usage.cache_read, calls.usage.output) == (464, 1536, 90)
    assert calls.usage.total_tokens == 2090


@pytest.mark.parametrize(
    ("fixture", "reason", "error"),
    [
        ("text", "stop", None),
        ("tool_call", "tool_use", None),
        ("incomplete", "length", None),
        ("failed", "error", "server_error: The model failed to generate a response."),
        ("error_event", "error", "rate_limit_exceeded: Rate limit reached for requests"),
    ],
)
async def test_stop_reasons(
    replay_server: ReplayServer, fixture: str, reason: str, error: str | None
) -> None:
    replay_server.enqueue(fixture_response(fixture))
    events, message = await collect(send(replay_server))
    check_protocol(events)
    assert message.stop_reason == reason
    assert message.error_message == error
    terminal = events[-1]
    if error is None:
        assert terminal.type == "done" and terminal.reason == reason
    else:
        assert terminal.type == "error" and terminal.reason == "error"


async def test_incomplete_keeps_partial_text_and_usage(replay_server: ReplayServer) -> None:
    replay_server.enqueue(fixture_response("incomplete"))
    message = await send(replay_server).result()
    assert message.content == [TextContent(text="Once upon a time there")]
    assert (message.usage.input, message.usage.output) == (40, 16)


async def test_failed_response_keeps_usage_and_partial_text(replay_server: ReplayServer) -> None:
    replay_server.enqueue(fixture_response("failed"))
    message = await send(replay_server).result()
    assert message.text == "Partial"
    assert message.usage.input == 40 and message.usage.cost.total > 0


async def test_content_filter_is_an_error(replay_server: ReplayServer) -> None:
    body = load_fixture(API, "incomplete").replace(b'"max_output_tokens"}', b'"content_filter"}')
    replay_server.enqueue(ScriptedResponse.sse(body))
    message = await send(replay_server).result()
    assert message.stop_reason == "error"
    assert "content filter" in (message.error_message or "")


# -- HTTP failures and retries --------------------------------------------------------------


async def test_error_status_is_an_error_terminal(replay_server: ReplayServer) -> None:
    replay_server.enqueue(
        ScriptedResponse.json(
            {
                "error": {
                    "message": "Your input exceeds the context window of this model.",
                    "type": "invalid_request_error",
                    "param": "input",
                    "code": "context_length_exceeded",
                }
            },
            status=400,
        )
    )
    seen: list[int] = []
    options = StreamOptions(api_key="k", on_response=lambda info, model: seen.append(info.status))
    model = make_model(replay_server, context_window=400_000)
    events, message = await collect(openai_responses.stream(model, context(), options))

    assert [e.type for e in events] == ["error"]
    assert message.stop_reason == "error"
    assert message.error_message == (
        "400 context_length_exceeded: Your input exceeds the context window of this model."
    )
    assert (message.api, message.provider, message.model) == (API, "openai", "gpt-5-mini")
    assert is_context_overflow(message, model.context_window)
    assert len(replay_server.requests) == 1  # a 400 is not retried
    assert seen == [400]


async def test_event_that_is_not_an_object(replay_server: ReplayServer) -> None:
    replay_server.enqueue(ScriptedResponse.sse([b"data: [1, 2]\n\n"]))
    message = await send(replay_server).result()
    assert message.stop_reason == "error"
    assert "not a JSON object" in (message.error_message or "")


# -- abort ----------------------------------------------------------------------------------


async def test_abort_mid_stream(replay_server: ReplayServer) -> None:
    # the first chunks arrive at once, then the server dawdles between events
    chunks = split_sse(load_fixture(API, "text"))
    replay_server.enqueue(ScriptedResponse.sse(chunks, delay=[0] * 6 + [0.5] * len(chunks)))
    controller = AbortController()
    began = time.monotonic()
    stream = send(replay_server, signal=controller.signal)
    events, message = await collect_aborting(stream, controller, delta="!")

    assert time.monotonic() - began < 2
    check_protocol(events)
    assert events[-1].type == "error" and events[-1].reason == "aborted"
    assert message.stop_reason == "aborted"
    assert message.content == [TextContent(text="Hello!")]
    assert message.error_message == "request was aborted"


async def test_abort_while_waiting_for_the_next_chunk(replay_server: ReplayServer) -> None:
    chunks = split_sse(load_fixture(API, "text"))
    replay_server.enqueue(ScriptedResponse.sse(chunks, delay=[0] * 6 + [10.0] * len(chunks)))
    controller = AbortController()
    stream = send(replay_server, signal=controller.signal)
    began = time.monotonic()
    async with anyio.create_task_group() as tg:
        tg.start_soon(abort_after, controller, 0.3)
        message = await stream.result()
    assert time.monotonic() - began < 3
    assert message.stop_reason == "aborted"
    assert message.text == "Hello!"


async def test_abort_during_retry_wait(replay_server: ReplayServer) -> None:
    replay_server.enqueue(
        ScriptedResponse.json(
            {"error": {"message": "busy"}}, status=503, headers={"retry-after": "20"}
        )
    )
    controller = AbortController()
    stream = openai_responses.stream(
        make_model(replay_server),
        context(),
        StreamOptions(api_key="k", signal=controller.signal, max_retry_delay_ms=60_000),
    )
    began = time.monotonic()
    async with anyio.create_task_group() as tg:
        tg.start_soon(abort_after, controller, 0.3)
        message = await stream.result()
    assert time.monotonic() - began < 3
    assert message.stop_reason == "aborted"
    assert len(replay_server.requests) == 1


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_leaving_early_closes_the_stream(replay_server: ReplayServer) -> None:
    chunks = split_sse(load_fixture(API, "text"))
    replay_server.enqueue(ScriptedResponse.sse(chunks, delay=[0] * 6 + [30.0] * len(chunks)))
    with anyio.fail_after(5):
        async with send(replay_server) as stream:
            async for event in stream:
                if event.type == "text_delta":
                    break
        message = await stream.result()
    assert message.stop_reason == "error"
    assert message.text == "Hello"


# -- request options ------------------------------------------------------------------------


@pytest.mark.parametrize("is_async", [False, True])
async def test_on_payload_replaces_the_body(replay_server: ReplayServer, is_async: bool) -> None:
    replay_server.enqueue(fixture_response("text"))
    seen: list[dict[str, Any]] = []

    def replace(payload: dict[str, Any], model: Model) -> dict[str, Any]:
        seen.append(payload)
        return {**payload, "max_output_tokens": 77, "service_tier": "flex", "x_custom": [1]}

    async def replace_async(payload: dict[str, Any], model: Model) -> dict[str, Any]:
        return replace(payload, model)

    options = StreamOptions(api_key="k", on_payload=replace_async if is_async else replace)
    message = await openai_responses.stream(make_model(replay_server), context(), options).result()

    assert message.stop_reason == "stop"
    assert seen[0]["max_output_tokens"] == 8192
    body = replay_server.requests[0].json
    assert body["max_output_tokens"] == 77
    assert body["service_tier"] == "flex"
    assert body["x_custom"] == [1]  # a field the SDK does not know goes through as is
    assert body["input"] == seen[0]["input"]


async def test_on_payload_returning_none_keeps_the_body(replay_server: ReplayServer) -> None:
    replay_server.enqueue(fixture_response("text"))
    options = StreamOptions(api_key="k", temperature=0.3, on_payload=lambda payload, model: None)
    await openai_responses.stream(make_model(replay_server), context(), options).result()
    assert replay_server.requests[0].json["temperature"] == 0.3


async def test_session_id_sets_prompt_cache_key(replay_server: ReplayServer) -> None:
    replay_server.enqueue(fixture_response("text"), fixture_response("text"))
    model = make_model(replay_server)
    await openai_responses.stream(
        model, context(), StreamOptions(api_key="k", session_id="session-42")
    ).result()
    await openai_responses.stream(
        model,
        context(),
        StreamOptions(api_key="k", session_id="session-42", cache_retention="none"),
    ).result()
    first, second = (r.json for r in replay_server.requests)
    assert first["prompt_cache_key"] == "session-42"
    assert "prompt_cache_retention" not in first  # only on api.openai.com
    assert "prompt_cache_key" not in second


def test_long_cache_retention_on_openai() -> None:
    options = StreamOptions(session_id="s", cache_retention="long")
    payload = build_payload(make_model(base_url=""), context(), options)
    assert payload["prompt_cache_key"] == "s"
    assert payload["prompt_cache_retention"] == "24h"
    payload = build_payload(make_model(base_url="https://api.openai.com/v1"), context(), options)
    assert payload["prompt_cache_retention"] == "24h"
    payload = build_payload(make_model(base_url="http://127.0.0.1:9/v1"), context(), options)
    assert "prompt_cache_retention" not in payload


def test_options_in_the_payload() -> None:
    options = StreamOptions(max_tokens=123, temperature=0.5, metadata={"user": "u1"})
    payload = build_payload(make_model(reasoning=False), context(system="S"), options)
    assert payload["max_output_tokens"] == 123
    assert payload["temperature"] == 0.5
    assert payload["metadata"] == {"user": "u1"}
    assert payload["instructions"] == "S"


def test_images_and_surrogates_in_the_payload() -> None:
    image = ImageContent(data="aGVsbG8=", mime_type="image/png")
    transcript = [
        UserMessage(content=[TextContent(text="What is this? \ud83d"), image]),
        AssistantMessage(
            content=[ToolCall(id="call_1|fc_1", name="screenshot", arguments={})],
            api=API,
            provider="openai",
            model="gpt-5-mini",
            stop_reason="tool_use",
        ),
        ToolResultMessage(
            tool_call_id="call_1|fc_1",
            tool_name="screenshot",
            content=[TextContent(text="taken"), image],
        ),
    ]
    vision = build_payload(make_model(), context(*transcript), StreamOptions())
    assert vision["input"][0] == {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "What is this? "},
            {
                "type": "input_image",
                "detail": "auto",
                "image_url": "data:image/png;base64,aGVsbG8=",
            },
        ],
    }
    assert vision["input"][2] == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": [
            {"type": "input_text", "text": "taken"},
            {
                "type": "input_image",
                "detail": "auto",
                "image_url": "data:image/png;base64,aGVsbG8=",
            },
        ],
    }
    text_only = build_payload(make_model(input=["text"]), context(*transcript), StreamOptions())
    assert text_only["input"][0]["content"] == [{"type": "input_text", "text": "What is this? "}]
    assert text_only["input"][2]["output"] == "taken"


def test_normalize_tool_call_id() -> None:
    assert normalize_tool_call_id("call_1|fc_1") == "call_1|fc_1"
    assert normalize_tool_call_id("call_1|item.2") == "call_1|fc_item_2"
    assert normalize_tool_call_id("toolu_01A") == "toolu_01A"
    assert normalize_tool_call_id("get time/0") == "get_time_0"
    long = normalize_tool_call_id("c" * 100 + "|" + "i" * 100)
    call, item = long.split("|")
    assert len(call) <= 64 and len(item) <= 64 and item.startswith("fc")


# -- cross-provider transcripts -------------------------------------------------------------


def _assistant(provider: str, api: str, model: str, *content: Any, **kw: Any) -> AssistantMessage:
    return AssistantMessage(
        content=list(content),
        api=api,
        provider=provider,
        model=model,
        usage=Usage(input=10, output=5),
        stop_reason=kw.pop("stop_reason", "tool_use"),
        **kw,
    )


async def test_cross_provider_transcript(replay_server: ReplayServer) -> None:
    reasoning_item = {
        "id": "rs_same_01",
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "Checking the weather."}],
        "encrypted_content": "gAAAAABsame",
    }
    transcript = [
        UserMessage(content="Weather in Paris and Rome, then the time?"),
        # Anthropic: signed thinking, text, a tool call
        _assistant(
            "anthropic",
            "anthropic-messages",
            "claude-sonnet-4-5",
            ThinkingContent(thinking="Two cities.", thinking_signature="EqQBCkYIBxgC"),
            ThinkingContent(thinking="", thinking_signature="redacted-blob", redacted=True),
            TextContent(text="Checking Paris."),
            ToolCall(id="toolu_01XYZ", name="get_weather", arguments={"city": "Paris"}),
        ),
        ToolResultMessage(
            tool_call_id="toolu_01XYZ",
            tool_name="get_weather",
            content=[TextContent(text="18C")],
        ),
        # Google: a thought and a call with a thought signature; its result never arrived
        _assistant(
            "google",
            "google-generative-ai",
            "gemini-2.5-flash",
            ThinkingContent(thinking="Now Rome.", thinking_signature="c2lnbmF0dXJl"),
            ToolCall(
                id="get_weather_1",
                name="get_weather",
                arguments={"city": "Rome"},
                thought_signature="c2ln",
            ),
        ),
        # an aborted turn is not replayed, nor its tool result
        _assistant(
            "openai",
            API,
            "gpt-5-mini",
            ToolCall(id="call_x|fc_x", name="get_time", arguments={}),
            stop_reason="aborted",
        ),
        ToolResultMessage(tool_call_id="call_x|fc_x", tool_name="get_time", content=[]),
        UserMessage(content="And the time?"),
        # this very model: reasoning item, text and call replayed with their ids
        _assistant(
            "openai",
            API,
            "gpt-5-mini",
            ThinkingContent(
                thinking="Checking the weather.", thinking_signature=json.dumps(reasoning_item)
            ),
            TextContent(
                text="Let me check.",
                text_signature='{"v":1,"id":"msg_same_01","phase":"commentary"}',
            ),
            ToolCall(id="call_same|fc_same_01", name="get_time", arguments={"tz": "CET"}),
        ),
        ToolResultMessage(
            tool_call_id="call_same|fc_same_01",
            tool_name="get_time",
            content=[TextContent(text="12:00")],
            is_error=False,
        ),
        # another OpenAI Responses model: its ids are foreign here
        _assistant(
            "openai",
            API,
            "gpt-5",
            ThinkingContent(thinking="Summarise.", thinking_signature='{"type":"reasoning"}'),
            TextContent(text="Done.", text_signature="msg_other"),
            ToolCall(id="call_o|msg.weird", name="get_time", arguments={}),
            stop_reason="tool_use",
        ),
        ToolResultMessage(
            tool_call_id="call_o|msg.weird",
            tool_name="get_time",
            content=[TextContent(text="12:01")],
        ),
    ]
    replay_server.enqueue(fixture_response("text"))
    message = await openai_responses.stream(
        make_model(replay_server),
        context(*transcript, tools=[WEATHER]),
        StreamOptions(api_key="k"),
    ).result()
    assert message.stop_reason == "stop"

    items = replay_server.requests[0].json["input"]
    assert items == [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Weather in Paris and Rome, then the time?"}
            ],
        },
        # Anthropic thinking became text, redacted thinking dropped, no item ids
        {"role": "assistant", "content": "Two cities."},
        {"role": "assistant", "content": "Checking Paris."},
        {
            "type": "function_call",
            "call_id": "toolu_01XYZ",
            "name": "get_weather",
            "arguments": '{"city": "Paris"}',
        },
        {"type": "function_call_output", "call_id": "toolu_01XYZ", "output": "18C"},
        {"role": "assistant", "content": "Now Rome."},
        {
            "type": "function_call",
            "call_id": "get_weather_1",
            "name": "get_weather",
            "arguments": '{"city": "Rome"}',
        },
        # the Google call got a synthetic result before the next user message
        {
            "type": "function_call_output",
            "call_id": "get_weather_1",
            "output": "No result provided",
        },
        {"role": "user", "content": [{"type": "input_text", "text": "And the time?"}]},
        reasoning_item,
        {
            "type": "message",
            "id": "msg_same_01",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Let me check.", "annotations": []}],
            "phase": "commentary",
        },
        {
            "type": "function_call",
            "call_id": "call_same",
            "name": "get_time",
            "arguments": '{"tz": "CET"}',
            "id": "fc_same_01",
        },
        {"type": "function_call_output", "call_id": "call_same", "output": "12:00"},
        {"role": "assistant", "content": "Summarise."},
        {"role": "assistant", "content": "Done."},
        {"type": "function_call", "call_id": "call_o", "name": "get_time", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_o", "output": "12:01"},
    ]
    for item in items:
        if item.get("type") == "function_call":
            outputs = [i for i in items if i.get("type") == "function_call_output"]
            assert sum(1 for o in outputs if o["call_id"] == item["call_id"]) == 1


def test_same_model_without_reasoning_replay_omits_item_ids() -> None:
    """Thinking that cannot be replayed (no signature) means its item ids must not be sent."""
    transcript = [
        UserMessage(content="Hi"),
        _assistant(
            "openai",
            API,
            "gpt-5-mini",
            ThinkingContent(thinking="hmm"),
            TextContent(text="Hello", text_signature="msg_1"),
            ToolCall(id="call_1|fc_1", name="get_time", arguments={}),
        ),
        ToolResultMessage(tool_call_id="call_1|fc_1", tool_name="get_time", content=[]),
    ]
    payload = build_payload(make_model(), context(*transcript), StreamOptions())
    assert payload["input"][1:] == [
        {"role": "assistant", "content": "Hello"},
        {"type": "function_call", "call_id": "call_1", "name": "get_time", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "(no output)"},
    ]


async def test_replaying_own_answer(replay_server: ReplayServer) -> None:
    """An answer streamed from this adapter goes back as the same items."""
    replay_server.enqueue(fixture_response("tool_calls"), fixture_response("text"))
    model = make_model(replay_server)
    first = await openai_responses.stream(model, context(), StreamOptions(api_key="k")).result()
    results = [
        ToolResultMessage(tool_call_id=c.id, tool_name=c.name, content=[TextContent(text="ok")])
        for c in first.tool_calls
    ]
    await openai_responses.stream(
        model, context(UserMessage(content="Hi"), first, *results), StreamOptions(api_key="k")
    ).result()
    items = replay_server.requests[1].json["input"]
    assert [i.get("type") for i in items[1:]] == [
        "reasoning",
        "message",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
    ]
    assert items[1]["encrypted_content"] == "gAAAAABsecond-blob=="
    assert items[2]["id"] == "msg_calls_01" and items[2]["phase"] == "commentary"
    assert [items[3]["id"], items[4]["id"]] == ["fc_calls_01", "fc_calls_02"]
    assert [items[5]["call_id"], items[6]["call_id"]] == ["call_one", "call_two"]


# -- lenient servers ------------------------------------------------------------------------


async def test_items_without_added_events(replay_server: ReplayServer) -> None:
    """Servers that skip `output_item.added` or the deltas still give the whole message."""
    events_data = [
        {"type": "response.created", "response": {"id": "r", "status": "in_progress"}},
        {"type": "response.output_text.delta", "output_index": 0, "item_id": "m", "delta": "Hi"},
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {"id": "m", "type": "message", "content": [{"type": "output_text"}]},
        },
        {
            "type": "response.output_item.done",
            "output_index": 1,
            "item": {
                "id": "fc_9",
                "type": "function_call",
                "call_id": "call_9",
                "name": "get_time",
                "arguments": '{"tz": "UTC"}',
            },
        },
        {
            "type": "response.completed",
            "response": {
                "status": "completed",
                "usage": {"input_tokens": 5, "output_tokens": 3},
            },
        },
    ]
    body = b"".join(b"data: %s\n\n" % json.dumps(e).encode() for e in events_data)
    replay_server.enqueue(ScriptedResponse.sse(body))
    events, message = await collect(send(replay_server))
    check_protocol(events)
    assert message.content == [
        TextContent(text="Hi", text_signature="m"),
        ToolCall(id="call_9|fc_9", name="get_time", arguments={"tz": "UTC"}),
    ]
    assert message.stop_reason == "tool_use"
    assert (message.usage.input, message.usage.output, message.usage.cache_read) == (5, 3, 0)


# -- re-chunking ----------------------------------------------------------------------------


def _run_rechunked(server: ReplayServer, name: str, sizes: list[int]) -> AssistantMessage:
    server.enqueue(ScriptedResponse.sse(rechunk(load_fixture(API, name), sizes)))

    async def run() -> AssistantMessage:
        return await send(server).result()

    return anyio.run(run)


@pytest.mark.parametrize("name", ["tool_calls", "reasoning"])
def test_any_rechunking_gives_the_same_message(name: str) -> None:
    with ReplayServer() as server:
        expected = comparable(_run_rechunked(server, name, [1 << 20]))
        assert expected[2] in ("stop", "tool_use")

        @settings(
            max_examples=25,
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture],
        )
        @given(sizes=st.lists(st.integers(min_value=1, max_value=400), min_size=1, max_size=12))
        def check(sizes: list[int]) -> None:
            assert comparable(_run_rechunked(server, name, sizes)) == expected

        check()


# -- before any request ---------------------------------------------------------------------


def test_missing_api_key_raises_before_sending(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(MissingApiKeyError, match="OPENAI_API_KEY"):
        openai_responses.stream(make_model(), context())
    with pytest.raises(MissingApiKeyError, match="OPENAI_API_KEY"):
        openai_responses.stream_simple(make_model(), context())


async def test_api_key_from_the_environment(
    replay_server: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    replay_server.enqueue(fixture_response("text"))
    await openai_responses.stream(make_model(replay_server), context()).result()
    assert replay_server.requests[0].headers["authorization"] == "Bearer sk-env"


def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(MissingExtraError, match=r"agentcore-loop\[openai\]"):
        openai_responses.stream(make_model(), context(), StreamOptions(api_key="k"))


def test_registered_as_the_openai_responses_adapter() -> None:
    provider = get_api_provider(API)
    assert provider.api == API
    assert provider.stream is openai_responses.stream
    assert provider.stream_simple is openai_responses.stream_simple


# -- more failures --------------------------------------------------------------------------


async def test_error_status_with_a_text_body(replay_server: ReplayServer) -> None:
    replay_server.enqueue(
        ScriptedResponse(
            status=403, headers={"content-type": "text/plain"}, chunks=[b"region not supported"]
        )
    )
    message = await send(replay_server).result()
    assert message.stop_reason == "error"
    assert message.error_message == "403 region not supported"


async def test_unreachable_server() -> None:
    model = make_model(base_url="http://127.0.0.1:9/v1")
    events, message = await collect(
        openai_responses.stream(model, context(), StreamOptions(api_key="k", max_retry_delay_ms=10))
    )
    assert [e.type for e in events] == ["error"]
    assert (message.error_message or "").startswith("could not connect")


# -- an agent run through the adapter -------------------------------------------------------


async def test_agent_run_with_tool_calls(replay_server: ReplayServer) -> None:
    from agentcore import AgentContext, AgentLoopConfig, run_agent_loop, tool

    @tool
    def get_weather(city: str, unit: str = "celsius", days: int = 1) -> str:
        """Current weather for a city."""
        return f"{city}: 18 degrees {unit} for {days} days"

    replay_server.enqueue(fixture_response("tool_call"), fixture_response("text"))
    events: list[Any] = []
    messages = await run_agent_loop(
        [UserMessage(content="Weather in Paris?")],
        AgentContext(system_prompt="You are terse.", tools=[get_weather]),
        AgentLoopConfig(model=make_model(replay_server), api_key="k", reasoning="low"),
        events.append,
    )

    assert [m.role for m in messages] == ["user", "assistant", "tool_result", "assistant"]
    result = messages[2]
    assert isinstance(result, ToolResultMessage)
    assert result.tool_call_id == "call_abc123|fc_call_01"
    assert result.content == [TextContent(text="Paris: 18 degrees celsius for 3 days")]
    assert messages[3].text == "Hello! How can I help you today?"  # type: ignore[union-attr]
    assert events[0].type == "agent_start" and events[-1].type == "agent_end"

    first, second = (r.json for r in replay_server.requests)
    assert first["reasoning"] == {"effort": "low", "summary": "auto"}
    assert [t["name"] for t in first["tools"]] == ["get_weather"]
    assert second["input"][-2:] == [
        {
            "type": "function_call",
            "call_id": "call_abc123",
            "name": "get_weather",
            "arguments": '{"city": "Paris", "unit": "celsius", "days": 3}',
            "id": "fc_call_01",
        },
        {
            "type": "function_call_output",
            "call_id": "call_abc123",
            "output": "Paris: 18 degrees celsius for 3 days",
        },
    ]


async def test_on_payload_returning_a_non_dict(replay_server: ReplayServer) -> None:
    options = StreamOptions(api_key="k", on_payload=lambda payload, model: "nope")
    events, message = await collect(
        openai_responses.stream(make_model(replay_server), context(), options)
    )
    assert [e.type for e in events] == ["error"]
    assert "on_payload returned str" in (message.error_message or "")
    assert replay_server.requests == []


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_under_trio(replay_server: ReplayServer) -> None:
    replay_server.enqueue(fixture_response("tool_calls"))
    events, message = await collect(send(replay_server))
    check_protocol(events)
    assert message.stop_reason == "tool_use" and len(message.tool_calls) == 2


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_abort_under_trio(replay_server: ReplayServer) -> None:
    chunks = split_sse(load_fixture(API, "text"))
    replay_server.enqueue(ScriptedResponse.sse(chunks, delay=[0] * 6 + [10.0] * len(chunks)))
    controller = AbortController()
    stream = send(replay_server, signal=controller.signal)
    with anyio.fail_after(3):
        async with anyio.create_task_group() as tg:
            tg.start_soon(abort_after, controller, 0.3)
            message = await stream.result()
    assert message.stop_reason == "aborted" and message.text == "Hello!"
