"""`agentcore serve`: the web chat (`agentcore.web`) on 127.0.0.1, or elsewhere with a token.

Sessions live in the command's store (`_store.open_store`, shared with `chat` and `sessions`,
or `--sessions-dir DIR`). Listening on anything but a loopback address requires a token: `--token`,
or one generated and printed. Every request must then carry it; the printed address
(`http://HOST:PORT/?token=...`) sets it as a cookie in the browser.
"""

from __future__ import annotations

import ipaddress
import secrets
from typing import Protocol

from ._run import CommandError, Settings
from ._store import open_store

__all__ = ["is_loopback", "serve_command"]


class _Output(Protocol):
    def write(self, text: str, /) -> int: ...
    def flush(self) -> None: ...


def is_loopback(host: str) -> bool:
    """Whether `host` is a loopback address or `localhost`."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


async def serve_command(
    settings: Settings,
    *,
    host: str,
    port: int,
    token: str | None,
    sessions_dir: str | None,
    stdout: _Output,
) -> int:
    """Serve the web chat until interrupted; returns the exit code.

    Raises:
        CommandError: the `[web]` extra is missing, or the address cannot be bound.
    """
    from .. import MissingExtraError

    try:
        from ..web import create_app, serve
    except MissingExtraError as exc:
        raise CommandError(str(exc)) from None
    if not (0 <= port <= 65535):
        raise CommandError(f"expected a port between 0 and 65535, got {port}")
    if token is not None and not token.strip():
        raise CommandError("the token is empty")
    generated = False
    if token is None and not is_loopback(host):
        token = secrets.token_urlsafe(24)
        generated = True
    store = open_store(sessions_dir)
    try:
        app = create_app(
            store,
            model=settings.model,
            tools=settings.tools,
            system_prompt=settings.system,
            stream_fn=settings.stream_fn,
            token=token,
            agent_options={
                **settings.bounds(),
                "max_tokens": settings.max_tokens,
                "temperature": settings.temperature,
                "prepare_next_turn": settings.prepare_next_turn,  # --mcp servers' tool lists
            },
        )
    except MissingExtraError as exc:
        raise CommandError(str(exc)) from None

    def ready(bound_host: str, bound_port: int) -> None:
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        address = f"http://{shown}:{bound_port}/"
        if token is not None:
            address += f"?token={token}"
        stdout.write(f"agentcore serve: {address}\n")
        if generated:
            stdout.write("agentcore serve: the token was generated; open the address above\n")
        stdout.write(f"agentcore serve: sessions in {store.directory}; Ctrl-C stops\n")
        stdout.flush()

    try:
        await serve(app, host=host, port=port, on_ready=ready)
    except MissingExtraError as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"cannot listen on {host}:{port}: {exc}") from None
    finally:
        store.close()
    return 0
