"""The Anthropic Messages adapter, through the real `anthropic` SDK against the replay server.

The SSE fixtures under `fixtures/anthropic-messages/` are written from Anthropic's documented
streaming format (message_start, content_block_start/delta/stop, message_delta, message_stop,
ping and error events).
"""

from __future__ import annotations

import base64
import dataclasses
import json
import re
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
from agentcore.llm import get_api_provider, get_model
from agentcore.llm import stream as llm_stream
from agentcore.llm.events import AssistantMessageEvent
from agentcore.llm.model import Model, ModelCost
from agentcore.llm.overflow import is_context_overflow
from agentcore.llm.providers import anthropic as adapter
from agentcore.llm.providers.anthropic import AnthropicOptions, build_payload
from agentcore.llm.stream import AssistantMessageEventStream
from agentcore.llm.types import (
    Context,
    ResponseInfo,
    SimpleStreamOptions,
    StreamOptions,
    ThinkingBudgets,
    ThinkingLevel,
    Tool,
)
from agentcore.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

from . import helpers
from .helpers import abort_after, collect_aborting, comparable
from .replay_server import ReplayServer, ScriptedResponse, load_fixture, rechunk, split_sse

pytestmark = pytest.mark.anyio

API = "anthropic-messages"
COST = ModelCost(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)
WEATHER = Tool(
    name="get_weather",
    description="The weather at a place.",
    parameters={
        "type": "object",
        "properties": {"location": {"type": "string"}, "unit": {"type": "string"}},
        "required": ["location"],
    },
)
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()


def make_model(
    server: ReplayServer | None,
    model_id: str = "claude-sonnet-4-5",
    *,
    reasoning: bool = True,
    images: bool = True,
    max_tokens: int = 64_000,
    base_url: str | None = None,
    headers: dict[str, str] | None = None,
) -> Model:
    return Model(
        id=model_id,
        api=API,
        provider="anthropic",
        base_url=base_url if base_url is not None else server.url if server else "",
        reasoning=reasoning,
        input=["text", "image"] if images else ["text"],
        cost=COST,
        context_window=200_000,
        max_tokens=max_tokens,
        headers=headers or {},
    )


def fixture(name: str) -> bytes:
    return load_fixture(API, name)


def context(*messages: Any, tools: Sequence[Tool] = (), system: str = "") -> Context:
    return Context(
        system_prompt=system,
        messages=list(messages) or [UserMessage(content="Hello")],
        tools=list(tools),
    )


async def collect(
    stream: AssistantMessageEventStream,
) -> tuple[list[AssistantMessageEvent], AssistantMessage]:
    events, message = await helpers.collect(stream)
    check_protocol(events)
    return events, message


def check_protocol(events: list[AssistantMessageEvent]) -> None:
    """Exactly one terminal event, last; nothing but an error before `start`."""
    assert events, "no events"
    terminals = [e for e in events if e.type in ("done", "error")]
    assert len(terminals) == 1 and events[-1] is terminals[0]
    if events[0].type != "start":
        assert len(events) == 1 and events[0].type == "error"


def run(
    server: ReplayServer,
    model: Model,
    ctx: Context | None = None,
    options: StreamOptions | None = None,
) -> AssistantMessageEventStream:
    return adapter.stream(model, ctx or context(), options or StreamOptions(api_key="test-key"))


def with_stop_reason(reason: str) -> bytes:
    body = fixture("text").replace(
        b'"stop_reason": "end_turn"', f'"stop_reason": "{reason}"'.encode()
    )
    assert reason.encode() in body
    return body


def error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


# --- the stream ------------------------------------------------------------------------------


async def test_plain_text(replay_server: ReplayServer) -> None:
    replay_server.enqueue(ScriptedResponse.sse(fixture("text")))
    model = make_model(replay_server)
    events, message = await collect(run(replay_server, model))
    assert [e.type for e in events] == [
        "start",
        "text_start",
        "text_delta",
        "text_delta",
        "text_delta",
        "text_end",
        "done",
    ]
    assert [e.delta for e in events if e.type == "text_delta"] == [
        "Hello",
        ", world",
        "! How can I help?",
    ]
    assert message.content == [TextContent(text="Hello, world! How can I help?")]
    assert message.stop_reason == "stop" and message.error_message is None
    assert (message.api, message.provider, message.model) == (API, "anthropic", model.id)
    request = replay_server.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/messages")
    assert request.json["stream"] is True and request.json["model"] == "claude-sonnet-4-5"
    assert request.json["max_tokens"] == 64_000  # the model's limit by default


async def test_through_the_registry(replay_server: ReplayServer) -> None:
    assert get_api_provider(API) is adapter.PROVIDER
    replay_server.enqueue(ScriptedResponse.sse(fixture("text")))
    message = await llm_stream(
        make_model(replay_server), context(), StreamOptions(api_key="k")
    ).result()
    assert message.text == "Hello, world! How can I help?"


async def test_thinking_with_signature_then_text(replay_server: ReplayServer) -> None:
    replay_server.enqueue(ScriptedResponse.sse(fixture("thinking")))
    events, message = await collect(run(replay_server, make_model(replay_server)))
    assert [e.type for e in events][:6] == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_delta",
        "thinking_delta",
        "thinking_end",
    ]
    thinking, text = message.content
    assert isinstance(thinking, ThinkingContent) and not thinking.redacted
    assert thinking.thinking.startswith("I need to find the GCD") and "is 21." in thinking.thinking
    assert thinking.thinking_signature == "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"
    assert text == TextContent(text="The greatest common divisor of 1071 and 462 is **21**.")


async def test_redacted_thinking_keeps_its_data(replay_server: ReplayServer) -> None:
    replay_server.enqueue(ScriptedResponse.sse(fixture("redacted_thinking")))
    events, message = await collect(run(replay_server, make_model(replay_server)))
    assert [e.type for e in events][:3] == ["start", "thinking_start", "thinking_end"]
    redacted = message.content[0]
    assert isinstance(redacted, ThinkingContent) and redacted.redacted
    assert redacted.thinking_signature is not None
    assert redacted.thinking_signature.startswith("EmwKAhgBEgy3va3pzix")
    assert message.text == "Here is my answer."


