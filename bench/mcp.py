"""MCP: what the MCP layer costs per tool call, and 100 concurrent calls to one server.

The same function (`add`, which returns at once) is called directly in-process (`execute` of its
`AgentTool`) and as the tool of an MCP server started by this script (agentcore's `serve_stdio`
in a subprocess, and `serve_http` in a subprocess on 127.0.0.1): through `MCPClient` (an
`MCPTool`'s `execute`), and, to tell agentcore's share from the SDK's, through the SDK's own
`Client.call_tool`. Then 100 calls at once to one server, of `add` and of `nap` (which sleeps
100 ms: the wall time shows the calls overlap).

    .venv/bin/python bench/mcp.py
"""

from __future__ import annotations

import os
import sys

# This file has the name of the MCP SDK's package: keep its folder off the import path, or
# `import mcp` would import this script.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import functools  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Awaitable, Callable  # noqa: E402
from typing import Any  # noqa: E402

import anyio  # noqa: E402

from agentcore import AbortController, AgentTool, AgentToolResult, tool  # noqa: E402

SEQUENTIAL_CALLS = 500
CONCURRENT_CALLS = 100
NAP = 0.100


@tool
async def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@tool
async def nap(seconds: float) -> str:
    """Sleep."""
    await anyio.sleep(seconds)
    return "rested"


def serve(transport: str) -> None:
    from agentcore.mcp import serve_http, serve_stdio

    if transport == "stdio":
        anyio.run(functools.partial(serve_stdio, [add, nap]))
        return

    async def main() -> None:
        async with anyio.create_task_group() as group:
            url = await group.start(functools.partial(serve_http, [add, nap], port=0))
            print(url, flush=True)

    anyio.run(main)


async def per_call(call: Callable[[], Awaitable[Any]], n: int) -> float:
    """Median µs per call over 5 rounds of `n // 5` sequential calls."""
    rounds = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n // 5):
            await call()
        rounds.append((time.perf_counter() - t0) / (n // 5) * 1e6)
    return statistics.median(rounds)


async def concurrent(tool_: AgentTool, args: dict[str, Any], n: int) -> float:
    """Wall seconds of `n` calls started at once."""
    signal = AbortController().signal
    done: list[AgentToolResult] = []

    async def one() -> None:
        done.append(await tool_.execute("c", args, signal, lambda update: None))

    t0 = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(n):
            group.start_soon(one)
    wall = time.perf_counter() - t0
    assert len(done) == n and not any(r.is_error for r in done), done[:1]
    return wall


async def raw_sdk(server: Any) -> float:
    """µs per call of the SDK's own client, on the same server."""
    from mcp import Client

    async with Client(server) as client:
        await client.list_tools()  # as MCPClient does (an unlisted tool costs a re-listing)

        async def call() -> Any:
            return await client.call_tool("add", {"a": 1, "b": 2})

        for _ in range(20):
            await call()
        return await per_call(call, SEQUENTIAL_CALLS)


async def measure(client: Any) -> dict[str, float]:
    tools = {t.name: t for t in client.tools}
    signal = AbortController().signal

    async def call() -> Any:
        return await tools["add"].execute("b", {"a": 1, "b": 2}, signal, lambda update: None)

    for _ in range(20):  # warm up
        await call()
    return {
        "per_call_us": await per_call(call, SEQUENTIAL_CALLS),
        "add_x100_s": await concurrent(tools["add"], {"a": 1, "b": 2}, CONCURRENT_CALLS),
        "nap_x100_s": await concurrent(tools["nap"], {"seconds": NAP}, CONCURRENT_CALLS),
    }


async def main() -> None:
    from agentcore.mcp import MCPClient

    signal = AbortController().signal

    async def direct() -> Any:
        return await add.execute("b", add.validator.validate({"a": 1, "b": 2}), signal, print)

    direct_us = await per_call(direct, SEQUENTIAL_CALLS * 10)
    print(f"direct in-process call: {direct_us:.1f} µs")

    env = {"PYTHONPATH": os.pathsep.join(sys.path)}  # the server imports this agentcore
    async with MCPClient.stdio(sys.executable, [__file__, "--serve", "stdio"], env=env) as client:
        stdio = await measure(client)
    from mcp import StdioServerParameters

    command = [__file__, "--serve", "stdio"]
    stdio["sdk_us"] = await raw_sdk(
        StdioServerParameters(command=sys.executable, args=command, env=env)
    )

    server = await anyio.open_process(
        [sys.executable, __file__, "--serve", "http"], env={**os.environ, **env}
    )
    try:
        assert server.stdout is not None
        line = b""
        while not line.endswith(b"\n"):
            line += await server.stdout.receive(1)
        url = line.decode().strip()
        async with MCPClient.http(url) as client:
            http = await measure(client)
        http["sdk_us"] = await raw_sdk(url)
    finally:
        server.terminate()
        await server.aclose()

    for name, figures in (("stdio", stdio), ("HTTP", http)):
        added = figures["per_call_us"] - direct_us
        print(
            f"{name}: {figures['per_call_us']:.0f} µs per call (+{added:.0f} µs over direct; "
            f"the SDK's own client: {figures['sdk_us']:.0f} µs); "
            f"{CONCURRENT_CALLS} concurrent calls: "
            f"add {figures['add_x100_s'] * 1000:.0f} ms, nap({NAP:g} s) "
            f"{figures['nap_x100_s'] * 1000:.0f} ms"
        )


if __name__ == "__main__":
    if "--serve" in sys.argv:
        serve(sys.argv[sys.argv.index("--serve") + 1])
    else:
        anyio.run(main)
