"""`agentcore serve --a2a`: the command's agent (model, tools, system prompt, bounds) served as an
A2A agent (`agentcore.a2a`), each task's transcript a session of the command's store.

The token works as for the web chat: `--token` (or `$AGENTCORE_TOKEN`), else one generated and
printed once; `--no-token` only on a loopback address. A2A clients send it as
`Authorization: Bearer <token>`. `--header-timeout` and `--max-connections` bound slow and
idle clients as for the web chat (the same server, `agentcore.netguard.serve`).
"""

from __future__ import annotations

import functools
import secrets
from typing import Protocol

import anyio

from agentcore import AgentContext

from ._run import CommandError, Settings
from ._serve import is_loopback, open_url_store
from ._store import open_store

__all__ = ["serve_a2a_command"]


class _Output(Protocol):
    def write(self, text: str, /) -> int: ...
    def flush(self) -> None: ...


async def serve_a2a_command(
    settings: Settings,
    *,
    host: str,
    port: int,
    token: str | None,
    no_token: bool,
    sessions_dir: str | None,
    store_url: str | None,
    name: str | None,
    stdout: _Output,
    stderr: _Output,
    header_timeout: float = 60.0,
    max_connections: int = 1000,
) -> int:
    """Serve the agent over A2A until interrupted; returns the exit code.

    Raises:
        CommandError: the `[a2a]` extra is missing, a bad option, or the address cannot be bound.
    """
    from .. import ConfigError, MissingExtraError

    try:
        from ..a2a import serve_a2a
    except MissingExtraError as exc:  # pragma: no cover - the package itself imports no SDK
        raise CommandError(str(exc)) from None
    if not (0 <= port <= 65535):
        raise CommandError(f"expected a port between 0 and 65535, got {port}")
    if no_token and not is_loopback(host):
        raise CommandError(
            f"--no-token serves only a loopback address (127.0.0.1, ::1, localhost), not "
            f"{host}: anyone who can reach it could run the agent and its tools"
        )
    generated = False
    if no_token:
        token = None
    elif token is None:
        token = secrets.token_urlsafe(24)
        generated = True
    store = (
        open_store(sessions_dir) if store_url is None else open_url_store(store_url, sessions_dir)
    )
    context = AgentContext(system_prompt=settings.system, tools=list(settings.tools))
    try:
        async with anyio.create_task_group() as group:
            url = await group.start(
                functools.partial(
                    serve_a2a,
                    settings.config(),
                    host=host,
                    port=port,
                    context=context,
                    stream_fn=settings.stream_fn,
                    sessions=store,
                    token=token,
                    name=name,
                    header_timeout=header_timeout,
                    max_connections=max_connections,
                )
            )
            stdout.write(
                f"agentcore serve --a2a: {url} (agent card: /.well-known/agent-card.json)\n"
            )
            if generated:
                stdout.write(
                    f"agentcore serve --a2a: token {token} (clients send "
                    "Authorization: Bearer <token>)\n"
                )
            if token is None:
                stderr.write(
                    "agentcore serve --a2a: WARNING: serving without a token (--no-token): any "
                    "local user or process can run the agent and its tools\n"
                )
                stderr.flush()
            stdout.write("agentcore serve --a2a: Ctrl-C stops\n")
            stdout.flush()
    except (MissingExtraError, ConfigError) as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"cannot listen on {host}:{port}: {exc}") from None
    finally:
        store.close()
    return 0