async def test_one_tool_call(replay_server: ReplayServer) -> None:
    replay_server.enqueue(ScriptedResponse.sse(fixture("tool_call")))
    events, message = await collect(run(replay_server, make_model(replay_server)))
    deltas = [e.delta for e in events if e.type == "toolcall_delta"]
    assert "".join(deltas) == '{"location": "San Francisco, CA", "unit": "fahrenheit"}'
    assert len(deltas) == 6  # the empty first fragment is not an event
    partial_args = [e.partial.tool_calls[0].arguments for e in events if e.type == "toolcall_delta"]
    assert partial_args[0] == {} and partial_args[2] == {"location": "San Francisc"}
    (end,) = [e for e in events if e.type == "toolcall_end"]
    assert end.tool_call == ToolCall(
        id="toolu_01T1x1fJ34qAmk2tNTrN7Up6",
        name="get_weather",
        arguments={"location": "San Francisco, CA", "unit": "fahrenheit"},
    )
    assert message.stop_reason == "tool_use"
    assert message.tool_calls == [end.tool_call]


async def test_several_tool_calls_split_into_many_fragments(replay_server: ReplayServer) -> None:
    replay_server.enqueue(ScriptedResponse.sse(fixture("tool_calls")))
    events, message = await collect(run(replay_server, make_model(replay_server)))
    assert message.stop_reason == "tool_use"
    assert isinstance(message.content[0], ThinkingContent)
    assert message.content[0].thinking_signature == "ErUBCkYIBRgCIkD3rD0yvjZ0mNfS8pQ9Pa"
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        (
            "toolu_01A09q90qw90lq917835lq9",
            "get_weather",
            {
                "location": "San Francisco, CA",
                "unit": "celsius",
                "days": 3,
                "details": {"wind": True, "humidity": False},
            },
        ),
        (
            "toolu_01B7x3Yt5Q2nVw8hJkLmPqRs",
            "get_weather",
            {
                "location": "Paris, France",
                "unit": "celsius",
                "days": 1,
                "details": {"wind": False, "humidity": True},
            },
        ),
        (
            "toolu_01C4mNbVcXz9LkJhGfDsAqWe",
            "get_time",
            {"timezone": "Asia/Tokyo", "format": '24h — "quoted" ✓'},
        ),
    ]
    per_call: dict[int, int] = {}
    for e in events:
        if e.type == "toolcall_delta":
            per_call[e.content_index] = per_call.get(e.content_index, 0) + 1
    assert list(per_call) == [1, 2, 3] and all(n > 5 for n in per_call.values())


async def test_server_tool_blocks_are_skipped(replay_server: ReplayServer) -> None:
    replay_server.enqueue(ScriptedResponse.sse(fixture("server_tool")))
    _, message = await collect(run(replay_server, make_model(replay_server)))
    assert message.content == [
        TextContent(text="I'll search for that."),
        TextContent(text="It is sunny in New York today."),
    ]
    assert message.stop_reason == "stop" and message.usage.input == 2679


async def test_usage_and_cost(replay_server: ReplayServer) -> None:
    replay_server.enqueue(ScriptedResponse.sse(fixture("text")))
    _, message = await collect(run(replay_server, make_model(replay_server)))
    usage = message.usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == (25, 15, 0, 0)
    assert usage.total_tokens == 40
    assert usage.cost.input == pytest.approx(25 * 3.0 / 1e6)
    assert usage.cost.output == pytest.approx(15 * 15.0 / 1e6)
    assert usage.cost.total == pytest.approx((25 * 3.0 + 15 * 15.0) / 1e6)


async def test_usage_with_cache_read_and_write(replay_server: ReplayServer) -> None:
    replay_server.enqueue(ScriptedResponse.sse(fixture("cache_usage")))
    events, message = await collect(run(replay_server, make_model(replay_server)))
    usage = message.usage
    # input is the uncached part; message_delta's cumulative counts win over message_start's
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == (
        21,
        393,
        2048,
        188_086,
    )
    assert usage.total_tokens == 21 + 393 + 2048 + 188_086
    assert usage.cost.cache_read == pytest.approx(2048 * 0.3 / 1e6)
    assert usage.cost.cache_write == pytest.approx(188_086 * 3.75 / 1e6)
    # usage is known from message_start on, before the answer is complete
    first_delta = next(e for e in events if e.type == "text_delta")
    assert first_delta.partial.usage.cache_write == 188_086
    assert first_delta.partial.usage.output == 1


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("end_turn", "stop"),
        ("pause_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("tool_use", "tool_use"),
    ],
)
async def test_stop_reasons(replay_server: ReplayServer, raw: str, reason: str) -> None:
    replay_server.enqueue(ScriptedResponse.sse(with_stop_reason(raw)))
    events, message = await collect(run(replay_server, make_model(replay_server)))
    assert events[-1].type == "done" and events[-1].reason == reason
    assert message.stop_reason == reason and message.error_message is None


@pytest.mark.parametrize(
    ("raw", "text"),
    [("refusal", "refused"), ("sensitive", "unknown stop_reason 'sensitive'")],
)
async def test_refusal_and_unknown_stop_reasons_are_errors(
    replay_server: ReplayServer, raw: str, text: str
) -> None:
    replay_server.enqueue(ScriptedResponse.sse(with_stop_reason(raw)))
    events, message = await collect(run(replay_server, make_model(replay_server)))
    assert events[-1].type == "error" and message.stop_reason == "error"
    assert message.error_message is not None and text in message.error_message
    assert message.text == "Hello, world! How can I help?"  # what arrived is kept
    assert message.usage.output == 15


# --- failures --------------------------------------------------------------------------------


