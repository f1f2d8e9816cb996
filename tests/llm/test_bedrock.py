"""The Bedrock Converse adapter, through the real boto3 SDK against a server on 127.0.0.1 that
speaks the binary AWS event-stream framing of `ConverseStream` (`bedrock_server`).

Fixtures are files under `fixtures/bedrock-converse-stream/`: answers as one event per line
(`.jsonl`, framed by the server), errors as JSON (`.json`). Credentials are static test values
in the environment, with the shared config files pointed at nothing, so no test reads the
machine's AWS setup; each holds "SECRET", which must appear in no text the library produces.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import logging
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentcore import Agent
from agentcore.abort import AbortController
from agentcore.errors import MissingExtraError
from agentcore.llm import (
    get_model,
    models,
    register_api_provider,
    register_model,
    unregister_api_providers,
)
from agentcore.llm import model as model_module
from agentcore.llm import stream as llm_stream
from agentcore.llm.model import Model, ModelCost
from agentcore.llm.overflow import is_context_overflow
from agentcore.llm.providers import _bedrock_sdk
from agentcore.llm.providers import bedrock as adapter
from agentcore.llm.providers.bedrock import BedrockCompat, BedrockOptions, build_payload
from agentcore.llm.stream import AssistantMessageEventStream
from agentcore.llm.types import Context, ResponseInfo, SimpleStreamOptions, StreamOptions, Tool
from agentcore.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    to_json,
)
from agentcore.sessions import JsonlSessionStore
from agentcore.sessions._base import model_from_json as session_model_from_json
from agentcore.sessions._base import model_to_json

from . import test_faults
from .bedrock_server import (
    API,
    BedrockWire,
    error_response,
    event,
    exception,
    load_error,
    load_frames,
    stream_response,
)
from .fault_server import CREDENTIALS, WIRES, FaultResponse, FaultServer
from .helpers import collect, collect_aborting, comparable
from .replay_server import FIXTURES, ReplayServer, rechunk

pytestmark = pytest.mark.anyio

ACCESS_KEY = "AKIASECRET0TEST12345"
SECRET_KEY = "aws-SECRET-access-key-0123456789abcdefXYZ"
SESSION_TOKEN = "SECRET-session-token-ZXhhbXBsZS10b2tlbg=="
NOWHERE = Path("/nonexistent/agentcore-tests/aws")
CREDENTIAL_VALUES = (ACCESS_KEY, SECRET_KEY, SESSION_TOKEN)
CLAUDE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"  # a cross-region inference profile
LLAMA = "meta.llama3-3-70b-instruct-v1:0"
WEATHER = Tool(
    name="get_weather",
    description="The weather at a place.",
    parameters={
        "type": "object",
        "properties": {"location": {"type": "string"}, "unit": {"type": "string"}},
        "required": ["location"],
    },
)
PNG_BYTES = b"\x89PNG\r\n\x1a\nfake-image"
PNG = base64.b64encode(PNG_BYTES).decode()


@pytest.fixture(autouse=True)
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Static test credentials and a region; the machine's AWS files and metadata unreachable
    (the same paths in every test, so the adapter's kept boto3 session serves them all)."""
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_BEARER_TOKEN_BEDROCK", "AWS_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_SESSION_TOKEN", SESSION_TOKEN)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-west-2")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(NOWHERE / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(NOWHERE / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture
def server() -> Iterator[FaultServer]:
    with FaultServer() as started:
        yield started


def make_model(
    server: ReplayServer | None,
    model_id: str = CLAUDE,
    *,
    reasoning: bool = True,
    images: bool = True,
    cost: ModelCost | None = None,
    compat: BedrockCompat | None = None,
    max_tokens: int = 64_000,
) -> Model:
    return Model(
        id=model_id,
        name=model_id,
        api=API,
        provider="amazon-bedrock",
        base_url=server.url if server is not None else "",
        reasoning=reasoning,
        input=["text", "image"] if images else ["text"],
        cost=cost or ModelCost(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75),
        context_window=200_000,
        max_tokens=max_tokens,
        compat=compat,
    )


def context(*messages: Any, tools: list[Tool] | None = None, system: str = "") -> Context:
    return Context(
        system_prompt=system,
        messages=list(messages) or [UserMessage(content="Hi")],
        tools=tools or [],
    )


def answer(name: str, **fields: Any) -> FaultResponse:
    return stream_response(load_frames(name), **fields)


def run(
    server: ReplayServer,
    model: Model | None = None,
    ctx: Context | None = None,
    options: StreamOptions | None = None,
) -> AssistantMessageEventStream:
    options = options or BedrockOptions(max_retry_delay_ms=50)
    return adapter.stream(model or make_model(server), ctx or context(), options)


def wire_body(server: ReplayServer, index: int = 0) -> Any:
    return json.loads(server.requests[index].body)


async def until_sent(server: ReplayServer) -> None:
    """Return once the server has received a request (polling: it runs in another thread)."""
    for _ in range(2000):
        if server.requests:
            return
        await anyio.sleep(0.005)
    raise AssertionError("no request reached the server")


def types(events: list[Any]) -> list[str]:
    return [e.type for e in events]


# --- answers ----------------------------------------------------------------------------------


async def test_plain_text(server: FaultServer) -> None:
    server.enqueue(answer("text"))
    events, message = await collect(run(server))
    assert types(events) == [
        "start",
        "text_start",
        "text_delta",
        "text_delta",
        "text_delta",
        "text_end",
        "done",
    ]
    assert message.text == "Hello, world — naïve café ☕"
    assert (message.stop_reason, message.api, message.provider, message.model) == (
        "stop",
        API,
        "amazon-bedrock",
        CLAUDE,
    )
    assert (message.usage.input, message.usage.output, message.usage.total_tokens) == (21, 9, 30)
    assert message.usage.cost.total == pytest.approx((21 * 3 + 9 * 15) / 1e6)
    (request,) = server.requests
    # the inference profile id is one path segment; the request is signed for the region
    assert request.path == "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    assert request.headers["authorization"].startswith(f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/")
    assert "/us-west-2/bedrock/aws4_request" in request.headers["authorization"]
    assert request.headers["x-amz-security-token"] == SESSION_TOKEN
    body = wire_body(server)
    assert body["messages"] == [{"role": "user", "content": [{"text": "Hi"}, _CACHE_POINT]}]
    assert body["inferenceConfig"] == {"maxTokens": 64_000}


_CACHE_POINT = {"cachePoint": {"type": "default"}}


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The adapter registered through the public function, and a catalogue restored after."""
    monkeypatch.setattr(models, "_catalogue", {**models._load()})
    register_api_provider(dataclasses.replace(adapter.PROVIDER, source="test-bedrock"))
    yield
    unregister_api_providers("test-bedrock")


@pytest.mark.usefixtures("registered")
async def test_through_the_registry_with_catalogue_style_models(server: FaultServer) -> None:
    """The adapter and Bedrock models as the lead adds them to the built-in tables (see the
    report): here registered through the public functions."""
    cost = ModelCost(input=0.72, output=0.72)
    llama = register_model(
        dataclasses.replace(
            make_model(server, LLAMA, reasoning=False, images=False, cost=cost), max_tokens=8192
        )
    )
    assert get_model("amazon-bedrock", LLAMA) is llama
    server.enqueue(answer("text"))
    message = await llm_stream(llama, context(system="Be brief."), StreamOptions()).result()
    assert message.stop_reason == "stop" and message.text.startswith("Hello")
    body = wire_body(server)
    assert "cachePoint" not in json.dumps(body)  # Llama takes no cache points
    assert body["system"] == [{"text": "Be brief."}]


async def test_thinking_with_signature_then_text(server: FaultServer) -> None:
    server.enqueue(answer("thinking"))
    events, message = await collect(run(server))
    assert types(events)[:5] == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_delta",
        "thinking_end",
    ]
    thinking, text = message.content
    assert thinking == ThinkingContent(
        thinking="The user asks for 2+2. That is 4.",
        thinking_signature="EqoBCkgIARABGAIiQL2f1s8signature-part-two==",
    )
    assert text == TextContent(text="2 + 2 = 4.")
    # replayed to the same model: the reasoning with its signature, as the API documents
    server.enqueue(answer("text"))
    ctx = context(UserMessage(content="2+2?"), message, UserMessage(content="Thanks"))
    await collect(run(server, ctx=ctx))
    assistant = wire_body(server, 1)["messages"][1]
    assert assistant == {
        "role": "assistant",
        "content": [
            {
                "reasoningContent": {
                    "reasoningText": {
                        "text": "The user asks for 2+2. That is 4.",
                        "signature": "EqoBCkgIARABGAIiQL2f1s8signature-part-two==",
                    }
                }
            },
            {"text": "2 + 2 = 4."},
        ],
    }


async def test_redacted_thinking_keeps_its_bytes(server: FaultServer) -> None:
    server.enqueue(answer("redacted_thinking"))
    _, message = await collect(run(server))
    redacted, text = message.content
    data = b"\x00opaque-redacted-part-1|part-2\xff"
    assert isinstance(redacted, ThinkingContent) and redacted.redacted
    assert redacted.thinking_signature == base64.b64encode(data).decode()
    assert text.text.startswith("I can't share")  # type: ignore[union-attr]
    server.enqueue(answer("text"))
    ctx = context(UserMessage(content="?"), message, UserMessage(content="go on"))
    await collect(run(server, ctx=ctx))
    sent = wire_body(server, 1)["messages"][1]["content"][0]
    assert sent == {"reasoningContent": {"redactedContent": base64.b64encode(data).decode()}}


async def test_tool_calls_with_arguments_split_at_awkward_places(server: FaultServer) -> None:
    server.enqueue(answer("tool_calls"))
    events, message = await collect(run(server, ctx=context(tools=[WEATHER])))
    assert message.stop_reason == "tool_use" and message.text == "Let me check both."
    first, second = message.tool_calls
    assert (first.id, first.name) == ("tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "get_weather")
    assert first.arguments == {"location": 'Zürich "old town"', "unit": "celsius", "days": 12.5}
    assert second.arguments == {"location": "東京 ☂", "unit": "fahrenheit"}
    assert first.invalid_arguments is None and second.invalid_arguments is None
    sent = [
        json.loads(line)["payload"]["delta"]["toolUse"]["input"]
        for line in (FIXTURES / API / "tool_calls.jsonl").read_text("utf-8").splitlines()
        if '"toolUse": {"input"' in line
    ]
    assert [e.delta for e in events if e.type == "toolcall_delta"] == [f for f in sent if f]
    ends = [e for e in events if e.type == "toolcall_end"]
    assert [e.tool_call for e in ends] == [first, second]
    body = wire_body(server)
    assert body["toolConfig"] == {
        "tools": [
            {
                "toolSpec": {
                    "name": "get_weather",
                    "description": "The weather at a place.",
                    "inputSchema": {"json": dict(WEATHER.parameters)},
                }
            }
        ]
    }


async def test_malformed_tool_arguments_are_never_guessed(server: FaultServer) -> None:
    frames = [
        event("messageStart", {"role": "assistant"}),
        event(
            "contentBlockStart",
            {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t1", "name": "f"}}},
        ),
        event(
            "contentBlockDelta",
            {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"a": 1'}}},
        ),
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "}}"}}}),
        event("contentBlockStop", {"contentBlockIndex": 0}),
        event("messageStop", {"stopReason": "tool_use"}),
    ]
    server.enqueue(stream_response(frames))
    _, message = await collect(run(server))
    (call,) = message.tool_calls
    assert call.arguments == {} and call.invalid_arguments == '{"a": 1}}'


async def test_any_rechunking_gives_the_same_message(server: FaultServer) -> None:
    body = b"".join(load_frames("tool_calls"))
    server.enqueue(answer("tool_calls"))
    for sizes in ([1], [3, 1, 7], [64], [1000]):
        server.enqueue(stream_response(rechunk(body, sizes)))
    messages = [(await collect(run(server)))[1] for _ in range(5)]
    assert all(comparable(m) == comparable(messages[0]) for m in messages)


async def test_images_in_prompts_and_tool_results(server: FaultServer) -> None:
    call = ToolCall(id="tooluse_1", name="screenshot", arguments={})
    ctx = context(
        UserMessage(
            content=[
                TextContent(text="What is this?"),
                ImageContent(data=PNG, mime_type="image/png"),
            ]
        ),
        AssistantMessage(
            content=[call], api=API, provider="amazon-bedrock", model=CLAUDE, stop_reason="tool_use"
        ),
        ToolResultMessage(
            tool_call_id="tooluse_1",
            tool_name="screenshot",
            content=[ImageContent(data=PNG, mime_type="image/jpeg")],
        ),
        tools=[WEATHER],
    )
    server.enqueue(answer("text"), answer("text"))
    await collect(run(server, ctx=ctx))
    await collect(run(server, make_model(server, images=False), ctx))
    image = {"image": {"format": "png", "source": {"bytes": PNG}}}
    user, assistant, results = wire_body(server)["messages"]
    assert user["content"] == [{"text": "What is this?"}, image]
    assert assistant["content"] == [
        {"toolUse": {"toolUseId": "tooluse_1", "name": "screenshot", "input": {}}}
    ]
    assert results["content"] == [
        {
            "toolResult": {
                "toolUseId": "tooluse_1",
                "content": [{"image": {"format": "jpeg", "source": {"bytes": PNG}}}],
                "status": "success",
            }
        },
        _CACHE_POINT,
    ]
    text_only = wire_body(server, 1)["messages"]
    assert "image" not in json.dumps(text_only)
    assert text_only[2]["content"][0]["toolResult"]["content"] == [{"text": "(no output)"}]


async def test_usage_with_cache_read_and_write(server: FaultServer) -> None:
    server.enqueue(answer("cache_usage"))
    _, message = await collect(run(server, ctx=context(system="A long shared prefix.")))
    usage = message.usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == (12, 4, 1800, 250)
    assert usage.total_tokens == 2066
    assert usage.cost.cache_read == pytest.approx(1800 * 0.3 / 1e6)
    assert usage.cost.cache_write == pytest.approx(250 * 3.75 / 1e6)
    body = wire_body(server)
    assert body["system"] == [{"text": "A long shared prefix."}, _CACHE_POINT]
    assert body["messages"][-1]["content"][-1] == _CACHE_POINT


async def test_cache_points_follow_retention_and_compat(server: FaultServer) -> None:
    server.enqueue(answer("text"), answer("text"))
    options = BedrockOptions(cache_retention="none")
    await collect(run(server, ctx=context(system="S"), options=options))
    no_cache = make_model(server, compat=BedrockCompat(thinking="anthropic", cache_points=False))
    await collect(run(server, no_cache, context(system="S")))
    for index in range(2):
        assert "cachePoint" not in json.dumps(wire_body(server, index))


async def test_the_catalogue_states_what_a_model_takes(server: FaultServer) -> None:
    # The catalogue's BedrockCompat is the model's word, whatever its id or prices suggest.
    assert BedrockCompat is model_module.BedrockCompat
    listed = get_model("amazon-bedrock", "us.anthropic.claude-haiku-4-5-20251001-v1:0")
    assert listed.compat == BedrockCompat(thinking="anthropic", cache_points=True)
    unpriced = dataclasses.replace(listed, base_url=server.url, cost=ModelCost())
    llama = dataclasses.replace(
        get_model("amazon-bedrock", "us.meta.llama3-3-70b-instruct-v1:0"),
        base_url=server.url,
        reasoning=True,
        cost=ModelCost(input=1, output=1, cache_read=0.1, cache_write=1),
    )
    assert isinstance(llama.compat, BedrockCompat) and llama.compat.thinking == "none"
    server.enqueue(answer("text"), answer("text"))
    thinking = SimpleStreamOptions(reasoning="high")
    await collect(adapter.stream_simple(unpriced, context(system="S"), thinking))
    await collect(adapter.stream_simple(llama, context(system="S"), thinking))
    claude_body, llama_body = wire_body(server, 0), wire_body(server, 1)
    assert claude_body["system"][-1] == _CACHE_POINT  # no cache prices, still cache points
    assert "thinking" in claude_body["additionalModelRequestFields"]
    assert "cachePoint" not in json.dumps(llama_body)  # cache prices, yet none: compat says so
    assert "thinking" not in json.dumps(llama_body.get("additionalModelRequestFields", {}))


def test_a_session_keeps_the_bedrock_compat() -> None:
    model = make_model(None, "my-profile", compat=BedrockCompat(thinking="anthropic"))
    data = model_to_json(model)
    assert data["compat"] == {
        "kind": "bedrock-converse-stream",
        "thinking": "anthropic",
        "cache_points": False,
    }
    restored, _ = session_model_from_json(json.loads(json.dumps(data)), "test")
    assert restored.compat == BedrockCompat(thinking="anthropic", cache_points=False)
    assert restored == model


@pytest.mark.parametrize(
    ("name", "reason"), [("max_tokens", "length"), ("text", "stop"), ("tool_calls", "tool_use")]
)
async def test_stop_reasons(server: FaultServer, name: str, reason: str) -> None:
    server.enqueue(answer(name))
    _, message = await collect(run(server))
    assert message.stop_reason == reason


async def test_guardrail_and_unknown_stop_reasons_are_errors(server: FaultServer) -> None:
    frames = load_frames("text")
    frames[-2] = event("messageStop", {"stopReason": "something_new"})
    server.enqueue(answer("guardrail"), stream_response(frames))
    _, blocked = await collect(run(server))
    assert blocked.stop_reason == "error" and "guardrail" in (blocked.error_message or "")
    assert blocked.text.startswith("Sorry") and blocked.usage.output == 9
    _, unknown = await collect(run(server))
    assert "unknown stopReason 'something_new'" in (unknown.error_message or "")


# --- errors -----------------------------------------------------------------------------------


async def test_throttling_is_retried_then_succeeds(server: FaultServer) -> None:
    server.enqueue(load_error("error_throttling"), load_error("error_unavailable"), answer("text"))
    _, message = await collect(run(server))
    assert message.stop_reason == "stop" and len(server.requests) == 3


async def test_throttling_until_the_retries_are_spent(server: FaultServer) -> None:
    server.enqueue(*[load_error("error_throttling")] * 3)
    options = BedrockOptions(max_retries=2, max_retry_delay_ms=20)
    _, message = await collect(run(server, options=options))
    assert message.stop_reason == "error" and len(server.requests) == 3
    assert message.error_message == (
        "429 ThrottlingException: Too many requests, please wait before trying again. "
        "(request id req-error-1)"
    )
    assert not is_context_overflow(message)


async def test_retry_after_beyond_the_limit_fails_at_once(server: FaultServer) -> None:
    server.enqueue(load_error("error_throttling", {"retry-after": "30"}), answer("text"))
    _, message = await collect(run(server))
    assert "max_retry_delay_ms" in (message.error_message or "")
    assert len(server.requests) == 1


async def test_validation_errors_are_not_retried(server: FaultServer) -> None:
    server.enqueue(load_error("error_validation"), answer("text"))
    _, message = await collect(run(server))
    assert message.error_message == (
        "400 ValidationException: The provided model identifier is invalid. "
        "(request id req-error-1)"
    )
    assert len(server.requests) == 1 and not is_context_overflow(message)


@pytest.mark.parametrize("name", ["error_overflow", "error_overflow_claude"])
async def test_context_overflow_is_recognised(server: FaultServer, name: str) -> None:
    server.enqueue(load_error(name))
    _, message = await collect(run(server))
    assert message.stop_reason == "error" and is_context_overflow(message, 200_000)


async def test_an_exception_as_the_first_event_is_retried(server: FaultServer) -> None:
    server.enqueue(answer("throttled_first"), answer("text"))
    _, message = await collect(run(server))
    assert message.stop_reason == "stop" and len(server.requests) == 2


async def test_an_exception_mid_stream_ends_the_answer(server: FaultServer) -> None:
    server.enqueue(answer("error_midstream"), answer("text"))
    events, message = await collect(run(server))
    assert message.stop_reason == "error" and message.text == "Partial"
    assert message.error_message == (
        "server error in the stream: modelStreamErrorException: "
        "The model stream failed: an internal error occurred."
    )
    assert events[-1].type == "error" and len(server.requests) == 1


async def test_a_validation_exception_first_is_not_retried(server: FaultServer) -> None:
    server.enqueue(
        stream_response(
            [exception("validationException", "Input is too long for requested model.")]
        )
    )
    _, message = await collect(run(server))
    assert is_context_overflow(message) and len(server.requests) == 1


async def test_dropped_connection_mid_stream_keeps_what_arrived(
    replay_server: ReplayServer,
) -> None:
    replay_server.enqueue(answer("text", drop_after=3))
    _, message = await collect(run(replay_server))
    assert message.stop_reason == "error" and message.text == "Hello, world"
    assert "the connection was lost mid-stream" in (message.error_message or "")


async def test_unreachable_endpoint(server: FaultServer) -> None:
    model = dataclasses.replace(make_model(server), base_url="http://127.0.0.1:9")
    _, message = await collect(run(server, model, options=BedrockOptions(max_retries=0)))
    assert message.stop_reason == "error"
    assert (message.error_message or "").startswith("could not connect"), message.error_message


async def test_a_body_that_is_not_an_event_stream(server: FaultServer) -> None:
    server.enqueue(
        FaultResponse(headers={"content-type": "application/json"}, chunks=[b'{"ok": true}'])
    )
    _, message = await collect(run(server))
    assert message.error_message == 'expected an event stream, got application/json: {"ok": true}'


async def test_a_corrupt_frame(server: FaultServer) -> None:
    frames = load_frames("text")
    frames[2] = frames[2][:-1] + bytes([frames[2][-1] ^ 0xFF])  # a wrong message checksum
    server.enqueue(stream_response(frames))
    _, message = await collect(run(server))
    assert message.text == "Hello"
    assert "malformed event-stream frame" in (message.error_message or "")


async def test_a_delta_whose_payload_is_not_json(server: FaultServer) -> None:
    frames = load_frames("text")
    frames[2] = event("contentBlockDelta", b"<html>proxy error</html>")
    server.enqueue(stream_response(frames))
    _, message = await collect(run(server))
    assert message.text == "Hello"
    assert (message.error_message or "").startswith("malformed contentBlockDelta event")


# --- abort ------------------------------------------------------------------------------------


async def test_abort_mid_stream_keeps_partial_content(server: FaultServer) -> None:
    server.enqueue(answer("text", delay=[0, 0, 0, 30]))
    controller = AbortController()
    options = BedrockOptions(signal=controller.signal)
    with anyio.fail_after(10):
        events, message = await collect_aborting(run(server, options=options), controller)
    assert message.stop_reason == "aborted" and message.text == "Hello"
    assert events[-1].type == "error" and message.error_message == "request was aborted"


async def test_abort_while_waiting_for_the_response(server: FaultServer) -> None:
    server.enqueue(answer("text", stall=True))
    controller = AbortController()
    options = BedrockOptions(signal=controller.signal)
    seen: list[str] = []

    async def abort_when_sent() -> None:
        await until_sent(server)
        controller.abort()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(abort_when_sent)
            _, message = await collect(run(server, options=options))
            seen.append(message.stop_reason)
    assert seen == ["aborted"]


async def test_abort_before_the_request_sends_nothing(server: FaultServer) -> None:
    controller = AbortController()
    controller.abort()
    _, message = await collect(run(server, options=BedrockOptions(signal=controller.signal)))
    assert message.stop_reason == "aborted" and server.requests == []


async def test_leaving_early_closes_the_stream(server: FaultServer) -> None:
    server.enqueue(answer("text", delay=[0, 0, 0, 30]), answer("text"))
    with anyio.fail_after(10):
        async with run(server) as stream:
            async for item in stream:
                if item.type == "text_delta":
                    break
    _, message = await collect(run(server))
    assert message.stop_reason == "stop"


async def test_the_event_loop_runs_while_the_sdk_waits(server: FaultServer) -> None:
    """boto3 blocks; it must block a worker thread, never the loop. The server holds the answer
    back after its first text until a task on the loop opens the gate: the rest of the answer
    can only arrive after that task ran (a blocked loop would get it only when the server gives
    up waiting, with the gate still shut)."""
    server.enqueue(answer("text", gate_after=2))
    gate_open_at_delta: list[bool] = []
    first_text = anyio.Event()

    async def opener() -> None:
        await first_text.wait()
        server.gate.set()

    with anyio.fail_after(15):
        async with anyio.create_task_group() as tg:
            tg.start_soon(opener)
            stream = run(server)
            async for item in stream:
                if item.type == "text_delta":
                    gate_open_at_delta.append(server.gate.is_set())
                    first_text.set()
            message = await stream.result()
    assert gate_open_at_delta == [False, True, True] and message.stop_reason == "stop"


@pytest.mark.parametrize(
    ("bounds", "least"),
    [({"request_timeout": 0.3}, 600), ({"idle_timeout": 30.0}, 30), ({}, 600)],
)
def test_the_sdk_read_timeout_never_cuts_a_silence_the_options_allow(
    bounds: dict[str, float], least: float
) -> None:
    """botocore's read timeout bounds each socket read: it is a backstop behind our timers,
    and a short `request_timeout` must not make it cut an answer that `idle_timeout=None`
    lets pause."""
    client, _ = _bedrock_sdk.make_client(
        _bedrock_sdk.Sdk(), make_model(None), BedrockOptions(**bounds), {}
    )
    try:
        assert least < client.meta.config.read_timeout <= least + 10
    finally:
        client.close()


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_runs_under_trio(server: FaultServer) -> None:
    server.enqueue(
        load_error("error_throttling", {"retry-after": "0"}),
        answer("tool_calls"),
        answer("text", delay=[0, 0, 0, 30]),
        answer("text", reset_after=3, gate_after=3),
    )
    _, message = await collect(run(server))
    assert message.stop_reason == "tool_use" and len(message.tool_calls) == 2
    controller = AbortController()
    stream = run(server, options=BedrockOptions(signal=controller.signal))
    with anyio.fail_after(10):
        _, message = await collect_aborting(stream, controller)
    assert message.stop_reason == "aborted"
    stream = run(server)
    async for item in stream:
        if item.type == "text_delta":
            server.gate.set()
    message = await stream.result()
    assert "connection was lost" in (message.error_message or "")


# --- hooks and options ------------------------------------------------------------------------


async def test_on_payload_sees_and_replaces_the_parameters(server: FaultServer) -> None:
    seen: list[Any] = []

    def on_payload(payload: Any, model: Model) -> Any:
        seen.append(payload)
        return {**payload, "inferenceConfig": {"maxTokens": 77, "stopSequences": ["END"]}}

    server.enqueue(answer("text"))
    await collect(run(server, options=BedrockOptions(on_payload=on_payload)))
    assert seen[0]["modelId"] == CLAUDE and seen[0]["inferenceConfig"] == {"maxTokens": 64_000}
    assert wire_body(server)["inferenceConfig"] == {"maxTokens": 77, "stopSequences": ["END"]}


async def test_on_payload_returning_nonsense(server: FaultServer) -> None:
    options = BedrockOptions(on_payload=lambda payload, model: "not a dict")
    _, message = await collect(run(server, options=options))
    assert message.error_message == "on_payload returned str; expected a dict or None"
    assert server.requests == []


async def test_parameters_the_sdk_refuses(server: FaultServer) -> None:
    options = BedrockOptions(on_payload=lambda payload, model: {**payload, "bogus": 1})
    _, message = await collect(run(server, options=options))
    assert "the AWS SDK refused the request parameters" in (message.error_message or "")
    assert "bogus" in (message.error_message or "") and server.requests == []


async def test_on_response_sees_status_and_headers(server: FaultServer) -> None:
    seen: list[ResponseInfo] = []
    server.enqueue(load_error("error_unavailable"), answer("text"))
    options = BedrockOptions(
        on_response=lambda info, model: seen.append(info), max_retry_delay_ms=20
    )
    await collect(run(server, options=options))
    assert [info.status for info in seen] == [503, 200]
    assert seen[1].headers["x-amzn-requestid"] == "req-stream-1"


async def test_options_reach_the_request(server: FaultServer) -> None:
    server.enqueue(answer("text"))
    model = dataclasses.replace(make_model(server, reasoning=False), headers={"x-model": "m"})
    options = BedrockOptions(
        temperature=0.25,
        max_tokens=1000,
        headers={"x-extra": "e"},
        metadata={"user_id": "user-42", "count": 3},
    )
    await collect(run(server, model, context(system="Be brief."), options))
    request = server.requests[0]
    body = wire_body(server)
    assert body["inferenceConfig"] == {"maxTokens": 1000, "temperature": 0.25}
    assert body["requestMetadata"] == {"user_id": "user-42"}
    assert request.headers["x-model"] == "m" and request.headers["x-extra"] == "e"


# --- thinking levels --------------------------------------------------------------------------


async def thinking_request(server: FaultServer, model: Model, **options: Any) -> Any:
    server.enqueue(answer("text"))
    index = len(server.requests)
    await collect(adapter.stream_simple(model, context(), SimpleStreamOptions(**options)))
    return wire_body(server, index)


async def test_budget_thinking_for_claude(server: FaultServer) -> None:
    body = await thinking_request(
        server,
        make_model(server, max_tokens=64_000),
        reasoning="medium",
        max_tokens=4000,
        temperature=0.5,
    )
    assert body["additionalModelRequestFields"] == {
        "thinking": {"type": "enabled", "budget_tokens": 8192},
        "anthropic_beta": ["interleaved-thinking-2025-05-14"],
    }
    assert body["inferenceConfig"] == {"maxTokens": 4000 + 8192}  # no temperature with thinking


async def test_adaptive_thinking_for_claude_4_6(server: FaultServer) -> None:
    model = make_model(server, "global.anthropic.claude-opus-4-6-v1")
    body = await thinking_request(server, model, reasoning="xhigh")
    assert body["additionalModelRequestFields"] == {
        "thinking": {"type": "adaptive"},
        "output_config": {"effort": "max"},
    }


async def test_no_thinking_fields_when_off_or_not_claude(server: FaultServer) -> None:
    off = await thinking_request(server, make_model(server), reasoning="off")
    llama = await thinking_request(server, make_model(server, LLAMA), reasoning="high")
    plain = await thinking_request(server, make_model(server, reasoning=False), reasoning="high")
    for body in (off, llama, plain):
        assert "additionalModelRequestFields" not in body


def test_budget_thinking_is_off_inside_a_tool_loop_that_did_not_think() -> None:
    call = ToolCall(id="t1", name="f", arguments={})
    ctx = context(
        UserMessage(content="go"),
        AssistantMessage(
            content=[call], api=API, provider="amazon-bedrock", model=CLAUDE, stop_reason="tool_use"
        ),
        ToolResultMessage(tool_call_id="t1", tool_name="f", content=[TextContent(text="ok")]),
        tools=[WEATHER],
    )
    options = BedrockOptions(thinking="enabled", thinking_budget=2048)
    assert "additionalModelRequestFields" not in build_payload(make_model(None), ctx, options)


# --- the transcript from other models ----------------------------------------------------------


def test_cross_provider_transcript() -> None:
    long_id = "call_abc|fc_" + "x" * 80 + "!"
    other = AssistantMessage(
        content=[
            ThinkingContent(thinking="Their reasoning.", thinking_signature="sig-of-another-model"),
            ThinkingContent(thinking="", thinking_signature="opaque", redacted=True),
            TextContent(text="Calling."),
            ToolCall(id=long_id, name="f", arguments={"a": 1}),
            ToolCall(id="call_unanswered", name="g", arguments={}),
        ],
        api="openai-responses",
        provider="openai",
        model="gpt-5",
        stop_reason="tool_use",
    )
    failed = AssistantMessage(
        content=[TextContent(text="half")],
        api=API,
        provider="amazon-bedrock",
        model=CLAUDE,
        stop_reason="error",
    )
    ctx = context(
        UserMessage(content="first"),
        other,
        ToolResultMessage(tool_call_id=long_id, tool_name="f", content=[TextContent(text="1")]),
        UserMessage(content="and then"),
        failed,
        UserMessage(content="again"),
        tools=[WEATHER],
    )
    messages = build_payload(make_model(None), ctx, BedrockOptions(cache_retention="none"))[
        "messages"
    ]
    new_id = re.sub(r"[^A-Za-z0-9_-]", "_", long_id)[:64]
    assert messages == [
        {"role": "user", "content": [{"text": "first"}]},
        {
            "role": "assistant",
            "content": [
                {"text": "Their reasoning."},
                {"text": "Calling."},
                {"toolUse": {"toolUseId": new_id, "name": "f", "input": {"a": 1}}},
                {"toolUse": {"toolUseId": "call_unanswered", "name": "g", "input": {}}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": new_id,
                        "content": [{"text": "1"}],
                        "status": "success",
                    }
                },
                {
                    "toolResult": {
                        "toolUseId": "call_unanswered",
                        "content": [{"text": "No result provided"}],
                        "status": "error",
                    }
                },
                {"text": "and then"},
                {"text": "again"},
            ],
        },
    ]
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", new_id)


def test_tool_blocks_in_words_when_no_tools_are_offered() -> None:
    """Bedrock rejects toolUse and toolResult blocks in a request without a toolConfig (a
    summary of a tool loop, say): there they are told in words."""
    call = ToolCall(id="tooluse_1", name="get_weather", arguments={"location": "Oslo"})
    ctx = context(
        UserMessage(content="Weather?"),
        AssistantMessage(
            content=[TextContent(text="Checking."), call],
            api=API,
            provider="amazon-bedrock",
            model=CLAUDE,
            stop_reason="tool_use",
        ),
        ToolResultMessage(
            tool_call_id="tooluse_1",
            tool_name="get_weather",
            content=[TextContent(text="-3 C"), ImageContent(data=PNG, mime_type="image/png")],
        ),
        UserMessage(content="Summarise."),
    )
    options = BedrockOptions(cache_retention="none")
    without = build_payload(make_model(None), ctx, options)
    assert "toolConfig" not in without
    assert without["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"text": "Checking."},
                {"text": '(called the tool get_weather with {"location": "Oslo"})'},
            ],
        },
        {
            "role": "user",
            "content": [
                {"text": "(the tool get_weather returned: -3 C)"},
                {"image": {"format": "png", "source": {"bytes": PNG_BYTES}}},
                {"text": "Summarise."},
            ],
        },
    ]
    with_tools = build_payload(make_model(None), dataclasses.replace(ctx, tools=[WEATHER]), options)
    assert "toolUse" in with_tools["messages"][1]["content"][1]


# --- credentials and region -------------------------------------------------------------------


def texts(events: list[Any], message: AssistantMessage, log: str) -> Iterator[str]:
    for item in events:
        yield repr(item)
    yield json.dumps(to_json(message))
    yield log


async def test_no_credential_value_in_any_event_message_error_or_log(
    server: FaultServer, caplog: pytest.LogCaptureFixture
) -> None:
    """The server echoes every credential (the signed Authorization header, the session token,
    and the secret key as a careless gateway might) in errors, retried and final."""
    echo = (
        f"Rejected {CREDENTIALS.decode()} token={SESSION_TOKEN} secret={SECRET_KEY} id={ACCESS_KEY}"
    )
    caplog.set_level(logging.DEBUG, logger="agentcore")
    failing = error_response(500, "InternalServerException", "x")
    failing.chunks = [json.dumps({"message": echo}).encode()]
    server.enqueue(failing, failing, failing)
    events, message = await collect(
        run(server, options=BedrockOptions(max_retries=2, max_retry_delay_ms=10))
    )
    assert message.stop_reason == "error" and "[redacted]" in (message.error_message or "")
    assert "Credential=[redacted]/" in (message.error_message or "")  # the key id in SigV4
    for text in texts(events, message, caplog.text):
        for secret in CREDENTIAL_VALUES:
            assert secret not in text, text[:300]
        assert "SECRET" not in text


@pytest.mark.usefixtures("registered")
async def test_no_credential_value_in_a_stored_session(server: FaultServer, tmp_path: Path) -> None:
    """An Agent's session, stored as it happens, holds the failed answer without a credential,
    though the server quoted them all."""
    echo = f"{CREDENTIALS.decode()} token={SESSION_TOKEN} secret={SECRET_KEY}"
    denied = error_response(403, "AccessDeniedException", "x")
    denied.chunks = [json.dumps({"message": echo}).encode()]
    server.enqueue(denied)
    store = JsonlSessionStore(tmp_path / "sessions")
    agent = Agent(initial_state={"model": make_model(server)}, session=store.create())
    await agent.prompt("hello")
    assert agent.state.error_message is not None
    assert agent.state.error_message.startswith("403 AccessDeniedException: Authorization:")
    stored = "".join(
        p.read_text("utf-8") for p in (tmp_path / "sessions").rglob("*") if p.is_file()
    )
    assert "AccessDeniedException" in stored
    for secret in CREDENTIAL_VALUES:
        assert secret not in stored
    assert "SECRET" not in stored


async def test_credentials_from_a_profile_are_redacted_too(
    server: FaultServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Credentials the chain finds (a profile in the shared files, region from its config)
    are known only once the client is built; they are kept out of the texts as well."""
    for name in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_DEFAULT_REGION",
    ):
        monkeypatch.delenv(name)
    profile_key = "AKIAPROFILESECRET999"
    (tmp_path / "credentials").write_text(
        f"[work]\naws_access_key_id = {profile_key}\n"
        "aws_secret_access_key = profile-SECRET-key-123456\n"
    )
    (tmp_path / "config").write_text("[profile work]\nregion = eu-central-1\n")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_PROFILE", "work")
    echo = f"denied for {CREDENTIALS.decode()} (profile-SECRET-key-123456)"
    failing = error_response(403, "AccessDeniedException", "x")
    failing.chunks = [json.dumps({"message": echo}).encode()]
    server.enqueue(failing)
    events, message = await collect(run(server))
    authorization = server.requests[0].headers["authorization"]
    assert f"Credential={profile_key}/" in authorization and "/eu-central-1/" in authorization
    assert (message.error_message or "").startswith("403 AccessDeniedException: denied for")
    for text in texts(events, message, ""):
        assert profile_key not in text and "SECRET" not in text, text[:300]


