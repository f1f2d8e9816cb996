"""`MessageBuilder` on its own: the accumulator every provider feeds. Its events, their `partial`
snapshots (each frozen at its moment however the message grows later), block bookkeeping, unique
tool-call ids, and the terminal events. (Argument parsing has its own file:
`test_builder_arguments.py`.)"""

from __future__ import annotations

import pytest

from agentcore.llm import MessageBuilder, Model
from agentcore.messages import TextContent, ThinkingContent, ToolCall, Usage

MODEL = Model(id="m-1", api="faux", provider="prov")


def test_start_is_an_empty_message_of_the_model() -> None:
    builder = MessageBuilder(MODEL)
    event = builder.start()
    assert event.type == "start"
    message = event.partial
    assert (message.api, message.provider, message.model) == ("faux", "prov", "m-1")
    assert message.content == [] and message.stop_reason == "stop"
    assert builder.block_count == 0 and not builder.has_tool_calls


def test_text_streams_and_each_partial_is_frozen_at_its_moment() -> None:
    builder = MessageBuilder(MODEL)
    start = builder.text_start()
    index = start.content_index
    first = builder.text_delta(index, "Hel")
    second = builder.text_delta(index, "lo")
    end = builder.text_end(index, signature="sig")
    assert index == 0 and (first.delta, second.delta) == ("Hel", "lo")
    assert end.content == "Hello"
    # read after later deltas: the text is as it was (a signature set later shows, see below)
    assert first.partial.text == "Hel"
    assert second.partial.text == "Hello"
    assert start.partial.text == ""
    assert end.partial.content == [TextContent(text="Hello", text_signature="sig")]
    assert not builder.is_open(index) and builder.kind(index) == "text"


def test_a_snapshot_of_an_open_block_shows_a_signature_set_after_it() -> None:
    # Known and accepted: a snapshot keeps an open block's chunk count, not its signature, so
    # a `partial` read after the block's end shows the end's signature (the text stays as it
    # was). Nothing reads signatures from mid-stream snapshots; this pins the behaviour.
    builder = MessageBuilder(MODEL)
    index = builder.text_start().content_index
    early = builder.text_delta(index, "a")
    builder.text_end(index, signature="late")
    assert early.partial.content == [TextContent(text="a", text_signature="late")]


def test_thinking_with_a_signature_that_arrives_in_pieces() -> None:
    builder = MessageBuilder(MODEL)
    index = builder.thinking_start().content_index
    builder.thinking_delta(index, "hmm")
    builder.thinking_signature(index, "ab")
    builder.thinking_signature(index, "abcd")  # passed whole so far: replaces
    end = builder.thinking_end(index)
    assert end.content == "hmm"
    assert end.partial.content == [ThinkingContent(thinking="hmm", thinking_signature="abcd")]
    redacted = builder.thinking_start(signature="opaque", redacted=True)
    final = builder.thinking_end(redacted.content_index).partial.content[1]
    assert final == ThinkingContent(thinking="", thinking_signature="opaque", redacted=True)


def test_blocks_interleave_and_close_in_order() -> None:
    builder = MessageBuilder(MODEL)
    text = builder.text_start().content_index
    call = builder.toolcall_start(id="c1", name="lookup").content_index
    builder.text_delta(text, "a")
    builder.toolcall_delta(call, '{"q": 1}')
    assert builder.is_open(text) and builder.is_open(call) and builder.has_tool_calls
    ends = builder.close_open_blocks()
    assert [e.type for e in ends] == ["text_end", "toolcall_end"]
    assert [e.content_index for e in ends] == [text, call]
    assert builder.close_open_blocks() == []
    assert ends[1].tool_call == ToolCall(id="c1", name="lookup", arguments={"q": 1})


def test_a_tool_call_filled_in_later_and_ids_kept_unique() -> None:
    builder = MessageBuilder(MODEL)
    first = builder.toolcall_start(id="", name="").content_index
    builder.set_tool_call(first, id="call_1", name="search")
    second = builder.toolcall_start(id="call_1", name="search").content_index
    third = builder.toolcall_start(id="call_1", name="search").content_index
    calls = [e.tool_call for e in builder.close_open_blocks()]
    assert [c.id for c in calls] == ["call_1", "call_1_2", "call_1_3"]
    assert (first, second, third) == (0, 1, 2)


def test_usage_goes_into_every_later_snapshot() -> None:
    builder = MessageBuilder(MODEL)
    index = builder.text_start().content_index
    before = builder.text_delta(index, "x")
    usage = Usage(input=3, output=4, cache_read=0, cache_write=0)
    builder.set_usage(usage)
    after = builder.text_delta(index, "y")
    assert before.partial.usage == Usage()
    assert after.partial.usage == usage
    assert builder.done("stop").message.usage == usage


def test_done_closes_nothing_itself_but_finishes_open_calls_strictly() -> None:
    builder = MessageBuilder(MODEL)
    index = builder.toolcall_start(id="c", name="t").content_index
    builder.toolcall_delta(index, '{"a": [1, 2')
    done = builder.done("tool_use")
    assert done.reason == "tool_use" and done.message.stop_reason == "tool_use"
    call = done.message.content[0]
    assert isinstance(call, ToolCall)
    assert call.arguments == {} and call.invalid_arguments == '{"a": [1, 2'


def test_error_keeps_what_arrived_with_a_preview_of_open_calls() -> None:
    builder = MessageBuilder(MODEL)
    text = builder.text_start().content_index
    builder.text_delta(text, "partial answer")
    call = builder.toolcall_start(id="c", name="t").content_index
    builder.toolcall_delta(call, '{"a": [1, 2')
    error = builder.error("aborted", "request was aborted")
    message = error.error
    assert error.reason == "aborted" and message.stop_reason == "aborted"
    assert message.error_message == "request was aborted"
    assert message.content[0] == TextContent(text="partial answer")
    tool_call = message.content[1]
    assert isinstance(tool_call, ToolCall) and tool_call.arguments == {"a": [1, 2]}


def test_writing_to_a_closed_or_other_kind_of_block_is_refused() -> None:
    builder = MessageBuilder(MODEL)
    index = builder.text_start().content_index
    with pytest.raises(ValueError, match="not an open thinking block"):
        builder.thinking_delta(index, "x")
    builder.text_end(index)
    with pytest.raises(ValueError, match="content block 0 is not an open text block"):
        builder.text_delta(index, "late")
    with pytest.raises(ValueError, match="content block 5"):
        builder.toolcall_delta(5, "{}")


def test_the_timestamp_is_the_same_in_every_event() -> None:
    builder = MessageBuilder(MODEL)
    start = builder.start()
    index = builder.text_start().content_index
    delta = builder.text_delta(index, "x")
    done = builder.done("stop")
    assert start.partial.timestamp == delta.partial.timestamp == done.message.timestamp
