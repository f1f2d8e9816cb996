"""`serve_http` under the shared guard's limits (`agentcore.netguard`), over real HTTP on
127.0.0.1: clients that never finish their headers are closed and cannot starve the server
(a subprocess with a low file descriptor limit), bodies are capped and must be JSON, another
local port is another site, and the SDK's client still closes its session (a DELETE)."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from served_tools import TOOLS

from agentcore import ConfigError
from agentcore.mcp import MCPClient, serve_http
from support.slow_clients import FD_LIMIT, all_closed_within, low_fd_limit, open_slow_connections

HERE = Path(__file__).parent
SRC = HERE.parents[1] / "src"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.mark.skipif(sys.platform != "linux", reason="file descriptor limits as on Linux")
def test_slow_clients_cannot_starve_serve_http() -> None:
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    process = subprocess.Popen(
        [sys.executable, str(HERE / "serve_http_script.py"), "2", "30"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=low_fd_limit,
    )
    slow = []
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url + (
            process.stderr.read() if process.stderr else ""
        )
        slow = open_slow_connections(int(url.rsplit(":", 1)[1].split("/")[0]))
        assert len(slow) > FD_LIMIT  # more than the server has file descriptors
        started = time.monotonic()
        with httpx.Client(timeout=15) as client:
            answer = client.post(url, json=INITIALIZE, headers=HEADERS)
        assert answer.status_code == 200, answer.text
        assert time.monotonic() - started < 10
        # the slow ones are closed by the header timeout (or made room for)
        assert all_closed_within(slow, 2.5) == len(slow)
    finally:
        for s in slow:
            s.close()
        process.terminate()
        process.communicate(timeout=20)


@asynccontextmanager
async def served(**options: Any) -> AsyncIterator[str]:
    async with anyio.create_task_group() as group:
        url = await group.start(functools.partial(serve_http, TOOLS, port=0, **options))
        try:
            yield url
        finally:
            group.cancel_scope.cancel()


@pytest.mark.anyio
async def test_bodies_are_capped_and_must_be_json() -> None:
    async with served(max_body_bytes=2048) as url, httpx.AsyncClient(timeout=10) as http:
        big = await http.post(url, content=b" " * 3000, headers=HEADERS)
        assert big.status_code == 413
        assert "larger than this MCP server accepts (2048 bytes)" in big.json()["error"]["message"]

        async def chunks() -> AsyncIterator[bytes]:  # no Content-Length
            for _ in range(5):
                yield b" " * 1000

        streamed = await http.post(url, content=chunks(), headers=HEADERS)
        assert streamed.status_code == 413
        form = await http.post(
            url, content=b"{}", headers={**HEADERS, "Content-Type": "text/plain"}
        )
        assert form.status_code == 415
        port = url.split(":")[2].split("/")[0]
        other_port = await http.post(
            url, json=INITIALIZE, headers={**HEADERS, "Origin": "http://127.0.0.1:1"}
        )
        assert other_port.status_code == 403
        same = await http.post(
            url, json=INITIALIZE, headers={**HEADERS, "Origin": f"http://127.0.0.1:{port}"}
        )
        assert same.status_code == 200
    # the SDK's client works through it, its closing DELETE (no body) included
    async with served() as url, MCPClient.http(url, name="limits") as client:
        assert "add" in [t.name for t in client.tools]


@pytest.mark.anyio
async def test_the_limits_must_be_positive() -> None:
    with pytest.raises(ConfigError, match="header_timeout and max_connections"):
        await serve_http(TOOLS, port=0, header_timeout=0)
    with pytest.raises(ConfigError, match="header_timeout and max_connections"):
        await serve_http(TOOLS, port=0, max_connections=0)