async def test_error_status_ends_with_the_api_message(replay_server: ReplayServer) -> None:
    replay_server.enqueue(
        ScriptedResponse.json(
            error_body(
                "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"
            ),
            status=400,
            headers={"request-id": "req_011CSHoEeqs5C35K2UUqR7Fy"},
        )
    )
    events, message = await collect(run(replay_server, make_model(replay_server)))
    assert [e.type for e in events] == ["error"]  # nothing before the terminal error
    assert message.stop_reason == "error"
    assert message.error_message == (
        "400 invalid_request_error: prompt is too long: 210000 tokens > 200000 maximum "
        "(request id req_011CSHoEeqs5C35K2UUqR7Fy)"
    )
    assert (message.api, message.provider, message.model) == (API, "anthropic", "claude-sonnet-4-5")
    assert is_context_overflow(message, 200_000)
    assert len(replay_server.requests) == 1  # a 400 is not retried


async def test_529_overloaded_is_retried_with_backoff(replay_server: ReplayServer) -> None:
    replay_server.enqueue(
        ScriptedResponse.json(error_body("overloaded_error", "Overloaded"), status=529),
        ScriptedResponse.sse(fixture("text")),
    )
    _, message = await collect(run(replay_server, make_model(replay_server)))
    assert message.stop_reason == "stop"
    assert len(replay_server.requests) == 2


async def test_529_until_retries_are_spent(replay_server: ReplayServer) -> None:
    overloaded = ScriptedResponse.json(
        error_body("overloaded_error", "Overloaded"), status=529, headers={"retry-after": "0"}
    )
    replay_server.enqueue(*[overloaded] * 4)
    _, message = await collect(run(replay_server, make_model(replay_server)))
    assert message.stop_reason == "error"
    assert message.error_message == "529 overloaded_error: Overloaded"
    assert len(replay_server.requests) == 4  # the first attempt and three retries


async def test_overloaded_error_event_first_is_retried(replay_server: ReplayServer) -> None:
    # Anthropic can answer 200 and then fail with an `error` event before any content.
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    first = f"event: error\ndata: {json.dumps(error)}\n\n".encode()
    replay_server.enqueue(ScriptedResponse.sse(first), ScriptedResponse.sse(fixture("text")))
    events, message = await collect(run(replay_server, make_model(replay_server)))
    assert message.stop_reason == "stop" and [e.type for e in events].count("start") == 1
    assert len(replay_server.requests) == 2


async def test_overloaded_error_event_mid_stream(replay_server: ReplayServer) -> None:
    replay_server.enqueue(ScriptedResponse.sse(fixture("overloaded_midstream")))
    events, message = await collect(run(replay_server, make_model(replay_server)))
    assert events[-1].type == "error" and events[-1].reason == "error"
    assert message.error_message == "overloaded_error: Overloaded"
    assert message.content == [TextContent(text="Let me think about")]
    assert message.usage.input == 30
    assert len(replay_server.requests) == 1  # output had been streamed: no retry


async def test_non_json_error_body_is_quoted_briefly(replay_server: ReplayServer) -> None:
    page = b"<html><body>" + b"Bad gateway " * 200 + b"</body></html>"
    bad_gateway = ScriptedResponse(
        status=502,
        headers={"content-type": "text/html", "content-length": str(len(page))},
        chunks=[page],
    )
    replay_server.enqueue(*[bad_gateway] * 4)
    _, message = await collect(
        run(
            replay_server,
            make_model(replay_server),
            None,
            StreamOptions(api_key="k", max_retry_delay_ms=1),
        )
    )
    assert message.stop_reason == "error"
    assert (message.error_message or "").startswith("502 <html><body>Bad gateway")
    assert len(message.error_message or "") < 600
    assert len(replay_server.requests) == 4  # a 502 is retried


async def test_unreachable_server(replay_server: ReplayServer) -> None:
    with ReplayServer() as gone:
        url = gone.url
    model = make_model(None, base_url=url)
    started = time.monotonic()
    options = StreamOptions(api_key="k", max_retry_delay_ms=1)  # backoff waits capped at 1 ms
    _, message = await collect(adapter.stream(model, context(), options))
    assert time.monotonic() - started < 5
    assert message.stop_reason == "error"
    assert message.error_message is not None
    assert message.error_message.startswith("could not connect (ConnectError")


async def test_pings_do_not_keep_a_stalled_answer_alive(replay_server: ReplayServer) -> None:
    # `ping` events are Anthropic's keep-alives: like SSE comments, they do not reset the timer
    events = [e for e in split_sse(fixture("text")) if b"ping" not in e]
    ping = b'event: ping\ndata: {"type": "ping"}\n\n'
    replay_server.enqueue(ScriptedResponse.sse(events[:3] + [ping] * 100, delay=0.02))
    options = StreamOptions(api_key="k", idle_timeout=0.3)
    with anyio.fail_after(5):
        _, message = await collect(run(replay_server, make_model(replay_server), None, options))
    assert message.stop_reason == "error"
    assert message.error_message == "the stream was silent for longer than idle_timeout (0.3 s)"
    assert message.text == "Hello"


async def test_pings_before_the_first_event_do_not_count_as_one(
    replay_server: ReplayServer,
) -> None:
    ping = b'event: ping\ndata: {"type": "ping"}\n\n'
    replay_server.enqueue(
        ScriptedResponse.sse([ping] * 100, delay=0.02), ScriptedResponse.sse(fixture("text"))
    )
    # the pings span 2 s, longer than request_timeout; the retry's first event comes at once
    options = StreamOptions(api_key="k", request_timeout=1.0, max_retry_delay_ms=1)
    with anyio.fail_after(8):
        events, message = await collect(
            run(replay_server, make_model(replay_server), None, options)
        )
    assert message.stop_reason == "stop" and [e.type for e in events].count("start") == 1
    assert len(replay_server.requests) == 2


# --- abort -----------------------------------------------------------------------------------


