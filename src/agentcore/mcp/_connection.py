"""One connection of an `MCPClient` to its server: its state, the task that holds it, and the
texts of its failures.

The connection lives in a task of its own (`run_connection`), started in the client's task group:
the SDK's transports are context managers bound to the task that enters them (a subprocess with
reader and writer tasks, an HTTP client with one task per request), and a tool call runs in
whichever task the agent loop gives it. The task opens the transport and the session, lists the
tools, reports them, then waits until the client closes or the connection ends; it never raises
after it has reported, so a dying server cannot cancel the code inside `async with client`.

The transport's read stream is watched: when it ends the connection is marked lost at once
(`Connection.lost`), and the client's calls say so without waiting on anything.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import anyio.abc

from ._listing import announces_changes, list_tools
from ._sdk import mcp, types
from ._tools import clip
from ._transports import Http, Stdio, Streams, WatchedReceive

__all__ = [
    "CLOSE_TIMEOUT",
    "Connection",
    "Era",
    "NeedsBackChannel",
    "back_channel_method",
    "back_channel_text",
    "Unavailable",
    "connect_failure",
    "describe",
    "leaf",
    "lost_during_call",
    "lost_text",
    "run_connection",
    "stop",
]

_log = logging.getLogger("agentcore")

CLOSE_TIMEOUT = 5.0  # seconds a graceful close may take before the connection is cut

Era = Literal["auto", "legacy"]
"""How a connection negotiates its protocol (the SDK's `mode`): `auto` takes the 2026-07-28
protocol when the server speaks it, else the handshake; `legacy` always the handshake."""

_NO_BACK_CHANNEL = re.compile(
    r"Cannot send '([a-z/_A-Z]+)': this transport context has no back-channel for "
    r"server-initiated requests"
)


@dataclass(eq=False)
class Connection:
    """One live session with the server, owned by its connection task."""

    session: mcp.Client | None = None
    wake: anyio.Event = field(default_factory=anyio.Event)
    done: anyio.Event = field(default_factory=anyio.Event)
    phase: Literal["open", "closing", "lost", "ended"] = "open"
    error: BaseException | None = None
    calls: int = 0  # tool calls sent on it and not yet answered
    retired: bool = False  # replaced by another connection: closed once its calls are answered

    def enter(self) -> None:
        self.calls += 1

    def leave(self) -> None:
        self.calls -= 1
        if self.retired and self.calls == 0:
            self.close()

    def retire(self) -> None:
        """Close once the calls on it are answered (at once when none is pending)."""
        self.retired = True
        if self.calls == 0:
            self.close()

    def lost(self) -> None:
        if self.phase == "open":
            self.phase = "lost"
        self.wake.set()

    def close(self) -> None:
        if self.phase == "open":
            self.phase = "closing"
        self.wake.set()

    @property
    def alive(self) -> bool:
        return self.phase == "open"


def leaf(exc: BaseException) -> BaseException:
    """The first exception of a (nested) group that is not a cancellation."""
    while isinstance(exc, BaseExceptionGroup):
        leaves = [e for e in exc.exceptions if not isinstance(e, anyio.get_cancelled_exc_class())]
        exc = (leaves or list(exc.exceptions))[0]
    return exc


def describe(exc: BaseException) -> str:
    """One line naming what failed, from the innermost exception of a group."""
    exc = leaf(exc)
    if isinstance(exc, mcp.MCPError):
        return clip(f"{exc.message} (MCP error {exc.code})")
    if isinstance(exc, TimeoutError):
        return "it did not answer in time"
    text = str(exc)
    return clip(f"{type(exc).__name__}: {text}" if text else type(exc).__name__)


def back_channel_method(exc: BaseException) -> str | None:
    """The method a server's tool could not send, when `exc` is the SDK's refusal of a request
    of the mcp 1.x kind (`ctx.session.create_message`, `ctx.elicit`) on a connection of the
    2026-07-28 protocol, which has no channel for requests from the server; else None."""
    if not isinstance(exc, mcp.MCPError):
        return None
    found = _NO_BACK_CHANNEL.search(exc.message or "")
    return found.group(1) if found else None


def back_channel_text(name: str, tool: str, method: str) -> str:
    """Why a call of `tool` of server `name` failed: it sent `method` the mcp 1.x way."""
    return (
        f"MCP server {name!r}: the tool {tool!r} sent {method!r} as a request of its own (the "
        "mcp 1.x way: ctx.session.create_message, ctx.elicit), which the 2026-07-28 protocol "
        "has no channel for"
    )


class NeedsBackChannel:
    """A call whose tool needs the handshake era's back-channel for `method` (`text`: the error
    result should the handshake not have one either)."""

    def __init__(self, method: str, text: str) -> None:
        self.method = method
        self.text = text


class Unavailable(Exception):
    """The server cannot take a call now; the text is the error result."""


async def stop(conn: Connection) -> None:
    """Close a connection gracefully, cutting it after `CLOSE_TIMEOUT`."""
    conn.close()
    with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_TIMEOUT):
        await conn.done.wait()


def connect_failure(
    exc: BaseException,
    name: str,
    transport: Stdio | Http,
    connect_timeout: float,
    *,
    again: bool,
) -> str:
    """The text of a failed connection to server `name` (`again`: a reconnection)."""
    failed = leaf(exc)
    if isinstance(failed, TimeoutError):
        why = f"it did not complete the MCP handshake within {connect_timeout:g} s"
    elif isinstance(failed, mcp.MCPError) and failed.code == types.CONNECTION_CLOSED:
        why = "it closed the connection during the MCP handshake"
        if isinstance(transport, Stdio):
            why += " (its process exited; its stderr may say why)"
    else:
        why = describe(exc)
    if again:
        return f"MCP server {name!r} is unavailable: connecting again failed: {why}"
    return f"could not connect to MCP server {name!r}: {why}"


def lost_text(conn: Connection | None, transport: Stdio | Http) -> str:
    """Why the connection is not there, as part of an error text."""
    if conn is None:
        return "it is not connected"
    if conn.error is not None:
        return f"the connection failed ({describe(conn.error)})"
    if isinstance(transport, Stdio):
        return "its process exited or closed its output"
    return "the connection dropped"


async def lost_during_call(
    conn: Connection, name: str, tool_name: str, transport: Stdio | Http
) -> str:
    """The error text of a call to `tool_name` whose connection closed under it."""
    conn.lost()
    # The connection task records why it ended; wait for it (bounded) to say so.
    with anyio.move_on_after(CLOSE_TIMEOUT):
        await conn.done.wait()
    then = (
        "The next call connects again."
        if transport.reconnects
        else "Its tools cannot be called any more in this session."
    )
    if conn.phase == "closing":
        return (
            f"MCP server {name!r}: the call to {tool_name!r} was cut off because "
            "the client was closed."
        )
    return (
        f"MCP server {name!r} closed the connection during the call to "
        f"{tool_name!r}: {lost_text(conn, transport)}. {then}"
    )


async def run_connection(
    transport: Stdio | Http,
    name: str,
    connect_timeout: float,
    callbacks: dict[str, Any],
    on_change: Callable[[], None],
    era: Era = "auto",
    *,
    task_status: anyio.abc.TaskStatus[Any],
) -> None:
    """The connection task: open, list the tools, report `(connection, listing)`, then hold the
    connection until it is closed or lost. Raises only before it has reported.

    `callbacks` are the `mcp.Client` keyword arguments that answer the server (messages,
    sampling, elicitation, roots); `on_change` is called when the server announces a change of
    its tools through a subscription; `era` is how the protocol is negotiated."""
    conn = Connection()
    started = False

    @asynccontextmanager
    async def streams() -> AsyncIterator[Streams]:
        async with transport.open() as (read, write):
            yield WatchedReceive(read, conn.lost), write

    try:
        # One scope around the whole session (cancel scopes must nest), whose deadline
        # bounds only the handshake and the first listing.
        with anyio.CancelScope(deadline=anyio.current_time() + connect_timeout) as scope:
            async with mcp.Client(
                streams(),
                **callbacks,
                mode=era,
                cache=None,  # a listing is fetched when asked for, never from a cache
            ) as client:
                conn.session = client
                listed = await list_tools(client, name)
                scope.deadline = math.inf
                task_status.started((conn, listed))
                started = True
                async with anyio.create_task_group() as watchers:
                    if announces_changes(client):
                        watchers.start_soon(_listen, client, name, on_change)
                    await conn.wake.wait()
                    watchers.cancel_scope.cancel()
        if not started:
            raise TimeoutError("the MCP handshake did not complete in time")
    except Exception as exc:
        if not started:
            raise
        conn.error = exc
        _log.info("MCP server %r: the connection ended: %s", name, describe(exc))
    finally:
        conn.phase = "lost" if started and conn.phase == "open" else conn.phase
        if not started:
            conn.phase = "ended"
        conn.done.set()


async def _listen(client: mcp.Client, name: str, on_change: Callable[[], None]) -> None:
    """Keep a 2026-era `subscriptions/listen` stream open for tool-list changes (older servers
    send the notification unasked; the client's message handler sees both)."""
    try:
        async with client.listen(tools_list_changed=True) as subscription:
            async for _event in subscription:
                on_change()
    except Exception as exc:  # a server that cannot listen still works; it just never tells
        _log.debug("MCP server %r: no tool-change subscription: %s", name, exc)
