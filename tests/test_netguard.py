"""`agentcore.netguard`, the guard every agentcore server shares, at the ASGI level: each rule's
edge cases (IPv6 Host with a port, `localhost.`, Origin `null`, an empty token, a chunked body
past the cap, ...) against a real app that reads its body; and `serve` on a real socket, ended
by cancellation with the app's lifespan shut down."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from agentcore import ConfigError
from agentcore.netguard import (
    DEFAULT_MAX_BODY_BYTES,
    LOOPBACK_HOSTS,
    Guard,
    bound_hosts,
    check_bearer_token,
    is_loopback,
    listen,
    serve,
)

pytestmark = pytest.mark.anyio

TOKEN = "tok-0123456789abcdef"


class Echo:
    """The app behind the guard: reads the whole body, answers its length; counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.calls += 1
        size = 0
        while True:
            message = await receive()
            size += len(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = json.dumps({"size": size}).encode()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": body})


class Answer:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    def json(self) -> Any:
        return json.loads(self.body)


async def call(
    guard: Guard,
    *,
    method: str = "GET",
    path: str = "/",
    query: str = "",
    headers: Sequence[tuple[str, str]] = (("host", "127.0.0.1:8000"),),
    chunks: Iterable[bytes] = (),
) -> Answer:
    """One request through `guard`; the body arrives in `chunks` (none: an empty body)."""
    parts = list(chunks) or [b""]
    messages = [
        {"type": "http.request", "body": c, "more_body": i < len(parts) - 1}
        for i, c in enumerate(parts)
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "root_path": "",
        "query_string": query.encode(),
        "headers": [(k.lower().encode(), v.encode("utf-8")) for k, v in headers],
        "server": ("127.0.0.1", 8000),
    }
    await guard(scope, receive, send)
    start = sent[0]
    return Answer(
        start["status"],
        {k.decode(): v.decode() for k, v in start["headers"]},
        b"".join(m.get("body", b"") for m in sent[1:]),
    )


def host(value: str, *more: tuple[str, str]) -> list[tuple[str, str]]:
    return [("host", value), *more]


# -- Host -------------------------------------------------------------------------------------


async def test_ipv6_host_with_and_without_a_port() -> None:
    guard = Guard(Echo(), allowed_hosts=bound_hosts("::1"))
    for ok in ("[::1]:8000", "[::1]", "::1", "127.0.0.1:8000", "localhost:1", "127.9.9.9"):
        assert (await call(guard, headers=host(ok))).status == 200, ok
    for bad in (
        "[::2]:8000",
        "[::1]:80x",
        "[::1",
        "[::1]x",
        "[::1]:99999999",
        "::1:8000",
        "[::1]:*",
    ):
        assert (await call(guard, headers=host(bad))).status == 421, bad
    # an allowed IPv6 name with a port is held to it
    pinned = Guard(Echo(), allowed_hosts=["[fd00::1]:8000"])
    assert (await call(pinned, headers=host("[fd00::1]:8000"))).status == 200
    assert (await call(pinned, headers=host("[fd00::1]:8001"))).status == 421


async def test_names_are_compared_exactly_a_trailing_dot_is_another_name() -> None:
    guard = Guard(Echo())  # LOOPBACK_HOSTS
    for bad in ("localhost.", "localhost.:8000", "127.0.0.1.", "evil.localhost", "127.1", ""):
        refused = await call(guard, headers=host(bad))
        assert refused.status == 421, bad
        assert "Invalid Host header" in refused.json()["error"]
    assert (await call(guard, headers=[])).status == 421  # no Host at all
    assert (await call(guard, headers=host("LOCALHOST:8000"))).status == 200  # case is not


async def test_every_loopback_address_counts_within_an_entrys_port() -> None:
    guard = Guard(Echo(), allowed_hosts=["127.0.0.1:8000"])
    assert (await call(guard, headers=host("127.0.0.2:8000"))).status == 200
    assert (await call(guard, headers=host("[::1]:8000"))).status == 200
    assert (await call(guard, headers=host("127.0.0.2:9000"))).status == 421
    assert (await call(guard, headers=host("localhost:8000"))).status == 421  # not listed


async def test_no_allowed_hosts_serves_any_host_and_wildcards_give_none() -> None:
    assert bound_hosts("0.0.0.0") is None and bound_hosts("::") is None
    assert bound_hosts("0.0.0.0", ["box.lan"]) == ["box.lan"]
    assert bound_hosts("127.0.0.2") == ["127.0.0.2", *LOOPBACK_HOSTS]
    assert bound_hosts("192.0.2.1") == ["192.0.2.1"]
    guard = Guard(Echo(), token=TOKEN, allowed_hosts=None)
    bearer = ("authorization", f"Bearer {TOKEN}")
    assert (await call(guard, headers=host("box.lan", bearer))).status == 200
    for bad in (["bad host"], ["x:y"], ["a/b"], "localhost", [""]):
        with pytest.raises(ConfigError, match="allowed_hosts"):
            bound_hosts("127.0.0.1", bad)  # type: ignore[arg-type]


def test_loopback_names() -> None:
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.3.2.1", "::1", "[::1]", "LocalHost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "10.0.0.1", "localhost.", "x"))