async def test_abort_mid_stream_keeps_partial_content_and_usage(
    replay_server: ReplayServer,
) -> None:
    replay_server.enqueue(ScriptedResponse.sse(fixture("text"), delay=0.05))
    controller = AbortController()
    options = StreamOptions(api_key="k", signal=controller.signal)
    stream = run(replay_server, make_model(replay_server), None, options)
    events, message = await collect_aborting(stream, controller)
    check_protocol(events)
    assert events[-1].type == "error" and events[-1].reason == "aborted"
    assert message.stop_reason == "aborted" and message.error_message == "request was aborted"
    assert message.content == [TextContent(text="Hello")]
    assert message.usage.input == 25 and message.usage.cost.input > 0


async def test_abort_while_waiting_for_a_slow_chunk(replay_server: ReplayServer) -> None:
    replay_server.enqueue(ScriptedResponse.sse(fixture("text"), delay=[0, 0, 30]))
    controller = AbortController()
    options = StreamOptions(api_key="k", signal=controller.signal)
    stream = run(replay_server, make_model(replay_server), None, options)
    events: list[AssistantMessageEvent] = []
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(abort_after, controller, 0.3)
            async for event in stream:
                events.append(event)
    check_protocol(events)
    message = await stream.result()
    assert message.stop_reason == "aborted"
    assert events[-2].type == "text_start"  # stopped waiting for the first delta


async def test_abort_during_retry_wait(replay_server: ReplayServer) -> None:
    replay_server.enqueue(
        ScriptedResponse.json(
            error_body("rate_limit_error", "wait"), status=429, headers={"retry-after": "30"}
        )
    )
    controller = AbortController()
    options = StreamOptions(api_key="k", signal=controller.signal)
    stream = run(replay_server, make_model(replay_server), None, options)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(abort_after, controller, 0.3)
            events, message = await collect(stream)
    assert [e.type for e in events] == ["error"]
    assert message.stop_reason == "aborted"


async def test_leaving_early_closes_the_stream(replay_server: ReplayServer) -> None:
    replay_server.enqueue(ScriptedResponse.sse(fixture("text"), delay=[0, 0, 0, 0, 30]))
    with anyio.fail_after(5):
        async with run(replay_server, make_model(replay_server)) as stream:
            async for event in stream:
                if event.type == "text_delta":
                    break
        message = await stream.result()
    assert message.stop_reason == "error"


# --- hooks and options -----------------------------------------------------------------------


async def test_on_payload_replaces_the_body(replay_server: ReplayServer) -> None:
    replay_server.enqueue(ScriptedResponse.sse(fixture("text")))
    seen: list[dict[str, Any]] = []

    async def on_payload(payload: Any, model: Model) -> dict[str, Any]:
        seen.append(payload)
        return {**payload, "max_tokens": 77, "stop_sequences": ["END"], "x_custom": {"a": 1}}

    options = StreamOptions(api_key="k", on_payload=on_payload)
    _, message = await collect(run(replay_server, make_model(replay_server), None, options))
    assert message.stop_reason == "stop"
    body = replay_server.requests[0].json
    assert seen[0]["max_tokens"] == 64_000
    assert body == {**seen[0], "max_tokens": 77, "stop_sequences": ["END"], "x_custom": {"a": 1}}


async def test_on_payload_returning_none_keeps_the_body(replay_server: ReplayServer) -> None:
    replay_server.enqueue(ScriptedResponse.sse(fixture("text")))
    seen: list[Any] = []
    options = StreamOptions(api_key="k", on_payload=lambda p, m: seen.append(p))
    await collect(run(replay_server, make_model(replay_server), None, options))
    assert replay_server.requests[0].json == seen[0]


async def test_on_payload_returning_a_non_dict(replay_server: ReplayServer) -> None:
    options = StreamOptions(api_key="k", on_payload=lambda payload, model: "nope")
    events, message = await collect(run(replay_server, make_model(replay_server), None, options))
    assert [e.type for e in events] == ["error"]
    assert message.error_message == "on_payload returned str; expected a dict or None"
    assert replay_server.requests == []


async def test_hook_failures_end_the_stream(replay_server: ReplayServer) -> None:
    def broken(info: ResponseInfo, model: Model) -> None:
        raise RuntimeError("hook broke")

    replay_server.enqueue(ScriptedResponse.sse(fixture("text")))
    options = StreamOptions(api_key="k", on_response=broken)
    events, message = await collect(run(replay_server, make_model(replay_server), None, options))
    assert [e.type for e in events] == ["error"]
    assert message.error_message == "RuntimeError: hook broke"
    assert len(replay_server.requests) == 1  # not retried


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_runs_under_trio(replay_server: ReplayServer) -> None:
    """The scenarios that touch cancellation and cleanup, under trio (which reports every
    generator or connection left unclosed)."""
    model = make_model(replay_server)
    replay_server.enqueue(
        ScriptedResponse.json(
            error_body("rate_limit_error", "wait"), status=429, headers={"retry-after": "0"}
        ),
        ScriptedResponse.sse(fixture("tool_calls")),
        ScriptedResponse.sse(fixture("text"), delay=[0, 0, 0, 0, 30]),
        ScriptedResponse.sse(fixture("text"), delay=[0, 0, 0, 0, 30]),
        ScriptedResponse.sse(fixture("tool_call"), drop_after=8),
    )
    _, message = await collect(run(replay_server, model))
    assert message.stop_reason == "tool_use" and len(message.tool_calls) == 3
    controller = AbortController()
    options = StreamOptions(api_key="k", signal=controller.signal)
    stream = run(replay_server, model, None, options)
    with anyio.fail_after(5):
        _, message = await collect_aborting(stream, controller)
    assert message.stop_reason == "aborted" and message.text == "Hello"
    with anyio.fail_after(5):
        async with run(replay_server, model) as stream:
            async for event in stream:
                if event.type == "text_delta":
                    break
    _, message = await collect(run(replay_server, model))
    assert message.stop_reason == "error" and "connection was lost" in (message.error_message or "")
    assert len(replay_server.requests) == 5


