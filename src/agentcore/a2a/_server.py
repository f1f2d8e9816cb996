"""Serving an agentcore agent over A2A: `a2a_app` (an ASGI app) and `serve_a2a` (uvicorn)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio
import anyio.abc

from .. import Agent, AgentContext, AgentLoopConfig, ConfigError, __version__
from ..llm import StreamFn
from ..netguard import Guard, bound_hosts, check_bearer_token, is_loopback, listen, serve
from ..sessions import SessionStore
from ._conversations import Conversations
from ._executor import AgentcoreExecutor
from ._sdk import import_sdk_server
from ._task_store import session_task_store

__all__ = ["DEFAULT_DESCRIPTION", "DEFAULT_MAX_BODY_BYTES", "a2a_app", "serve_a2a"]

DEFAULT_MAX_BODY_BYTES = 1024 * 1024
"""The largest request body an A2A server accepts by default (1 MiB)."""

REST_PREFIX = "/rest"

DEFAULT_DESCRIPTION = "An agentcore agent."
"""The agent card's description when none is given (never taken from the system prompt, which
may hold what the card must not publish)."""


def _skills(
    conversations: Conversations, skills: Sequence[Any] | None, name: str, description: str
) -> list[Any]:
    types = import_sdk_server().a2a_types
    if skills is not None:
        out = []
        for skill in skills:
            if isinstance(skill, types.AgentSkill):
                out.append(skill)
            elif isinstance(skill, dict):
                try:
                    out.append(types.AgentSkill(**skill))
                except (TypeError, ValueError) as exc:
                    raise ConfigError(f"a skill must have AgentSkill's fields: {exc}") from exc
            else:
                raise ConfigError(
                    f"skills are a2a AgentSkill objects or dicts of their fields, "
                    f"got {type(skill).__name__}"
                )
        return out
    found = [
        types.AgentSkill(
            id=tool.name,
            name=tool.label or tool.name,
            description=tool.description or tool.name,
            tags=["tool"],
        )
        for tool in conversations.tools
    ]
    # the card needs at least one skill: an agent without tools offers its conversation
    return found or [types.AgentSkill(id="chat", name=name, description=description, tags=["chat"])]


def _card(
    conversations: Conversations,
    *,
    url: str,
    name: str | None,
    description: str | None,
    skills: Sequence[Any] | None,
    version: str,
    token: bool,
    v0_3: bool,
) -> Any:
    types = import_sdk_server().a2a_types
    base = url.rstrip("/")
    name = name or "agentcore agent"
    description = description or DEFAULT_DESCRIPTION
    card = types.AgentCard(
        name=name,
        description=description,
        version=version,
        supported_interfaces=[
            types.AgentInterface(url=base + path, protocol_binding=binding, protocol_version=v)
            for v in (("1.0", "0.3") if v0_3 else ("1.0",))
            for binding, path in (("JSONRPC", "/"), ("HTTP+JSON", REST_PREFIX))
        ],
        capabilities=types.AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=_skills(conversations, skills, name, description),
    )
    if token:
        card.security_schemes["bearer"].http_auth_security_scheme.scheme = "Bearer"
        card.security_requirements.add().schemes["bearer"].SetInParent()
    return card


def a2a_app(
    agent: Agent | AgentLoopConfig,
    *,
    url: str = "http://127.0.0.1:8000",
    context: AgentContext | None = None,
    stream_fn: StreamFn | None = None,
    sessions: SessionStore | None = None,
    name: str | None = None,
    description: str | None = None,
    skills: Sequence[Any] | None = None,
    version: str = __version__,
    host: str = "127.0.0.1",
    token: str | None = None,
    allowed_hosts: Sequence[str] | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    enable_v0_3: bool = True,
) -> Any:
    """An ASGI app serving `agent` as an A2A agent (JSON-RPC at `/`, HTTP+JSON under `/rest`,
    the agent card at `/.well-known/agent-card.json`).

    ```python
    app = a2a_app(Agent(initial_state={"model": model, "tools": [add]}), name="calculator",
                  url="http://127.0.0.1:8000", sessions=JsonlSessionStore("a2a-tasks"))
    # uvicorn module:app --port 8000, or serve_a2a(...) below
    ```

    Each A2A task is one run of a fresh `Agent` built from `agent` (see docs/a2a.md): tool calls
    that need approval make the task `input-required`, cancelling it aborts the run.

    Args:
        agent: an `Agent` (a template: its system prompt, model, thinking level, tools,
            messages and options are copied for every task) or an `AgentLoopConfig`.
        url: where clients reach the server (written into the agent card).
        context: with a loop configuration: the system prompt, tools and leading messages.
        stream_fn: with a loop configuration: the stream function.
        sessions: a session store: each task's transcript is a session (id: the task id), so
            tasks, and calls waiting for approval, survive a restart. Without it, tasks live in
            memory.
        name: the agent card's name (default "agentcore agent").
        description: the card's description (default `DEFAULT_DESCRIPTION`, "An agentcore
            agent."; the system prompt is never published).
        skills: the card's skills (`a2a.types.AgentSkill`s or dicts of their fields; default:
            one per tool).
        version: the card's version.
        host: the address the server is bound to: which Host headers it answers to.
        token: the bearer token every request must carry (required off loopback).
        allowed_hosts: more names the Host and Origin headers may carry.
        max_body_bytes: the largest request body accepted (413 past it).
        enable_v0_3: also answer A2A 0.3 clients (the SDK's compatibility layer), and list
            the two endpoints for protocol version 0.3 in the card too (the SDK then adds the
            card's 0.3 fields: `url`, `preferredTransport`, `protocolVersion`).

    Raises:
        ConfigError: a bad argument, or a non-loopback `host` without a token.
        MissingExtraError: the `[a2a]` extra is not installed.
    """
    secret = check_bearer_token(token)
    if secret is None and not is_loopback(host):
        raise ConfigError(
            f"an A2A server on {host!r} (not a loopback address) needs a token: anyone who can "
            "reach the port could run the agent otherwise. Pass token=... (clients send "
            "'Authorization: Bearer <token>')."
        )
    if not isinstance(max_body_bytes, int) or max_body_bytes < 1024:
        raise ConfigError(f"max_body_bytes must be an int of at least 1024, got {max_body_bytes!r}")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ConfigError(f"url must be the server's http(s) address, got {url!r}")
    hosts = bound_hosts(host, allowed_hosts)
    server = import_sdk_server()
    conversations = Conversations(agent, context=context, stream_fn=stream_fn, sessions=sessions)
    card = _card(
        conversations,
        url=url,
        name=name,
        description=description,
        skills=skills,
        version=version,
        token=secret is not None,
        v0_3=enable_v0_3,
    )
    handler = server.DefaultRequestHandler(
        AgentcoreExecutor(conversations), session_task_store(sessions, conversations), card
    )
    routes = server.routes
    all_routes = [
        *routes.create_agent_card_routes(card),
        *routes.create_jsonrpc_routes(handler, "/", enable_v0_3_compat=enable_v0_3),
        *routes.create_rest_routes(
            handler, enable_v0_3_compat=enable_v0_3, path_prefix=REST_PREFIX
        ),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        try:
            yield
        finally:
            with anyio.CancelScope(shield=True):
                await handler.aclose()
            conversations.close()

    app = server.starlette.Starlette(routes=all_routes, lifespan=lifespan)
    # who may talk to it: the guard every agentcore server shares (docs/security.md)
    return Guard(
        app,
        token=secret,
        allowed_hosts=hosts,
        allowed_origins=list(allowed_hosts or ()),
        max_body_bytes=max_body_bytes,
        json_types=("application/json", "application/a2a+json"),
        realm="a2a",
        name="this A2A server",
        errors="json-rpc",
    )


async def serve_a2a(
    agent: Agent | AgentLoopConfig,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    public_url: str | None = None,
    header_timeout: float = 60.0,
    max_connections: int = 1000,
    task_status: anyio.abc.TaskStatus[str] = anyio.TASK_STATUS_IGNORED,
    **options: Any,
) -> None:
    """Serve `agent` over A2A at `http://host:port` until cancelled (uvicorn, on asyncio).

    With `port=0` the system picks a free port; start it with a task group's `start` to learn
    the URL once the server accepts connections:

    ```python
    async with anyio.create_task_group() as group:
        url = await group.start(functools.partial(serve_a2a, agent, port=0))
    ```

    Args:
        agent: as in `a2a_app`.
        host: the address to bind (loopback by default; any other needs `token=`).
        port: the port (0: a free one).
        public_url: the address written into the agent card (default: the bound one).
        header_timeout: seconds a connection has to send a request's headers before it is
            closed (slow clients cannot hold connections).
        max_connections: open connections at most (lowered to fit the file descriptor limit);
            past it the one waiting longest for its headers is closed.
        task_status: set by a task group's `start`: receives the URL once the server listens.
        options: the other keyword arguments of `a2a_app` (`sessions`, `token`, `name`, ...).

    The server is `agentcore.netguard.serve`: uvicorn on a socket of its own, with the header
    timeout and the connection cap.

    Raises:
        ConfigError: as `a2a_app`, or a bound that is not positive.
        OSError: the address cannot be bound.
    """
    if "url" in options:
        raise ConfigError("serve_a2a takes public_url=, not url=")
    if not (header_timeout > 0 and isinstance(max_connections, int) and max_connections > 0):
        raise ConfigError(
            "header_timeout and max_connections must be positive, got "
            f"{header_timeout!r} and {max_connections!r}"
        )
    import_sdk_server()  # a missing extra is named before anything is bound
    sock = listen(host, port)
    try:
        bound = sock.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{bound}"
        app = a2a_app(agent, url=public_url or url, host=host, **options)
    except BaseException:
        sock.close()
        raise
    await serve(
        app,
        sock=sock,
        on_ready=lambda _host, _port: task_status.started(url),
        header_timeout=header_timeout,
        max_connections=max_connections,
        shutdown_timeout=1,
        handle_signals=False,
    )
