"""Serving `AgentTool`s over MCP, so agentcore tools work in any MCP client.

`tools_server` builds the SDK's low-level `Server` for a list of tools; `serve_stdio` and
`serve_http` run it. A call is handled as the agent loop would: `prepare_arguments`, validation
with the same coercion, then `execute` (a sync tool in a worker thread) under the tool's own
`timeout`. A failure of any step is an `isError` result with its text. The client's cancellation
fires the `AbortSignal` the tool was given and cancels it; each `on_update` becomes a progress
notification whose message is the update's text.

Result mapping: text and image blocks map one to one; `details` that form a JSON object become
`structuredContent` (other JSON values as `{"result": value}`; anything else is not sent).
"""

from __future__ import annotations

import functools
import hmac
import inspect
import ipaddress
import json
import math
import os
import socket
import string
import sys
import threading
from collections.abc import Sequence
from contextlib import suppress
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.abc
import anyio.from_thread
import anyio.to_thread
import pydantic_core

from .. import (
    AbortController,
    AgentTool,
    AgentToolResult,
    ConfigError,
    ImageContent,
    TextContent,
    ToolDefinitionError,
    __version__,
    cancel_on_abort,
)
from ._sdk import import_sdk, mcp, types
from ._tools import clip

__all__ = ["serve_http", "serve_stdio", "tools_server"]

_ABORTED = "the MCP client cancelled the call"


def tools_server(
    tools: Sequence[AgentTool],
    *,
    name: str = "agentcore",
    version: str = __version__,
    instructions: str | None = None,
) -> mcp.server.lowlevel.Server[Any]:
    """An MCP server (the SDK's low-level `mcp.server.lowlevel.Server`) offering `tools`.

    Run it with `serve_stdio`/`serve_http`, or with any transport of the SDK (its
    `streamable_http_app()` is an ASGI app to mount in a web application).

    Args:
        tools: the tools to offer, under their own names.
        name: how the server introduces itself: its name.
        version: how the server introduces itself: its version.
        instructions: text the client may show its model about these tools.

    Raises:
        ToolDefinitionError: an entry is not an `AgentTool`, or a name is used twice.
    """
    by_name: dict[str, AgentTool] = {}
    for tool in tools:
        if not isinstance(tool, AgentTool):
            raise ToolDefinitionError(
                f"tools_server takes AgentTool objects (use @tool or AgentTool), got "
                f"{type(tool).__name__}"
            )
        if tool.name in by_name:
            raise ToolDefinitionError(f"tool name {tool.name!r} is used twice")
        by_name[tool.name] = tool
    listing = types.ListToolsResult(
        tools=[
            types.Tool(
                name=t.name,
                title=t.label if t.label != t.name else None,
                description=t.description,
                input_schema=dict(t.llm_tool.parameters),
            )
            for t in by_name.values()
        ]
    )

    async def on_list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> Any:
        return listing

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> Any:
        tool = by_name.get(params.name)
        if tool is None:
            raise mcp.MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        result = await _call(tool, params.arguments or {}, ctx)
        return _to_call_result(result)

    return mcp.server.lowlevel.Server(
        name,
        version=version,
        instructions=instructions,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


def _error(text: str) -> AgentToolResult:
    return AgentToolResult.error(text)


def _text_of(result: AgentToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, TextContent))


async def _call(tool: AgentTool, raw: dict[str, Any], ctx: Any) -> AgentToolResult:
    """One call, as the loop would run it; never raises but for the client's cancellation."""
    try:
        prepared = tool.prepare_arguments(raw)
        args = tool.validator.validate(raw if prepared is None else prepared)
    except Exception as exc:
        return _error(clip(str(exc) or type(exc).__name__))
    controller = AbortController()
    send, receive = anyio.create_memory_object_stream[AgentToolResult](math.inf)
    loop_thread = threading.get_ident()

    def on_update(partial: AgentToolResult) -> None:
        if not isinstance(partial, AgentToolResult):
            return
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, RuntimeError):
            if threading.get_ident() == loop_thread:
                send.send_nowait(partial)
            else:  # a sync tool's worker thread
                anyio.from_thread.run_sync(send.send_nowait, partial)

    async def forward() -> None:
        count = 0
        async with receive:
            async for partial in receive:
                count += 1
                await ctx.session.report_progress(count, None, _text_of(partial) or None)

    call_id = f"mcp-{ctx.request_id}"
    outcome: list[AgentToolResult] = []
    finished = anyio.Event()

    async def work() -> None:
        # Shielded, so that the client's cancellation reaches the tool as the loop's abort
        # does: first the signal fires, then the tool is cancelled.
        with anyio.CancelScope(shield=True), cancel_on_abort(controller.signal):
            outcome.append(await _execute(tool, call_id, args, controller, on_update))
        finished.set()

    async with anyio.create_task_group() as group:
        group.start_soon(forward)
        group.start_soon(work)
        try:
            await finished.wait()
        except anyio.get_cancelled_exc_class():
            controller.abort(_ABORTED)
            raise
        finally:
            send.close()  # `forward` sends what is queued, then ends
    return outcome[0]