async def test_on_response_sees_status_and_headers(replay_server: ReplayServer) -> None:
    replay_server.enqueue(
        ScriptedResponse.sse(
            fixture("text"), headers={"anthropic-ratelimit-requests-remaining": "49"}
        )
    )
    seen: list[ResponseInfo] = []

    async def on_response(info: ResponseInfo, model: Model) -> None:
        seen.append(info)

    options = StreamOptions(api_key="k", on_response=on_response)
    await collect(run(replay_server, make_model(replay_server), None, options))
    assert len(seen) == 1 and seen[0].status == 200
    assert seen[0].headers["anthropic-ratelimit-requests-remaining"] == "49"


async def test_options_reach_the_request(replay_server: ReplayServer) -> None:
    replay_server.enqueue(ScriptedResponse.sse(fixture("text")))
    model = make_model(replay_server, headers={"x-model": "m", "x-both": "model"})
    options = StreamOptions(
        api_key="secret-key",
        temperature=0.25,
        max_tokens=1000,
        headers={"x-both": "options", "x-extra": "e"},
        metadata={"user_id": "user-42", "ignored": "x"},
    )
    await collect(run(replay_server, model, context(tools=[WEATHER], system="Be brief."), options))
    request = replay_server.requests[0]
    body = request.json
    assert body["temperature"] == 0.25 and body["max_tokens"] == 1000
    assert body["metadata"] == {"user_id": "user-42"}
    assert body["tools"] == [
        {
            "name": "get_weather",
            "description": "The weather at a place.",
            "input_schema": dict(WEATHER.parameters),
        }
    ]
    assert body["system"] == [
        {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}
    ]
    headers = request.headers
    assert (
        headers["x-model"] == "m" and headers["x-both"] == "options" and headers["x-extra"] == "e"
    )
    assert "secret-key" in headers.get("x-api-key", "") + headers.get("authorization", "")
    assert "anthropic-version" in headers


async def test_api_key_from_the_environment(
    replay_server: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key")
    replay_server.enqueue(ScriptedResponse.sse(fixture("text")))
    await collect(adapter.stream(make_model(replay_server), context(), StreamOptions()))
    headers = replay_server.requests[0].headers
    assert "env-key" in headers.get("x-api-key", "") + headers.get("authorization", "")


def test_missing_api_key_raises_before_sending(
    replay_server: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    model = make_model(None, base_url="https://api.anthropic.com")
    with pytest.raises(MissingApiKeyError, match="ANTHROPIC_API_KEY"):
        adapter.stream(model, context(), StreamOptions())
    with pytest.raises(MissingApiKeyError, match="ANTHROPIC_API_KEY"):
        adapter.stream_simple(model, context(), SimpleStreamOptions(reasoning="high"))
    assert replay_server.requests == []


def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(
        MissingExtraError, match=re.escape("pip install 'agentcore-loop[anthropic]'")
    ):
        adapter.stream(make_model(None), context(), StreamOptions(api_key="k"))


# --- prompt caching --------------------------------------------------------------------------


def cache_markers(body: dict[str, Any]) -> list[Any]:
    found: list[Any] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if "cache_control" in value:
                found.append(value["cache_control"])
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(body)
    return found


async def test_cache_retention_request_shapes(replay_server: ReplayServer) -> None:
    ctx = context(
        UserMessage(content="first"),
        AssistantMessage(
            content=[TextContent(text="ok")],
            api=API,
            provider="anthropic",
            model="claude-sonnet-4-5",
        ),
        UserMessage(
            content=[TextContent(text="second"), ImageContent(data=PNG, mime_type="image/png")]
        ),
        system="System prompt.",
    )
    for _ in range(3):
        replay_server.enqueue(ScriptedResponse.sse(fixture("text")))
    model = make_model(replay_server)
    for retention in ("none", "short", "long"):
        options = StreamOptions(api_key="k", cache_retention=retention)
        await collect(adapter.stream(model, ctx, options))
    none, short, long = (r.json for r in replay_server.requests)
    assert cache_markers(none) == []
    assert short["system"][0]["cache_control"] == {"type": "ephemeral"}
    last = short["messages"][-1]["content"]
    assert last[-1]["type"] == "image" and last[-1]["cache_control"] == {"type": "ephemeral"}
    assert len(cache_markers(short)) == 2  # system prompt and last user message only
    # a one-hour TTL is only asked of api.anthropic.com
    assert cache_markers(long) == [{"type": "ephemeral"}] * 2


def test_long_retention_on_api_anthropic_com() -> None:
    for base_url in ("", "https://api.anthropic.com", "https://api.anthropic.com/v1"):
        model = make_model(None, base_url=base_url)
        body = build_payload(model, context(system="S"), StreamOptions(cache_retention="long"))
        assert cache_markers(body) == [{"type": "ephemeral", "ttl": "1h"}] * 2
    proxy = make_model(None, base_url="https://proxy.example.com")
    body = build_payload(proxy, context(system="S"), StreamOptions(cache_retention="long"))
    assert cache_markers(body) == [{"type": "ephemeral"}] * 2


def test_cache_marker_on_a_string_user_message_and_on_tool_results() -> None:
    model = make_model(None)
    body = build_payload(model, context(UserMessage(content="plain")), StreamOptions())
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "plain", "cache_control": {"type": "ephemeral"}}],
        }
    ]
    call = ToolCall(id="toolu_1", name="get_weather", arguments={"location": "Oslo"})
    ctx = context(
        UserMessage(content="weather?"),
        AssistantMessage(
            content=[call], api=API, provider="anthropic", model=model.id, stop_reason="tool_use"
        ),
        ToolResultMessage(
            tool_call_id="toolu_1", tool_name="get_weather", content=[TextContent(text="cold")]
        ),
    )
    last = build_payload(model, ctx, StreamOptions())["messages"][-1]
    assert last["content"][-1]["type"] == "tool_result"
    assert last["content"][-1]["cache_control"] == {"type": "ephemeral"}


# --- thinking levels (stream_simple) ---------------------------------------------------------


