"""`MCPClient`: a connection to one MCP server, whose tools become `AgentTool`s.

The client owns its connection through a task group: entering starts the connection task
(`_connection.run_connection`, which opens the transport and the session and lists the tools),
leaving closes it. When the transport's read stream ends (the server process exited, an HTTP
request failed hard) the connection is marked lost at once, pending calls fail with the SDK's
"connection closed" (each becomes an error result naming the server), and later calls say the
server is unavailable without waiting on anything. An HTTP client connects again on the next
call; a stdio server is not restarted behind the caller's back (`reconnect()` does it on
request). What the server asks of the client (sampling, elicitation, roots) is answered by
`_requests.ServerRequests`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TextIO
from urllib.parse import urlsplit

import anyio
import anyio.abc
import anyio.to_thread

from .. import AgentCoreError, AgentToolResult, ConfigError, ToolExecutionMode, UsageError
from ..approvals import input_answers
from ._connection import (
    Connection,
    Era,
    NeedsBackChannel,
    Unavailable,
    back_channel_method,
    back_channel_text,
    connect_failure,
    describe,
    leaf,
    lost_during_call,
    lost_text,
    run_connection,
    stop,
)
from ._elicitation import ElicitationHandler, reported_name
from ._listing import list_tools
from ._requests import ServerRequests
from ._sampling import CallCharge, MCPSampling, current_charge
from ._sdk import httpx2, mcp, types
from ._tools import (
    MCPProgress,
    MCPTool,
    ToolFilter,
    bound_output_checks,
    build_tools,
    to_agent_result,
)
from ._transports import Http, Stdio, has_fd

__all__ = ["MCPClient", "MCPConnectionError"]


class MCPConnectionError(AgentCoreError, ConnectionError):
    """An MCP server could not be reached, or did not complete the MCP handshake.

    Raised by `async with MCPClient(...)`, `reconnect()` and `refresh_tools()`; tool calls never
    raise it (a failed call is an error result for the model). The SDK's own exception is the
    `__cause__`.
    """


# --- the client ----------------------------------------------------------------------------


class MCPClient:
    """A connection to one MCP server; its tools are `client.tools`, ordinary `AgentTool`s.

    Build one with `MCPClient.stdio(...)` or `MCPClient.http(...)` and use it as an async
    context manager, which owns the connection: entering connects and lists the tools, leaving
    closes the connection (and stops a stdio server's process) even when the run inside was
    aborted or the server has died.

    ```python
    async with MCPClient.stdio("python", ["-m", "mcp_server_time"], prefix="time_") as time:
        done = await run_agent_loop(prompts, AgentContext(tools=time.tools), config, emit)
    ```

    A call of one of its tools sends `tools/call`; the agent's abort (or a tool timeout)
    cancels it, and the server is told with an MCP cancellation. Progress notifications become
    `tool_execution_update` events (`partial_result.details` is an `MCPProgress`). A server
    that exits, or a connection that drops, during a call gives that call an error result
    naming the server; later calls report it unavailable at once (an HTTP client connects
    again instead). See `MCPTool` for how results are mapped.

    When the server announces that its tool list changed, `tools_changed` becomes True and
    `refresh_tools()` lists them again; `agentcore.mcp.refresh_tools(client)` is a
    `prepare_next_turn` hook that does it between turns of a run.

    The protocol is the 2026-07-28 one when the server speaks it, else the handshake. A tool of
    a 2.x server that asks the mcp 1.x way (`ctx.session.create_message`, `ctx.elicit`) fails
    on the former for want of a channel; when the client answers what it asked, the client
    connects again with the handshake and sends that call again, once (see docs/mcp.md).

    Use the constructors; the arguments they share:

    Args:
        name: how error texts, logs and the server's questions name the server (default:
            the command line or URL in error texts and logs; in questions and sampling
            requests, `server_name`: the name the server reports, else a short form).
        prefix: prepended to every tool name, to keep the tools of several servers apart
            (the server still receives its own names).
        allow: keep only the tools whose server-side name matches one of these `fnmatch`
            patterns (e.g. `["git_*"]`).
        deny: drop the tools whose server-side name matches one of these patterns.
        tool_timeout: seconds one call of these tools may run (each tool's `timeout`; None
            leaves it to the run's `tool_timeout`).
        execution_mode: the `execution_mode` of every tool (`SEQUENTIAL` for a server that
            cannot take parallel calls).
        deferred: True to defer every tool of this server (`AgentTool.deferred`): none is sent
            to the model until its `search_tools` finds it (see "Tool search" in docs/tools.md).
        connect_timeout: seconds to connect and complete the MCP handshake.
        sampling: lets the server sample a model through this client (`MCPSampling`: the
            model, a token cap, a cost cap, an optional approval). None (the default): every
            `sampling/createMessage` is refused with an MCP error saying sampling is off. A
            request while none of the client's calls runs is refused either way.
        elicitation: answers the server's requests for input from the user: a function of an
            `MCPElicitation` returning an `MCPElicitationAnswer` (sync or async), asked while
            the call runs; or `"approvals"`: the call waits as a call waiting for approval does
            (an `ApprovalRequest` with `input_schema`, answered with `Agent.approve(id,
            arguments=answer)` or `deny`), in the terminal, on the web page, across restarts,
            and runs again with the answer (see docs/mcp.md). None: the capability is not
            announced and requests are refused.
        roots: directories the server may work in, given to it as `file://` roots when it
            asks (`roots/list`). None: the capability is not announced.
    """

    def __init__(
        self,
        transport: Stdio | Http,
        *,
        name: str | None = None,
        prefix: str = "",
        allow: Sequence[str] | None = None,
        deny: Sequence[str] | None = None,
        tool_timeout: float | None = None,
        execution_mode: ToolExecutionMode | None = None,
        deferred: bool = False,
        connect_timeout: float = 30.0,
        sampling: MCPSampling | None = None,
        elicitation: ElicitationHandler | Literal["approvals"] | None = None,
        roots: Sequence[str | Path] | None = None,
    ) -> None:
        if not isinstance(transport, Stdio | Http):
            raise UsageError("build an MCPClient with MCPClient.stdio(...) or MCPClient.http(...)")
        if not isinstance(connect_timeout, int | float) or not connect_timeout > 0:
            raise ConfigError(
                f"connect_timeout must be a positive number of seconds, got {connect_timeout!r}"
            )
        self._transport = transport
        self.name = name or transport.describe()
        self._named = name is not None
        self._filter = ToolFilter(
            self.name, prefix, allow, deny, tool_timeout, execution_mode, deferred
        )
        self._connect_timeout = float(connect_timeout)
        self._requests = ServerRequests(self, sampling, elicitation, roots, self._note_change)
        self._phase: Literal["new", "open", "closed"] = "new"
        self._group: anyio.abc.TaskGroup | None = None
        self._conn: Connection | None = None
        self._lock: anyio.Lock | None = None
        self._era: Era = "auto"  # "legacy" once a tool needed the handshake's back-channel
        self._tools: list[MCPTool] = []
        self._listed: list[types.Tool] = []
        self._changed = False
        self._server_info: types.Implementation | None = None

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        errlog: TextIO | None = None,
        name: str | None = None,
        prefix: str = "",
        allow: Sequence[str] | None = None,
        deny: Sequence[str] | None = None,
        tool_timeout: float | None = None,
        execution_mode: ToolExecutionMode | None = None,
        deferred: bool = False,
        connect_timeout: float = 30.0,
        sampling: MCPSampling | None = None,
        elicitation: ElicitationHandler | Literal["approvals"] | None = None,
        roots: Sequence[str | Path] | None = None,
    ) -> MCPClient:
        """A client for a server run as a subprocess, speaking MCP on its stdin and stdout.

        Args:
            command: the executable (looked up on `PATH`).
            args: its arguments.
            env: environment variables for the server, over the SDK's safe defaults (`PATH`,
                `HOME`, ...; the parent's other variables, API keys included, are not passed).
            cwd: its working directory.
            errlog: an open file for the server's stderr (default: this process's stderr).

        The other keyword arguments are those of `MCPClient`.
        """
        if not isinstance(command, str) or not command:
            raise ConfigError(f"command must be a non-empty string, got {command!r}")
        if isinstance(args, str) or not all(isinstance(a, str) for a in args):
            raise ConfigError(f"args must be a list of strings, got {args!r}")
        if errlog is not None and not has_fd(errlog):
            raise ConfigError(
                f"errlog must be a file with a file descriptor (e.g. open(path, 'w')), got "
                f"{type(errlog).__name__}"
            )
        transport = Stdio(command, tuple(args), env, str(cwd) if cwd else None, errlog)
        return cls(
            transport,
            name=name,
            prefix=prefix,
            allow=allow,
            deny=deny,
            tool_timeout=tool_timeout,
            execution_mode=execution_mode,
            deferred=deferred,
            connect_timeout=connect_timeout,
            sampling=sampling,
            elicitation=elicitation,
            roots=roots,
        )

    @classmethod
    def http(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: httpx2.Auth | None = None,
        timeout: float = 30.0,
        name: str | None = None,
        prefix: str = "",
        allow: Sequence[str] | None = None,
        deny: Sequence[str] | None = None,
        tool_timeout: float | None = None,
        execution_mode: ToolExecutionMode | None = None,
        deferred: bool = False,
        connect_timeout: float = 30.0,
        sampling: MCPSampling | None = None,
        elicitation: ElicitationHandler | Literal["approvals"] | None = None,
        roots: Sequence[str | Path] | None = None,
    ) -> MCPClient:
        """A client for a streamable-HTTP server.

        Args:
            url: the MCP endpoint, e.g. `http://127.0.0.1:8000/mcp`.
            headers: sent with every request (e.g. `{"Authorization": "Bearer ..."}`); never
                shown in error texts.
            auth: an `httpx2.Auth` for schemes that need a handshake (the SDK's OAuth
                providers are ones).
            timeout: seconds to connect, send, or wait for a pooled connection (a response
                stream may stay silent longer: a call is bounded by the tool timeout).

        The other keyword arguments are those of `MCPClient`.
        """
        if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https"):
            raise ConfigError(f"url must be an http:// or https:// URL, got {url!r}")
        return cls(
            Http(url, headers, auth, float(timeout)),
            name=name,
            prefix=prefix,
            allow=allow,
            deny=deny,
            tool_timeout=tool_timeout,
            execution_mode=execution_mode,
            deferred=deferred,
            connect_timeout=connect_timeout,
            sampling=sampling,
            elicitation=elicitation,
            roots=roots,
        )

    # -- what the server offers -------------------------------------------------------------

    @property
    def tools(self) -> list[MCPTool]:
        """The server's tools (after the filter), as listed last; a fresh list each time."""
        return list(self._tools)

    @property
    def tools_changed(self) -> bool:
        """Whether the server announced a change of its tools since they were last listed."""
        return self._changed

    @property
    def connected(self) -> bool:
        """Whether a live connection is open (False before entering, after leaving, and after
        the connection was lost)."""
        return self._conn is not None and self._conn.alive

    @property
    def server_name(self) -> str:
        """How the server is named to the user in its questions and sampling requests: `name`
        when one was given; else the name the server reported when it connected (without
        control characters, at most 64 characters); else a short form of the command (the
        program, or the script or module an interpreter runs) or of the URL (its host)."""
        if self._named:
            return self.name
        reported = self._server_info.name if self._server_info is not None else ""
        return reported_name(reported) or self._transport.short()

    @property
    def server_info(self) -> types.Implementation | None:
        """The name and version the server reported when it connected, if any."""
        return self._server_info

    async def refresh_tools(self) -> list[MCPTool]:
        """List the server's tools again; returns `tools`. Tools whose definition did not change
        are kept as the same objects.

        Raises:
            MCPConnectionError: the server is unavailable, or the listing failed.
        """
        try:
            conn = await self._live()
            assert conn.session is not None
            listed = await list_tools(conn.session, self.name)
        except Unavailable as exc:
            raise MCPConnectionError(str(exc)) from exc.__cause__
        except Exception as exc:
            raise MCPConnectionError(
                f"could not list the tools of MCP server {self.name!r}: {describe(exc)}"
            ) from exc
        await self._absorb(listed)
        return self.tools

    async def reconnect(self) -> None:
        """Close the current connection, if any, and connect again (for a stdio server: start
        a new process), listing the tools anew.

        Raises:
            MCPConnectionError: the new connection failed.
            UsageError: the client is not entered.
        """
        self._check_open()
        lock = self._get_lock()
        async with lock:
            old = self._conn
            if old is not None:
                await stop(old)
            try:
                await self._connect()
            except Unavailable as exc:
                raise MCPConnectionError(str(exc)) from exc.__cause__

    # -- the context manager ----------------------------------------------------------------

    async def __aenter__(self) -> MCPClient:
        if self._phase != "new":
            raise UsageError(
                f"MCPClient for {self.name!r} was already entered once; build a new one"
            )
        group = anyio.create_task_group()
        await group.__aenter__()
        self._group = group
        self._phase = "open"
        try:
            await self._connect()
        except BaseException as exc:
            self._phase = "closed"
            group.cancel_scope.cancel()
            # Exited at the level it was entered (not inside a new scope), as anyio requires.
            await group.__aexit__(None, None, None)
            if isinstance(exc, Unavailable):
                raise MCPConnectionError(str(exc)) from exc.__cause__
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        group = self._group
        if self._phase != "open" or group is None:
            return
        self._phase = "closed"
        conn = self._conn
        if conn is not None:
            await stop(conn)  # shielded: a cancelled caller still closes cleanly
        group.cancel_scope.cancel()
        # Exited at the level it was entered (not inside a new scope), as anyio requires.
        await group.__aexit__(None, None, None)

    def _check_open(self) -> None:
        if self._phase != "open":
            state = "not entered yet" if self._phase == "new" else "closed"
            raise UsageError(
                f"MCPClient for {self.name!r} is {state}: use it as `async with client:`"
            )

    def _get_lock(self) -> anyio.Lock:
        if self._lock is None:
            self._lock = anyio.Lock()
        return self._lock

    # -- connecting ---------------------------------------------------------------------------

    async def _connect(self) -> Connection:
        """Open a connection in the client's task group and adopt its tool listing.

        Raises:
            Unavailable: connecting failed (the text names the server and the reason).
        """
        assert self._group is not None
        try:
            conn, listed = await self._group.start(
                run_connection,
                self._transport,
                self.name,
                self._connect_timeout,
                self._requests.callbacks(),
                self._note_change,
                self._era,
            )
        except Exception as exc:
            failure = connect_failure(
                exc, self.name, self._transport, self._connect_timeout, again=self._conn is not None
            )
            raise Unavailable(failure) from leaf(exc)
        self._server_info = conn.session.server_info
        self._conn = conn
        await self._absorb(listed)
        return conn  # type: ignore[no-any-return]

    def _note_change(self) -> None:
        """The server announced a change of its tools (a notification or a subscription)."""
        self._changed = True

    async def _absorb(self, listed: list[types.Tool]) -> None:
        self._changed = False
        self._listed = listed
        # Validators are built from the server's schemas in a worker thread: a large schema
        # costs time, and the event loop (other sessions, abort, timeouts) must not wait for it.
        self._tools = await anyio.to_thread.run_sync(
            build_tools, self, listed, self._tools, self._filter
        )
        try:  # the SDK's session, whose output-schema checks are replaced by bounded ones
            session = self._conn.session.session if self._conn and self._conn.session else None
        except Exception:  # not connected any more: nothing to replace
            session = None
        if session is not None:
            await anyio.to_thread.run_sync(bound_output_checks, session, listed)

    async def _live(self) -> Connection:
        """The live connection; an HTTP client connects again if the last one was lost.

        Raises:
            Unavailable: with the text of the error result.
        """
        self._check_open()
        conn = self._conn
        if conn is not None and conn.alive:
            return conn
        if not self._transport.reconnects:
            raise Unavailable(
                f"MCP server {self.name!r} is unavailable: {lost_text(conn, self._transport)}. "
                "Its tools cannot be called any more in this session."
            )
        async with self._get_lock():
            conn = self._conn
            if conn is not None and conn.alive:
                return conn
            return await self._connect()

    # -- calls --------------------------------------------------------------------------------

    async def call(
        self,
        tool: MCPTool,
        arguments: dict[str, Any],
        on_update: Callable[[Any], None],
        tool_call_id: str | None = None,
    ) -> AgentToolResult:
        """Call a tool of this server; every outcome is a result (errors included), except a
        question for the user with `elicitation="approvals"`: `InputRequired` (the call waits)."""
        if self._phase != "open":
            state = "not connected yet" if self._phase == "new" else "closed"
            return AgentToolResult.error(
                f"MCP server {self.name!r} is unavailable: its client is {state}."
            )
        try:
            conn = await self._live()
        except Unavailable as exc:
            return AgentToolResult.error(str(exc))

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            update = MCPProgress(progress=progress, total=total, message=message)
            on_update(AgentToolResult.text(update.text(), details=update))

        answers = input_answers(tool_call_id) if tool_call_id is not None else {}
        charge = CallCharge(tool.mcp_name, call_id=tool_call_id, answers=answers)
        self._requests.running.append(charge)
        token = current_charge.set(charge)
        try:
            result = await self._send(conn, tool, arguments, progress)
            if isinstance(result, NeedsBackChannel):  # an mcp 1.x-style tool of a 2.x server
                result = await self._in_handshake_era(conn, tool, arguments, progress, result)
        finally:
            current_charge.reset(token)
            self._requests.running.remove(charge)
        if charge.asked is not None:  # the server asked the user: the call waits (approvals)
            raise charge.asked
        if charge.requests:  # the server sampled the model: the call's result carries the usage
            result = replace(result, usage=charge.usage)
        return result

    async def _in_handshake_era(
        self,
        conn: Connection,
        tool: MCPTool,
        arguments: dict[str, Any],
        progress: Any,
        refused: NeedsBackChannel,
    ) -> AgentToolResult:
        """The call again on a connection of the handshake era, where a server may send its own
        requests: a 2.x server's tool written the mcp 1.x way (`ctx.session.create_message`,
        `ctx.elicit`) failed when it tried to send one on the 2026-07-28 protocol, which has
        no channel for them. The connection is replaced once for the whole client (the old one
        closes when its other calls are answered), and this call is sent again, once."""
        try:
            async with self._get_lock():
                if self._era == "auto":
                    self._era = "legacy"
                    conn.retire()
                    self._conn = None
                    await self._connect()
            conn = await self._live()
        except Unavailable as exc:
            return AgentToolResult.error(
                f"MCP server {self.name!r}: the tool {tool.mcp_name!r} sent "
                f"{refused.method!r} the mcp 1.x way, and connecting again with the handshake "
                f"(where it works) failed: {exc}"
            )
        result = await self._send(conn, tool, arguments, progress)
        if isinstance(result, NeedsBackChannel):  # not even the handshake has a channel
            return AgentToolResult.error(refused.text)
        return result

    async def _send(
        self, conn: Connection, tool: MCPTool, arguments: dict[str, Any], progress: Any
    ) -> AgentToolResult | NeedsBackChannel:
        session = conn.session
        assert session is not None
        conn.enter()
        try:
            return await self._send_on(conn, session, tool, arguments, progress)
        finally:
            conn.leave()

    async def _send_on(
        self,
        conn: Connection,
        session: mcp.Client,
        tool: MCPTool,
        arguments: dict[str, Any],
        progress: Any,
    ) -> AgentToolResult | NeedsBackChannel:
        try:
            result = await session.call_tool(tool.mcp_name, arguments, progress_callback=progress)
        except mcp.MCPError as exc:
            method = back_channel_method(exc)
            if method is not None:
                return self._no_back_channel(tool, method)
            if exc.code == types.CONNECTION_CLOSED:
                return AgentToolResult.error(
                    await lost_during_call(conn, self.name, tool.mcp_name, self._transport)
                )
            return AgentToolResult.error(
                f"MCP server {self.name!r} rejected the call to {tool.mcp_name!r}: {describe(exc)}"
            )
        except Exception as exc:
            return AgentToolResult.error(
                f"MCP server {self.name!r}: the call to {tool.mcp_name!r} failed: {describe(exc)}"
            )
        return to_agent_result(result, self.name, tool.mcp_name)

    def _no_back_channel(self, tool: MCPTool, method: str) -> AgentToolResult | NeedsBackChannel:
        """What a call whose tool could not send `method` gives: a call again in the handshake
        era when this client answers `method` there, else an error result saying why."""
        why = back_channel_text(self.name, tool.mcp_name, method)
        if not self._requests.answers(method):
            return AgentToolResult.error(f"{why}; this client does not answer it anyway (off).")
        return NeedsBackChannel(method, f"{why}, and neither has the handshake era.")

    def __repr__(self) -> str:
        return f"MCPClient(name={self.name!r}, tools={[t.name for t in self._tools]})"
