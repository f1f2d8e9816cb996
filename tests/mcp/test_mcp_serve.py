"""agentcore tools served over MCP, exercised by the official SDK's own client over stdio (the
tools served by a subprocess) and streamable HTTP (served in-process), and by `MCPClient`."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_support import HERE, SRC
from served_tools import TOOLS, add

from agentcore import AgentToolResult, ToolDefinitionError
from agentcore.mcp import MCPClient, serve_http, tools_server

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def served_over_http(**options: Any) -> AsyncIterator[str]:
    async with anyio.create_task_group() as group:
        url = await group.start(functools.partial(serve_http, TOOLS, port=0, **options))
        try:
            yield url
        finally:
            group.cancel_scope.cancel()


def texts(result: types.CallToolResult) -> list[str]:
    return [b.text for b in result.content if isinstance(b, types.TextContent)]


async def exercise(client: Client) -> None:
    """What any MCP client sees of the served tools."""
    listing = await client.list_tools()
    tools = {t.name: t for t in listing.tools}
    assert list(tools) == [t.name for t in TOOLS]
    assert tools["add"].description == "Add two integers."
    assert tools["add"].input_schema["properties"]["a"]["type"] == "integer"
    assert tools["add"].input_schema["required"] == ["a", "b"]
    assert "signal" not in tools["hold"].input_schema["properties"]  # injected, not exposed

    added = await client.call_tool("add", {"a": "2", "b": 3})  # coerced as in the loop
    assert texts(added) == ["5"] and not added.is_error

    invalid = await client.call_tool("add", {"a": "two"})
    assert invalid.is_error and 'Validation failed for tool "add"' in texts(invalid)[0]

    failed = await client.call_tool("fails", {})
    assert failed.is_error and texts(failed) == ["the tool failed on purpose"]

    picture = await client.call_tool("picture", {})
    assert isinstance(picture.content[0], types.ImageContent)
    assert picture.content[0].mime_type == "image/png"

    measured = await client.call_tool("measured", {})
    assert texts(measured) == ["measured"]
    assert measured.structured_content == {"celsius": 21.5, "city": "Oslo"}

    slept = await client.call_tool("sleepy", {})
    assert slept.is_error and texts(slept) == ["Tool 'sleepy' timed out after 0.05 s."]

    progress: list[tuple[float, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    shouted = await client.call_tool("shout", {"text": "hi"}, progress_callback=on_progress)
    assert texts(shouted) == ["HI"]
    assert progress == [(1, "shouting one"), (2, "shouting two")]

    # The client cancels two calls once each has reported: each tool sees its abort signal.
    waiting = anyio.Event()
    reported: set[str] = set()

    async def hold(key: str) -> None:
        async def on_hold(value: float, total: float | None, message: str | None) -> None:
            reported.add(key)
            if len(reported) == 2:
                waiting.set()

        await client.call_tool("hold", {"key": key}, progress_callback=on_hold)

    async with anyio.create_task_group() as group:
        group.start_soon(hold, "x")
        group.start_soon(hold, "y")
        await waiting.wait()
        group.cancel_scope.cancel()
    seen = await client.call_tool("seen", {"count": 2})
    assert "".join(texts(seen)) == '["x", "y"]'

    with pytest.raises(MCPError, match="Unknown tool: nothing"):
        await client.call_tool("nothing", {})


async def test_served_over_stdio_to_the_sdk_client() -> None:
    params = StdioServerParameters(
        command=sys.executable, args=[str(HERE / "served_tools.py")], env={"PYTHONPATH": SRC}
    )
    async with Client(params) as client:
        assert client.server_info is not None and client.server_info.name == "served"
        await exercise(client)


async def test_a_print_in_a_tool_does_not_reach_the_sdk_client(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 26: a tool's unflushed `print` reached the wire at shutdown and the SDK's client
    logged "Failed to parse JSONRPC message". It gets its answer and nothing else."""
    params = StdioServerParameters(
        command=sys.executable, args=[str(HERE / "printing_server.py")], env={"PYTHONPATH": SRC}
    )
    for _ in range(2):  # the second session starts while the first server's exit is flushed
        async with Client(params) as client:
            result = await client.call_tool("chatty", {"text": "hi"})
            assert texts(result) == ["HI"] and not result.is_error
    assert "Failed to parse JSONRPC message" not in caplog.text


def test_nothing_but_the_protocol_reaches_stdout() -> None:
    """The wire, read byte for byte to its end: one JSON-RPC message a line, nothing else —
    not the tool's unflushed print (flushed at interpreter exit), not its write to fd 1, not
    its child process's output; all of them are on stderr."""
    with subprocess.Popen(
        [sys.executable, str(HERE / "printing_server.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"PYTHONPATH": SRC},  # buffered stdout (no PYTHONUNBUFFERED), as under a client
    ) as server:
        assert server.stdin is not None and server.stdout is not None

        def send(message: dict[str, Any]) -> None:
            assert server.stdin is not None
            server.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
            server.stdin.flush()

        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        send({"id": 1, "method": "initialize", "params": init})
        send({"method": "notifications/initialized"})
        send(
            {
                "id": 2,
                "method": "tools/call",
                "params": {"name": "chatty", "arguments": {"text": "x"}},
            }
        )
        wire: list[dict[str, Any]] = []
        while not any(m.get("id") == 2 for m in wire):
            line = server.stdout.readline()
            assert line, "the server closed stdout before answering"
            wire.append(json.loads(line))
        server.stdin.close()  # the client is done: the server ends, its buffers are flushed
        rest = server.stdout.read()
        stderr = server.stderr.read().decode() if server.stderr else ""
        assert server.wait(timeout=10) == 0, stderr
        assert rest == b"", f"not the protocol, on the wire: {rest!r}"
        assert wire[-1]["result"]["content"] == [{"type": "text", "text": "X"}]
        for text in (
            "printed by a tool: x",
            "written to fd 1 by a tool",
            "printed by a child process",
        ):
            assert text in stderr


async def test_served_over_http_to_the_sdk_client() -> None:
    async with served_over_http(name="served") as url, Client(url) as client:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        await exercise(client)


async def test_served_tools_through_mcp_client() -> None:
    """agentcore on both ends: the round trip keeps text, images, details and errors."""
    async with served_over_http() as url, MCPClient.http(url, name="self") as client:
        tools = {t.name: t for t in client.tools}
        assert [t.mcp_name for t in client.tools] == [t.name for t in TOOLS]
        updates: list[AgentToolResult] = []

        async def call(name: str, args: dict[str, Any]) -> AgentToolResult:
            from agentcore import AbortController

            return await tools[name].execute("id", args, AbortController().signal, updates.append)

        assert (await call("add", {"a": 1, "b": 2})).content[0].text == "3"  # type: ignore[union-attr]
        measured = await call("measured", {})
        assert measured.details["structured_content"] == {"celsius": 21.5, "city": "Oslo"}
        failed = await call("fails", {})
        assert failed.is_error and failed.content[0].text == "the tool failed on purpose"  # type: ignore[union-attr]
        await call("shout", {"text": "a"})
        assert [u.content[0].text for u in updates] == ["shouting one", "shouting two"]  # type: ignore[union-attr]


def test_tools_server_checks_its_tools() -> None:
    with pytest.raises(ToolDefinitionError, match="used twice"):
        tools_server([add, add])
    with pytest.raises(ToolDefinitionError, match="takes AgentTool objects"):
        tools_server([print])  # type: ignore[list-item]
