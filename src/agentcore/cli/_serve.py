"""`agentcore serve`: the web chat (`agentcore.web`) on 127.0.0.1, behind a token.

Sessions live in the command's store (`_store.open_store`, shared with `chat` and `sessions`,
or `--sessions-dir DIR`). Every request must carry the token, on loopback too (any local user or
process could otherwise read every stored chat, spend the keys and use the tools): `--token`
(or `$AGENTCORE_TOKEN`), else one generated and printed once, within the address to open
(`http://HOST:PORT/?token=...`, which sets it as a cookie in the browser), as Jupyter does.
`--no-token` opts out, on a loopback address only, with a warning.
"""

from __future__ import annotations

import ipaddress
import secrets
from typing import Protocol
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from agentcore.sessions import (
    JsonlSessionStore,
    PostgresSessionStore,
    SessionError,
    SessionStore,
)

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
    store_url: str | None = None,
    stderr: _Output | None = None,
    no_token: bool = False,
    header_timeout: float = 60.0,
    max_connections: int = 1000,
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
    if no_token and not is_loopback(host):
        raise CommandError(
            f"--no-token serves only a loopback address (127.0.0.1, ::1, localhost), not "
            f"{host}: anyone who can reach it could read every session and run the tools"
        )
    generated = False
    if no_token:
        token = None
    elif token is None:
        token = secrets.token_urlsafe(24)
        generated = True
    if store_url is None:
        store: SessionStore = open_store(sessions_dir)
    else:
        store = open_url_store(store_url, sessions_dir)
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
                "skills": settings.skills.skills,
            },
        )
    except MissingExtraError as exc:
        raise CommandError(str(exc)) from None

    def ready(bound_host: str, bound_port: int) -> None:
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        address = f"http://{shown}:{bound_port}/"
        if token is not None:
            address += f"?token={quote(token, safe='')}"
        stdout.write(f"agentcore serve: {address}\n")
        if generated:
            stdout.write(
                "agentcore serve: open the address above (it holds this run's token; "
                "API clients send it as Authorization: Bearer <token>)\n"
            )
        if token is None:
            (stderr or stdout).write(
                "agentcore serve: WARNING: serving without a token (--no-token): any local "
                "user or process can read every stored session, spend your keys and run "
                "the tools\n"
            )
            (stderr or stdout).flush()
        where = store.directory if isinstance(store, JsonlSessionStore) else store
        stdout.write(f"agentcore serve: sessions in {where}; Ctrl-C stops\n")
        stdout.flush()

    try:
        await serve(
            app,
            host=host,
            port=port,
            on_ready=ready,
            header_timeout=header_timeout,
            max_connections=max_connections,
        )
    except MissingExtraError as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"cannot listen on {host}:{port}: {exc}") from None
    finally:
        store.close()
    return 0


def open_url_store(url: str, sessions_dir: str | None) -> SessionStore:
    """The store `--store URL` names: a PostgreSQL database (`postgresql://` or `postgres://`),
    its tables in the schema of the URL's `schema` query parameter (default `agentcore`).

    Raises:
        CommandError: both `--store` and `--sessions-dir`, another kind of URL, the `postgres`
            extra missing, or a database that cannot be reached.
    """
    from .. import MissingExtraError

    if sessions_dir is not None:
        raise CommandError("give --store or --sessions-dir, not both")
    if not url.startswith(("postgresql://", "postgres://")):
        raise CommandError(
            f"--store expects a PostgreSQL URL (postgresql://user@host:port/database), got {url!r}"
        )
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schemas = [value for key, value in query if key == "schema"]
    rest = urlencode([(key, value) for key, value in query if key != "schema"])
    try:
        return PostgresSessionStore(
            urlunsplit(parts._replace(query=rest)), schema=schemas[-1] if schemas else "agentcore"
        )
    except ValueError as exc:
        raise CommandError(f"--store: {exc}") from None
    except MissingExtraError as exc:
        raise CommandError(str(exc)) from None
    except SessionError as exc:
        raise CommandError(f"--store: {exc}") from None
