"""Serving the app with uvicorn on a socket of our own (so port 0 works and the real address
is known before the first request)."""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

from ._deps import import_sdk

__all__ = ["serve"]


async def serve(
    app: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    on_ready: Callable[[str, int], None] | None = None,
) -> None:
    """Serve an ASGI app with uvicorn until the process is interrupted (Ctrl-C, SIGTERM).

    Args:
        app: the app (`create_app(...)`).
        host: the address to listen on.
        port: the port to listen on; 0 picks a free one.
        on_ready: called with the host and the real port once the socket listens.

    Raises:
        OSError: the address cannot be bound (in use, not ours).
        MissingExtraError: uvicorn is not installed (`pip install 'agentcore-loop[web]'`).
    """
    uvicorn = import_sdk("uvicorn", "web", needed_by="agentcore.web")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    bound = sock.getsockname()[1]
    config = uvicorn.Config(
        app, log_level="warning", timeout_graceful_shutdown=3, lifespan="on", access_log=False
    )
    server = uvicorn.Server(config)
    if on_ready is not None:
        on_ready(host, bound)
    try:
        await server.serve(sockets=[sock])
    finally:
        sock.close()