async def _execute(
    tool: AgentTool, call_id: str, args: Any, controller: AbortController, on_update: Any
) -> AgentToolResult:
    signal = controller.signal
    try:
        with anyio.move_on_after(tool.timeout if tool.timeout is not None else math.inf) as scope:
            if tool.is_async():
                value = await tool.execute(call_id, args, signal, on_update)  # type: ignore[misc]
            else:
                run = functools.partial(tool.execute, call_id, args, signal, on_update)
                value = await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
                if inspect.isawaitable(value):
                    value = await value
        if scope.cancelled_caught:
            controller.abort("timeout")
            return _error(f"Tool {tool.name!r} timed out after {tool.timeout:g} s.")
    except Exception as exc:
        return _error(clip(str(exc) or type(exc).__name__))
    if not isinstance(value, AgentToolResult):
        return _error(
            f"tool {tool.name!r} returned {type(value).__name__}; expected AgentToolResult"
        )
    return value


def _structured(details: Any) -> dict[str, Any] | None:
    if details is None:
        return None
    try:
        value = pydantic_core.to_jsonable_python(details)
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, pydantic_core.PydanticSerializationError):
        return None
    return value if isinstance(value, dict) else {"result": value}


def _to_call_result(result: AgentToolResult) -> types.CallToolResult:
    content: list[types.ContentBlock] = []
    for block in result.content:
        if isinstance(block, TextContent):
            content.append(types.TextContent(type="text", text=block.text))
        elif isinstance(block, ImageContent):
            content.append(
                types.ImageContent(type="image", data=block.data, mime_type=block.mime_type)
            )
    return types.CallToolResult(
        content=content,
        structured_content=_structured(result.details),
        is_error=result.is_error,
    )


# --- who may call ----------------------------------------------------------------------------

_WILDCARD = frozenset({"", "0.0.0.0", "::"})
_TOKEN_CHARS = frozenset(string.ascii_letters + string.digits + "-._~+/=")
_MIN_TOKEN = 16


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _split_host(value: str) -> tuple[str, int | None] | None:
    """(name, port) of a Host header or an allowed-host entry: `name`, `name:port`, `[v6]:port`
    or a bare IPv6 address; None when it cannot be read."""
    value = value.strip().lower()
    port: str | None = None
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[1:end], value[end + 1 :]
        if rest:
            if not rest.startswith(":"):
                return None
            port = rest[1:]
    elif value.count(":") == 1:
        name, port = value.split(":")
    else:
        name = value  # a name, or a bare IPv6 address
    if not name:
        return None
    if port is None or port == "*":
        return name, None
    if not port.isdigit():
        return None
    return name, int(port)


def _allowed_hosts(host: str, extra: Sequence[str] | None) -> list[tuple[str, int | None]] | None:
    """Which Host headers (and Origin hosts) a server bound to `host` accepts; None: any."""
    allowed: list[tuple[str, int | None]] = []
    for entry in extra or ():
        parsed = _split_host(entry) if isinstance(entry, str) else None
        if parsed is None:
            raise ConfigError(
                f"allowed_hosts entries are host names or addresses, optionally with ':port', "
                f"got {entry!r}"
            )
        allowed.append(parsed)
    if host in _WILDCARD:
        return allowed or None  # every address of the machine: the token protects it
    allowed.append((host.lower(), None))
    if _is_loopback(host):  # what names this machine itself; no other site can
        allowed.extend((name, None) for name in ("localhost", "127.0.0.1", "::1"))
    return allowed


