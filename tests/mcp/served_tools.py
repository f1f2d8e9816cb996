"""agentcore tools served over MCP: imported by the tests (HTTP, in-process) and run as a script
(`python served_tools.py`) to serve them over stdio."""

from __future__ import annotations

import time
from typing import Any

import anyio

from agentcore import (
    AbortSignal,
    AgentTool,
    AgentToolResult,
    ImageContent,
    ToolError,
    ToolUpdateCallback,
    tool,
)

PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQ"
    "GAhKmMIQAAAABJRU5ErkJggg=="
)

aborted: list[str] = []
changed = anyio.Event()


@tool
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@tool
async def hold(key: str, signal: AbortSignal, on_update: ToolUpdateCallback) -> str:
    """Report one update, then wait; records the call if it ends aborted."""
    global changed
    on_update(AgentToolResult.text(f"{key} is waiting"))
    try:
        await anyio.sleep(30)
    finally:
        if signal.aborted:  # fired before the cancellation reaches the tool
            aborted.append(key)
            changed.set()
            changed = anyio.Event()
    return "not aborted"


@tool
async def seen(count: int) -> list[str]:
    """The keys of the aborted `hold` calls, once there are at least `count`."""
    with anyio.fail_after(10):
        while len(aborted) < count:
            await changed.wait()
    return sorted(aborted)


@tool
def shout(text: str, on_update: ToolUpdateCallback) -> str:
    """A sync tool (it runs in a worker thread) that reports progress."""
    for step in ("one", "two"):
        on_update(AgentToolResult.text(f"shouting {step}"))
    return text.upper()


@tool
async def fails() -> str:
    """Always fails."""
    raise ToolError("the tool failed on purpose")


@tool
async def picture() -> ImageContent:
    """A 1x1 PNG."""
    return ImageContent(data=PIXEL, mime_type="image/png")


@tool
async def measured() -> AgentToolResult:
    """A result with structured details."""
    return AgentToolResult.text("measured", details={"celsius": 21.5, "city": "Oslo"})


@tool(timeout=0.05)
async def sleepy() -> str:
    """Takes longer than its timeout."""
    await anyio.sleep(30)
    return "awake"


@tool
def blocking() -> str:
    """Blocks its thread briefly."""
    time.sleep(0.01)
    return "unblocked"


TOOLS: list[AgentTool] = [add, hold, seen, shout, fails, picture, measured, sleepy, blocking]


def main() -> Any:
    import functools

    from agentcore.mcp import serve_stdio

    anyio.run(functools.partial(serve_stdio, TOOLS, name="served"))


if __name__ == "__main__":
    main()