async def simple_request(
    server: ReplayServer, model: Model, ctx: Context | None = None, **options: Any
) -> tuple[dict[str, Any], dict[str, str]]:
    server.enqueue(ScriptedResponse.sse(fixture("text")))
    opts = SimpleStreamOptions(api_key="k", **options)
    await collect(adapter.stream_simple(model, ctx or context(), opts))
    request = server.requests[-1]
    return request.json, request.headers


async def test_budget_thinking_for_older_models(replay_server: ReplayServer) -> None:
    model = make_model(replay_server, "claude-sonnet-4-5", max_tokens=64_000)
    body, headers = await simple_request(replay_server, model, reasoning="medium", temperature=0.5)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert body["max_tokens"] == 64_000
    assert "temperature" not in body  # the API rejects a temperature with thinking
    assert "interleaved-thinking-2025-05-14" in headers["anthropic-beta"]
    body, _ = await simple_request(replay_server, model, reasoning="low", max_tokens=4000)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] == 6048


async def test_budget_keeps_room_for_the_answer(replay_server: ReplayServer) -> None:
    model = make_model(replay_server, "claude-3-7-sonnet-20250219", max_tokens=8192)
    body, _ = await simple_request(replay_server, model, reasoning="high")
    assert body["max_tokens"] == 8192
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192 - 1024}
    # xhigh is clamped to high on budget models; custom budgets win
    body, _ = await simple_request(
        replay_server,
        model,
        reasoning="xhigh",
        thinking_budgets=ThinkingBudgets(high=3000),
        max_tokens=2000,
    )
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 3000}
    assert body["max_tokens"] == 5000


async def test_tiny_output_limit_turns_budget_thinking_off(replay_server: ReplayServer) -> None:
    model = make_model(replay_server, "claude-sonnet-4-5", max_tokens=1024)
    body, headers = await simple_request(replay_server, model, reasoning="minimal")
    assert body["thinking"] == {"type": "disabled"}
    assert "anthropic-beta" not in headers


@pytest.mark.parametrize(
    ("model_id", "level", "effort"),
    [
        ("claude-opus-4-6", "minimal", "low"),
        ("claude-opus-4-6", "low", "low"),
        ("claude-sonnet-4-6", "medium", "medium"),
        ("claude-sonnet-4-6", "high", "high"),
        ("claude-sonnet-4-6", "xhigh", "high"),
        ("claude-opus-4-6", "xhigh", "max"),
        ("claude-opus-5", "medium", "medium"),
    ],
)
async def test_adaptive_thinking_with_effort(
    replay_server: ReplayServer, model_id: str, level: ThinkingLevel, effort: str
) -> None:
    model = make_model(replay_server, model_id, max_tokens=128_000)
    body, headers = await simple_request(replay_server, model, reasoning=level)
    assert body["thinking"] == {"type": "adaptive"}
    assert body["output_config"] == {"effort": effort}
    assert body["max_tokens"] == 128_000
    assert "anthropic-beta" not in headers


def test_adaptive_detection() -> None:
    adaptive = [
        "claude-opus-4-6",
        "claude-sonnet-4-6",
        "claude-opus-4-7",
        "claude-sonnet-5",
        "claude-haiku-5-5",
    ]
    budget = [
        "claude-sonnet-4-5",
        "claude-sonnet-4-5-20250929",
        "claude-opus-4-20250514",
        "claude-opus-4-1",
        "claude-haiku-4-5",
        "claude-3-7-sonnet-20250219",
    ]
    for model_id in adaptive:
        assert adapter.supports_adaptive_thinking(make_model(None, model_id)), model_id
    for model_id in budget:
        assert not adapter.supports_adaptive_thinking(make_model(None, model_id)), model_id


async def test_thinking_off_and_non_reasoning_models(replay_server: ReplayServer) -> None:
    body, _ = await simple_request(
        replay_server, make_model(replay_server), reasoning="off", temperature=0.3
    )
    assert body["thinking"] == {"type": "disabled"} and body["temperature"] == 0.3
    body, _ = await simple_request(replay_server, make_model(replay_server))
    assert body["thinking"] == {"type": "disabled"}
    plain = make_model(replay_server, "claude-3-5-haiku-latest", reasoning=False)
    body, _ = await simple_request(replay_server, plain, reasoning="high")
    assert "thinking" not in body and "output_config" not in body


def test_stream_takes_anthropic_options_directly() -> None:
    model = make_model(None)
    options = AnthropicOptions(thinking="enabled", thinking_budget=5000, max_tokens=9000)
    body = build_payload(model, context(), options)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 5000}
    assert body["max_tokens"] == 9000
    body = build_payload(model, context(), AnthropicOptions(thinking="adaptive", effort="max"))
    assert body["thinking"] == {"type": "adaptive"} and body["output_config"] == {"effort": "max"}
    assert "thinking" not in build_payload(model, context(), StreamOptions())


async def test_budget_thinking_is_off_inside_a_tool_loop_that_did_not_think(
    replay_server: ReplayServer,
) -> None:
    call = ToolCall(id="call_1", name="get_weather", arguments={"location": "Oslo"})
    ctx = context(
        UserMessage(content="weather?"),
        AssistantMessage(
            content=[TextContent(text="Checking."), call],
            api="openai-completions",
            provider="openai",
            model="gpt-4.1",
            stop_reason="tool_use",
        ),
        ToolResultMessage(
            tool_call_id="call_1", tool_name="get_weather", content=[TextContent(text="cold")]
        ),
    )
    body, _ = await simple_request(replay_server, make_model(replay_server), ctx, reasoning="high")
    assert body["thinking"] == {"type": "disabled"}  # the API would reject budget thinking here
    ctx.messages.append(
        AssistantMessage(
            content=[TextContent(text="It is cold.")],
            api=API,
            provider="anthropic",
            model="claude-sonnet-4-5",
        )
    )
    ctx.messages.append(UserMessage(content="thanks"))
    body, _ = await simple_request(replay_server, make_model(replay_server), ctx, reasoning="high")
    assert body["thinking"]["type"] == "enabled"  # a new user turn may think again


