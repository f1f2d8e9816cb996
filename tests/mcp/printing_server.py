"""An MCP server over stdio whose tools write to stdout behind the protocol's back: a `print`
that is never flushed (it would leave the buffer at interpreter exit), a write straight to fd 1,
and a child process that inherits stdout. Run as a script by tests/mcp/test_mcp_serve.py."""

from __future__ import annotations

import functools
import os
import subprocess
import sys

import anyio

from agentcore import tool
from agentcore.mcp import serve_stdio


@tool
def chatty(text: str) -> str:
    """Print behind the protocol's back, then answer."""
    print(f"printed by a tool: {text}")  # no flush: sits in the buffer until exit
    os.write(1, b"written to fd 1 by a tool\n")
    subprocess.run([sys.executable, "-c", "print('printed by a child process')"], check=True)
    return text.upper()


if __name__ == "__main__":
    anyio.run(functools.partial(serve_stdio, [chatty], name="printing"))
