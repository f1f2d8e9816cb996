"""The provider driver on its own: the stream skeleton every adapter runs on.

Each provider's tests run the driver through that provider's real SDK against a server on
127.0.0.1; these drive it with a small wire written here, to reach what no real server does on
demand: a close that never returns, a cancellation in the middle of a read, an abort between two
reads. The wire is the test's stand-in for a vendor; the driver under test is the real one.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable
from typing import Any

import anyio
import pytest

from agentcore.abort import AbortController
from agentcore.llm import Model, StreamOptions
from agentcore.llm._driver import AnswerFailed, Wire, open_driven
from agentcore.llm._request import Request
from agentcore.llm._retry import RetryInfo
from agentcore.llm.events import AssistantMessageEvent

from .helpers import collect

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """The driver is anyio only: it runs under both backends (the vendor SDKs need asyncio)."""
    return str(request.param)


MODEL = Model(id="wire-model", api="test-wire", provider="test")


class _Opened:
    def __init__(self, items: AsyncIterator[Any], first: Any, log: list[str]) -> None:
        self.events = items
        self.first = first
        self.log = log

    async def aclose(self) -> None:
        await self.events.aclose()  # type: ignore[attr-defined]
        self.log.append("response closed")


class ScriptWire(Wire):
    """Streams the texts it is given (one wire event each); `None` in `items` waits forever."""

    close_timeout = 0.2

    def __init__(
        self,
        options: StreamOptions,
        items: list[Any],
        *,
        fail_sends: int = 0,
        hang_release: bool = False,
        fail_release: bool = False,
    ) -> None:
        super().__init__(Request(MODEL, options, None))
        self.items = items
        self.log: list[str] = []
        self.fail_sends = fail_sends
        self.hang_release = hang_release
        self.fail_release = fail_release
        self.text_index: int | None = None

    async def prepare(self) -> None:
        self.log.append("prepared")

    async def _rest(self) -> AsyncIterator[Any]:
        for item in self.items[1:]:
            if item is None:
                await anyio.sleep_forever()
            yield item

    async def send(self) -> _Opened:
        self.log.append("sent")
        if self.fail_sends:
            self.fail_sends -= 1
            raise ConnectionResetError("dropped")
        return _Opened(self._rest(), self.items[0], self.log)

    def classify(self, exc: BaseException) -> RetryInfo | None:
        return RetryInfo(delay=0.0) if isinstance(exc, ConnectionResetError) else None

    def describe(self, exc: BaseException, *, started: bool) -> str:
        return f"{'during' if started else 'before'} the answer: {exc}"

    def feed(self, item: Any) -> Iterable[AssistantMessageEvent]:
        if isinstance(item, Exception):
            raise item
        if item == "STOP":
            self.finished = True
            return []
        events: list[AssistantMessageEvent] = []
        if self.text_index is None:
            start = self.builder.text_start()
            self.text_index = start.content_index
            events.append(start)
        events.append(self.builder.text_delta(self.text_index, item))
        return events

    def finish(self) -> Iterable[AssistantMessageEvent]:
        if not self.finished:
            raise AnswerFailed("the stream ended before STOP")
        return [*self.builder.close_open_blocks(), self.builder.done("stop")]

    async def release(self) -> None:
        if self.fail_release:
            raise OSError("socket already gone")
        if self.hang_release:
            await anyio.sleep_forever()
        self.log.append("client closed")


async def test_an_answer_streams_and_everything_is_released_before_the_terminal_event() -> None:
    wire = ScriptWire(StreamOptions(), ["Hel", "lo", "STOP"])
    events, message = await collect(open_driven(wire))
    assert [e.type for e in events] == [
        "start",
        "text_start",
        "text_delta",
        "text_delta",
        "text_end",
        "done",
    ]
    assert message.text == "Hello" and message.stop_reason == "stop"
    assert wire.log == ["prepared", "sent", "response closed", "client closed"]


async def test_a_failed_attempt_before_the_first_event_is_retried() -> None:
    wire = ScriptWire(StreamOptions(max_retries=2), ["ok", "STOP"], fail_sends=1)
    _, message = await collect(open_driven(wire))
    assert message.stop_reason == "stop" and message.text == "ok"
    assert wire.log.count("sent") == 2


async def test_a_close_that_never_returns_is_abandoned_after_the_bound(
    caplog: pytest.LogCaptureFixture,
) -> None:
    wire = ScriptWire(StreamOptions(), ["ok", "STOP"], hang_release=True)
    with caplog.at_level(logging.WARNING, logger="agentcore.llm"):
        events, message = await collect(open_driven(wire))
    assert events[-1].type == "done" and message.text == "ok"
    assert "response closed" in wire.log and "client closed" not in wire.log
    assert any("abandoned" in record.getMessage() for record in caplog.records)


async def test_a_close_that_fails_is_logged_and_the_answer_stands(
    caplog: pytest.LogCaptureFixture,
) -> None:
    wire = ScriptWire(StreamOptions(), ["ok", "STOP"], fail_release=True)
    with caplog.at_level(logging.INFO, logger="agentcore.llm"):
        _, message = await collect(open_driven(wire))
    assert message.stop_reason == "stop"
    assert any("socket already gone" in record.getMessage() for record in caplog.records)


async def test_a_cancelled_reader_still_releases_the_connection() -> None:
    wire = ScriptWire(StreamOptions(), ["first", None])
    stream = open_driven(wire)
    with anyio.move_on_after(0.2) as scope:
        async for _ in stream:
            pass
    assert scope.cancelled_caught
    assert wire.log[-2:] == ["response closed", "client closed"]


async def test_an_abort_while_reading_ends_aborted_and_stops_listening() -> None:
    controller = AbortController()
    wire = ScriptWire(StreamOptions(signal=controller.signal), ["first", None])
    stream = open_driven(wire)
    events = []
    async with stream:
        async for event in stream:
            events.append(event)
            if event.type == "text_delta":
                controller.abort()
    assert events[-1].type == "error" and events[-1].reason == "aborted"
    assert events[-1].error.text == "first"  # what arrived is kept
    assert wire.log[-2:] == ["response closed", "client closed"]
    assert controller.signal._listeners == []  # the driver's listener is gone


async def test_a_request_aborted_before_it_began_calls_nothing() -> None:
    controller = AbortController()
    controller.abort()
    wire = ScriptWire(StreamOptions(signal=controller.signal), ["x", "STOP"])
    events, message = await collect(open_driven(wire))
    assert [e.type for e in events] == ["error"] and message.stop_reason == "aborted"
    assert wire.log == []


async def test_silence_longer_than_idle_timeout_ends_the_answer_with_what_arrived() -> None:
    wire = ScriptWire(StreamOptions(idle_timeout=0.05), ["partial", None])
    _, message = await collect(open_driven(wire))
    assert message.stop_reason == "error" and message.text == "partial"
    assert "idle_timeout" in (message.error_message or "")


async def test_failures_are_worded_by_the_wire_or_as_raised() -> None:
    _, before = await collect(open_driven(ScriptWire(StreamOptions(), [ValueError("bad")])))
    assert before.error_message == "during the answer: bad"
    _, truncated = await collect(open_driven(ScriptWire(StreamOptions(), ["a"])))
    assert truncated.error_message == "the stream ended before STOP"
    assert truncated.text == "a"


async def test_a_final_failure_before_the_first_event_is_worded_as_not_started() -> None:
    wire = ScriptWire(StreamOptions(max_retries=0), ["x"], fail_sends=1)
    events, message = await collect(open_driven(wire))
    assert [e.type for e in events] == ["error"]
    assert message.error_message == "before the answer: dropped"
    assert wire.log == ["prepared", "sent", "client closed"]
