"""The HTTP connection every adapter shares: one TLS context, and what counts as a network failure.

Building a TLS context loads the CA bundle, tens of milliseconds of blocking work. An SDK client
left to make its own does that on every request, on the event loop; the adapters instead hand
every client the one context built here, once, in a worker thread.
"""

from __future__ import annotations

import ssl
import threading

import anyio.to_thread
import httpx

__all__ = ["is_transport_error", "ssl_context"]

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
