"""Who may call tools served by `serve_http`: Host and Origin checks on every loopback address
(DNS-rebinding protection), a bearer token checked on every request, and no unauthenticated
server off loopback. Exercised over real HTTP on 127.0.0.x, with the official SDK's client
(inside `MCPClient`) and with raw requests for the refusals."""

from __future__ import annotations

import functools
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from served_tools import TOOLS

from agentcore import AbortController, ConfigError
from agentcore.mcp import MCPClient, MCPConnectionError, serve_http

pytestmark = pytest.mark.anyio

TOKEN = "t0k3n-for-the-tests-0123456789"
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


def loopback_alias_works() -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.2", 0))
        except OSError:
            return False
    return True


@asynccontextmanager
async def served(**options: Any) -> AsyncIterator[str]:
    async with anyio.create_task_group() as group:
        url = await group.start(functools.partial(serve_http, TOOLS, port=0, **options))
        try:
            yield url
        finally:
            group.cancel_scope.cancel()


async def post(url: str, **headers: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=10) as http:
        return await http.post(url, json=INITIALIZE, headers={**HEADERS, **headers})


async def add_through(client: MCPClient) -> str:
    add = next(t for t in client.tools if t.name == "add")
    result = await add.execute("id", {"a": 2, "b": 3}, AbortController().signal, print)
    return "".join(getattr(b, "text", "") for b in result.content)


@pytest.mark.skipif(not loopback_alias_works(), reason="no 127.0.0.2 on this machine")
async def test_every_loopback_address_checks_host_and_origin() -> None:
    async with served(host="127.0.0.2") as url:
        port = url.split(":")[2].split("/")[0]
        evil = await post(url, Host=f"evil.example:{port}")
        assert evil.status_code == 421
        wrong_origin = await post(url, Origin=f"http://evil.example:{port}")
        assert wrong_origin.status_code == 403
        # what names this machine passes: the bound address, localhost, and an Origin of either
        assert (await post(url)).status_code == 200
        assert (await post(url, Host=f"localhost:{port}")).status_code == 200
        assert (await post(url, Origin=f"http://127.0.0.2:{port}")).status_code == 200
        async with MCPClient.http(url, name="alias") as client:
            assert await add_through(client) == "5"


def ipv6_loopback_works() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not ipv6_loopback_works(), reason="no ::1 on this machine")
async def test_ipv6_loopback_checks_host_and_origin() -> None:
    async with served(host="::1") as url:
        assert url.startswith("http://[::1]:")
        port = url.rsplit(":", 1)[1].split("/")[0]
        assert (await post(url, Host=f"evil.example:{port}")).status_code == 421
        assert (await post(url, Origin="http://evil.example")).status_code == 403
        assert (await post(url)).status_code == 200
        assert (await post(url, Origin=f"http://[::1]:{port}")).status_code == 200
        async with MCPClient.http(url, name="v6") as client:
            assert await add_through(client) == "5"


async def test_allowed_hosts_add_names() -> None:
    async with served(allowed_hosts=["tools.internal:*", "other.internal"]) as url:
        port = url.split(":")[2].split("/")[0]
        assert (await post(url, Host=f"tools.internal:{port}")).status_code == 200
        assert (await post(url, Origin="https://other.internal")).status_code == 200
        assert (await post(url, Host=f"evil.example:{port}")).status_code == 421


async def test_a_token_is_required_on_every_request() -> None:
    async with served(token=TOKEN) as url:
        missing = await post(url)
        assert missing.status_code == 401
        assert missing.headers["www-authenticate"] == 'Bearer realm="mcp"'
        wrong = await post(url, Authorization=f"Bearer {TOKEN[:-1]}x")
        assert wrong.status_code == 401
        assert 'error="invalid_token"' in wrong.headers["www-authenticate"]
        assert (await post(url, Authorization=f"Basic {TOKEN}")).status_code == 401
        assert (await post(url, Authorization=f"Bearer {TOKEN}")).status_code == 200
        # the SDK's client (in MCPClient) without the token cannot connect; with it, it works
        with pytest.raises(MCPConnectionError, match="needs 'Authorization: Bearer <token>'"):
            async with MCPClient.http(url, name="anonymous", connect_timeout=10):
                pass
        assert missing.json()["error"]["message"].startswith("Unauthorized: ")
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with MCPClient.http(url, headers=headers, name="owner") as client:
            assert await add_through(client) == "5"
        # the Host check holds with a token as well
        evil = await post(url, Host="evil.example", Authorization=f"Bearer {TOKEN}")
        assert evil.status_code == 421


async def test_off_loopback_a_token_is_required() -> None:
    for host in ("0.0.0.0", "::", "192.0.2.1"):  # refused before anything is bound
        with pytest.raises(ConfigError, match=f"serve_http on '{host}'.*needs a token"):
            await serve_http(TOOLS, host=host, port=0)
    for bad in ("", "short", "has a space in it 0123456789", "x" * 15):
        with pytest.raises(ConfigError, match="token must be at least 16 characters"):
            await serve_http(TOOLS, port=0, token=bad)
    with pytest.raises(ConfigError, match="allowed_hosts entries"):
        await serve_http(TOOLS, port=0, allowed_hosts=["bad host:x"])
