"""Helpers of the MCP tests: starting the test server over stdio or streamable HTTP.

(This directory has no `__init__.py` and no `conftest.py` on purpose: a package named `mcp` on the
test path would shadow the MCP SDK.)
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any

import anyio
import anyio.abc
import pytest

import agentcore
from agentcore import ToolResultMessage
from agentcore.mcp import MCPClient

HERE = Path(__file__).resolve().parent
SERVER = str(HERE / "mcp_test_server.py")
SRC = str(Path(agentcore.__file__).resolve().parent.parent)
"""The agentcore under test, for the servers the tests start (the SDK passes them only a few
environment variables, so they would import an installed agentcore otherwise)."""


@pytest.fixture
def errlog(tmp_path: Path) -> Iterator[IO[str]]:
    """Where the servers' stderr goes (their tracebacks stay out of the test output)."""
    with open(tmp_path / "server-stderr.txt", "w+", encoding="utf-8") as file:
        yield file


def stdio_client(errlog: IO[str], **options: Any) -> MCPClient:
    """A client of the test server run as a subprocess over stdio."""
    return MCPClient.stdio(sys.executable, [SERVER], errlog=errlog, name="test", **options)


@asynccontextmanager
async def http_server(port: int = 0) -> AsyncIterator[tuple[str, anyio.abc.Process]]:
    """The test server serving streamable HTTP on 127.0.0.1: yields its URL and process."""
    process = await anyio.open_process(
        [sys.executable, SERVER, "--http", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert process.stdout is not None
        line = b""
        with anyio.fail_after(30):
            while not line.endswith(b"\n"):
                line += await process.stdout.receive(1)
        yield f"http://127.0.0.1:{int(line)}/mcp", process
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.CancelScope(shield=True):
            await process.aclose()


def results(messages: list[Any]) -> list[ToolResultMessage]:
    """The tool-result messages of a run."""
    return [m for m in messages if isinstance(m, ToolResultMessage)]


def text(message: ToolResultMessage) -> str:
    """The text blocks of a result, joined."""
    return "".join(getattr(b, "text", "") for b in message.content)
