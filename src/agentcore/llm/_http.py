"""The HTTP side every adapter shares: one TLS context, one reading of server-sent events, and
what counts as a network failure.

Building a TLS context loads the CA bundle, tens of milliseconds of blocking work. An SDK client
left to make its own does that on every request, on the event loop; the adapters instead hand
every client the one context built here, once, in a worker thread.

Event streams are read by one parser (`SSEDecoder`) for all four adapters, so that they agree on
the edges: lines end at CR, LF or CRLF only (never at U+2028 inside a JSON string); comment
lines (`: keep-alive`) and the `event`, `id` and `retry` fields are skipped; multi-line data is
joined with newlines; an event with empty data is no event; and bytes that are not UTF-8 become
U+FFFD, so that one bad byte costs one character rather than the whole answer. The openai and
anthropic adapters read their responses raw, through `EventSource` (the SDK sends the request;
its own per-chunk models are never built): the parser works on whole chunks of the body without
waiting, each event's data is parsed with `jiter` (`json.loads` for what jiter refuses, so that
values and errors are `json.loads`'s), and only reading the next chunk waits on the network, so
that a reader under a timeout or an abort signal needs a cancel scope per network read, not per
event. The Gemini adapter's SDK reads its own body, so its `CanonicalEventBody` re-emits what
`sse_events` found in the plain form that SDK expects; Bedrock's binary frames are read by its
SDK.

httpx is imported when first needed (building the TLS context), not with this module: the model
layer is imported with `agentcore`, and httpx (with email, http.client, click and rich) would
add tens of milliseconds to every `import agentcore` that never makes a request.

A 2xx body that is not an event stream (a proxy's HTML page, a JSON document) is not read as
one: `check_event_stream` raises `NotEventStream` with its content type and first characters.
"""

from __future__ import annotations

import json
import ssl
import threading
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Callable, Mapping
from typing import Any

import anyio
import anyio.to_thread

from ..errors import clip
from ._failures import PREVIEW_CHARS, MalformedEvent, NotEventStream, malformed_json_text

__all__ = [
    "END",
    "PENDING",
    "EventSource",
    "SSEDecoder",
    "check_event_stream",
    "finish_iterator",
    "is_event_stream",
    "is_timeout",
    "is_transport_error",
    "parse_event",
    "sse_events",
    "ssl_context",
]

_DRAIN_TIMEOUT = 1.0  # seconds to wait for the end of a body after `[DONE]`
_UNWIND_LIMIT = 1000  # items read at most while finishing an abandoned iterator

_context: ssl.SSLContext | None = None
_lock = threading.Lock()


def _build() -> ssl.SSLContext:
    global _context
    with _lock:
        if _context is None:
            import httpx

            _context = httpx.create_ssl_context()
        return _context


async def ssl_context() -> ssl.SSLContext:
    """The shared TLS context (httpx's defaults: certifi, or `SSL_CERT_FILE`/`SSL_CERT_DIR`),
    built in a worker thread on first use."""
    if _context is not None:
        return _context
    return await anyio.to_thread.run_sync(_build)


def is_transport_error(exc: BaseException) -> bool:
    """A network failure below an SDK: an httpx (or the SDKs' httpx2) transport error, or an
    `OSError`."""
    module = type(exc).__module__.split(".")[0]
    if module in ("httpx", "httpx2", "httpcore", "httpcore2"):
        return True
    return isinstance(exc, OSError)


def is_timeout(exc: BaseException) -> bool:
    """A transport error that is a timeout (httpx's, httpx2's or the builtin one)."""
    return isinstance(exc, TimeoutError) or (
        is_transport_error(exc) and "Timeout" in type(exc).__name__
    )


async def finish_iterator(iterator: AsyncIterator[Any]) -> None:
    """Finish an abandoned async iterator and every async generator it reads from, now.

    An SDK's stream is a chain of async generators, none of which closes the one it reads from:
    closing the outermost leaves the others suspended, to be finalised late by the garbage
    collector (trio warns about each). One more read in a cancelled scope raises at the innermost
    await instead, and the exception unwinds the whole chain here, in this task. Items that are
    already buffered are read and dropped on the way.
    """
    with anyio.CancelScope() as scope:
        scope.cancel()
        for _ in range(_UNWIND_LIMIT):
            try:
                await anext(iterator)
            except Exception:  # StopAsyncIteration, or a read of a closed response failing
                return