def _check_token(token: str | None) -> bytes | None:
    if token is None:
        return None
    if not isinstance(token, str) or len(token) < _MIN_TOKEN or not set(token) <= _TOKEN_CHARS:
        raise ConfigError(
            f"token must be at least {_MIN_TOKEN} characters of letters, digits or '-._~+/=' "
            "(what an 'Authorization: Bearer' header carries), e.g. secrets.token_urlsafe(32); "
            f"got {'an empty string' if token == '' else 'another value'}"
        )
    return token.encode()


class _Guard:
    """ASGI middleware in front of the MCP endpoint: the Host and Origin headers must name an
    allowed host (DNS-rebinding protection), and with a token every request must carry
    `Authorization: Bearer <token>` (compared in constant time)."""

    def __init__(
        self, app: Any, *, hosts: list[tuple[str, int | None]] | None, token: bytes | None
    ) -> None:
        self._app = app
        self._hosts = hosts
        self._token = token

    def _allows(self, value: str | None) -> bool:
        if self._hosts is None:
            return True
        parsed = _split_host(value) if value else None
        if parsed is None:
            return False
        name, port = parsed
        return any(name == n and (p is None or port == p) for n, p in self._hosts)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers: dict[str, str] = {}
        for key, value in scope.get("headers", ()):
            headers.setdefault(key.decode("latin-1").lower(), value.decode("latin-1"))
        if not self._allows(headers.get("host")):
            await _refuse(
                send, 421, "Invalid Host header: this MCP server does not answer to that name"
            )
            return
        origin = headers.get("origin")
        if origin is not None:
            parts = urlsplit(origin)
            if parts.scheme not in ("http", "https") or not self._allows(parts.netloc):
                await _refuse(
                    send, 403, "Invalid Origin header: requests from that site are refused"
                )
                return
        if self._token is not None:
            given = headers.get("authorization", "")
            scheme, _, credential = given.partition(" ")
            ok = scheme.lower() == "bearer" and hmac.compare_digest(
                credential.strip().encode("latin-1"), self._token
            )
            if not ok:
                challenge = 'Bearer realm="mcp"'
                if given:
                    challenge += ', error="invalid_token", error_description="wrong token"'
                await _refuse(
                    send,
                    401,
                    "Unauthorized: this MCP server needs 'Authorization: Bearer <token>' with "
                    "its token" + (" (the one sent is wrong)" if given else ""),
                    [(b"www-authenticate", challenge.encode())],
                )
                return
        await self._app(scope, receive, send)