# --- transcripts -----------------------------------------------------------------------------


def test_same_model_transcript_is_replayed_faithfully() -> None:
    model = make_model(None)
    call = ToolCall(id="toolu_01A", name="get_weather", arguments={"location": "Oslo"})
    ctx = context(
        UserMessage(
            content=[TextContent(text="Look"), ImageContent(data=PNG, mime_type="image/png")]
        ),
        AssistantMessage(
            content=[
                ThinkingContent(thinking="Let me see.", thinking_signature="sig-1"),
                ThinkingContent(thinking="", thinking_signature="opaque", redacted=True),
                ThinkingContent(thinking="cut off before its signature"),
                TextContent(text="   "),
                TextContent(text="Checking."),
                call,
            ],
            api=API,
            provider="anthropic",
            model=model.id,
            stop_reason="tool_use",
        ),
        ToolResultMessage(
            tool_call_id="toolu_01A",
            tool_name="get_weather",
            content=[ImageContent(data=PNG, mime_type="image/png")],
            is_error=False,
        ),
    )
    messages = build_payload(model, ctx, StreamOptions(cache_retention="none"))["messages"]
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    assert messages == [
        {"role": "user", "content": [{"type": "text", "text": "Look"}, image]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Let me see.", "signature": "sig-1"},
                {"type": "redacted_thinking", "data": "opaque"},
                {"type": "text", "text": "cut off before its signature"},
                {"type": "text", "text": "Checking."},
                {
                    "type": "tool_use",
                    "id": "toolu_01A",
                    "name": "get_weather",
                    "input": {"location": "Oslo"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01A",
                    "content": [{"type": "text", "text": "(see attached image)"}, image],
                    "is_error": False,
                }
            ],
        },
    ]


def test_images_are_dropped_for_text_only_models() -> None:
    model = make_model(None, images=False)
    ctx = context(
        UserMessage(
            content=[TextContent(text="Look"), ImageContent(data=PNG, mime_type="image/png")]
        ),
        UserMessage(content=[ImageContent(data=PNG, mime_type="image/png")]),
        UserMessage(content=""),
    )
    messages = build_payload(model, ctx, StreamOptions(cache_retention="none"))["messages"]
    assert messages == [{"role": "user", "content": [{"type": "text", "text": "Look"}]}]


async def test_cross_provider_transcript_makes_a_valid_request(replay_server: ReplayServer) -> None:
    """Thinking and tool calls from OpenAI Chat Completions and Gemini, replayed to Claude."""
    openai_turn = AssistantMessage(
        content=[
            ThinkingContent(
                thinking="I need the weather and the time.", thinking_signature="reasoning_content"
            ),
            TextContent(text="Let me check both."),
            ToolCall(
                id="call_abc123|fc_0001+x/y", name="get_weather", arguments={"location": "Paris"}
            ),
            ToolCall(id="call_def456", name="get_time", arguments={"timezone": "Europe/Paris"}),
        ],
        api="openai-completions",
        provider="openai",
        model="gpt-5-mini",
        stop_reason="tool_use",
    )
    google_turn = AssistantMessage(
        content=[
            ThinkingContent(thinking="Now Rome.", thinking_signature="Q2lnbmF0dXJlLWdvb2dsZQ=="),
            ToolCall(
                id="get_weather:1712345.67",
                name="get_weather",
                arguments={"location": "Rome"},
                thought_signature="dGhvdWdodA==",
            ),
        ],
        api="google-generative-ai",
        provider="google",
        model="gemini-2.5-pro",
        stop_reason="tool_use",
    )
    failed_turn = AssistantMessage(
        content=[ToolCall(id="toolu_dead", name="get_weather", arguments={})],
        api=API,
        provider="anthropic",
        model="claude-sonnet-4-5",
        stop_reason="error",
        error_message="overloaded_error: Overloaded",
    )
    ctx = context(
        UserMessage(content="Weather and time in Paris?"),
        openai_turn,
        ToolResultMessage(
            tool_call_id="call_abc123|fc_0001+x/y",
            tool_name="get_weather",
            content=[TextContent(text="Sunny, 24°C")],
        ),
        # get_time never got a result
        UserMessage(content="And Rome? 😀 \ud83d"),
        google_turn,
        ToolResultMessage(
            tool_call_id="get_weather:1712345.67",
            tool_name="get_weather",
            content=[TextContent(text="Rainy"), ImageContent(data=PNG, mime_type="image/png")],
        ),
        failed_turn,
        ToolResultMessage(tool_call_id="toolu_dead", tool_name="get_weather", content=[]),
        UserMessage(content="Thanks!"),
        tools=[WEATHER, Tool(name="get_time", description="Time.", parameters={"type": "object"})],
    )
    replay_server.enqueue(ScriptedResponse.sse(fixture("text")))
    _, message = await collect(
        adapter.stream_simple(
            make_model(replay_server), ctx, SimpleStreamOptions(api_key="k", reasoning="medium")
        )
    )
    assert message.stop_reason == "stop"
    raw = replay_server.requests[0].body
    assert b'\\ud83d"' not in raw and "😀".encode() in raw  # the lone surrogate is gone
    body = json.loads(raw)
    messages = body["messages"]
    assert_valid_anthropic_messages(messages)
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "user",
        "user",
        "assistant",
        "user",
        "user",
    ]
    # thinking from other models is plain text; their signatures are not sent
    assert messages[1]["content"][0] == {"type": "text", "text": "I need the weather and the time."}
    assert messages[4]["content"][0] == {"type": "text", "text": "Now Rome."}
    assert (
        b"dGhvdWdodA" not in raw and b"Q2lnbmF0dXJl" not in raw and b"reasoning_content" not in raw
    )
    # ids normalised, results follow, the missing result is synthesised
    ids = [b["id"] for m in messages for b in m["content"] if b["type"] == "tool_use"]
    assert ids == ["call_abc123_fc_0001_x_y", "call_def456", "get_weather_1712345_67"]
    results = messages[2]["content"]
    assert [(r["tool_use_id"], r["is_error"]) for r in results] == [
        ("call_abc123_fc_0001_x_y", False),
        ("call_def456", True),
    ]
    assert results[1]["content"] == "No result provided"
    assert messages[5]["content"][0]["content"][0] == {"type": "text", "text": "Rainy"}
    assert messages[5]["content"][0]["content"][1]["type"] == "image"
    # the failed turn and its result are not replayed
    assert b"toolu_dead" not in raw
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192}