# --- reading events ---------------------------------------------------------------------------


_BOM = b"\xef\xbb\xbf"


class SSEDecoder:
    """The server-sent-event parser, without waiting: bytes in, the data of each complete event
    out (as bytes, UTF-8 undecoded), in order.

    Lines end at CR, LF or CRLF (a CR at the end of one chunk and a LF at the start of the next
    are one line end); a line arriving in many chunks is joined once, at its end. Comments and
    the `event`, `id` and `retry` fields are skipped, multi-line data is joined with newlines, an
    event whose data is empty is no event, and a byte-order mark at the start is no content.
    """

    __slots__ = ("_cr", "_data", "_pending", "_started")

    def __init__(self) -> None:
        self._pending: list[bytes] = []  # the start of an unfinished line
        self._cr = False  # the last chunk ended in CR: a LF first thing is its other half
        self._data: list[bytes] = []  # the data lines of the event being read
        self._started = False

    def feed(self, chunk: bytes, out: list[bytes] | deque[bytes]) -> None:
        """Parse `chunk`, appending to `out` the data of every event it completes."""
        if not self._started and chunk:
            self._started = True
            chunk = chunk.removeprefix(_BOM)
        if self._cr and chunk[:1] == b"\n":
            chunk = chunk[1:]
        if not chunk:
            return
        if b"\r" in chunk:
            self._cr = chunk[-1:] == b"\r"
            lines = chunk.splitlines()  # at CR, LF and CRLF only
            tail = lines.pop() if chunk[-1:] not in (b"\r", b"\n") else b""
        else:
            self._cr = False
            lines = chunk.split(b"\n")
            tail = lines.pop()  # empty when the chunk ends a line
        if lines and self._pending:
            lines[0] = b"".join(self._pending) + lines[0]
            self._pending = []
        if tail:
            self._pending.append(tail)
        data = self._data
        for line in lines:
            if line:
                if line.startswith(b"data"):
                    if line.startswith(b"data: "):
                        data.append(line[6:])
                    else:
                        name, _, value = line.partition(b":")
                        if name == b"data":
                            data.append(value[1:] if value.startswith(b" ") else value)
                continue
            if data:
                text = data[0] if len(data) == 1 else b"\n".join(data)
                self._data = data = []
                if text:
                    out.append(text)

    def flush(self, out: list[bytes] | deque[bytes]) -> None:
        """The body ended: a last line without its line end, and a last event without its blank
        line, still count."""
        rest = b"".join(self._pending)
        self._pending = []
        data = self._data
        self._data = []
        if rest:
            name, _, value = rest.partition(b":")
            if name == b"data":
                data.append(value[1:] if value.startswith(b" ") else value)
        if data and (text := b"\n".join(data)):
            out.append(text)


async def sse_events(chunks: AsyncIterable[bytes]) -> AsyncIterator[str]:
    """The data of each server-sent event in a byte stream (parsed by `SSEDecoder`), decoded as
    UTF-8 (bytes that are not UTF-8 become U+FFFD, so one bad byte costs one character)."""
    decoder = SSEDecoder()
    ready: list[bytes] = []
    async for chunk in chunks:
        decoder.feed(chunk, ready)
        if ready:
            texts = [data.decode("utf-8", errors="replace") for data in ready]
            ready.clear()
            for text in texts:
                yield text
    decoder.flush(ready)
    for data in ready:
        yield data.decode("utf-8", errors="replace")


PENDING: Any = object()
"""`EventSource.poll`: no complete event has arrived yet."""

END: Any = object()
"""`EventSource.poll`: the events have ended (the body ended, or a `[DONE]` event came)."""

_from_json: Callable[[bytes], Any] | None = None


def parse_event(data: bytes) -> Any:
    """An event's data parsed as JSON: by `jiter` (several times faster than `json.loads`), and
    whatever jiter refuses by `json.loads` of the text decoded as UTF-8 with U+FFFD for bad
    bytes, so that a value is exactly what `json.loads` gives and an error is its error.

    Raises:
        MalformedEvent: the data is not JSON.
    """
    global _from_json
    if _from_json is None:
        from jiter import from_json

        _from_json = from_json
    try:
        return _from_json(data)
    except ValueError:  # jiter refuses a few documents json.loads accepts (a lone surrogate)
        pass
    try:
        return json.loads(data.decode("utf-8", errors="replace"))
    except json.JSONDecodeError as exc:
        raise MalformedEvent(malformed_json_text(exc)) from exc


