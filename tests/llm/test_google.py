"""The Gemini adapter through the real `google-genai` SDK, against the replay server."""

from __future__ import annotations

import base64
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
from agentcore.llm import get_api_provider, is_context_overflow
from agentcore.llm.model import Model, ModelCost
from agentcore.llm.models import calculate_cost
from agentcore.llm.providers import google
from agentcore.llm.types import (
    Context,
    ResponseInfo,
    SimpleStreamOptions,
    StreamOptions,
    ThinkingBudgets,
    Tool,
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

from .helpers import abort_after, collect, collect_aborting
from .replay_server import ReplayServer, ScriptedResponse, load_fixture, rechunk, split_sse

pytestmark = pytest.mark.anyio

API = "google-generative-ai"
KEY = "test-key"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n-image-").decode()
WEATHER = Tool(
    name="get_weather",
    description="Current weather for a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}, "units": {"type": "string"}},
        "required": ["city"],
    },
)


def gemini(server: ReplayServer, model_id: str = "gemini-2.5-flash", **kw: Any) -> Model:
    fields: dict[str, Any] = {
        "name": model_id,
        "base_url": server.base_url("/v1beta"),
        "reasoning": True,
        "input": ["text", "image"],
        "cost": ModelCost(input=1.25, output=10.0, cache_read=0.31),
        "context_window": 1_048_576,
        "max_tokens": 65_536,
    }
    fields.update(kw)
    return Model(id=model_id, api=API, provider="google", **fields)


def sse(name: str, **kw: Any) -> ScriptedResponse:
    return ScriptedResponse.sse(load_fixture(API, name), **kw)


def error_json(name: str, status: int, **kw: Any) -> ScriptedResponse:
    body = json.loads(load_fixture(API, f"{name}.json"))
    return ScriptedResponse.json(body, status=status, **kw)


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode()


def snake(value: Any) -> Any:
    """A request body with camelCase keys in snake_case (the SDK sends a mix of both)."""
    if isinstance(value, dict):
        return {re.sub(r"(?<!^)([A-Z])", r"_\1", k).lower(): snake(v) for k, v in value.items()}
    if isinstance(value, list):
        return [snake(v) for v in value]
    return value


def ask(text: str = "Hi", **kw: Any) -> Context:
    return Context(system_prompt="Be brief.", messages=[UserMessage(content=text)], **kw)


def opts(**kw: Any) -> StreamOptions:
    return StreamOptions(api_key=KEY, **kw)


def simple(**kw: Any) -> SimpleStreamOptions:
    return SimpleStreamOptions(api_key=KEY, **kw)


# --- streaming --------------------------------------------------------------------------------


async def test_plain_text(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("text"))
    model = gemini(replay_server)
    events, message = await collect(google.stream(model, ask(), opts(temperature=0.2)))

    assert [e.type for e in events] == [
        "start",
        "text_start",
        "text_delta",
        "text_delta",
        "text_delta",
        "text_end",
        "done",
    ]
    assert [e.delta for e in events if e.type == "text_delta"] == ["Hello", ", world", "!"]
    assert message.content == [TextContent(text="Hello, world!")]
    assert message.stop_reason == "stop"
    assert (message.api, message.provider, message.model) == (API, "google", "gemini-2.5-flash")
    assert message.usage.input == 12
    assert message.usage.output == 4

    (request,) = replay_server.requests
    assert request.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert request.headers["x-goog-api-key"] == KEY
    body = snake(request.json)
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Hi"}]}]
    assert body["system_instruction"]["parts"] == [{"text": "Be brief."}]
    assert body["generation_config"]["temperature"] == 0.2
    assert body["generation_config"]["max_output_tokens"] == 65_536
    assert "thinking_config" not in body["generation_config"]  # `stream` leaves the default


async def test_thinking_then_text_keeps_signatures(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("thinking"))
    model = gemini(replay_server, "gemini-2.5-pro")
    events, message = await collect(google.stream_simple(model, ask(), simple(reasoning="medium")))

    assert [e.type for e in events] == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_delta",
        "text_end",
        "done",
    ]
    assert message.content == [
        ThinkingContent(
            thinking="**Planning**\nThe user wants a haiku.",
            thinking_signature=b64url(b"sig-thinking"),
        ),
        TextContent(
            text="Autumn moonlight\na worm digs silently", text_signature=b64url(b"sig-text")
        ),
    ]
    config = snake(replay_server.requests[0].json)["generation_config"]
    assert config["thinking_config"] == {"include_thoughts": True, "thinking_budget": 8192}