def assert_valid_anthropic_messages(messages: list[dict[str, Any]]) -> None:
    """The request rules the Messages API enforces that a transcript conversion can break."""
    id_pattern = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
    for i, message in enumerate(messages):
        assert message["role"] in ("user", "assistant")
        assert message["content"], f"message {i} is empty"
        for block in message["content"]:
            if block["type"] == "text":
                assert block["text"].strip(), f"empty text block in message {i}"
            if block["type"] == "tool_use":
                assert message["role"] == "assistant" and id_pattern.match(block["id"])
                following = messages[i + 1]
                assert following["role"] == "user"
                answered = {b.get("tool_use_id") for b in following["content"]}
                assert block["id"] in answered, f"tool_use {block['id']} has no result"
            if block["type"] == "tool_result":
                assert message["role"] == "user"
        if message["role"] == "user" and any(
            b["type"] == "tool_result" for b in message["content"]
        ):
            kinds = [b["type"] for b in message["content"]]
            assert kinds == sorted(kinds, key=lambda k: k != "tool_result"), "tool results first"
    assert messages[0]["role"] == "user"


# --- re-chunking -----------------------------------------------------------------------------


async def _final_message(server: ReplayServer, chunks: list[bytes]) -> AssistantMessage:
    server.enqueue(ScriptedResponse.sse(chunks))
    _, message = await collect(
        adapter.stream(make_model(server), context(), StreamOptions(api_key="k"))
    )
    return message


@pytest.mark.parametrize("name", ["tool_calls", "thinking"])
def test_any_rechunking_gives_the_same_message(name: str) -> None:
    body = fixture(name)
    with ReplayServer() as server:
        expected = anyio.run(_final_message, server, split_sse(body))
        assert expected.stop_reason in ("stop", "tool_use")

        @settings(
            max_examples=40,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        )
        @given(st.lists(st.integers(min_value=1, max_value=400), min_size=1, max_size=12))
        def check(sizes: list[int]) -> None:
            message = anyio.run(_final_message, server, rechunk(body, sizes))
            assert comparable(message) == comparable(expected)

        check()


# --- the catalogue and the agent loop --------------------------------------------------------


async def test_catalogue_models_through_the_adapter(replay_server: ReplayServer) -> None:
    opus = dataclasses.replace(
        get_model("anthropic", "claude-opus-4-6"), base_url=replay_server.url
    )
    body, _ = await simple_request(replay_server, opus, reasoning="xhigh")
    assert body["thinking"] == {"type": "adaptive"} and body["output_config"] == {"effort": "max"}
    sonnet = dataclasses.replace(
        get_model("anthropic", "claude-sonnet-4-5"), base_url=replay_server.url
    )
    body, _ = await simple_request(replay_server, sonnet, reasoning="high")
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 16_384}
    # claude-opus-4-5 is deprecated in the SDK: no DeprecationWarning (an error in this suite)
    old = dataclasses.replace(get_model("anthropic", "claude-opus-4-5"), base_url=replay_server.url)
    replay_server.enqueue(ScriptedResponse.sse(fixture("text")))
    _, message = await collect(adapter.stream(old, context(), StreamOptions(api_key="k")))
    assert message.stop_reason == "stop"
    assert message.usage.cost.input == pytest.approx(25 * old.cost.input / 1e6)


async def test_agent_run_with_tool_calls(replay_server: ReplayServer) -> None:
    from agentcore import AgentContext, AgentLoopConfig, run_agent_loop, tool

    @tool
    def get_weather(location: str, unit: str = "celsius") -> str:
        """Current weather at a place."""
        return f"{location}: 64 degrees {unit}"

    replay_server.enqueue(
        ScriptedResponse.sse(fixture("tool_call")), ScriptedResponse.sse(fixture("thinking"))
    )
    events: list[Any] = []
    messages = await run_agent_loop(
        [UserMessage(content="Weather in San Francisco?")],
        AgentContext(system_prompt="You are terse.", tools=[get_weather]),
        AgentLoopConfig(model=make_model(replay_server), api_key="k", reasoning="low"),
        events.append,
    )
    assert [m.role for m in messages] == ["user", "assistant", "tool_result", "assistant"]
    result = messages[2]
    assert isinstance(result, ToolResultMessage) and not result.is_error
    assert result.tool_call_id == "toolu_01T1x1fJ34qAmk2tNTrN7Up6"
    assert result.content == [TextContent(text="San Francisco, CA: 64 degrees fahrenheit")]
    assert messages[3].text.startswith("The greatest common divisor")  # type: ignore[union-attr]
    assert events[0].type == "agent_start" and events[-1].type == "agent_end"

    first, second = (r.json for r in replay_server.requests)
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert [t["name"] for t in first["tools"]] == ["get_weather"]
    assert first["system"][0]["text"] == "You are terse."
    assert second["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Okay, let me check the weather for San Francisco, CA:"},
                {
                    "type": "tool_use",
                    "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                    "name": "get_weather",
                    "input": {"location": "San Francisco, CA", "unit": "fahrenheit"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                    "content": "San Francisco, CA: 64 degrees fahrenheit",
                    "is_error": False,
                    "cache_control": {"type": "ephemeral"},
                }
            ],
        },
    ]
    # the first answer did not think, so budget thinking is off inside its tool loop
    assert second["thinking"] == {"type": "disabled"}