# -- Origin -----------------------------------------------------------------------------------


async def test_origin_null_and_other_origins_are_refused() -> None:
    guard = Guard(Echo(), allowed_origins=["tools.internal:*", "app.example:443"])
    at = "127.0.0.1:8000"
    for bad in (
        "null",
        "",
        "file://",
        "http://127.0.0.1:8001",  # another local port is another site
        "http://localhost:8000",  # another name for the same server is another origin
        "https://127.0.0.1",  # port 443
        "ftp://127.0.0.1:8000",
        "http://127.0.0.1:8000/path",
        "http://[::1",
        "http://evil.example",
        "http://app.example",  # port 80, the entry says 443
    ):
        refused = await call(guard, headers=host(at, ("origin", bad)))
        assert refused.status == 403, bad
        assert "cross-origin" in refused.json()["error"]
    for ok in (
        "http://127.0.0.1:8000",
        "HTTP://127.0.0.1:8000",
        "https://tools.internal",
        "http://tools.internal:3000",
        "https://app.example",
    ):
        assert (await call(guard, headers=host(at, ("origin", ok)))).status == 200, ok
    # the same origin on a default port, and on IPv6
    assert (
        await call(guard, headers=host("localhost", ("origin", "http://localhost")))
    ).status == 200
    v6 = Guard(Echo(), allowed_hosts=bound_hosts("::1"))
    same = await call(v6, headers=host("[::1]:8000", ("origin", "http://[::1]:8000")))
    assert same.status == 200
    other = await call(v6, headers=host("[::1]:8000", ("origin", "http://[::1]:8001")))
    assert other.status == 403


# -- the token --------------------------------------------------------------------------------


async def test_an_empty_token_is_refused_and_an_empty_credential_is_never_the_token() -> None:
    for empty in ("", "   "):
        with pytest.raises(ConfigError, match="token is empty"):
            Guard(Echo(), token=empty)
        with pytest.raises(ConfigError, match="at least 16 characters"):
            check_bearer_token(empty)
    assert check_bearer_token(None) is None and check_bearer_token(TOKEN) == TOKEN
    with pytest.raises(ConfigError, match="at least 16 characters"):
        check_bearer_token("has spaces in it, 0123456789")
    app = Echo()
    guard = Guard(app, token=TOKEN, realm="mcp")
    for given in ("Bearer ", "Bearer", "bearer  ", f"Basic {TOKEN}", f"Bearer {TOKEN}x"):
        refused = await call(guard, headers=host("127.0.0.1", ("authorization", given)))
        assert refused.status == 401, given
        challenge = refused.headers["www-authenticate"]
        assert challenge.startswith('Bearer realm="mcp"') and 'error="invalid_token"' in challenge
    missing = await call(guard)
    assert missing.status == 401 and missing.headers["www-authenticate"] == 'Bearer realm="mcp"'
    assert "(the one sent is wrong)" not in missing.json()["error"]
    assert app.calls == 0
    ok = await call(guard, headers=host("127.0.0.1", ("authorization", f"BEARER  {TOKEN} ")))
    assert ok.status == 200 and app.calls == 1