async def test_usage_and_cost(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("thinking"))
    model = gemini(replay_server, "gemini-2.5-pro")
    _, message = await collect(google.stream(model, ask(), opts()))

    # prompt 100 of which 40 cached; 20 answer + 50 thinking tokens
    assert (message.usage.input, message.usage.cache_read, message.usage.cache_write) == (60, 40, 0)
    assert message.usage.output == 70
    assert message.usage.total_tokens == 170
    expected = calculate_cost(model, Usage(input=60, output=70, cache_read=40))
    assert message.usage.cost == expected.cost
    assert message.usage.cost.total == pytest.approx((60 * 1.25 + 70 * 10.0 + 40 * 0.31) / 1e6)


async def test_one_tool_call(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("tool_call"))
    model = gemini(replay_server)
    events, message = await collect(google.stream(model, ask(tools=[WEATHER]), opts()))

    assert message.stop_reason == "tool_use"
    text, call = message.content
    assert text == TextContent(text="Let me check the weather.")
    assert isinstance(call, ToolCall)
    assert call.name == "get_weather"
    assert call.arguments == {"city": "Paris", "units": "celsius"}
    assert call.thought_signature == b64url(b"sig-call")
    assert call.id
    deltas = [e for e in events if e.type == "toolcall_delta"]
    assert len(deltas) == 1
    assert json.loads(deltas[0].delta) == call.arguments
    assert [e.type for e in events][-4:] == [
        "toolcall_start",
        "toolcall_delta",
        "toolcall_end",
        "done",
    ]

    tools = snake(replay_server.requests[0].json)["tools"]
    (declaration,) = tools[0]["function_declarations"]
    assert declaration["name"] == "get_weather"
    assert declaration["parameters_json_schema"] == dict(WEATHER.parameters)


async def test_several_tool_calls(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("tool_calls_parallel"))
    model = gemini(replay_server)
    events, message = await collect(google.stream(model, ask(), opts()))

    assert message.stop_reason == "tool_use"
    calls = message.tool_calls
    assert [(c.name, c.arguments) for c in calls] == [
        ("read_file", {"path": "a.txt"}),
        ("read_file", {"path": "b.txt"}),
        ("list_files", {}),
    ]
    assert calls[1].id == "fc-server-1"  # an id the server gave is kept
    assert len({c.id for c in calls}) == 3  # missing ones are generated, unique
    assert [e.delta for e in events if e.type == "toolcall_delta"][-1] == "{}"
    ends = [e.tool_call for e in events if e.type == "toolcall_end"]
    assert ends == calls


@pytest.mark.parametrize(
    ("reason", "stop_reason"),
    [
        ("STOP", "stop"),
        ("MAX_TOKENS", "length"),
        ("SAFETY", "error"),
        ("RECITATION", "error"),
        ("MALFORMED_FUNCTION_CALL", "error"),
        ("BLOCKLIST", "error"),
        ("PROHIBITED_CONTENT", "error"),
        ("SPII", "error"),
        ("LANGUAGE", "error"),
        ("OTHER", "error"),
        ("FINISH_REASON_UNSPECIFIED", "error"),
    ],
)
async def test_finish_reasons(replay_server: ReplayServer, reason: str, stop_reason: str) -> None:
    body = {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": "partial answer"}]},
                "finishReason": reason,
            }
        ],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2, "totalTokenCount": 7},
    }
    replay_server.enqueue(ScriptedResponse.sse([f"data: {json.dumps(body)}\r\n\r\n".encode()]))
    events, message = await collect(google.stream(gemini(replay_server), ask(), opts()))

    assert message.stop_reason == stop_reason
    assert message.text == "partial answer"
    assert message.usage.total_tokens == 7
    assert events[-1].type == ("error" if stop_reason == "error" else "done")
    if stop_reason == "error":
        assert message.error_message is not None
        assert message.error_message == f"Gemini stopped with finish reason {reason}"


async def test_max_tokens_fixture(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("max_tokens"))
    _, message = await collect(google.stream(gemini(replay_server), ask(), opts()))
    assert message.stop_reason == "length"
    assert message.text == "This answer is cut off"


async def test_safety_fixture(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("safety"))
    events, message = await collect(google.stream(gemini(replay_server), ask(), opts()))
    assert message.stop_reason == "error"
    assert message.error_message == "Gemini stopped with finish reason SAFETY"
    assert message.text == "I can"
    assert [e.type for e in events][-2:] == ["text_end", "error"]


async def test_blocked_prompt(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("prompt_blocked"))
    _, message = await collect(google.stream(gemini(replay_server), ask(), opts()))
    assert message.stop_reason == "error"
    assert message.error_message == "Gemini blocked the prompt: PROHIBITED_CONTENT"
    assert message.usage.input == 9


