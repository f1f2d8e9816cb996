"""How `MCPClient` reaches a server: a subprocess over stdio, or streamable HTTP.

Each transport opens the SDK's transport as an async context manager yielding the read and write
streams. `WatchedReceive` wraps the read stream so that its end (the server exited, the
connection dropped) is reported at once, even when no call is waiting.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit, urlunsplit

import anyio

from .. import ConfigError
from ._sdk import httpx2, mcp

__all__ = ["Http", "Stdio", "Streams", "WatchedReceive", "has_fd"]

_RUNNERS = ("python", "node", "uv", "uvx", "npx", "bunx", "bun", "deno", "pipx", "java")
"""Programs that run the server named by an argument: a short name is that argument's."""


Streams = tuple[Any, Any]


@dataclass(frozen=True, slots=True)
class Stdio:
    command: str
    args: tuple[str, ...]
    env: Mapping[str, str] | None
    cwd: str | None
    errlog: TextIO | None
    reconnects: bool = False

    def describe(self) -> str:
        return shlex.join([Path(self.command).name, *self.args])

    def short(self) -> str:
        """A short name: the program, or for an interpreter or runner (`python`, `uvx`, `npx`,
        ...) the script, module or package it runs (`python -m mcp_server_time`:
        `mcp_server_time`; `python /path/server.py`: `server.py`)."""
        program = Path(self.command).name
        if not program.lower().startswith(_RUNNERS):
            return program
        for arg in self.args:
            if not arg.startswith("-") and arg not in ("run", "exec"):
                return Path(arg).name or program
        return program

    def open(self) -> AbstractAsyncContextManager[Streams]:
        params = mcp.StdioServerParameters(
            command=self.command,
            args=list(self.args),
            env=dict(self.env) if self.env is not None else None,
            cwd=self.cwd,
        )
        return mcp.stdio_client(params, errlog=self.errlog or _default_errlog())


def has_fd(stream: Any) -> bool:
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    return True


def _default_errlog() -> TextIO:
    """This process's stderr, for the server's; the original one when `sys.stderr` was replaced
    by an object without a file descriptor (a notebook, captured output)."""
    if has_fd(sys.stderr):
        return sys.stderr
    original = sys.__stderr__
    if original is not None and has_fd(original):
        return original
    raise ConfigError("no stderr with a file descriptor for the server: pass errlog=open(...)")


@dataclass(frozen=True, slots=True)
class Http:
    url: str
    headers: Mapping[str, str] | None
    auth: httpx2.Auth | None
    timeout: float
    reconnects: bool = True

    def describe(self) -> str:
        return _safe_url(self.url)

    def short(self) -> str:
        """A short name: the URL's host and port."""
        parts = urlsplit(self.url)
        host = parts.hostname or "?"
        return f"{host}:{parts.port}" if parts.port else host

    @asynccontextmanager
    async def open(self) -> AsyncIterator[Streams]:
        # As the SDK's own client: a response stream may stay silent long (a call is bounded by
        # the tool timeout), redirects are followed by the transport within the origin only.
        http = httpx2.AsyncClient(
            headers=dict(self.headers) if self.headers is not None else None,
            timeout=httpx2.Timeout(self.timeout, read=300.0),
            auth=self.auth,
        )
        connect = mcp.client.streamable_http.streamable_http_client
        async with http, connect(self.url, http_client=http) as streams:
            yield streams


def _safe_url(url: str) -> str:
    """The URL without credentials, query or fragment: what error texts may show."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


class WatchedReceive:
    """The transport's read stream, reporting its end (the server exited, the connection
    dropped) so that a lost connection is noticed even when no call is waiting on it."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        # The SDK's dispatcher reads this to run handlers in the sender's context.
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise

    def __aiter__(self) -> WatchedReceive:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> WatchedReceive:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