async def test_a_token_beyond_ascii_is_compared_as_its_bytes() -> None:
    guard = Guard(Echo(), token="ünï cödé")
    ok = await call(guard, headers=host("127.0.0.1", ("authorization", "Bearer ünï cödé")))
    assert ok.status == 200
    wrong = await call(guard, headers=host("127.0.0.1", ("authorization", "Bearer uni code")))
    assert wrong.status == 401


async def test_browser_login_sets_a_cookie_and_stays_on_this_server() -> None:
    guard = Guard(Echo(), token=TOKEN, browser_login=True)
    login = await call(guard, path="//evil.example/x", query=f"token={TOKEN}&a=1")
    assert login.status == 303 and login.headers["location"] == "/evil.example/x?a=1"
    cookie = login.headers["set-cookie"].split(";")[0]
    assert TOKEN not in cookie and cookie.startswith("agentcore_token_8000=")
    assert (await call(guard, headers=host("127.0.0.1", ("cookie", cookie)))).status == 200
    # a proxy's own Authorization scheme in front of the browser does not hide the cookie
    basic = host("127.0.0.1", ("cookie", cookie), ("authorization", "Basic eDp5"))
    assert (await call(guard, headers=basic)).status == 200
    wrong = await call(guard, query="token=nope")
    assert wrong.status == 401 and 'error="invalid_token"' in wrong.headers["www-authenticate"]
    plain = Guard(Echo(), token=TOKEN)  # without browser_login neither works
    assert (await call(plain, query=f"token={TOKEN}")).status == 401
    assert (await call(plain, headers=host("127.0.0.1", ("cookie", cookie)))).status == 401


# -- JSON only and the body cap ---------------------------------------------------------------


async def test_state_changes_must_be_json_and_a_bodiless_request_need_not() -> None:
    guard = Guard(Echo(), json_types=("application/json", "application/a2a+json"))
    form = host("127.0.0.1", ("content-type", "application/x-www-form-urlencoded"))
    assert (await call(guard, method="POST", headers=form, chunks=[b"a=1"])).status == 415
    # a body without a Content-Type is refused; without a body, no type is needed
    sized = host("127.0.0.1", ("content-length", "2"))
    assert (await call(guard, method="POST", headers=sized, chunks=[b"{}"])).status == 415
    chunked = host("127.0.0.1", ("transfer-encoding", "chunked"))
    assert (await call(guard, method="POST", headers=chunked, chunks=[b"{}"])).status == 415
    assert (await call(guard, method="POST")).status == 200  # no body, no Content-Type
    empty = host("127.0.0.1", ("content-length", "0"))
    assert (await call(guard, method="POST", headers=empty)).status == 200
    # an empty form still names a type that is not JSON (what a cross-site form sends)
    empty_form = host(
        "127.0.0.1",
        ("content-type", "application/x-www-form-urlencoded"),
        ("content-length", "0"),
    )
    assert (await call(guard, method="POST", headers=empty_form)).status == 415
    a2a = host("127.0.0.1", ("content-type", "application/a2a+json; charset=utf-8"))
    assert (await call(guard, method="POST", headers=a2a, chunks=[b"{}"])).status == 200
    assert (await call(guard, method="DELETE")).status == 200
    with_body = host("127.0.0.1", ("content-length", "2"))
    assert (await call(guard, method="DELETE", headers=with_body, chunks=[b"{}"])).status == 415
    anything = Guard(Echo(), json_types=None)
    assert (await call(anything, method="PUT", headers=form, chunks=[b"a=1"])).status == 200


