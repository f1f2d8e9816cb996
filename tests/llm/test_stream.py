"""`AssistantMessageEventStream` on its own: whatever its source does, exactly one terminal event
comes out, `result()` is the final message, the source is closed once the answer is decided or the
reader leaves, and the terminal error text is redacted."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agentcore.llm import AssistantMessageEventStream, MessageBuilder, Model
from agentcore.llm.events import AssistantMessageEvent
from agentcore.messages import AssistantMessage

pytestmark = pytest.mark.anyio

MODEL = Model(id="m-1", api="faux", provider="prov")


class Source:
    """An async generator's stand-in that records whether it was closed."""

    def __init__(self, events: list[AssistantMessageEvent], failure: Exception | None = None):
        self.events = events
        self.failure = failure
        self.closed = False
        self.read = 0

    def __aiter__(self) -> AsyncIterator[AssistantMessageEvent]:
        return self._run()

    async def _run(self) -> AsyncIterator[AssistantMessageEvent]:
        try:
            for event in self.events:
                self.read += 1
                yield event
            if self.failure is not None:
                raise self.failure
        finally:
            self.closed = True


def _text_events(*deltas: str) -> tuple[MessageBuilder, list[AssistantMessageEvent]]:
    builder = MessageBuilder(MODEL)
    index = builder.text_start().content_index
    events: list[AssistantMessageEvent] = [builder.start()]
    events += [builder.text_delta(index, d) for d in deltas]
    return builder, events


async def _all(stream: AssistantMessageEventStream) -> list[AssistantMessageEvent]:
    return [event async for event in stream]


async def test_a_complete_answer_and_its_result() -> None:
    builder, events = _text_events("a", "b")
    events += [*builder.close_open_blocks(), builder.done("stop")]
    source = Source(events)
    stream = AssistantMessageEventStream(source)
    out = await _all(stream)
    assert out == events
    assert (await stream.result()).text == "ab"
    assert source.closed
    assert await _all(stream) == []  # ended: nothing more


async def test_events_after_the_terminal_one_are_never_read() -> None:
    builder, events = _text_events("a")
    done = builder.done("stop")
    source = Source([*events, done, builder.error("error", "late")])
    out = await _all(AssistantMessageEventStream(source))
    assert out[-1] is done and source.read == len(events) + 1 and source.closed


async def test_result_reads_the_rest_of_the_stream() -> None:
    builder, events = _text_events("x")
    stream = AssistantMessageEventStream(Source([*events, builder.done("length")]))
    message = await stream.result()
    assert message.stop_reason == "length" and message.text == "x"


async def test_a_source_that_ends_without_a_terminal_event() -> None:
    _, events = _text_events("kept")
    out = await _all(AssistantMessageEventStream(Source(events)))
    assert [e.type for e in out][-1] == "error"
    error = out[-1].error  # type: ignore[union-attr]
    assert error.stop_reason == "error" and error.text == "kept"
    assert error.error_message == "the model stream ended without a terminal event"


async def test_a_source_that_raises_keeps_what_arrived() -> None:
    _, events = _text_events("so far")
    stream = AssistantMessageEventStream(Source(events, ValueError("broken pipe")))
    out = await _all(stream)
    message = await stream.result()
    assert out[-1].type == "error" and message.text == "so far"
    assert message.error_message == "ValueError: broken pipe"


async def test_a_source_that_raises_before_anything_uses_the_fallback() -> None:
    fallback = AssistantMessage(api="faux", provider="prov", model="m-1")
    stream = AssistantMessageEventStream(Source([], RuntimeError()), fallback=fallback)
    message = await stream.result()
    assert (message.api, message.provider, message.model) == ("faux", "prov", "m-1")
    assert message.stop_reason == "error" and message.error_message == "RuntimeError()"


async def test_leaving_early_closes_the_source_and_decides_the_result() -> None:
    builder, events = _text_events("a", "b", "c")
    source = Source([*events, builder.done("stop")])
    async with AssistantMessageEventStream(source) as stream:
        async for event in stream:
            if event.type == "text_delta":
                break
    assert source.closed and source.read == 2
    message = await stream.result()
    assert message.stop_reason == "error" and message.text == "a"
    assert message.error_message == "the stream was closed before it finished"


async def test_the_terminal_error_text_is_redacted() -> None:
    builder, events = _text_events("x")
    failed = builder.error("error", "401: bad key sk-SECRET")

    def redact(text: str) -> str:
        return text.replace("sk-SECRET", "[redacted]")

    stream = AssistantMessageEventStream(Source([*events, failed]), redact=redact)
    out = await _all(stream)
    assert out[-1].error.error_message == "401: bad key [redacted]"  # type: ignore[union-attr]
    assert (await stream.result()).error_message == "401: bad key [redacted]"
    clean = builder.error("error", "nothing secret")
    again = await _all(AssistantMessageEventStream(Source([clean]), redact=redact))
    assert again[-1] is clean  # unchanged text: the same event

    raised = AssistantMessageEventStream(Source([], ValueError("key sk-SECRET")), redact=redact)
    assert (await raised.result()).error_message == "ValueError: key [redacted]"


async def test_from_events_replays() -> None:
    builder, events = _text_events("r")
    done = builder.done("stop")
    stream = AssistantMessageEventStream.from_events([*events, done])
    assert await _all(stream) == [*events, done]
