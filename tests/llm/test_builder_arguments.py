"""Tool-call arguments as the model sent them: the streaming preview is forgiving, the finished
call is strict. Arguments that are not exactly one JSON object are never guessed at: the call
gets `arguments={}` and the raw text in `invalid_arguments`. Checked on the builder itself, through
the three adapters that stream argument text (against a real HTTP server, through their SDKs) and
through the agent loop with a scripted stream function."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from agentcore import AgentContext, AgentLoopConfig, agent_loop
from agentcore.llm import (
    AssistantMessageEvent,
    AssistantMessageEventStream,
    Context,
    MessageBuilder,
    Model,
    StreamOptions,
    stream,
)
from agentcore.llm._partial_json import (
    describe_invalid_json,
    parse_complete_json,
    parse_partial_json,
)
from agentcore.messages import AssistantMessage, ToolCall, UserMessage

from .helpers import collect
from .replay_server import ReplayServer, ScriptedResponse

FAUX = Model(id="faux-1", api="faux", provider="faux")

CUT_OFF = '{"to": "12345", "memo": "rent for ma'

# (arguments text, a phrase the parser's reason must contain)
MALFORMED = [
    (CUT_OFF, "unterminated string starting at line 1 column 25"),
    ('{"to": "12345"} and then some', "extra data after the object at line 1 column 17"),
    ('{"to": "a"}{"to": "b"}', "extra data after the object at line 1 column 12"),
    ('{"a":1,"b":23 oops', "expecting ',' delimiter at line 1 column 15"),
    ('{"a": 1', "the text ends before the JSON is complete"),
    ('{"a": tru', "the text ends before the JSON is complete"),
    ('{"a": 1,}', "expecting property name enclosed in double quotes"),
    ("[1, 2]", "expected an object, got an array"),
    ('"pay 5"', "expected an object, got a string"),
    ("42", "expected an object, got a number"),
    ("null", "expected an object, got null"),
    ('{"a": NaN}', "NaN is not a JSON value"),
    ('{"a": -Infinity}', "-Infinity is not a JSON value"),
    ("{'a': 1}", "expecting property name enclosed in double quotes"),
    ("[" * 5000 + "]" * 5000, "nested too deeply"),
]

VALID = [
    ('{"to": "12345", "memo": "rent for march"}', {"to": "12345", "memo": "rent for march"}),
    ('  \n{"a": [1, {"b": null}], "c": 2.5}\t\n', {"a": [1, {"b": None}], "c": 2.5}),
    ("{}", {}),
    ('{"a": 1, "a": 2}', {"a": 2}),  # JSON's own rule for repeated keys: the last one wins
    ('{"text": "caf\\u00e9 \\"quoted\\""}', {"text": 'café "quoted"'}),
]


def pieces(text: str, size: int = 5) -> Iterator[str]:
    for i in range(0, len(text), size):
        yield text[i : i + size]


def build_call(text: str, size: int = 5) -> tuple[list[Any], ToolCall, AssistantMessage]:
    """Stream `text` as the arguments of one call through a builder: the deltas' previews, the
    finished call and the final message."""
    b = MessageBuilder(FAUX)
    b.start()
    index = b.toolcall_start(id="call_1", name="pay").content_index
    previews = [b.toolcall_delta(index, piece).partial.content[0] for piece in pieces(text, size)]
    end = b.toolcall_end(index)
    return previews, end.tool_call, b.done("tool_use").message


# --- the builder ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "reason"), MALFORMED)
def test_malformed_arguments_are_never_guessed(text: str, reason: str) -> None:
    _, call, message = build_call(text)
    assert call.arguments == {}
    assert call.invalid_arguments == text
    assert message.content == [call]  # the final message carries the same finished call
    assert reason in describe_invalid_json(text)
    assert parse_complete_json(text) is None


def test_the_streaming_preview_stays_forgiving() -> None:
    previews, call, _ = build_call(CUT_OFF)
    assert previews[-1] == ToolCall(
        id="call_1", name="pay", arguments={"to": "12345", "memo": "rent for ma"}
    )
    assert all(p.invalid_arguments is None for p in previews)
    assert call.arguments == {} and call.invalid_arguments == CUT_OFF
    assert parse_partial_json(CUT_OFF) == {"to": "12345", "memo": "rent for ma"}


@pytest.mark.parametrize(("text", "expected"), VALID)
def test_one_json_object_is_taken_whole(text: str, expected: dict[str, Any]) -> None:
    _, call, _ = build_call(text, size=3)
    assert call.arguments == expected and call.invalid_arguments is None
    assert describe_invalid_json(text) == ""


@pytest.mark.parametrize("text", ["", " ", "\n\t "])
def test_blank_arguments_are_a_call_without_arguments(text: str) -> None:
    b = MessageBuilder(FAUX)
    index = b.toolcall_start(id="call_1", name="now").content_index
    if text:
        b.toolcall_delta(index, text)
    call = b.toolcall_end(index).tool_call
    assert call.arguments == {} and call.invalid_arguments is None


def test_a_megabyte_of_valid_arguments() -> None:
    arguments = {"data": "x" * 1_000_000, "items": list(range(10_000)), "n": 5}
    text = json.dumps(arguments)
    previews, call, _ = build_call(text, size=1000)
    assert call.arguments == arguments and call.invalid_arguments is None
    assert previews[-1].arguments["data"].startswith("xxx")


def test_arguments_given_parsed_are_taken_as_they_are() -> None:
    b = MessageBuilder(FAUX)
    index = b.toolcall_start(id="call_1", name="pay").content_index
    b.toolcall_delta(index, "{not json")
    call = b.toolcall_end(index, arguments={"to": "1"}).tool_call
    assert call.arguments == {"to": "1"} and call.invalid_arguments is None


def test_a_call_left_open_is_parsed_strictly_when_the_message_is_done() -> None:
    b = MessageBuilder(FAUX)
    index = b.toolcall_start(id="call_1", name="pay").content_index
    b.toolcall_delta(index, CUT_OFF)
    (call,) = b.done("tool_use").message.content
    assert isinstance(call, ToolCall)
    assert call.arguments == {} and call.invalid_arguments == CUT_OFF


def test_a_failed_message_keeps_the_preview_of_what_arrived() -> None:
    # a message that ended in an error is never executed: it shows how far the call got
    b = MessageBuilder(FAUX)
    index = b.toolcall_start(id="call_1", name="pay").content_index
    b.toolcall_delta(index, CUT_OFF)
    (call,) = b.error("error", "connection lost").error.content
    assert isinstance(call, ToolCall)
    assert call.arguments == {"to": "12345", "memo": "rent for ma"}
    assert call.invalid_arguments is None


def test_close_open_blocks_parses_strictly() -> None:
    b = MessageBuilder(FAUX)
    index = b.toolcall_start(id="call_1", name="pay").content_index
    b.toolcall_delta(index, '{"a":1,"b":23 oops')
    (end,) = b.close_open_blocks()
    assert end.tool_call.arguments == {}
    assert end.tool_call.invalid_arguments == '{"a":1,"b":23 oops'


# --- through the adapters that stream argument text ----------------------------------------------


def _sse(events: list[dict[str, Any]], *, named: bool) -> list[bytes]:
    out = []
    for event in events:
        head = f"event: {event['type']}\n" if named else ""
        out.append(f"{head}data: {json.dumps(event)}\n\n".encode())
    return out


def completions_body(arguments: str) -> list[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "gpt-test",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    call = {"index": 0, "id": "call_1", "type": "function"}
    events = [chunk({"role": "assistant", "tool_calls": [{**call, "function": {"name": "pay"}}]})]
    events += [
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
        for piece in pieces(arguments, 4096)
    ]
    events.append(chunk({}, "tool_calls"))
    return [*_sse(events, named=False), b"data: [DONE]\n\n"]


def responses_body(arguments: str) -> list[bytes]:
    item = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "pay"}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**item, "status": "in_progress", "arguments": ""},
        },
    ]
    events += [
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_1",
            "output_index": 0,
            "delta": piece,
        }
        for piece in pieces(arguments, 4096)
    ]
    done = {**item, "status": "completed", "arguments": arguments}
    events += [
        {
            "type": "response.function_call_arguments.done",
            "item_id": "fc_1",
            "output_index": 0,
            "arguments": arguments,
        },
        {"type": "response.output_item.done", "output_index": 0, "item": done},
        {
            "type": "response.completed",
            "response": {
                "id": "resp_1",
                "status": "completed",
                "output": [done],
                "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
            },
        },
    ]
    return _sse(events, named=True)


def anthropic_body(arguments: str) -> list[bytes]:
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": "claude-test",
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    block = {"type": "tool_use", "id": "toolu_1", "name": "pay", "input": {}}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": message},
        {"type": "content_block_start", "index": 0, "content_block": block},
    ]
    events += [
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": piece},
        }
        for piece in ["", *pieces(arguments, 4096)]
    ]
    events += [
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
        {"type": "message_stop"},
    ]
    return _sse(events, named=True)


ADAPTERS = {
    "openai-completions": (completions_body, "/v1"),
    "openai-responses": (responses_body, "/v1"),
    "anthropic-messages": (anthropic_body, ""),
}


async def stream_call(server: ReplayServer, api: str, arguments: str) -> AssistantMessage:
    body, prefix = ADAPTERS[api]
    server.enqueue(ScriptedResponse.sse(body(arguments)))
    model = Model(
        id="test-model",
        api=api,
        provider="anthropic" if api.startswith("anthropic") else "openai",
        base_url=server.base_url(prefix) if prefix else server.url,
    )
    context = Context(messages=[UserMessage(content="pay the rent")])
    _, message = await collect(stream(model, context, StreamOptions(api_key="test-key")))
    return message


@pytest.mark.anyio
@pytest.mark.parametrize("api", list(ADAPTERS))
@pytest.mark.parametrize("text", [text for text, _ in MALFORMED[:12]])
async def test_adapters_never_guess_arguments(
    replay_server: ReplayServer, api: str, text: str
) -> None:
    message = await stream_call(replay_server, api, text)
    assert message.stop_reason == "tool_use", message.error_message
    (call,) = message.tool_calls
    assert call.name == "pay"
    assert call.arguments == {} and call.invalid_arguments == text


@pytest.mark.anyio
@pytest.mark.parametrize("api", list(ADAPTERS))
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        *VALID[:3],
        ("", {}),
        (json.dumps({"data": "y" * 1_000_000}), {"data": "y" * 1_000_000}),
    ],
    ids=["object", "whitespace", "empty-object", "empty-text", "one-megabyte"],
)
async def test_adapters_take_one_json_object(
    replay_server: ReplayServer, api: str, text: str, expected: dict[str, Any]
) -> None:
    message = await stream_call(replay_server, api, text)
    assert message.stop_reason == "tool_use", message.error_message
    (call,) = message.tool_calls
    assert call.arguments == expected and call.invalid_arguments is None


# --- through the agent loop ----------------------------------------------------------------------


def scripted(arguments: str) -> Any:
    """A stream function answering first with one call whose arguments are `arguments` (in small
    fragments), then with text."""
    answers = 0

    def stream_fn(model: Model, context: Context, options: Any) -> AssistantMessageEventStream:
        nonlocal answers
        answers += 1
        first = answers == 1

        async def events() -> AsyncIterator[AssistantMessageEvent]:
            b = MessageBuilder(model)
            yield b.start()
            if first:
                yield (start := b.toolcall_start(id="call_1", name="pay"))
                for piece in pieces(arguments, 3):
                    yield b.toolcall_delta(start.content_index, piece)
                yield b.toolcall_end(start.content_index)
                yield b.done("tool_use")
            else:
                yield (text := b.text_start())
                yield b.text_delta(text.content_index, "ok")
                yield b.text_end(text.content_index)
                yield b.done("stop")

        return AssistantMessageEventStream(events())

    return stream_fn


@pytest.mark.anyio
@pytest.mark.parametrize("text", [CUT_OFF, '{"to": "1"}{"to": "2"}', '{"a":1,"b":23 oops'])
async def test_the_loop_receives_the_raw_text_not_a_guess(text: str) -> None:
    config = AgentLoopConfig(model=FAUX)
    run = agent_loop([UserMessage(content="pay")], AgentContext(), config, stream_fn=scripted(text))
    async with run:
        events = [event async for event in run]
    previews = [
        block.arguments
        for e in events
        if e.type == "message_update"
        for block in e.message.content
        if isinstance(block, ToolCall)
    ]
    assert any(previews)  # the preview showed what was arriving
    assistant = next(
        e.message
        for e in events
        if e.type == "message_end" and isinstance(e.message, AssistantMessage)
    )
    (call,) = assistant.tool_calls
    assert call.arguments == {} and call.invalid_arguments == text