async def test_region_from_options_and_environment(
    server: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_REGION", "ap-southeast-2")  # over AWS_DEFAULT_REGION
    server.enqueue(answer("text"), answer("text"))
    await collect(run(server))
    await collect(run(server, options=BedrockOptions(region="eu-west-3")))
    scopes = [r.headers["authorization"] for r in server.requests]
    assert "/ap-southeast-2/bedrock/" in scopes[0] and "/eu-west-3/bedrock/" in scopes[1]


async def test_static_credentials_in_options(server: FaultServer) -> None:
    server.enqueue(answer("text"))
    options = BedrockOptions(
        aws_access_key_id="AKIAOPTIONSSECRET000",
        aws_secret_access_key="options-SECRET-key-abcdef",
    )
    await collect(run(server, options=options))
    request = server.requests[0]
    assert "Credential=AKIAOPTIONSSECRET000/" in request.headers["authorization"]
    assert "x-amz-security-token" not in request.headers


async def test_a_change_of_credentials_in_the_environment_is_seen(
    server: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The adapter keeps boto3 sessions between requests, but never past a change of the
    environment they were made from."""
    server.enqueue(answer("text"), answer("text"))
    await collect(run(server))
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAROTATEDSECRET777")
    monkeypatch.delenv("AWS_SESSION_TOKEN")
    await collect(run(server))
    first, second = (r.headers for r in server.requests)
    assert f"Credential={ACCESS_KEY}/" in first["authorization"]
    assert "Credential=AKIAROTATEDSECRET777/" in second["authorization"]
    assert "x-amz-security-token" not in second


async def test_a_missing_region_is_a_clear_error(
    server: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    _, message = await collect(run(server))
    assert message.stop_reason == "error" and "AWS_REGION" in (message.error_message or "")
    assert server.requests == []


async def test_missing_credentials_are_a_clear_error(
    server: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name)
    _, message = await collect(run(server))
    assert (message.error_message or "").startswith("no AWS credentials for Bedrock")
    assert server.requests == []


def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "boto3", None)
    with pytest.raises(MissingExtraError, match=re.escape("pip install 'agentcore-loop[bedrock]'")):
        adapter.stream(make_model(None), context())


# --- the cross-provider fault suite -----------------------------------------------------------

_NOT_APPLICABLE = {
    "keep_alive_comments_forever": "the AWS event stream has no comments or keep-alives",
    "invalid_utf8_in_a_text_delta": "frames are checksummed: a bad byte is a corrupt frame",
}
_PHRASES = {
    # botocore turns a payload that is not JSON into an event without its fields
    "invalid_json_chunk": "malformed contentBlockDelta event from the server",
}
FAULTS = [
    dataclasses.replace(fault, error=_PHRASES.get(fault.name, fault.error), apis=[API])
    for fault in test_faults.FAULTS
    if fault.name not in _NOT_APPLICABLE
]


@pytest.mark.usefixtures("registered")
@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
async def test_fault(
    fault: test_faults.Fault, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fault suite's own case, with Bedrock's wire in its table (its key check covers the
    AWS credentials here: each holds "SECRET", and the server echoes the signed header)."""
    monkeypatch.setitem(WIRES, API, BedrockWire())
    await test_faults.test_fault(API, fault, caplog)


@pytest.mark.usefixtures("registered")
async def test_the_loop_config_bounds_reach_the_adapter(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(WIRES, API, BedrockWire())
    await test_faults.test_the_loop_config_bounds_reach_the_adapter(API, caplog)