# --- failures ---------------------------------------------------------------------------------


async def test_error_status(replay_server: ReplayServer) -> None:
    replay_server.enqueue(error_json("error_400", 400))
    seen: list[ResponseInfo] = []
    events, message = await collect(
        google.stream(
            gemini(replay_server), ask(), opts(on_response=lambda info, _m: seen.append(info))
        )
    )
    assert [e.type for e in events] == ["error"]
    assert message.stop_reason == "error"
    assert message.error_message is not None
    assert "400" in message.error_message
    assert "API key not valid" in message.error_message
    assert (message.api, message.model) == (API, "gemini-2.5-flash")
    assert [info.status for info in seen] == [400]
    assert len(replay_server.requests) == 1  # a 400 is not retried


async def test_context_overflow_error_is_recognised(replay_server: ReplayServer) -> None:
    text = "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
    replay_server.enqueue(
        ScriptedResponse.json(
            {"error": {"code": 400, "message": text, "status": "INVALID_ARGUMENT"}}, status=400
        )
    )
    _, message = await collect(google.stream(gemini(replay_server), ask(), opts()))
    assert is_context_overflow(message)


async def test_retry_delay_from_the_error_body(replay_server: ReplayServer) -> None:
    # no header: Gemini's RetryInfo detail says "retryDelay": "37s"
    replay_server.enqueue(error_json("error_429", 429))
    _, message = await collect(
        google.stream(gemini(replay_server), ask(), opts(max_retry_delay_ms=10_000))
    )
    assert message.error_message is not None
    assert "37 s" in message.error_message
    assert "10 s" in message.error_message


async def test_event_stream_fields_the_sdk_does_not_expect(replay_server: ReplayServer) -> None:
    # google-genai reads only `data: ` lines; the shared parser hands it those alone
    events = split_sse(load_fixture(API, "text"))
    odd = [b": keep-alive\r\n\r\n"] + [
        b"event: message\r\nid: %d\r\n" % i + e.replace(b"data: ", b"data:").replace(b"\n", b"\r\n")
        for i, e in enumerate(events)
    ]
    replay_server.enqueue(ScriptedResponse.sse(odd))
    _, message = await collect(google.stream(gemini(replay_server), ask(), opts()))
    assert message.stop_reason == "stop", message.error_message
    assert message.text == "Hello, world!"


async def test_abort_mid_stream(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("text", delay=5.0))
    controller = AbortController()
    stream = google.stream(gemini(replay_server), ask(), opts(signal=controller.signal))
    started = time.monotonic()
    events, message = await collect_aborting(stream, controller)
    assert time.monotonic() - started < 3
    assert message.stop_reason == "aborted"
    assert message.text == "Hello"
    assert message.usage.input == 12  # usage so far, also on an aborted message
    assert message.usage.cost.total > 0
    assert events[-1].type == "error"


async def test_abort_while_waiting_for_the_response(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("text", delay=[5.0, 0, 0]))
    controller = AbortController()
    stream = google.stream(gemini(replay_server), ask(), opts(signal=controller.signal))

    async with anyio.create_task_group() as tg:
        tg.start_soon(abort_after, controller, 0.2)
        events, message = await collect(stream)
    assert [e.type for e in events] == ["error"]
    assert message.stop_reason == "aborted"


async def test_abort_during_retry_wait(replay_server: ReplayServer) -> None:
    replay_server.enqueue(error_json("error_429", 429, headers={"retry-after": "30"}))
    controller = AbortController()
    stream = google.stream(gemini(replay_server), ask(), opts(signal=controller.signal))

    started = time.monotonic()
    async with anyio.create_task_group() as tg:
        tg.start_soon(abort_after, controller, 0.3)
        _, message = await collect(stream)
    assert time.monotonic() - started < 5
    assert message.stop_reason == "aborted"


# --- requests ---------------------------------------------------------------------------------


