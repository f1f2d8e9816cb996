"""An MCP server on the mcp 2.x SDK whose tools ask the client the mcp 1.x way: a request of
their own (`ctx.session.create_message`, `ctx.elicit`), which only the handshake era has a
channel for. On the 2026-07-28 protocol the SDK refuses to send it ("no back-channel for
server-initiated requests"). Used by test_mcp_sampling.py and test_mcp_elicitation.py.

Each tool's answer starts with the number of calls this process has had (`#N`), so a test can
tell whether a call was sent again on a new process.
"""

from __future__ import annotations

import warnings

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

warnings.simplefilter("ignore")  # the SDK's deprecation warning for sampling, on stderr

server = MCPServer("old-style", version="1.0")
calls = 0


@server.tool()
async def ask(question: str, ctx: Context) -> str:
    """Ask the client's model, the mcp 1.x way."""
    global calls
    calls += 1
    message = types.SamplingMessage(
        role="user", content=types.TextContent(type="text", text=question)
    )
    answer = await ctx.session.create_message(messages=[message], max_tokens=20)
    content = answer.content
    text = content.text if isinstance(content, types.TextContent) else str(content)
    return f"#{calls} {answer.model} said: {text}"


class Size(BaseModel):
    """What the user is asked for."""

    size: str


@server.tool()
async def pick(ctx: Context) -> str:
    """Ask the user for a size, the mcp 1.x way."""
    global calls
    calls += 1
    answer = await ctx.elicit("Which size?", Size)
    return f"#{calls} {answer.action} {getattr(answer, 'data', None)}"


@server.tool()
async def plain(text: str) -> str:
    """Asks nothing."""
    global calls
    calls += 1
    return f"#{calls} {text}"


if __name__ == "__main__":
    server.run("stdio")
