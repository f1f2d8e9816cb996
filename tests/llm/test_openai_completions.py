"""The OpenAI Chat Completions adapter, through the real `openai` SDK against a replay server."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentcore.abort import AbortController
from agentcore.errors import MissingApiKeyError
from agentcore.llm import (
    AssistantMessageEvent,
    Context,
    Model,
    ModelCost,
    OpenAICompletionsCompat,
    ResponseInfo,
    SimpleStreamOptions,
    StreamOptions,
    Tool,
    complete,
    get_model,
    get_models,
    stream,
    stream_simple,
)
from agentcore.llm._failures import truncated_text
from agentcore.llm.providers.openai_completions import (
    ESTIMATE_NOTE,
    build_payload,
    convert_messages,
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

from .helpers import collect, collect_aborting
from .replay_server import ReplayServer, ScriptedResponse, load_fixture, rechunk, serve

pytestmark = pytest.mark.anyio

API = "openai-completions"
KEY = "test-key"
COST = ModelCost(input=2.0, output=8.0, cache_read=0.5, cache_write=0.0)
WEATHER = Tool(
    name="get_weather",
    description="The weather in a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)


def make_model(server: ReplayServer | None = None, **compat: Any) -> Model:
    return Model(
        id="gpt-test",
        api=API,
        provider="openai",
        base_url=server.base_url() if server else "https://api.openai.com/v1",
        reasoning=True,
        input=["text", "image"],
        cost=COST,
        context_window=128_000,
        max_tokens=4096,
        compat=OpenAICompletionsCompat(**compat),
    )


def ask(text: str = "Hi") -> Context:
    return Context(system_prompt="You are terse.", messages=[UserMessage(content=text)])


def sse(name: str, **kwargs: Any) -> ScriptedResponse:
    return ScriptedResponse.sse(load_fixture(API, name), **kwargs)


async def run(
    model: Model, context: Context, options: StreamOptions | None = None
) -> tuple[list[AssistantMessageEvent], AssistantMessage]:
    return await collect(stream(model, context, options or StreamOptions(api_key=KEY)))


def types(events: list[AssistantMessageEvent]) -> list[str]:
    return [e.type for e in events]


# --- answers -------------------------------------------------------------------------------


async def test_plain_text(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("text"))
    events, message = await run(make_model(replay_server), ask())
    assert types(events) == [
        "start", "text_start", "text_delta", "text_delta", "text_delta", "text_delta",
        "text_end", "done",
    ]  # fmt: skip
    assert message.content == [TextContent(text="Hello, world!")]
    assert message.stop_reason == "stop" and message.error_message is None
    assert (message.api, message.provider, message.model) == (API, "openai", "gpt-test")
    request = replay_server.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.json["messages"][0] == {"role": "system", "content": "You are terse."}
    assert request.json["stream"] is True


async def test_usage_and_cost(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("text"))
    _, message = await run(make_model(replay_server), ask())
    usage = message.usage
    assert (usage.input, usage.cache_read, usage.output, usage.cache_write) == (20, 100, 4, 0)
    assert usage.total_tokens == 124
    assert usage.cost.input == pytest.approx(20 * 2.0 / 1e6)
    assert usage.cost.cache_read == pytest.approx(100 * 0.5 / 1e6)
    assert usage.cost.output == pytest.approx(4 * 8.0 / 1e6)
    assert usage.cost.total == pytest.approx((40 + 50 + 32) / 1e6)


async def test_thinking_then_text(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("thinking"))
    events, message = await run(make_model(replay_server), ask())
    assert types(events)[:2] == ["start", "thinking_start"]
    assert "thinking_end" in types(events) and "text_start" in types(events)
    assert message.content == [
        ThinkingContent(
            thinking="The user wants a number.", thinking_signature="reasoning_content"
        ),
        TextContent(text="It is 42."),
    ]
    assert message.usage.output == 30  # reasoning tokens are part of the output


async def test_one_tool_call_split_across_chunks(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("tool_call"))
    events, message = await run(make_model(replay_server), ask())
    deltas = [e for e in events if e.type == "toolcall_delta"]
    assert len(deltas) > 5
    assert "".join(d.delta for d in deltas) == '{"city": "Paris", "units": "celsius"}'
    assert message.stop_reason == "tool_use"
    assert message.content == [
        ToolCall(
            id="call_abc123", name="get_weather", arguments={"city": "Paris", "units": "celsius"}
        )
    ]
    end = next(e for e in events if e.type == "toolcall_end")
    assert end.tool_call == message.content[0]


async def test_several_interleaved_tool_calls(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("tool_calls_parallel"))
    _, message = await run(make_model(replay_server), ask())
    assert message.stop_reason == "tool_use"
    assert message.content == [
        TextContent(text="Checking both."),
        ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"}),
        ToolCall(id="call_2", name="get_forecast", arguments={"city": "Tokyo", "days": [1, 2]}),
    ]


async def test_llama_cpp_chunk_shapes(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("llamacpp_tool_call"))
    _, message = await run(make_model(replay_server), ask())
    assert message.content == [
        ToolCall(
            id="i5e7DiWPYce7YYcCVIgpUBGX1zE6navU", name="get_weather", arguments={"city": "Paris"}
        )
    ]
    assert (message.usage.input, message.usage.cache_read, message.usage.output) == (1, 183, 29)


@pytest.mark.parametrize(
    ("fixture", "stop_reason", "error"),
    [
        ("text", "stop", None),
        ("length", "length", None),
        ("tool_call", "tool_use", None),
        ("content_filter", "error", "content_filter"),
        ("no_finish", "error", "stream ended before the response finished"),
        ("stream_error", "error", "The server had an error while processing your request."),
    ],
)
async def test_stop_reasons_and_broken_streams(
    replay_server: ReplayServer, fixture: str, stop_reason: str, error: str | None
) -> None:
    replay_server.enqueue(sse(fixture))
    events, message = await run(make_model(replay_server), ask())
    assert message.stop_reason == stop_reason
    assert types(events).count("done") + types(events).count("error") == 1
    if error is None:
        assert message.error_message is None and events[-1].type == "done"
    else:
        assert message.error_message is not None and error in message.error_message
        assert events[-1].type == "error"
    if fixture in ("length", "content_filter", "no_finish"):
        assert message.text  # what arrived is kept
    if fixture == "length":
        assert message.text == "Once upon a"


# --- failures and retries --------------------------------------------------------------------


async def test_error_status_with_json_body(replay_server: ReplayServer) -> None:
    body = {"error": {"message": "Invalid value for 'model'", "type": "invalid_request_error"}}
    replay_server.enqueue(ScriptedResponse.json(body, status=400))
    events, message = await run(make_model(replay_server), ask())
    assert types(events) == ["error"]
    assert message.stop_reason == "error"
    assert message.error_message == "400 invalid_request_error: Invalid value for 'model'"
    assert len(replay_server.requests) == 1  # 400 is not retried


async def test_abort_mid_stream(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("text", delay=0.5))
    controller = AbortController()
    options = StreamOptions(api_key=KEY, signal=controller.signal)
    s = stream(make_model(replay_server), ask(), options)
    started = time.monotonic()
    events, message = await collect_aborting(s, controller)
    assert time.monotonic() - started < 2.5
    assert message.stop_reason == "aborted"
    assert message.error_message == "request was aborted" + ESTIMATE_NOTE
    assert message.text == "Hello"
    # the usage chunk never came: the tokens spent are estimated, not 0/0 (issue 26)
    prompt_chars = len("You are terse.") + len("system") + len("Hi") + len("user")
    assert message.usage.input == (prompt_chars + 3) // 4 == 7
    assert message.usage.output == 2  # "Hello": five characters
    assert message.usage.cost.total == pytest.approx((7 * 2.0 + 2 * 8.0) / 1e6)
    assert events[-1].type == "error" and events[-1].reason == "aborted"


async def test_usage_is_estimated_only_when_the_server_sent_none(
    replay_server: ReplayServer, caplog: pytest.LogCaptureFixture
) -> None:
    """A stream that breaks off has an estimate, logged (its error text says what failed); a
    completed answer from a server that sends no usage has one too; a request refused before
    any output spent nothing; reported usage is never replaced."""
    model = make_model(replay_server)
    replay_server.enqueue(sse("no_finish"))
    with caplog.at_level("INFO", logger="agentcore.llm.usage"):
        _, broken = await run(model, ask("x" * 400))
    assert broken.stop_reason == "error" and broken.error_message == truncated_text("finish_reason")
    assert broken.usage.input >= 100 and broken.usage.output == 3  # "Half an ans"
    text = load_fixture(API, "text")
    no_usage = b"\n\n".join(part for part in text.split(b"\n\n") if b'"choices":[]' not in part)
    replay_server.enqueue(ScriptedResponse.sse(no_usage))
    with caplog.at_level("INFO", logger="agentcore.llm.usage"):
        _, done = await run(model, ask())
    assert done.stop_reason == "stop" and done.error_message is None
    assert (done.usage.input, done.usage.output) == (7, 4)  # "Hello, world!": 13 characters
    assert "sent no usage: estimated 7 input and 4 output tokens" in caplog.text
    assert f"estimated {broken.usage.input} input and 3 output tokens" in caplog.text
    replay_server.enqueue(ScriptedResponse.json({"error": {"message": "no"}}, status=400))
    _, refused = await run(model, ask())
    assert refused.usage.total_tokens == 0 and not refused.error_message.endswith(ESTIMATE_NOTE)
    replay_server.enqueue(sse("text"))
    _, reported = await run(model, ask())
    assert (reported.usage.input, reported.usage.output) == (20, 4)


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_under_trio(replay_server: ReplayServer) -> None:
    """A whole answer, an early close and an abort under trio, which reports every async
    generator and connection left unclosed (an error in this suite)."""
    model = make_model(replay_server)
    replay_server.enqueue(
        sse("tool_calls_parallel"),
        sse("text", delay=[0, 0, 0, 30]),
        sse("text", delay=[0, 0, 0, 30]),
    )
    _, message = await run(model, ask())
    assert message.stop_reason == "tool_use" and len(message.tool_calls) == 2
    with anyio.fail_after(5):
        async with stream(model, ask(), StreamOptions(api_key=KEY)) as s:
            async for event in s:
                if event.type == "text_delta":
                    break
    assert (await s.result()).stop_reason == "error"
    controller = AbortController()
    s = stream(model, ask(), StreamOptions(api_key=KEY, signal=controller.signal))
    with anyio.fail_after(5):
        _, message = await collect_aborting(s, controller)
    assert message.stop_reason == "aborted" and message.text == "Hello"
    assert len(replay_server.requests) == 3


# --- hooks, keys, payload ---------------------------------------------------------------------


async def test_on_payload_replaces_the_body(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("text"))
    seen: list[dict[str, Any]] = []

    async def on_payload(payload: Any, model: Model) -> Any:
        seen.append(payload)
        return {**payload, "messages": [{"role": "user", "content": "replaced"}], "seed": 7}

    options = StreamOptions(api_key=KEY, on_payload=on_payload)
    _, message = await run(make_model(replay_server), ask(), options)
    assert message.stop_reason == "stop"
    assert seen[0]["messages"][-1] == {"role": "user", "content": "Hi"}
    body = replay_server.requests[0].json
    assert body["messages"] == [{"role": "user", "content": "replaced"}] and body["seed"] == 7


async def test_on_response_sees_status_and_headers(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("text", headers={"x-ratelimit-remaining-requests": "99"}))
    infos: list[ResponseInfo] = []
    options = StreamOptions(api_key=KEY, on_response=lambda info, _m: infos.append(info))
    await run(make_model(replay_server), ask(), options)
    assert len(infos) == 1 and infos[0].status == 200
    assert infos[0].headers["x-ratelimit-remaining-requests"] == "99"


async def test_headers_are_merged(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("text"))
    model = Model(
        id="m", api=API, provider="openai", base_url=replay_server.base_url(),
        headers={"x-model": "a", "x-both": "model"}, compat=OpenAICompletionsCompat(),
    )  # fmt: skip
    options = StreamOptions(api_key=KEY, headers={"x-both": "options"})
    await run(model, ask(), options)
    headers = replay_server.requests[0].headers
    assert (headers["x-model"], headers["x-both"]) == ("a", "options")


def test_missing_api_key_raises_before_any_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = Model(id="gpt-x", api=API, provider="openai", base_url="https://api.openai.com/v1")
    with pytest.raises(MissingApiKeyError, match="OPENAI_API_KEY"):
        stream(model, ask(), StreamOptions())


def test_payload_fields_follow_compat() -> None:
    context = Context(system_prompt="sys", messages=[UserMessage(content="q")], tools=[WEATHER])
    openai_like = make_model(
        supports_developer_role=True, max_tokens_field="max_completion_tokens",
        supports_reasoning_effort=True, supports_strict_mode=True, supports_store=True,
    )  # fmt: skip
    options = StreamOptions(session_id="s1", max_tokens=100, temperature=0.2)
    body = build_payload(openai_like, context, options, reasoning="xhigh")
    assert body["messages"][0] == {"role": "developer", "content": "sys"}
    assert body["max_completion_tokens"] == 100 and "max_tokens" not in body
    assert body["reasoning_effort"] == "high"  # xhigh clamped
    assert body["tools"][0]["function"]["strict"] is False
    assert body["store"] is False and body["temperature"] == 0.2
    assert body["prompt_cache_key"] == "s1"
    assert body["stream_options"] == {"include_usage": True}

    plain = Model(
        id="m", api=API, provider="groq", base_url="https://api.groq.com/openai/v1",
        reasoning=True, compat=OpenAICompletionsCompat(
            supports_reasoning_effort=True, reasoning_effort_map={"low": "default"},
            supports_usage_in_streaming=False,
        ),
    )  # fmt: skip
    body = build_payload(plain, context, StreamOptions(session_id="s1"), reasoning="low")
    assert body["messages"][0]["role"] == "system"
    assert body["max_tokens"] == plain.max_tokens
    assert body["reasoning_effort"] == "default"
    assert "strict" not in body["tools"][0]["function"]
    assert "prompt_cache_key" not in body and "stream_options" not in body and "store" not in body
    assert "reasoning_effort" not in build_payload(plain, context, StreamOptions(), reasoning=None)
    assert "reasoning_effort" not in build_payload(plain, context, StreamOptions(), reasoning="off")


async def test_stream_simple_sends_reasoning_effort(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("thinking"))
    model = make_model(replay_server, supports_reasoning_effort=True)
    s = stream_simple(model, ask(), SimpleStreamOptions(api_key=KEY, reasoning="medium"))
    await s.result()
    assert replay_server.requests[0].json["reasoning_effort"] == "medium"


# --- transcripts ------------------------------------------------------------------------------


def anthropic_turn() -> AssistantMessage:
    return AssistantMessage(
        content=[
            ThinkingContent(thinking="Need the weather.", thinking_signature="EqQBCkgIARABGAIiQ"),
            TextContent(text="Let me check."),
            ToolCall(id="toolu_01A|x", name="get_weather", arguments={"city": "Paris"}),
            ToolCall(id="toolu_01B", name="get_weather", arguments={"city": "Oslo"}),
        ],
        api="anthropic-messages",
        provider="anthropic",
        model="claude-sonnet-4-5",
        stop_reason="tool_use",
    )


async def test_cross_provider_transcript_makes_a_valid_request(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("text"))
    context = Context(
        messages=[
            UserMessage(content="Weather in Paris and Oslo?"),
            anthropic_turn(),
            ToolResultMessage(
                tool_call_id="toolu_01A|x",
                tool_name="get_weather",
                content=[TextContent(text="18C")],
            ),
            # toolu_01B has no result: a synthetic error result is inserted
            UserMessage(content="And tomorrow?"),
        ],
        tools=[WEATHER],
    )
    _, message = await run(make_model(replay_server, requires_tool_result_name=True), context)
    assert message.stop_reason == "stop"
    messages = replay_server.requests[0].json["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user"]
    assistant = messages[1]
    assert assistant["content"] == "Need the weather.Let me check."
    assert [c["id"] for c in assistant["tool_calls"]] == ["toolu_01A", "toolu_01B"]
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}
    assert messages[2] == {
        "role": "tool", "tool_call_id": "toolu_01A", "content": "18C", "name": "get_weather",
    }  # fmt: skip
    assert messages[3]["tool_call_id"] == "toolu_01B"
    assert messages[3]["content"] == "No result provided"
    tools = replay_server.requests[0].json["tools"]
    assert tools[0]["function"]["name"] == "get_weather"


def mistral_model(server: ReplayServer) -> Model:
    return dataclasses.replace(
        get_model("mistral", "mistral-large-latest"), base_url=server.base_url()
    )


def test_mistral_models_ask_for_nine_character_ids() -> None:
    for model in get_models("mistral"):
        assert isinstance(model.compat, OpenAICompletionsCompat)
        assert model.compat.tool_call_id_format == "mistral"
    assert OpenAICompletionsCompat().tool_call_id_format == "any"


async def test_mistral_gets_nine_alphanumeric_tool_call_ids(replay_server: ReplayServer) -> None:
    own = AssistantMessage(
        content=[ToolCall(id="D681PevKs", name="get_weather", arguments={"city": "Rome"})],
        api=API, provider="mistral", model="mistral-large-latest", stop_reason="tool_use",
    )  # fmt: skip
    context = Context(
        messages=[
            UserMessage(content="Weather in Paris, Oslo and Rome?"),
            anthropic_turn(),  # toolu_01A|x and toolu_01B (no result: a synthetic one)
            ToolResultMessage(
                tool_call_id="toolu_01A|x",
                tool_name="get_weather",
                content=[TextContent(text="18C")],
            ),
            own,  # Mistral's own id is kept
            ToolResultMessage(
                tool_call_id="D681PevKs", tool_name="get_weather", content=[TextContent(text="25C")]
            ),
        ],
        tools=[WEATHER],
    )
    model = mistral_model(replay_server)
    replay_server.enqueue(sse("text"), sse("text"))
    for _ in range(2):
        await run(model, context)
    first, second = (r.json["messages"] for r in replay_server.requests)
    assert first == second  # the same transcript gives the same ids
    calls = [c["id"] for m in first if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    results = [m["tool_call_id"] for m in first if m["role"] == "tool"]
    assert len(calls) == 3 and results == calls  # every result follows its call
    assert len(set(calls)) == 3 and calls[2] == "D681PevKs"
    assert all(len(i) == 9 and i.isascii() and i.isalnum() for i in calls)
    assert [m.get("name") for m in first if m["role"] == "tool"] == ["get_weather"] * 3


def test_same_model_reasoning_is_replayed_in_its_field() -> None:
    model = make_model(requires_thinking_as_text=False)
    own = AssistantMessage(
        content=[
            ThinkingContent(thinking="hmm", thinking_signature="reasoning_content"),
            TextContent(text="answer"),
        ],
        api=API, provider="openai", model="gpt-test",
    )  # fmt: skip
    out = convert_messages(model, Context(messages=[UserMessage(content="q"), own]))
    assert out[1] == {"role": "assistant", "reasoning_content": "hmm", "content": "answer"}


def test_images_and_empty_messages() -> None:
    image = ImageContent(data="aGk=", mime_type="image/png")
    call = ToolCall(id="c1", name="shot", arguments={})
    context = Context(
        messages=[
            UserMessage(content=[TextContent(text="look"), image]),
            UserMessage(content=[]),
            AssistantMessage(content=[], api=API, provider="openai", model="gpt-test"),
            AssistantMessage(
                content=[call, ToolCall(id="c2", name="shot", arguments={})],
                api=API,
                provider="openai",
                model="gpt-test",
                stop_reason="tool_use",
            ),
            ToolResultMessage(tool_call_id="c1", tool_name="shot", content=[image]),
            ToolResultMessage(
                tool_call_id="c2", tool_name="shot", content=[TextContent(text="two"), image]
            ),
            UserMessage(content="bad \ud83d surrogate"),
        ]
    )
    out = convert_messages(make_model(), context)
    assert [m["role"] for m in out] == ["user", "assistant", "tool", "tool", "user", "user"]
    assert out[0]["content"][1] == {
        "type": "image_url", "image_url": {"url": "data:image/png;base64,aGk="},
    }  # fmt: skip
    assert out[2]["content"] == "(see attached image)" and out[3]["content"] == "two"
    assert out[4]["content"][0]["type"] == "text"
    assert [p["type"] for p in out[4]["content"]] == ["text", "image_url", "image_url"]
    assert out[5]["content"] == "bad  surrogate"
    text_only = Model(id="t", api=API, provider="x", input=["text"])
    out = convert_messages(text_only, context)
    assert out[0] == {"role": "user", "content": "look"}
    assert [m["role"] for m in out] == ["user", "assistant", "tool", "tool", "user"]


# --- invariants -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shared_server() -> Iterator[ReplayServer]:
    yield from serve()


def _final(server: ReplayServer, chunks: list[bytes]) -> AssistantMessage:
    server.enqueue(ScriptedResponse.sse(chunks))

    async def go() -> AssistantMessage:
        return await stream(make_model(server), ask(), StreamOptions(api_key=KEY)).result()

    return anyio.run(go)


@pytest.mark.parametrize("fixture", ["tool_calls_parallel", "thinking"])
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(sizes=st.lists(st.integers(1, 80), min_size=1, max_size=12))
def test_any_rechunking_gives_the_same_message(
    shared_server: ReplayServer, fixture: str, sizes: list[int]
) -> None:
    body = load_fixture(API, fixture)
    expected = _final(shared_server, [body])
    assert expected.stop_reason in ("stop", "tool_use")
    actual = _final(shared_server, rechunk(body, sizes))
    assert actual.content == expected.content
    assert actual.usage == expected.usage and actual.stop_reason == expected.stop_reason


async def test_complete_end_to_end(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("text"))
    message = await complete(make_model(replay_server), ask(), StreamOptions(api_key=KEY))
    assert message.text == "Hello, world!" and message.stop_reason == "stop"


async def test_agent_run_with_tool_calls(replay_server: ReplayServer) -> None:
    from agentcore import AgentContext, AgentLoopConfig, run_agent_loop, tool

    @tool
    def get_weather(city: str) -> str:
        """Current weather in a city."""
        return f"{city}: 18C"

    @tool
    def get_forecast(city: str, days: list[int]) -> str:
        """The forecast for a city, some days ahead."""
        return f"{city}: sun on days {days}"

    replay_server.enqueue(sse("tool_calls_parallel"), sse("text"))
    model = make_model(replay_server, supports_reasoning_effort=True)
    events: list[Any] = []
    messages = await run_agent_loop(
        [UserMessage(content="Weather in Paris, forecast for Tokyo?")],
        AgentContext(system_prompt="You are terse.", tools=[get_weather, get_forecast]),
        AgentLoopConfig(model=model, api_key=KEY, reasoning="medium"),
        events.append,
    )

    roles = [m.role for m in messages]
    assert roles == ["user", "assistant", "tool_result", "tool_result", "assistant"]
    results = [m for m in messages if isinstance(m, ToolResultMessage)]
    assert [(r.tool_call_id, r.is_error) for r in results] == [("call_1", False), ("call_2", False)]
    assert [r.content for r in results] == [
        [TextContent(text="Paris: 18C")],
        [TextContent(text="Tokyo: sun on days [1, 2]")],
    ]
    assert messages[-1].text == "Hello, world!"  # type: ignore[union-attr]
    assert events[0].type == "agent_start" and events[-1].type == "agent_end"

    first, second = (r.json for r in replay_server.requests)
    assert first["reasoning_effort"] == "medium"
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather", "get_forecast"]
    assert second["messages"][0] == {"role": "system", "content": "You are terse."}
    assert second["messages"][2:] == [
        {
            "role": "assistant",
            "content": "Checking both.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {
                        "name": "get_forecast",
                        "arguments": '{"city": "Tokyo", "days": [1, 2]}',
                    },
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "Paris: 18C"},
        {"role": "tool", "tool_call_id": "call_2", "content": "Tokyo: sun on days [1, 2]"},
    ]


# --- a real llama.cpp server (scripts/local-model start) -------------------------------------


def _local_server_up() -> bool:
    try:
        return httpx.get("http://127.0.0.1:18080/health", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.mark.local_llm
@pytest.mark.timeout(120)
@pytest.mark.skipif(not _local_server_up(), reason="local llama.cpp server not running")
async def test_local_llama_cpp_tool_round_trip() -> None:
    model = get_model("local", "qwen2.5-coder-1.5b")
    context = Context(
        messages=[UserMessage(content="What is the weather in Paris?")], tools=[WEATHER]
    )
    first = await complete(model, context, StreamOptions(max_tokens=100, temperature=0))
    assert first.stop_reason == "tool_use", first.error_message
    call = first.tool_calls[0]
    assert call.name == "get_weather" and isinstance(call.arguments.get("city"), str)
    assert first.usage.input + first.usage.cache_read > 0 and first.usage.output > 0
    result = ToolResultMessage(
        tool_call_id=call.id,
        tool_name=call.name,
        content=[TextContent(text='{"city": "Paris", "temperature_c": 18}')],
    )
    follow = Context(messages=[*context.messages, first, result], tools=[WEATHER])
    second = await complete(model, follow, StreamOptions(max_tokens=60, temperature=0))
    assert second.stop_reason in ("stop", "tool_use", "length"), second.error_message


@pytest.mark.local_llm
@pytest.mark.timeout(120)
@pytest.mark.skipif(not _local_server_up(), reason="local llama.cpp server not running")
async def test_local_llama_cpp_aborted_answer_has_estimated_usage() -> None:
    """Stopped after its first words, the local model's answer counts what it spent (issue 26:
    it was 0/0, so `--max-cost` saw nothing)."""
    model = get_model("local", "qwen2.5-coder-1.5b")
    context = Context(messages=[UserMessage(content="Count slowly from 1 to 200, one per line.")])
    controller = AbortController()
    options = StreamOptions(max_tokens=400, temperature=0, signal=controller.signal)
    deltas = 0
    async with stream(model, context, options) as s:
        async for event in s:
            if event.type == "text_delta":
                deltas += 1
                if deltas == 5:
                    controller.abort()
        message = await s.result()
    assert message.stop_reason == "aborted"
    assert message.error_message == "request was aborted" + ESTIMATE_NOTE
    assert message.usage.input >= 10 and message.usage.output >= 1, message.usage