async def test_on_payload_replaces_the_body(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("text"), sse("text"))
    seen: list[Any] = []

    def on_payload(payload: Any, model: Model) -> Any:
        seen.append(payload)
        return {
            **payload,
            "contents": [{"role": "user", "parts": [{"text": "Replaced"}]}],
            "config": {**payload["config"], "temperature": 0.9, "top_k": 3},
        }

    model = gemini(replay_server)
    await collect(google.stream(model, ask(), opts(on_payload=on_payload)))
    assert seen[0]["model"] == "gemini-2.5-flash"
    assert seen[0]["contents"] == [{"role": "user", "parts": [{"text": "Hi"}]}]
    body = snake(replay_server.requests[0].json)
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Replaced"}]}]
    assert body["generation_config"]["temperature"] == 0.9
    assert body["generation_config"]["top_k"] == 3

    async def returns_none(payload: Any, model: Model) -> None:
        payload["config"]["temperature"] = 0.1  # in-place edits count too

    await collect(google.stream(model, ask(), opts(on_payload=returns_none)))
    assert snake(replay_server.requests[1].json)["generation_config"]["temperature"] == 0.1


async def test_invalid_payload_is_an_error_terminal(replay_server: ReplayServer) -> None:
    events, message = await collect(
        google.stream(gemini(replay_server), ask(), opts(on_payload=lambda p, m: ["nope"]))
    )
    assert [e.type for e in events] == ["error"]
    assert message.error_message is not None
    assert "payload" in message.error_message
    assert replay_server.requests == []


async def test_headers_and_max_tokens(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("text"))
    model = gemini(replay_server, headers={"x-model": "m", "x-both": "model"})
    await collect(google.stream(model, ask(), opts(headers={"x-both": "options"}, max_tokens=1234)))
    request = replay_server.requests[0]
    assert request.headers["x-model"] == "m"
    assert request.headers["x-both"] == "options"
    assert snake(request.json)["generation_config"]["max_output_tokens"] == 1234


async def test_base_url_without_version(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("text"))
    await collect(google.stream(gemini(replay_server, base_url=replay_server.url), ask(), opts()))
    assert replay_server.requests[0].path.startswith("/v1beta/models/gemini-2.5-flash:")


@pytest.mark.parametrize(
    ("model_id", "level", "budgets", "expected"),
    [
        ("gemini-2.5-pro", "minimal", None, {"include_thoughts": True, "thinking_budget": 128}),
        ("gemini-2.5-pro", "high", None, {"include_thoughts": True, "thinking_budget": 32768}),
        ("gemini-2.5-pro", "xhigh", None, {"include_thoughts": True, "thinking_budget": 32768}),
        ("gemini-2.5-flash", "low", None, {"include_thoughts": True, "thinking_budget": 2048}),
        ("gemini-2.5-flash", "high", None, {"include_thoughts": True, "thinking_budget": 24576}),
        (
            "gemini-2.5-flash-lite",
            "minimal",
            None,
            {"include_thoughts": True, "thinking_budget": 512},
        ),
        (
            "gemini-2.5-flash",
            "medium",
            ThinkingBudgets(medium=5000),
            {"include_thoughts": True, "thinking_budget": 5000},
        ),
        (
            "gemini-2.0-flash-thinking",
            "high",
            None,
            {"include_thoughts": True, "thinking_budget": -1},
        ),
        (
            "gemini-3-pro-preview",
            "minimal",
            None,
            {"include_thoughts": True, "thinking_level": "LOW"},
        ),
        (
            "gemini-3-pro-preview",
            "medium",
            None,
            {"include_thoughts": True, "thinking_level": "HIGH"},
        ),
        (
            "gemini-3-flash-preview",
            "minimal",
            None,
            {"include_thoughts": True, "thinking_level": "MINIMAL"},
        ),
        (
            "gemini-3-flash-preview",
            "medium",
            None,
            {"include_thoughts": True, "thinking_level": "MEDIUM"},
        ),
        (
            "gemini-3.1-pro-preview",
            "xhigh",
            None,
            {"include_thoughts": True, "thinking_level": "HIGH"},
        ),
        ("gemini-2.5-flash", "off", None, {"thinking_budget": 0}),
        ("gemini-2.5-flash", None, None, {"thinking_budget": 0}),
        ("gemini-2.5-pro", "off", None, {"thinking_budget": 128}),
        ("gemini-3-pro-preview", "off", None, {"thinking_level": "LOW"}),
        ("gemini-3-flash-preview", "off", None, {"thinking_level": "MINIMAL"}),
    ],
)
def test_thinking_config(
    model_id: str, level: Any, budgets: ThinkingBudgets | None, expected: dict[str, Any]
) -> None:
    model = Model(id=model_id, api=API, provider="google", reasoning=True)
    assert google.thinking_config(model, level, budgets) == expected


def test_no_thinking_config_for_models_that_do_not_reason() -> None:
    model = Model(id="gemini-2.0-flash", api=API, provider="google", reasoning=False)
    assert google.thinking_config(model, "high") is None


