"""One HTTP client per event loop and SDK, so that successive requests reuse their connections.

A request used to build its own `httpx.AsyncClient` (and with it a connection pool and a new TCP
connection, plus a TLS handshake over https) and close it at the end of the answer. An agent run
makes a request per turn to the same endpoint, so that was a connection set up and torn down per
turn. `shared_http` hands out one client per (event loop, SDK) instead: its pool keeps a
connection to each origin alive between requests, and the SDK client a request builds around it
(tens of microseconds: key, base URL, headers) is the request's own.

The rules that keep it safe:

- An `httpx.AsyncClient` is bound to the event loop it was first used on (its connections are
  that loop's transports), so the cache is keyed by the running loop, weakly: a loop that is gone
  takes its clients with it. Threads each run their own loop and so get their own clients.
- The clients of a loop are closed on that loop when it ends: the first client of a loop starts
  an async generator that waits at its `yield`, and a loop that ends runs
  `shutdown_asyncgens` (`asyncio.run`, `anyio.run`, `asyncio.Runner` all do), which closes it
  and with it the loop's clients, before the loop closes: no "unclosed transport" warnings.
- Only the asyncio backend shares; under trio each request has its own client, as before.
- A request made while a recording is active (`agentcore.testing.recorded`) has its own client,
  as before, so the recording sees each client before its first request.
- The pool has no limit on connections (the SDKs' default of 1,000 would make the 1,001st
  concurrent stream of a loop wait for a free one, where separate clients never waited); it keeps
  at most `KEEPALIVE` idle ones, each for `KEEPALIVE_SECONDS`.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from collections.abc import AsyncGenerator, Callable
from types import ModuleType
from typing import Any

import sniffio

from ._http import ssl_context
from .interception import active, intercept_http

__all__ = ["KEEPALIVE", "KEEPALIVE_SECONDS", "close_unshared", "shared_client", "shared_http"]

KEEPALIVE = 100  # idle connections kept per loop and SDK
KEEPALIVE_SECONDS = 5.0  # how long an idle connection is kept (httpx's default)


class _LoopClients:
    """The shared clients of one event loop, and the generator that closes them at its end."""

    __slots__ = ("clients", "closed", "closer")

    def __init__(self) -> None:
        self.clients: dict[str, Any] = {}
        self.closer: AsyncGenerator[None, None] | None = None
        self.closed = False


_loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopClients] = (
    weakref.WeakKeyDictionary()
)
_lock = threading.Lock()


async def _close_at_loop_end(entry: _LoopClients) -> AsyncGenerator[None, None]:
    """Waits at its `yield` for the loop's `shutdown_asyncgens`, then closes the loop's clients."""
    try:
        yield
    finally:
        with _lock:
            entry.closed = True
            clients = list(entry.clients.values())
            entry.clients.clear()
        for client in clients:
            with contextlib.suppress(Exception):  # a pool already torn down: nothing to close
                await client.aclose()


async def shared_http(sdk: ModuleType) -> tuple[Any, bool]:
    """The HTTP client for one request through `sdk` (`openai` or `anthropic`), and whether it is
    shared (then the request must not close it; `close_unshared` knows).

    Shared: the running asyncio loop's client for this SDK, made on first use. Its own: under
    trio, or while a recording is active (handed to the recording, as every client was).
    """
    return await shared_client(sdk.__name__, sdk.DefaultAsyncHttpxClient)


async def shared_client(name: str, factory: Callable[..., Any]) -> tuple[Any, bool]:
    """Like `shared_http`, for any httpx (or httpx2) `AsyncClient` class: `factory(verify=,
    limits=)` (`limits` only for the shared one) makes the client, `name` keys the loop's cache.
    Used by the Chat Completions adapter's direct path (`_direct`), which sends without an SDK."""
    tls = await ssl_context()
    if active() is not None or sniffio.current_async_library() != "asyncio":
        return intercept_http(factory(verify=tls)), False
    loop = asyncio.get_running_loop()
    with _lock:
        entry = _loops.get(loop)
        if entry is None:
            entry = _loops[loop] = _LoopClients()
        elif entry.closed:  # the loop is shutting down: nothing more is shared on it
            entry = None
        client = None if entry is None else entry.clients.get(name)
        start = entry is not None and entry.closer is None
        if start:
            assert entry is not None
            entry.closer = _close_at_loop_end(entry)
    if entry is None:
        return factory(verify=tls), False
    if start:
        assert entry.closer is not None
        await entry.closer.asend(None)  # registers it with the loop's async-generator hooks
    if client is None:
        import httpx

        made = factory(
            verify=tls,
            limits=httpx.Limits(
                max_connections=None,
                max_keepalive_connections=KEEPALIVE,
                keepalive_expiry=KEEPALIVE_SECONDS,
            ),
        )
        with _lock:
            client = entry.clients.setdefault(name, made)
        if client is not made:  # another task of this loop made one first
            await made.aclose()
    return client, True


async def close_unshared(sdk_client: Any, shared: bool) -> None:
    """End a request's SDK client: close it (and its HTTP client) unless that is shared."""
    if sdk_client is not None and not shared:
        await sdk_client.close()
