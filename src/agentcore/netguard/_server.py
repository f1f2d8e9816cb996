"""Serving an ASGI app with uvicorn on a socket of our own (so port 0 works and the real address
is known before the first request), with guards against clients that hold connections: the
server of `agentcore serve`, `agentcore.mcp`'s `serve_http` and `agentcore.a2a`'s `serve_a2a`
(public as `agentcore.netguard.serve` and `listen`).

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
import contextlib
import socket
import sys
from collections.abc import Callable
from typing import Any

import anyio

from .._optional import import_sdk

__all__ = ["listen", "serve"]

_NEEDED_BY = "agentcore.netguard.serve"

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
    h11 = import_sdk("h11", "web", needed_by=_NEEDED_BY)  # uvicorn's own dependency
    impl = import_sdk("uvicorn.protocols.http.h11_impl", "web", needed_by=_NEEDED_BY)

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


def listen(host: str = "127.0.0.1", port: int = 8000) -> socket.socket:
    """A TCP socket bound to `host` and `port` (0: a free one) and listening: hand it to
    `serve(app, sock=...)` when the app must know its address before it is built.

    It says it is TCP (`IPPROTO_TCP`): asyncio turns Nagle off (`TCP_NODELAY`) on the accepted
    connections only then; without it each keep-alive response (headers, then body, in two
    writes) waited ~40 ms for the client's delayed ACK.

    Raises:
        OSError: the address cannot be bound (in use, not ours).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(_BACKLOG)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


async def serve(
    app: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    sock: socket.socket | None = None,
    on_ready: Callable[[str, int], None] | None = None,
    header_timeout: float = 60.0,
    keep_alive_timeout: float = 5.0,
    max_connections: int = 1000,
    shutdown_timeout: float = 3.0,
    handle_signals: bool = True,
) -> None:
    """Serve an ASGI app with uvicorn (on asyncio) until the process is interrupted (Ctrl-C,
    SIGTERM) or the task is cancelled; either way open requests get `shutdown_timeout` seconds
    and the app's lifespan ends before it returns.

    ```python
    async with anyio.create_task_group() as group:
        group.start_soon(functools.partial(serve, app, port=0, on_ready=print))
    ```

    Args:
        app: the ASGI app (`create_app(...)`, or any app behind a `Guard`); its lifespan runs.
        host: the address to listen on.
        port: the port to listen on; 0 picks a free one.
        sock: a listening socket (from `listen`) to serve instead of binding `host` and
            `port`; it is closed when serving ends.
        on_ready: called with the host and the real port once the server accepts requests.
        header_timeout: seconds a connection has to send a request's headers (from when it
            opens, or from its previous response) before it is closed.
        keep_alive_timeout: seconds an idle keep-alive connection is kept.
        max_connections: open connections at most (lowered to fit the file descriptor limit):
            past it, the one waiting longest for its headers is closed to make room, and new
            requests are answered 503.
        shutdown_timeout: seconds open requests get to finish when serving ends.
        handle_signals: take SIGINT and SIGTERM over while serving (in the main thread), as
            uvicorn does: a graceful shutdown, then the signal's usual effect. Pass False when
            several servers share the process, or the caller handles signals itself.

    Raises:
        OSError: the address cannot be bound (in use, not ours).
        ValueError: a timeout or the connection cap is not positive.
        MissingExtraError: uvicorn is not installed (`pip install 'agentcore-loop[web]'`).
    """
    if not (header_timeout > 0 and keep_alive_timeout > 0 and max_connections > 0) or not (
        shutdown_timeout >= 0
    ):
        raise ValueError(
            "serve(): expected positive header_timeout, keep_alive_timeout and "
            f"max_connections, got {header_timeout}, {keep_alive_timeout}, {max_connections}"
            f" (and shutdown_timeout >= 0, got {shutdown_timeout})"
        )
    uvicorn = import_sdk("uvicorn", "web", needed_by=_NEEDED_BY)
    if sock is None:
        sock = listen(host, port)
    try:
        bound_host, bound = sock.getsockname()[:2]
        max_connections = _descriptor_cap(max_connections)
        config = uvicorn.Config(
            app,
            log_level="warning",
            timeout_graceful_shutdown=shutdown_timeout,
            lifespan="on",
            access_log=False,
            http=_guarded_protocol(header_timeout, max_connections),
            timeout_keep_alive=keep_alive_timeout,
            limit_concurrency=max_connections + max_connections // 10 + 8,
            backlog=_BACKLOG,
        )
        server = uvicorn.Server(config)
        config.load()
        server.lifespan = config.lifespan_class(config)
        # uvicorn's own `serve`, made cancellable: a cancelled task still shuts down (its
        # connections closed, the app's lifespan ended) before it leaves.
        signals = server.capture_signals() if handle_signals else contextlib.nullcontext()
        with signals:
            await server.startup(sockets=[sock])
            try:
                if on_ready is not None and not server.should_exit:
                    on_ready(bound_host, bound)
                if not server.should_exit:
                    await server.main_loop()
            finally:
                server.should_exit = True
                with anyio.CancelScope(shield=True):
                    await server.shutdown(sockets=[sock])
    finally:
        sock.close()