async def test_thinking_level_request_shape(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("text"), sse("text"))
    model = gemini(replay_server, "gemini-3-flash-preview")
    await collect(google.stream_simple(model, ask(), simple(reasoning="low")))
    await collect(google.stream_simple(model, ask(), simple()))
    first, second = (snake(r.json)["generation_config"] for r in replay_server.requests)
    assert first["thinking_config"] == {"include_thoughts": True, "thinking_level": "LOW"}
    assert second["thinking_config"] == {"thinking_level": "MINIMAL"}


# --- transcripts ------------------------------------------------------------------------------


def _parts(body: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    return [(c["role"], c["parts"]) for c in snake(body)["contents"]]


async def test_same_model_replay_keeps_thinking_and_signatures(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("text"))
    model = gemini(replay_server, "gemini-3-pro-preview")
    turn = AssistantMessage(
        api=API,
        provider="google",
        model="gemini-3-pro-preview",
        stop_reason="tool_use",
        content=[
            ThinkingContent(thinking="Need the weather.", thinking_signature=b64url(b"t-sig")),
            TextContent(text="Checking.", text_signature=b64url(b"x-sig")),
            ToolCall(
                id="call_1",
                name="get_weather",
                arguments={"city": "Oslo"},
                thought_signature=b64url(b"c-sig"),
            ),
            ToolCall(id="call_2", name="get_weather", arguments={"city": "Rome"}),
        ],
    )
    context = Context(
        messages=[
            UserMessage(
                content=[
                    TextContent(text="Weather?"),
                    ImageContent(data=PNG, mime_type="image/png"),
                ]
            ),
            turn,
            ToolResultMessage(
                tool_call_id="call_1",
                tool_name="get_weather",
                content=[TextContent(text="4 C"), ImageContent(data=PNG, mime_type="image/png")],
            ),
            ToolResultMessage(
                tool_call_id="call_2",
                tool_name="get_weather",
                content=[TextContent(text="no data")],
                is_error=True,
            ),
        ],
        tools=[WEATHER],
    )
    await collect(google.stream(model, context, opts()))
    user, assistant, results = _parts(replay_server.requests[0].json)
    assert user == (
        "user",
        [
            {"text": "Weather?"},
            {"inline_data": {"mime_type": "image/png", "data": b64url(base64.b64decode(PNG))}},
        ],
    )
    assert assistant == (
        "model",
        [
            {"text": "Need the weather.", "thought": True, "thought_signature": b64url(b"t-sig")},
            {"text": "Checking.", "thought_signature": b64url(b"x-sig")},
            {
                "function_call": {"name": "get_weather", "args": {"city": "Oslo"}},
                "thought_signature": b64url(b"c-sig"),
            },
            {
                "function_call": {"name": "get_weather", "args": {"city": "Rome"}},
                "thought_signature": google.SKIP_THOUGHT_SIGNATURE,
            },
        ],
    )
    role, parts = results
    assert role == "user"
    first, second = (p["function_response"] for p in parts)
    assert first["name"] == "get_weather"
    assert first["response"] == {"output": "4 C"}
    assert first["parts"][0]["inline_data"]["mime_type"] == "image/png"  # Gemini 3: inline
    assert second["response"] == {"error": "no data"}


async def test_tool_result_images_for_older_models(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("text"))
    model = gemini(replay_server, "gemini-2.5-flash")
    call = ToolCall(id="c1", name="screenshot", arguments={})
    context = Context(
        messages=[
            UserMessage(content="Take a screenshot."),
            AssistantMessage(
                api=API, provider="google", model=model.id, content=[call], stop_reason="tool_use"
            ),
            ToolResultMessage(
                tool_call_id="c1",
                tool_name="screenshot",
                content=[ImageContent(data=PNG, mime_type="image/png")],
            ),
        ]
    )
    await collect(google.stream(model, context, opts()))
    contents = _parts(replay_server.requests[0].json)
    assert contents[1][1] == [{"function_call": {"name": "screenshot", "args": {}}}]
    assert contents[2][1] == [
        {
            "function_response": {
                "name": "screenshot",
                "response": {"output": "(see attached image)"},
            }
        }
    ]
    assert contents[3][0] == "user"
    assert contents[3][1][0] == {"text": "Tool result image:"}
    assert contents[3][1][1]["inline_data"]["mime_type"] == "image/png"


async def test_cross_provider_transcript(replay_server: ReplayServer) -> None:
    """Thinking and tool calls made by Anthropic and OpenAI, replayed to Gemini 3."""
    replay_server.enqueue(sse("text"))
    model = gemini(replay_server, "gemini-3-pro-preview")
    anthropic_turn = AssistantMessage(
        api="anthropic-messages",
        provider="anthropic",
        model="claude-sonnet-4-5",
        stop_reason="tool_use",
        content=[
            ThinkingContent(
                thinking="I should list files.", thinking_signature="EqQBCkgIARABGAIiQ"
            ),
            ThinkingContent(thinking="", thinking_signature="opaque", redacted=True),
            TextContent(text="Listing."),
            ToolCall(id="toolu_01A", name="list_files", arguments={"dir": "."}),
        ],
    )
    openai_turn = AssistantMessage(
        api="openai-responses",
        provider="openai",
        model="gpt-5",
        stop_reason="tool_use",
        content=[
            ThinkingContent(thinking="Read a.txt next.", thinking_signature='{"id":"rs_1"}'),
            TextContent(text="Reading.", text_signature='{"v":1,"id":"msg_1"}'),
            ToolCall(id="call_abc|fc_123", name="read_file", arguments={"path": "a.txt"}),
            ToolCall(id="call_def|fc_456", name="read_file", arguments={"path": "b.txt"}),
        ],
    )
    failed_turn = AssistantMessage(
        api="openai-completions",
        provider="openai",
        model="gpt-4o",
        stop_reason="error",
        error_message="boom",
        content=[TextContent(text="half an answ")],
    )
    context = Context(
        system_prompt="You are careful.",
        messages=[
            UserMessage(content="Look around \ud83d."),  # an unpaired surrogate
            anthropic_turn,
            ToolResultMessage(
                tool_call_id="toolu_01A",
                tool_name="list_files",
                content=[TextContent(text="a.txt")],
            ),
            openai_turn,
            ToolResultMessage(
                tool_call_id="call_abc|fc_123",
                tool_name="read_file",
                content=[TextContent(text="A")],
            ),
            # call_def|fc_456 has no result
            UserMessage(content="Continue."),
            failed_turn,
            UserMessage(content="Again."),
        ],
    )
    _, message = await collect(google.stream(model, context, opts()))
    assert message.stop_reason == "stop"

    body = replay_server.requests[0].json
    json.dumps(body, ensure_ascii=False).encode("utf-8")  # valid UTF-8: no lone surrogates
    contents = _parts(body)
    assert [role for role, _ in contents] == [
        "user",
        "model",
        "user",
        "model",
        "user",
        "user",
        "user",
    ]
    assert contents[0][1] == [{"text": "Look around ."}]
    assert contents[1][1] == [
        {"text": "I should list files."},  # foreign thinking as plain text, no signature
        {"text": "Listing."},
        {
            "function_call": {"name": "list_files", "args": {"dir": "."}},
            "thought_signature": google.SKIP_THOUGHT_SIGNATURE,
        },
    ]
    assert contents[2][1] == [
        {"function_response": {"name": "list_files", "response": {"output": "a.txt"}}}
    ]
    assert contents[3][1] == [
        {"text": "Read a.txt next."},
        {"text": "Reading."},
        {
            "function_call": {"name": "read_file", "args": {"path": "a.txt"}},
            "thought_signature": google.SKIP_THOUGHT_SIGNATURE,
        },
        {
            "function_call": {"name": "read_file", "args": {"path": "b.txt"}},
            "thought_signature": google.SKIP_THOUGHT_SIGNATURE,
        },
    ]
    assert contents[4][1] == [
        {"function_response": {"name": "read_file", "response": {"output": "A"}}},
        {"function_response": {"name": "read_file", "response": {"error": "No result provided"}}},
    ]
    # the errored turn is not replayed
    assert contents[5][1] == [{"text": "Continue."}]
    assert contents[6][1] == [{"text": "Again."}]
    assert "half an answ" not in json.dumps(body)


async def test_no_sentinel_for_older_models(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("text"))
    model = gemini(replay_server, "gemini-2.5-flash")
    turn = AssistantMessage(
        api="anthropic-messages",
        provider="anthropic",
        model="claude-sonnet-4-5",
        stop_reason="tool_use",
        content=[ToolCall(id="toolu_1", name="list_files", arguments={})],
    )
    context = Context(messages=[UserMessage(content="Go"), turn])
    await collect(google.stream(model, context, opts()))
    contents = _parts(replay_server.requests[0].json)
    assert contents[1][1] == [{"function_call": {"name": "list_files", "args": {}}}]


async def test_tool_call_ids_for_models_that_need_them(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("text"))
    model = gemini(replay_server, "claude-sonnet-4-5", reasoning=False)
    turn = AssistantMessage(
        api="openai-responses",
        provider="openai",
        model="gpt-5",
        stop_reason="tool_use",
        content=[ToolCall(id="call_abc|fc_123", name="list_files", arguments={})],
    )
    context = Context(
        messages=[
            UserMessage(content="Go"),
            turn,
            ToolResultMessage(
                tool_call_id="call_abc|fc_123",
                tool_name="list_files",
                content=[TextContent(text="x")],
            ),
        ]
    )
    await collect(google.stream(model, context, opts()))
    contents = _parts(replay_server.requests[0].json)
    assert contents[1][1][0]["function_call"]["id"] == "call_abc_fc_123"
    assert contents[2][1][0]["function_response"]["id"] == "call_abc_fc_123"


async def test_images_dropped_for_text_only_models(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("text"))
    model = gemini(replay_server, input=["text"])
    context = Context(
        messages=[
            UserMessage(
                content=[
                    TextContent(text="What is it?"),
                    ImageContent(data=PNG, mime_type="image/png"),
                ]
            ),
            UserMessage(content=[ImageContent(data=PNG, mime_type="image/png")]),
        ]
    )
    await collect(google.stream(model, context, opts()))
    assert _parts(replay_server.requests[0].json) == [("user", [{"text": "What is it?"}])]


# --- invariants -------------------------------------------------------------------------------


def _masked(message: AssistantMessage) -> tuple[Any, ...]:
    """A message with generated tool-call ids replaced by their position."""
    content = [
        ToolCall(
            id=c.id if c.id == "fc-server-1" else f"#{i}",
            name=c.name,
            arguments=c.arguments,
            thought_signature=c.thought_signature,
        )
        if isinstance(c, ToolCall)
        else c
        for i, c in enumerate(message.content)
    ]
    return (content, message.usage, message.stop_reason, message.error_message)


async def _replay(body: Sequence[bytes], name: str) -> AssistantMessage:
    with ReplayServer() as server:
        server.enqueue(ScriptedResponse.sse(list(body)))
        return await google.stream(gemini(server), ask(), opts()).result()


_REFERENCE: dict[str, tuple[Any, ...]] = {}


@pytest.mark.parametrize("name", ["text", "thinking", "tool_call", "tool_calls_parallel", "safety"])
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(sizes=st.lists(st.integers(min_value=1, max_value=97), min_size=1, max_size=12))
def test_rechunking_gives_the_same_message(name: str, sizes: list[int]) -> None:
    body = load_fixture(API, name)
    if name not in _REFERENCE:
        _REFERENCE[name] = _masked(anyio.run(_replay, split_sse(body), name))
    assert _masked(anyio.run(_replay, rechunk(body, sizes), name)) == _REFERENCE[name]


# --- setup ------------------------------------------------------------------------------------


def test_missing_api_key_raises_before_sending(
    replay_server: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    model = Model(id="gemini-2.5-flash", api=API, provider="google")
    with pytest.raises(MissingApiKeyError, match="GEMINI_API_KEY"):
        google.stream(model, ask())
    with pytest.raises(MissingApiKeyError, match="GEMINI_API_KEY"):
        google.stream_simple(model, ask())
    assert replay_server.requests == []


async def test_key_from_the_environment(
    replay_server: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "env-key")
    replay_server.enqueue(sse("text"))
    await collect(google.stream(gemini(replay_server), ask()))
    assert replay_server.requests[0].headers["x-goog-api-key"] == "env-key"


def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "google.genai", None)
    model = Model(id="gemini-2.5-flash", api=API, provider="google")
    with pytest.raises(MissingExtraError, match=re.escape("pip install 'agentcore-loop[google]'")):
        google.stream(model, ask(), opts())


def test_registered_as_the_builtin_adapter() -> None:
    assert get_api_provider(API) is google.PROVIDER


async def test_connection_refused(replay_server: ReplayServer) -> None:
    with ReplayServer() as closed:
        url = closed.base_url("/v1beta")
    model = gemini(replay_server, base_url=url)
    _, message = await collect(google.stream(model, ask(), opts(max_retry_delay_ms=1)))
    assert message.stop_reason == "error"
    assert message.error_message is not None
    assert message.error_message.startswith("could not connect (ConnectError")


async def test_on_response_failure_is_an_error_terminal(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("text"))

    def on_response(info: ResponseInfo, model: Model) -> None:
        raise RuntimeError("hook broke")

    _, message = await collect(
        google.stream(gemini(replay_server), ask(), opts(on_response=on_response))
    )
    assert message.stop_reason == "error"
    assert message.error_message == "RuntimeError: hook broke"


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_leaving_early_releases_the_connection(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("text", delay=5.0), sse("text"))
    model = gemini(replay_server)
    started = time.monotonic()
    async with google.stream(model, ask(), opts()) as stream:
        async for event in stream:
            if event.type == "text_delta":
                break
    assert time.monotonic() - started < 3
    _, message = await collect(google.stream(model, ask(), opts()))
    assert message.text == "Hello, world!"


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_under_trio(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("tool_call"), sse("text", delay=5.0))
    model = gemini(replay_server)
    _, message = await collect(google.stream(model, ask(), opts()))
    assert message.stop_reason == "tool_use"

    controller = AbortController()
    stream = google.stream(model, ask(), opts(signal=controller.signal))
    _, message = await collect_aborting(stream, controller)
    assert message.stop_reason == "aborted"


async def test_agent_run_with_tool_calls(replay_server: ReplayServer) -> None:
    from agentcore import AgentContext, AgentLoopConfig, run_agent_loop, tool

    @tool
    def get_weather(city: str, units: str = "kelvin") -> str:
        """Current weather for a city."""
        return f"{city}: 18 degrees {units}"

    replay_server.enqueue(sse("tool_call"), sse("text"))
    events: list[Any] = []
    messages = await run_agent_loop(
        [UserMessage(content="Weather in Paris?")],
        AgentContext(system_prompt="You are terse.", tools=[get_weather]),
        AgentLoopConfig(model=gemini(replay_server), api_key=KEY, reasoning="low"),
        events.append,
    )

    assert [m.role for m in messages] == ["user", "assistant", "tool_result", "assistant"]
    turn, result, answer = messages[1:]
    assert isinstance(turn, AssistantMessage)
    assert isinstance(result, ToolResultMessage)
    assert isinstance(answer, AssistantMessage)
    call = turn.tool_calls[0]
    assert result.tool_call_id == call.id
    assert result.content == [TextContent(text="Paris: 18 degrees celsius")]
    assert answer.text == "Hello, world!"
    assert events[0].type == "agent_start" and events[-1].type == "agent_end"

    first, second = (snake(r.json) for r in replay_server.requests)
    assert first["generation_config"]["thinking_config"] == {
        "include_thoughts": True,
        "thinking_budget": 2048,
    }
    assert [d["name"] for d in first["tools"][0]["function_declarations"]] == ["get_weather"]
    assert [c["role"] for c in second["contents"]] == ["user", "model", "user"]
    assert second["contents"][1]["parts"][-1] == {
        "function_call": {"name": "get_weather", "args": {"city": "Paris", "units": "celsius"}},
        "thought_signature": b64url(b"sig-call"),
    }
    assert second["contents"][2]["parts"] == [
        {
            "function_response": {
                "name": "get_weather",
                "response": {"output": "Paris: 18 degrees celsius"},
            }
        }
    ]


def _events_body(*parts_per_chunk: list[dict[str, Any]], finish: str = "STOP") -> list[bytes]:
    chunks = []
    for i, parts in enumerate(parts_per_chunk):
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}}
        if i == len(parts_per_chunk) - 1:
            candidate["finishReason"] = finish
        chunks.append(f"data: {json.dumps({'candidates': [candidate]})}\r\n\r\n".encode())
    return chunks


