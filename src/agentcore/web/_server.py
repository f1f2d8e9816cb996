"""Serving the app with uvicorn on a socket of our own (so port 0 works and the real address
is known before the first request), with guards against clients that hold connections.

uvicorn times out an idle keep-alive connection, but not one that never finishes its request
headers (a "slowloris" client): enough of them would use up the process's file descriptors and
starve everyone else, before any token is checked. `_GuardedH11` closes a connection whose
headers have not all arrived `header_timeout` seconds after it opened (or after its previous
response), and past `max_connections` open connections it closes the one that has waited
longest for its headers to make room. uvicorn's own `limit_concurrency` answers 503 beyond
that many connections and running requests.

The cap is also kept below the process's file descriptor limit (less the accept backlog and a
reserve for files and the store): running out of descriptors is worse than closing a slow
client, because asyncio's accept loop then spins on `EMFILE` and starves every connection.
"""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import Callable
from typing import Any

from ._deps import import_sdk

__all__ = ["serve"]

_BACKLOG = 128
"""Connections waiting to be accepted (the kernel's queue, and asyncio's accept burst)."""
_RESERVE = 48
"""File descriptors kept for everything but connections (files, the store, MCP servers)."""


def _descriptor_cap(wanted: int) -> int:
    """`wanted`, lowered to what the file descriptor limit leaves for connections."""
    if sys.platform == "win32":
        return wanted
    import resource

    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(1, min(wanted, soft - _BACKLOG - _RESERVE))


def _guarded_protocol(header_timeout: float, max_connections: int) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with a header timeout and room made for new connections."""
    h11 = import_sdk("h11", "web", needed_by="agentcore.web")
    impl = import_sdk("uvicorn.protocols.http.h11_impl", "web", needed_by="agentcore.web")

    class _GuardedH11(impl.H11Protocol):  # type: ignore[misc,name-defined]
        _header_timer: asyncio.TimerHandle | None = None
        _waiting_since: float | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()
            if len(self.connections) > max_connections:
                self._make_room()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            super().handle_events()
            if self.conn.their_state is not h11.IDLE:  # the headers are in
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()  # the next request's headers get the same time

        def _arm(self) -> None:
            self._disarm()
            self._waiting_since = self.loop.time()
            self._header_timer = self.loop.call_later(header_timeout, self._header_timeout)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None
            self._waiting_since = None

        def _header_timeout(self) -> None:
            self._header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

        def _make_room(self) -> None:
            waiting = [
                c
                for c in self.connections
                if c is not self and getattr(c, "_waiting_since", None) is not None
            ]
            if waiting:
                oldest = min(waiting, key=lambda c: c._waiting_since)
                oldest._disarm()
                oldest.transport.close()

    return _GuardedH11


async def serve(
    app: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    on_ready: Callable[[str, int], None] | None = None,
    header_timeout: float = 60.0,
    keep_alive_timeout: float = 5.0,
    max_connections: int = 1000,
) -> None:
    """Serve an ASGI app with uvicorn until the process is interrupted (Ctrl-C, SIGTERM).

    Args:
        app: the app (`create_app(...)`).
        host: the address to listen on.
        port: the port to listen on; 0 picks a free one.
        on_ready: called with the host and the real port once the socket listens.
        header_timeout: seconds a connection has to send a request's headers (from when it
            opens, or from its previous response) before it is closed.
        keep_alive_timeout: seconds an idle keep-alive connection is kept.
        max_connections: open connections at most (lowered to fit the file descriptor limit):
            past it, the one waiting longest for its headers is closed to make room, and new
            requests are answered 503.

    Raises:
        OSError: the address cannot be bound (in use, not ours).
        ValueError: a timeout or the connection cap is not positive.
        MissingExtraError: uvicorn is not installed (`pip install 'agentcore-loop[web]'`).
    """
    if not (header_timeout > 0 and keep_alive_timeout > 0 and max_connections > 0):
        raise ValueError(
            "serve(): expected positive header_timeout, keep_alive_timeout and "
            f"max_connections, got {header_timeout}, {keep_alive_timeout}, {max_connections}"
        )
    uvicorn = import_sdk("uvicorn", "web", needed_by="agentcore.web")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named: asyncio turns Nagle off (TCP_NODELAY) on the accepted connections only
    # when the socket says TCP; with 0, each keep-alive response (headers, then body, in two
    # writes) waited ~40 ms for the client's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(_BACKLOG)
    bound = sock.getsockname()[1]
    max_connections = _descriptor_cap(max_connections)
    config = uvicorn.Config(
        app,
        log_level="warning",
        timeout_graceful_shutdown=3,
        lifespan="on",
        access_log=False,
        http=_guarded_protocol(header_timeout, max_connections),
        timeout_keep_alive=keep_alive_timeout,
        limit_concurrency=max_connections + max_connections // 10 + 8,
        backlog=_BACKLOG,
    )
    server = uvicorn.Server(config)
    if on_ready is not None:
        on_ready(host, bound)
    try:
        await server.serve(sockets=[sock])
    finally:
        sock.close()
