"""The HTTP side every adapter shares: one TLS context, one reading of server-sent events, and
what counts as a network failure.

Building a TLS context loads the CA bundle, tens of milliseconds of blocking work. An SDK client
left to make its own does that on every request, on the event loop; the adapters instead hand
every client the one context built here, once, in a worker thread.

Event streams are read by one parser (`sse_events`) for all four adapters, so that they agree on
the edges: lines end at CR, LF or CRLF only (never at U+2028 inside a JSON string); comment
lines (`: keep-alive`) and the `event`, `id` and `retry` fields are skipped; multi-line data is
joined with newlines; an event with empty data is no event; and bytes that are not UTF-8 become
U+FFFD, so that one bad byte costs one character rather than the whole answer. The openai and
anthropic adapters read their responses with `sse_data`; the Gemini adapter's SDK reads its own,
so the Gemini adapter's `CanonicalEventBody` re-emits what this parser found in the plain form
that SDK expects.

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
from collections.abc import AsyncIterable, AsyncIterator, Callable, Mapping
from typing import Any

import anyio
import anyio.to_thread

from ..errors import clip
from ._failures import PREVIEW_CHARS, MalformedEvent, NotEventStream, malformed_json_text

__all__ = [
    "check_event_stream",
    "finish_iterator",
    "is_event_stream",
    "is_timeout",
    "is_transport_error",
    "json_events",
    "sse_data",
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


class _Lines:
    """Splits a byte stream into lines at CR, LF or CRLF, decoding each as UTF-8 (bad bytes
    become U+FFFD). A line arriving in many chunks is joined once, at its end."""

    __slots__ = ("_cr", "_pending")

    def __init__(self) -> None:
        self._pending: list[bytes] = []  # the start of an unfinished line
        self._cr = False  # the last chunk ended in CR: a LF first thing is its other half

    def feed(self, chunk: bytes) -> list[str]:
        if self._cr and chunk[:1] == b"\n":
            chunk = chunk[1:]
        if not chunk:
            return []
        self._cr = chunk[-1:] == b"\r"
        lines = chunk.splitlines()  # bytes split at CR, LF and CRLF only
        tail = lines.pop() if chunk[-1:] not in (b"\r", b"\n") else None
        if lines and self._pending:
            lines[0] = b"".join(self._pending) + lines[0]
            self._pending = []
        if tail is not None:
            self._pending.append(tail)
        return [line.decode("utf-8", errors="replace") for line in lines]

    def flush(self) -> list[str]:
        rest = b"".join(self._pending)
        self._pending = []
        return [rest.decode("utf-8", errors="replace")] if rest else []


async def sse_events(chunks: AsyncIterable[bytes]) -> AsyncIterator[str]:
    """The data of each server-sent event in a byte stream.

    Comments, `event`, `id` and `retry` fields are skipped; multi-line data is joined with
    newlines; an event without data (a keep-alive) yields nothing; a last event without its blank
    line still counts.
    """
    lines = _Lines()
    data: list[str] = []
    first = True
    async for chunk in chunks:
        if first and chunk:
            first = False
            chunk = chunk.removeprefix(b"\xef\xbb\xbf")  # a byte-order mark is no content
        for line in lines.feed(chunk):
            if line:
                if line.startswith("data"):
                    name, _, value = line.partition(":")
                    if name == "data":
                        data.append(value[1:] if value.startswith(" ") else value)
                continue
            if data:
                text = "\n".join(data)
                data = []
                if text:
                    yield text
    for line in lines.flush():
        name, _, value = line.partition(":")
        if name == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    if data and (text := "\n".join(data)):
        yield text


async def sse_data(response: Any) -> AsyncIterator[str]:
    """The data of each server-sent event of an httpx (or httpx2) streaming response.

    Stops at a `[DONE]` event, then reads the rest of the body (for at most a second), so that the
    HTTP library's own generators run to their end instead of being left suspended.
    """
    events = sse_events(response.aiter_bytes())
    async for text in events:
        if text.startswith("[DONE]"):
            break
        yield text
    else:
        return
    with anyio.move_on_after(_DRAIN_TIMEOUT):  # a timeout unwinds the generators as well
        async for _ in events:
            pass


async def json_events(
    data: AsyncIterator[str], skip: Callable[[Any], bool] | None = None
) -> AsyncIterator[Any]:
    """Each event's data parsed as JSON, leaving out those `skip` says to.

    Raises:
        MalformedEvent: an event's data is not JSON.
    """
    async for text in data:
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise MalformedEvent(malformed_json_text(exc)) from exc
        if skip is None or not skip(value):
            yield value


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