async def test_thought_flag_and_signature_updates(replay_server: ReplayServer) -> None:
    sig_a, sig_b = b64url(b"sig-a"), b64url(b"sig-b")
    replay_server.enqueue(
        ScriptedResponse.sse(
            _events_body(
                [{"text": "one", "thought": True, "thoughtSignature": sig_a}],
                [{"text": " two", "thought": True}],  # no signature: the last one stays
                [{"text": " three", "thought": True, "thoughtSignature": sig_b}],  # renewed
                [{"text": "signed text", "thought": False, "thoughtSignature": sig_a}],
                [{"text": "", "thoughtSignature": ""}],  # empty part, empty signature
            )
        )
    )
    _, message = await collect(google.stream(gemini(replay_server), ask(), opts()))
    assert message.content == [
        ThinkingContent(thinking="one two three", thinking_signature=sig_b),
        TextContent(text="signed text", text_signature=sig_a),
    ]


async def test_signature_on_a_trailing_empty_text_part(replay_server: ReplayServer) -> None:
    sig = b64url(b"late")
    replay_server.enqueue(
        ScriptedResponse.sse(
            _events_body([{"text": "Answer."}], [{"text": "", "thoughtSignature": sig}])
        )
    )
    _, message = await collect(google.stream(gemini(replay_server), ask(), opts()))
    assert message.content == [TextContent(text="Answer.", text_signature=sig)]