async def test_a_chunked_body_past_the_cap_is_refused_before_the_app_sees_it() -> None:
    app = Echo()
    guard = Guard(app, max_body_bytes=1000, errors="json-rpc", name="this A2A server")
    chunked = host(
        "127.0.0.1", ("content-type", "application/json"), ("transfer-encoding", "chunked")
    )
    big = await call(guard, method="POST", headers=chunked, chunks=[b" " * 400] * 3)
    assert big.status == 413 and app.calls == 0
    error = big.json()
    assert error["jsonrpc"] == "2.0" and error["id"] is None
    assert "larger than this A2A server accepts (1000 bytes)" in error["error"]["message"]
    exact = await call(guard, method="POST", headers=chunked, chunks=[b" " * 500] * 2)
    assert exact.status == 200 and exact.json() == {"size": 1000}  # the app gets it whole
    # a GET announcing a body is held to the cap too
    get = await call(guard, headers=chunked, chunks=[b" " * 600] * 2)
    assert get.status == 413
    # with Content-Length: refused before anything is read; not a number: 400
    length = host("127.0.0.1", ("content-type", "application/json"), ("content-length", "1001"))
    assert (await call(guard, method="POST", headers=length)).status == 413
    for bad in ("-1", "1e3", "12 ", "٣", "9" * 21):
        header = host("127.0.0.1", ("content-type", "application/json"), ("content-length", bad))
        assert (await call(guard, method="POST", headers=header)).status == 400, bad
    assert DEFAULT_MAX_BODY_BYTES == 4 * 1024 * 1024
    with pytest.raises(ConfigError, match="max_body_bytes"):
        Guard(app, max_body_bytes=0)


async def test_a_client_gone_while_its_body_is_read_ends_the_request() -> None:
    app = Echo()
    guard = Guard(app)
    sent: list[Any] = []
    messages: list[dict[str, Any]] = [
        {"type": "http.request", "body": b"{", "more_body": True},
        {"type": "http.disconnect"},
    ]

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/",
        "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json")],
    }
    await guard(scope, receive, send)
    assert sent == [] and app.calls == 0


# -- serve ------------------------------------------------------------------------------------


async def test_serve_ends_on_cancellation_with_the_lifespan_shut_down() -> None:
    events: list[str] = []
    app = Echo()

    async def lifespan_and_http(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                kind = message["type"].rsplit(".", 1)[1]  # startup / shutdown
                events.append(kind)
                await send({"type": f"lifespan.{kind}.complete"})
                if kind == "shutdown":
                    return
        await app(scope, receive, send)

    sock = listen("127.0.0.1", 0)
    port = sock.getsockname()[1]
    ready = anyio.Event()
    with anyio.fail_after(20):
        async with anyio.create_task_group() as group:
            group.start_soon(
                functools.partial(
                    serve,
                    Guard(lifespan_and_http),
                    sock=sock,
                    on_ready=lambda h, p: ready.set(),
                    handle_signals=False,
                )
            )
            await ready.wait()
            async with httpx.AsyncClient() as http:
                answer = await http.get(f"http://127.0.0.1:{port}/")
            assert answer.status_code == 200 and events == ["startup"]
            group.cancel_scope.cancel()
    assert events == ["startup", "shutdown"]
    assert sock.fileno() == -1  # closed
    with pytest.raises(ValueError, match="positive header_timeout"):
        await serve(app, port=0, header_timeout=0)


def test_the_guard_needs_no_web_framework() -> None:
    """MCP and A2A import it without the `[web]` extra's packages (Starlette, AG-UI, uvicorn)."""
    code = (
        "import sys, agentcore.netguard\n"
        "print(sorted(m for m in ('starlette', 'ag_ui', 'uvicorn', 'h11') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")},
        timeout=60,
        check=True,
    )
    assert out.stdout.strip() == "[]", out.stderr


def test_the_servers_import_the_guard_from_its_own_module() -> None:
    """MCP and A2A take the guard from `agentcore.netguard` (DESIGN section 1), not from a part
    of the web chat: nothing outside `agentcore.web` imports it."""
    import ast

    src = Path(__file__).parents[1] / "src" / "agentcore"
    found = []
    for file in src.rglob("*.py"):
        rel = file.relative_to(src).parts
        if rel[0] in ("web", "cli"):  # the CLI serves the web chat: it may import it
            continue
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            module = node.module if isinstance(node, ast.ImportFrom) else None
            if module is not None and (module.split(".")[-1] == "web" or ".web." in f".{module}."):
                found.append(f"{'/'.join(rel)}: {node.module}")
    assert found == []
    for server in ("mcp/_server.py", "a2a/_server.py"):
        assert "from ..netguard import" in (src / server).read_text(encoding="utf-8")
