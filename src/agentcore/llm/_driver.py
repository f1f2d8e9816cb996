"""The provider driver: the one stream skeleton every adapter runs on.

An adapter knows its wire: how to build the request and its client, how to make one attempt
(send it and read the first event), which failures to retry and what they are called, how one
wire event becomes `MessageBuilder` calls, and how the answer ends. It says so by subclassing
`Wire`. Everything else is the same for every provider and lives here once, in `drive`:

1. a request aborted before it began calls nothing and ends `aborted`;
2. `Wire.prepare` (payload, `on_payload`, client), then `send_with_retries` makes the attempts
   (`Wire.send`) up to the first event, each within `request_timeout`, retried as the options
   say;
3. `start`, then each event is fed to `Wire.feed` and the events it returns go out; every
   later event is read by `_Reader`, under the abort signal and `idle_timeout` (events that
   arrived together are taken without a wait, so a cancel scope is entered per network read, not
   per event), until the stream ends or the wire says the answer is complete (`Wire.finished`);
4. `Wire.finish` closes what is open and gives the terminal event; any failure on the way
   becomes exactly one `error` terminal (or `aborted`, when the signal fired), worded by
   `Wire.describe` (an `AnswerFailed` is worded already);
5. teardown: the response and then the client are released (`Wire.release`) within ONE bounded
   wait (`CLOSE_TIMEOUT`), shielded from cancellation, so that neither a cancelled run nor a
   server that never lets go can hang the caller. The terminal event goes out after it.

`open_driven` wraps the events in an `AssistantMessageEventStream` whose terminal error text is
redacted of the request's secrets.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import anyio

from ..abort._eventloop import threadsafe_caller
from ..abort._no_signal import NEVER_ABORTED
from ._adapter import ABORTED, exception_text, fallback_message
from ._failures import FailureText, StreamIdle
from ._http import END, PENDING, EventSource
from ._request import CLOSE_TIMEOUT, Request, release, send_with_retries
from ._retry import RequestAborted, RetryInfo
from .builder import MessageBuilder
from .stream import AssistantMessageEventStream

if TYPE_CHECKING:
    from .events import AssistantMessageEvent

__all__ = [
    "CLOSE_TIMEOUT",
    "AnswerFailed",
    "Opened",
    "Wire",
    "drive",
    "open_driven",
]

_NO_ITEM: Any = object()


class AnswerFailed(FailureText):
    """Raised by a wire (in `feed` or `finish`): the answer failed, and this is its error text."""


class Opened(Protocol):
    """What one successful attempt returns: the stream of wire events, its first one read."""

    @property
    def first(self) -> Any:
        """The first wire event (never None)."""

    @property
    def events(self) -> AsyncIterator[Any]:
        """The wire events after the first."""

    async def aclose(self) -> None:
        """Release the response (and the generators reading it)."""


class Wire:
    """One adapter's wire specifics, for one request. Subclasses override what differs.

    Attributes:
        request: the request (model, options, secrets, log).
        builder: the message under construction; `feed` and `finish` return its events.
        finished: set by `feed` when the wire says the answer is complete, to stop reading
            (a stream that simply ends stops reading as well).
        close_timeout: the bound on releasing the response and the client at the end.
    """

    close_timeout: ClassVar[float] = CLOSE_TIMEOUT
    finished: bool = False

    def __init__(self, request: Request) -> None:
        self.request = request
        self.builder = MessageBuilder(request.model)

    async def prepare(self) -> None:
        """Build the payload (through `on_payload`) and the client; nothing is sent yet."""

    async def send(self) -> Opened:
        """One attempt: send the request and read the first event of its answer. It must release
        what it opened when it fails or is cancelled."""
        raise NotImplementedError

    def classify(self, exc: BaseException) -> RetryInfo | None:
        """Whether a failure before the first event is retried (and after what delay), for the
        failures the shared rules leave open (`send_with_retries`)."""
        return None

    def describe(self, exc: BaseException, *, started: bool) -> str:
        """The error text of a failure, before (`started=False`) or during the answer."""
        return exception_text(exc)

    def feed(self, item: Any) -> Iterable[AssistantMessageEvent]:
        """The protocol events for one wire event (raise `AnswerFailed` for one that ends the
        answer as a failure)."""
        raise NotImplementedError

    def finish(self) -> Iterable[AssistantMessageEvent]:
        """The events that close the answer, the terminal one last, once reading has stopped."""
        raise NotImplementedError

    async def release(self) -> None:
        """Release the client (after the response, within the driver's bounded teardown)."""


class _Reader:
    """Reads the events of an answer that is streaming, under the abort signal and
    `idle_timeout`.

    The abort listener is added once for the whole answer (not once per event): it cancels the
    read in progress, if any; an abort between two reads is seen by the next one. With neither
    a signal nor an idle timeout, an event is read with no cancel scope at all.

    A raw event stream (`EventSource`, the openai and anthropic adapters) is read in two steps:
    the events that arrived together in one chunk of the body are taken without waiting
    (`poll`), and only reading the next chunk from the network waits, in one cancel scope for
    the whole wait (its deadline is `idle_timeout` from when the wait began, however many
    chunks of keep-alives it reads). Any other stream of events (Bedrock's, Gemini's) is read an
    event at a time, each in a scope of its own.
    """

    __slots__ = ("_events", "_idle", "_remove", "_request", "_scope", "_signal", "_source")

    def __init__(self, events: AsyncIterator[Any], request: Request) -> None:
        self._events = events
        self._source = events if isinstance(events, EventSource) else None
        self._request = request
        self._idle = request.options.idle_timeout
        signal = request.options.signal
        # a run given no signal has one that never fires: read as without one (no scope)
        self._signal = None if signal is NEVER_ABORTED else signal
        self._scope: anyio.CancelScope | None = None
        self._remove = None
        if self._signal is not None:
            call = threadsafe_caller()
            self._remove = self._signal.add_listener(lambda _reason: call(self._cancel))

    def _cancel(self) -> None:
        if self._scope is not None:
            self._scope.cancel()

    def close(self) -> None:
        """Stop listening to the abort signal."""
        if self._remove is not None:
            self._remove()
            self._remove = None

    def poll(self) -> Any:
        """The next event if it has arrived already (read without waiting), None at the end of
        the stream, or `PENDING` when `next` has to wait for it.

        Raises:
            RequestAborted: the abort signal fired.
            MalformedEvent: the event's data is not JSON.
        """
        source = self._source
        if source is None:
            return PENDING
        item = source.poll()
        if item is PENDING:
            return PENDING
        signal = self._signal
        if signal is not None and signal.aborted:
            raise RequestAborted()
        return None if item is END else item

    async def _read(self) -> Any:
        source = self._source
        if source is None:
            return await anext(self._events, None)
        item = await source.wait()
        return None if item is END else item

    async def next(self) -> Any:
        """The next event, or None at the end of the stream.

        Raises:
            RequestAborted: the abort signal fired (also when an event arrived at that moment).
            StreamIdle: nothing arrived within `idle_timeout`.
            Exception: what reading raised (a lost connection, malformed data).
        """
        signal = self._signal
        if signal is None and self._idle is None:
            return await self._read()
        if signal is not None and signal.aborted:
            raise RequestAborted()
        idle = self._idle
        scope = self._scope = anyio.CancelScope(
            deadline=anyio.current_time() + idle if idle is not None else float("inf")
        )
        item: Any = _NO_ITEM
        try:
            with scope:
                item = await self._read()
        except Exception:
            if not scope.cancel_called:
                raise  # a failure of its own, not one the abort or the timer caused
        finally:
            self._scope = None
        if signal is not None and signal.aborted:
            raise RequestAborted()
        if item is _NO_ITEM:
            failure = StreamIdle(idle or 0.0)
            self._request.log(logging.WARNING, f"{failure}; ending the answer")
            raise failure
        return item


async def drive(wire: Wire) -> AsyncIterator[AssistantMessageEvent]:
    """The protocol events of one request made through `wire` (see the module docstring)."""
    request, builder = wire.request, wire.builder
    signal = request.options.signal
    if signal is not None and signal.aborted:  # nothing is called for a request aborted early
        yield builder.error("aborted", ABORTED)
        return
    opened: Opened | None = None
    reader: _Reader | None = None
    started = False
    tail: Iterable[AssistantMessageEvent]
    try:
        await wire.prepare()
        opened = await send_with_retries(
            wire.send,
            request,
            wire.classify,
            lambda exc: wire.describe(exc, started=False),
        )
        if signal is not None and signal.aborted:
            raise RequestAborted()
        yield builder.start()
        started = True
        reader = _Reader(opened.events, request)
        item = opened.first
        while True:
            for event in wire.feed(item):
                yield event
            if wire.finished:
                break
            item = reader.poll()
            if item is PENDING:
                item = await reader.next()
            if item is None:
                break
        tail = list(wire.finish())
    except RequestAborted:
        tail = (builder.error("aborted", ABORTED),)
    except Exception as exc:  # a failing hook, a final failure, a broken or malformed stream
        if signal is not None and signal.aborted:
            tail = (builder.error("aborted", ABORTED),)
        elif isinstance(exc, AnswerFailed):
            tail = (builder.error("error", str(exc)),)
        else:
            tail = (builder.error("error", wire.describe(exc, started=started)),)
    finally:
        if reader is not None:
            reader.close()
        await release(
            request,
            (opened.aclose if opened is not None else None, wire.release),
            timeout=wire.close_timeout,
        )
    for event in tail:
        yield event


def open_driven(wire: Wire, *, always_redact: bool = False) -> AssistantMessageEventStream:
    """The stream of `wire`'s request: its terminal error text redacted of the request's
    secrets (`always_redact`: even if it has none yet, for a request whose token is fetched
    once it is under way and joins the secrets then)."""
    request = wire.request
    return AssistantMessageEventStream(
        drive(wire),
        fallback=fallback_message(request.model),
        redact=request.redact if always_redact or request.secrets else None,
    )
