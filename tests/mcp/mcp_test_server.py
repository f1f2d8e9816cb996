"""An MCP server written with the official SDK (`MCPServer`), for the client tests.

Run as `python mcp_test_server.py` it speaks MCP over stdio; with `--http [PORT]` it serves
streamable HTTP on 127.0.0.1 (at PORT, else a free port), printing the port on its first line of
stdout once it listens.

It records what it observed (calls that were cancelled, the arguments of each call) so that a
test can ask it afterwards with the `observed` tool.
"""

from __future__ import annotations

import base64
import os
import socket
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.mcpserver import Audio, Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)

server = MCPServer("test-server", version="1.0")
cancelled: list[str] = []
changed = anyio.Event()
calls = 0


def note_cancel(what: str) -> None:
    cancelled.append(what)
    global changed
    changed.set()
    changed = anyio.Event()


@server.tool()
async def add(a: int, b: int) -> int:
    """Add two integers."""
    global calls
    calls += 1
    return a + b


@server.tool()
async def wait(key: str, steps: int, ctx: Context) -> str:
    """Report `steps` progress notifications, then wait until cancelled (or 30 s)."""
    try:
        for i in range(steps):
            await ctx.report_progress(i + 1, steps, f"{key} step {i + 1}")
        await anyio.sleep(30)
        return f"{key} finished"
    except anyio.get_cancelled_exc_class():
        note_cancel(key)
        raise


@server.tool()
async def progress(steps: int, ctx: Context) -> str:
    """Report progress, then answer."""
    for i in range(steps):
        await ctx.report_progress(i + 1, steps, None if i % 2 else f"step {i + 1}")
    return "progressed"


@server.tool()
async def observed(cancellations: int = 0) -> list[str]:
    """The keys of the cancelled `wait` calls, once there are at least `cancellations`."""
    with anyio.fail_after(10):
        while len(cancelled) < cancellations:
            await changed.wait()
    return sorted(cancelled)


@server.tool()
async def fail(why: str) -> str:
    """Fail with the given message."""
    raise ToolError(f"failed because {why}")


@server.tool()
async def image() -> Image:
    """A 1x1 PNG."""
    return Image(data=PNG, format="png")


@server.tool()
async def sound() -> Audio:
    """A short WAV."""
    return Audio(data=b"RIFF....WAVEfmt ", format="wav")


class Weather(BaseModel):
    city: str
    celsius: float


@server.tool()
async def weather(city: str) -> Weather:
    """Structured weather."""
    return Weather(city=city, celsius=21.5)


@server.tool()
async def resources() -> list[Any]:
    """Embedded resources and a link."""
    return [
        types.EmbeddedResource(
            type="resource",
            resource=types.TextResourceContents(
                uri="file:///notes.txt", mime_type="text/plain", text="the notes"
            ),
        ),
        types.EmbeddedResource(
            type="resource",
            resource=types.BlobResourceContents(
                uri="file:///pixel.png",
                mime_type="image/png",
                blob=base64.b64encode(PNG).decode(),
            ),
        ),
        types.EmbeddedResource(
            type="resource",
            resource=types.BlobResourceContents(
                uri="file:///data.bin", mime_type="application/octet-stream", blob="AAEC"
            ),
        ),
        types.ResourceLink(type="resource_link", name="readme", uri="file:///README.md"),
    ]


@server.tool(name="dotted.name")
async def dotted() -> str:
    """A tool whose name a model API would refuse."""
    return "dotted"


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the tool `extra` and announce the change."""

    async def extra(text: str) -> str:
        """Echo."""
        return f"extra:{text}"

    server.add_tool(extra, name="extra", description="An added tool.")
    await ctx.notify_tools_changed()
    return "grown"


@server.tool()
async def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool()
async def die() -> str:
    """Exit the server process at once, in the middle of the call."""
    sys.stdout.flush()
    os._exit(3)


def main() -> None:
    if "--http" in sys.argv:
        import uvicorn

        at = sys.argv.index("--http")
        port = int(sys.argv[at + 1]) if len(sys.argv) > at + 1 else 0
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # NODELAY
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen(64)
        print(sock.getsockname()[1], flush=True)
        app = server.streamable_http_app()
        uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
