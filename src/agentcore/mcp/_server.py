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
import inspect
import json
import math
import os
import sys
import threading
from collections.abc import Sequence
from contextlib import suppress
from typing import Any

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
from ..netguard import (
    DEFAULT_MAX_BODY_BYTES,
    Guard,
    bound_hosts,
    check_bearer_token,
    is_loopback,
    serve,
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
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    header_timeout: float = 60.0,
    max_connections: int = 1000,
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

    Who may call is checked by `agentcore.netguard.Guard`, the guard every agentcore server
    shares (see docs/security.md):

    - The Host header of every request must name the bound address (for a loopback address,
      any of 127.0.0.0/8 and `::1`, also `localhost`) or an entry of `allowed_hosts`: a page on
      another site cannot reach the tools through DNS rebinding (421). Bound to every address
      (`0.0.0.0`, `::`), only `allowed_hosts` are checked, if given.
    - An Origin header must be the request's own origin, or name an entry of `allowed_hosts`
      (403).
    - With `token`, every request must carry `Authorization: Bearer <token>` (compared in
      constant time); others get 401 with a `WWW-Authenticate: Bearer` challenge. An
      `MCPClient.http(url, headers={"Authorization": f"Bearer {token}"})` sends it.
    - Off loopback a token is required: any other host that reaches the port could call the
      tools otherwise. `allow_unauthenticated=True` serves without one (behind a proxy that
      authenticates, say).
    - A POST must be JSON (415), and a body is capped at `max_body_bytes` (413).
    - The server (`agentcore.netguard.serve`) closes a connection that has not sent its
      request headers within `header_timeout`, and keeps at most `max_connections` open.

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
        max_body_bytes: the largest request body accepted (413 past it).
        header_timeout: seconds a connection has to send a request's headers.
        max_connections: open connections at most (lowered to fit the file descriptor limit);
            past it the one waiting longest for its headers is closed.
        task_status: set by a task group's `start`: receives the URL once the server listens.

    Raises:
        ConfigError: a bad `path`, `token`, `allowed_hosts` entry or bound, or a non-loopback
            `host` without a token and without `allow_unauthenticated`.
        OSError: the address cannot be bound.
    """
    if not isinstance(path, str) or not path.startswith("/"):
        raise ConfigError(f"path must start with '/', got {path!r}")
    secret = check_bearer_token(token)
    hosts = bound_hosts(host, allowed_hosts)
    if secret is None and not is_loopback(host) and not allow_unauthenticated:
        raise ConfigError(
            f"serve_http on {host!r} (not a loopback address) needs a token: anyone who can "
            "reach the port could call the tools otherwise. Pass token=... (clients send "
            "'Authorization: Bearer <token>'), or allow_unauthenticated=True if something in "
            "front of it authenticates."
        )
    if not (header_timeout > 0 and isinstance(max_connections, int) and max_connections > 0):
        raise ConfigError(
            "header_timeout and max_connections must be positive, got "
            f"{header_timeout!r} and {max_connections!r}"
        )
    import_sdk("uvicorn", "mcp", needed_by="agentcore.mcp")  # the error names this extra
    server = tools_server(tools, name=name, version=version, instructions=instructions)
    security = mcp.server.transport_security.TransportSecuritySettings(
        enable_dns_rebinding_protection=False  # the Guard checks Host and Origin, for every host
    )
    app = Guard(
        server.streamable_http_app(
            streamable_http_path=path, host=host, transport_security=security
        ),
        token=secret,
        allowed_hosts=hosts,
        allowed_origins=list(allowed_hosts or ()),
        max_body_bytes=max_body_bytes,
        realm="mcp",
        name="this MCP server",
        errors="json-rpc",
    )
    shown = f"[{host}]" if ":" in host else host

    def ready(_host: str, bound: int) -> None:
        task_status.started(f"http://{shown}:{bound}{path}")

    await serve(
        app,
        host=host,
        port=port,
        on_ready=ready,
        header_timeout=header_timeout,
        max_connections=max_connections,
        shutdown_timeout=1,
        handle_signals=False,
    )
