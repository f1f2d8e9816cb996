"""The HTTP side every adapter shares: one TLS context, reading server-sent events, and what
counts as a network failure.

Building a TLS context loads the CA bundle, tens of milliseconds of blocking work. An SDK client
left to make its own does that on every request, on the event loop; the adapters instead hand
every client the one context built here, once, in a worker thread.

`sse_data` reads an event stream to its end. The `openai` SDK's own reader stops at `[DONE]` and
drains the rest through a second iterator, leaving its chain of async generators suspended until
the garbage collector finalises them (trio warns about each); a stream read here ends with every
generator finished.
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.to_thread
import httpx

__all__ = ["is_timeout", "is_transport_error", "sse_data", "ssl_context"]

_DRAIN_TIMEOUT = 1.0  # seconds to wait for the end of a body after `[DONE]`

_context: ssl.SSLContext | None = None
_lock = threading.Lock()


def _build() -> ssl.SSLContext:
    global _context
    with _lock:
        if _context is None:
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


async def sse_data(response: Any) -> AsyncIterator[str]:
    """The `data` of each server-sent event of an httpx (or httpx2) streaming response.

    Stops at a `[DONE]` event, then reads the rest of the body (for at most a second), so that the
    HTTP library's own generators run to their end instead of being left suspended. Comments,
    `event`, `id` and `retry` fields are skipped; multi-line data is joined with newlines.
    """
    lines = response.aiter_lines()
    data: list[str] = []
    async for line in lines:
        if line:
            name, _, value = line.partition(":")
            if name == "data":
                data.append(value[1:] if value.startswith(" ") else value)
            continue
        if not data:
            continue
        text = "\n".join(data)
        data = []
        if text.startswith("[DONE]"):
            break
        yield text
    else:
        if data and not data[0].startswith("[DONE]"):  # a last event without its blank line
            yield "\n".join(data)
        return
    with anyio.move_on_after(_DRAIN_TIMEOUT):  # a timeout unwinds the generators as well
        async for _ in lines:
            pass