async def _refuse(
    send: Any, status: int, text: str, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    # A JSON-RPC error (id null: the request is not read), so that an MCP client shows the
    # reason instead of a bare status; the SDK's client passes it on as the call's error.
    error = {"code": -32001, "message": text}
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


# --- transports ----------------------------------------------------------------------------


async def serve_stdio(
    tools: Sequence[AgentTool],
    *,
    name: str = "agentcore",
    version: str = __version__,
    instructions: str | None = None,
) -> None:
    """Serve `tools` over this process's stdin and stdout until the client closes stdin.

    Made for a script that an MCP client starts as a subprocess:

    ```python
    # server.py: anyio.run(functools.partial(serve_stdio, [add, multiply]))
    ```

    The protocol has stdout to itself, at the file-descriptor level: before serving, the real
    stdout (fd 1) is duplicated onto a private descriptor that only the protocol writes to, and
    fd 1 is pointed at stderr for the rest of the process. So a tool's `print` (flushed or
    not, even at interpreter exit), a C extension's write and a child process's output all go
    to stderr, never onto the wire. When serving ends the private descriptor is closed, so the
    client sees the end of the stream. Arguments as in `tools_server`.
    """
    server = tools_server(tools, name=name, version=version, instructions=instructions)
    wire = _claim_stdout()
    try:
        async with mcp.server.stdio.stdio_server(stdout=wire) as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        if wire is not None:
            with suppress(OSError, ValueError):
                await wire.aclose()


def _claim_stdout() -> anyio.AsyncFile[str] | None:
    """The protocol's own stdout: a private duplicate of fd 1, with fd 1 pointed at stderr from
    now on. None when fd 1 cannot be duplicated (the SDK then serves stdout as it is)."""
    if sys.stdout is not None:
        with suppress(OSError, ValueError):
            sys.stdout.flush()  # what was printed before serving goes where it was meant to
    try:
        wire_fd = os.dup(1)  # not inherited by children (PEP 446)
    except OSError:
        return None
    try:
        os.dup2(2, 1)
    except OSError:
        os.close(wire_fd)
        return None
    return anyio.wrap_file(open(wire_fd, "w", encoding="utf-8", newline="\n"))


async def serve_http(
    tools: Sequence[AgentTool],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    token: str | None = None,
    allowed_hosts: Sequence[str] | None = None,
    allow_unauthenticated: bool = False,
    name: str = "agentcore",
    version: str = __version__,
    instructions: str | None = None,
    task_status: anyio.abc.TaskStatus[str] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve `tools` over streamable HTTP at `http://host:port/path` until cancelled.

    With `port=0` the system picks a free port; start it with a task group's `start` to learn
    the URL once the server accepts connections:

    ```python
    async with anyio.create_task_group() as group:
        url = await group.start(functools.partial(serve_http, tools, port=0))
        ...
        group.cancel_scope.cancel()
    ```

    Runs on asyncio (the server is uvicorn).

    Who may call (see docs/security.md):

    - The Host header of every request, and its Origin header when there is one, must name
      the bound address (for a loopback address, any of 127.0.0.0/8 and `::1`, also
      `localhost`) or an entry of `allowed_hosts`: a page on another site cannot reach the
      tools through DNS rebinding (421 for a wrong Host, 403 for a wrong Origin). Bound to
      every address (`0.0.0.0`, `::`), only `allowed_hosts` are checked, if given.
    - With `token`, every request must carry `Authorization: Bearer <token>` (compared in
      constant time); others get 401 with a `WWW-Authenticate: Bearer` challenge. An
      `MCPClient.http(url, headers={"Authorization": f"Bearer {token}"})` sends it.
    - Off loopback a token is required: any other host that reaches the port could call the
      tools otherwise. `allow_unauthenticated=True` serves without one (behind a proxy that
      authenticates, say).

    Args:
        tools: the tools to offer.
        host: the address to bind.
        port: the port (0: a free one).
        path: the endpoint's path.
        token: the bearer token clients must send (at least 16 characters of letters, digits
            or `-._~+/=`, e.g. `secrets.token_urlsafe(32)`).
        allowed_hosts: more host names (or `name:port`) the Host and Origin headers may name,
            e.g. the machine's name on the network.
        allow_unauthenticated: serve off loopback without a token.
        name: as in `tools_server`.
        version: as in `tools_server`.
        instructions: as in `tools_server`.
        task_status: set by a task group's `start`: receives the URL once the server listens.

    Raises:
        ConfigError: a bad `path`, `token` or `allowed_hosts` entry, or a non-loopback `host`
            without a token and without `allow_unauthenticated`.
    """
    if not isinstance(path, str) or not path.startswith("/"):
        raise ConfigError(f"path must start with '/', got {path!r}")
    secret = _check_token(token)
    hosts = _allowed_hosts(host, allowed_hosts)
    if secret is None and not _is_loopback(host) and not allow_unauthenticated:
        raise ConfigError(
            f"serve_http on {host!r} (not a loopback address) needs a token: anyone who can "
            "reach the port could call the tools otherwise. Pass token=... (clients send "
            "'Authorization: Bearer <token>'), or allow_unauthenticated=True if something in "
            "front of it authenticates."
        )
    uvicorn = import_sdk("uvicorn", "mcp", needed_by="agentcore.mcp")
    server = tools_server(tools, name=name, version=version, instructions=instructions)
    security = mcp.server.transport_security.TransportSecuritySettings(
        enable_dns_rebinding_protection=False  # `_Guard` checks Host and Origin, for every host
    )
    app = _Guard(
        server.streamable_http_app(
            streamable_http_path=path, host=host, transport_security=security
        ),
        hosts=hosts,
        token=secret,
    )
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP, and
    # without it every response waits ~40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
        sock.setblocking(False)
        bound = sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1)
        web = uvicorn.Server(config)
        config.load()
        web.lifespan = config.lifespan_class(config)
        await web.startup(sockets=[sock])
        try:
            shown = f"[{host}]" if family == socket.AF_INET6 else host
            task_status.started(f"http://{shown}:{bound}{path}")
            await web.main_loop()
        finally:
            web.should_exit = True
            with anyio.CancelScope(shield=True):
                await web.shutdown(sockets=[sock])
    finally:
        sock.close()