class EventSource:
    """The events of a streaming httpx (or httpx2) response, parsed as JSON, read in two steps:
    `poll` returns an event that has already arrived (no waiting, no cancel scope), `fill` reads
    the next chunk of the body from the network. One chunk usually holds many events; whoever
    reads under a timeout or an abort signal needs a cancel scope around `fill` only.

    A `[DONE]` event ends the events; the rest of the body is then read by `aclose` (for at most
    a second), so that the HTTP library's own generators run to their end instead of being left
    suspended, and the connection goes back to its pool for the next request (a response closed
    with its body unread closes its connection). An answer that ends at an event of its own
    (Messages' `message_stop`, Responses' `response.completed`) is not drained: its `done` would
    wait on the network, so its connection is closed and the next request opens one. Iterating
    the source (`async for`) reads it without any scope.

    Args:
        response: the streaming response.
        skip: events to leave out (a keep-alive the wire sends as an event, say).
    """

    __slots__ = ("_chunks", "_decoder", "_done_marker", "_ended", "_ready", "_response", "_skip")

    def __init__(self, response: Any, skip: Callable[[Any], bool] | None = None) -> None:
        self._response = response
        self._chunks: AsyncIterator[bytes] | None = None  # made at the first read
        self._decoder = SSEDecoder()
        self._ready: deque[bytes] = deque()
        self._skip = skip
        self._ended = False
        self._done_marker = False

    def poll(self) -> Any:
        """The next event that has arrived, parsed; `PENDING` when none has yet, `END` once the
        events have ended.

        Raises:
            MalformedEvent: the event's data is not JSON.
        """
        ready, skip = self._ready, self._skip
        while ready:
            data = ready.popleft()
            if data.startswith(b"[DONE]"):
                ready.clear()
                self._ended = self._done_marker = True
                return END
            value = parse_event(data)
            if skip is None or not skip(value):
                return value
        return END if self._ended else PENDING

    async def fill(self) -> None:
        """Read the next chunk of the body (its end ends the events).

        Raises:
            Exception: what reading raised (a lost connection).
        """
        if self._chunks is None:
            self._chunks = self._response.aiter_bytes()
        chunk = await anext(self._chunks, None)
        if chunk is None:
            self._decoder.flush(self._ready)
            self._ended = True
        else:
            self._decoder.feed(chunk, self._ready)

    async def wait(self) -> Any:
        """The next event, reading the network until one arrives; `END` at the end."""
        while (item := self.poll()) is PENDING:
            await self.fill()
        return item

    def __aiter__(self) -> EventSource:
        return self

    async def __anext__(self) -> Any:
        item = await self.wait()
        if item is END:
            raise StopAsyncIteration
        return item

    async def aclose(self) -> None:
        """Read the rest of a body that sent `[DONE]` (a second at most), close the response,
        and finish the generators that read it."""
        chunks = self._chunks
        if chunks is not None and self._done_marker:
            with anyio.move_on_after(_DRAIN_TIMEOUT):  # a timeout unwinds the generators too
                async for _ in chunks:
                    pass
        await self._response.aclose()
        if chunks is not None:
            await finish_iterator(chunks)


def is_event_stream(headers: Mapping[str, str]) -> bool:
    """Whether a response's content type says it is an event stream (no content type at all is
    given the benefit of the doubt)."""
    content_type = headers.get("content-type")
    if content_type is None:
        return True
    return content_type.split(";")[0].strip().lower() == "text/event-stream"


async def check_event_stream(response: Any) -> None:
    """Fail a successful response whose body is not an event stream, quoting the body's start.

    Raises:
        NotEventStream: the content type is something else; the body has been read (at most a
            few hundred bytes of it) and the response should be closed.
    """
    if not 200 <= response.status_code < 300 or is_event_stream(response.headers):
        return
    body = bytearray()
    chunks = response.aiter_bytes()
    try:
        async for chunk in chunks:
            body += chunk
            if len(body) >= 4 * PREVIEW_CHARS:  # enough for 200 characters of any UTF-8
                break
    except Exception:  # a body cut short still shows what arrived
        pass
    finally:
        await finish_iterator(chunks)
    text = body.decode("utf-8", errors="replace").strip()
    raise NotEventStream(response.headers.get("content-type", ""), clip(text, PREVIEW_CHARS))
