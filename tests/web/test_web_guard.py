"""Who may talk to the server: the token (required off loopback by `agentcore serve`), the Host
check that defeats DNS rebinding, cross-origin refusal, JSON-only state changes; and
`agentcore serve` itself as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agentcore.cli._serve import is_loopback

from .web_support import Served, start_server, stop_server

HERE = Path(__file__).parent
SRC = HERE.parents[1] / "src"


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[Served]:
    s = start_server(tmp_path, token="s3cret-token")
    yield s
    stop_server(s)


def test_with_a_token_every_request_must_carry_it(guarded: Served) -> None:
    with guarded.client() as client:
        for path in ("/", "/api/sessions", "/static/app.js", "/api/sessions/x/events"):
            refused = client.get(path)
            assert refused.status_code == 401, path
            assert "token" in refused.json()["error"]
        assert client.post("/api/sessions", json={}).status_code == 401
        wrong = client.get("/api/sessions", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        ok = client.get("/api/sessions", headers={"Authorization": "Bearer s3cret-token"})
        assert ok.status_code == 200 and ok.json() == []
        assert client.get("/?token=nope").status_code == 401


def test_the_token_in_the_address_becomes_a_cookie(guarded: Served) -> None:
    with guarded.client() as client:
        response = client.get("/?token=s3cret-token&x=1")
        assert response.status_code == 303
        assert response.headers["location"] == "/?x=1"  # the token leaves the address bar
        cookie = response.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        # the client now sends the cookie: the page, the API and the event stream work
        page = client.get("/")
        assert page.status_code == 200 and "<title>agentcore chat</title>" in page.text
        sid = client.post("/api/sessions", json={}).json()["id"]
        with client.stream("GET", f"/api/sessions/{sid}/events") as events:
            assert events.status_code == 200


def test_without_a_token_only_loopback_host_names_are_served(served: Served) -> None:
    with served.client() as client:
        assert client.get("/").status_code == 200
        for host in ("localhost:1234", "127.0.0.1", "[::1]:80"):
            assert client.get("/api/info", headers={"Host": host}).status_code == 200, host
        rebound = client.get("/api/info", headers={"Host": "attacker.example:8765"})
        assert rebound.status_code == 403
        assert "attacker.example" in rebound.json()["error"]


def test_cross_origin_requests_and_non_json_posts_are_refused(served: Served) -> None:
    with served.client() as client:
        port = served.base_url.rsplit(":", 1)[1]
        same = client.post("/api/sessions", json={}, headers={"Origin": f"http://127.0.0.1:{port}"})
        assert same.status_code == 201
        other = client.post("/api/sessions", json={}, headers={"Origin": "http://evil.example"})
        assert other.status_code == 403 and "cross-origin" in other.json()["error"]
        form = client.post(
            "/api/sessions",
            content=b"model=x",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        assert form.status_code == 415 and "application/json" in form.json()["error"]


def test_the_page_forbids_inline_script_and_framing(served: Served) -> None:
    with served.client() as client:
        page = client.get("/")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy
    assert page.headers["x-content-type-options"] == "nosniff"


def test_loopback_names() -> None:
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "192.168.1.2", "example.com", "::"))


def _command(tmp_path: Path, *args: str) -> list[str]:
    script = str(HERE / "faux_serve.py")
    return [sys.executable, script, "--port", "0", "--sessions-dir", str(tmp_path / "s"), *args]


def _env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    env.pop("AGENTCORE_TOKEN", None)
    return env


def _serve(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        _command(tmp_path, *args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )


def _address(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("agentcore serve: http://"), line + (
        process.stderr.read() if process.stderr else ""
    )
    return line.split(": ", 1)[1].strip()


def _stop(process: subprocess.Popen[str]) -> str:
    """Stop the server; its stderr."""
    process.terminate()
    try:
        _out, err = process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise
    return err


def test_serve_off_loopback_generates_a_token_and_requires_it(tmp_path: Path) -> None:
    process = _serve(tmp_path, "--host", "0.0.0.0")
    try:
        address = _address(process)
        assert "?token=" in address
        base, token = address.split("/?token=")
        local = base.replace("0.0.0.0", "127.0.0.1")
        assert len(token) >= 24
        with httpx.Client(base_url=local, timeout=30) as client:
            assert client.get("/api/info").status_code == 401
            info = client.get("/api/info", headers={"Authorization": f"Bearer {token}"})
            assert info.status_code == 200 and info.json()["defaultModel"] == "faux/scripted"
            # with a token, any Host name is served (the token is the protection)
            named = client.get(
                "/api/info", headers={"Authorization": f"Bearer {token}", "Host": "box.lan"}
            )
            assert named.status_code == 200
    finally:
        _stop(process)


def test_serve_on_loopback_requires_a_token_too_and_a_given_token_is_used(
    tmp_path: Path,
) -> None:
    process = _serve(tmp_path)
    try:
        address = _address(process)
        assert address.startswith("http://127.0.0.1:") and "/?token=" in address
        base, token = address.split("/?token=")
        assert len(token) >= 24
        with httpx.Client(base_url=base, timeout=30) as client:
            assert client.get("/api/info").status_code == 401
            assert client.get("/api/sessions").status_code == 401
            bearer = {"Authorization": f"Bearer {token}"}
            assert client.get("/api/info", headers=bearer).status_code == 200
        with httpx.Client(timeout=30) as browser:  # the printed address logs the browser in
            assert browser.get(address, follow_redirects=True).status_code == 200
            assert browser.get(base + "/api/sessions").status_code == 200
    finally:
        _stop(process)
    process = _serve(tmp_path, "--token", "mine")
    try:
        address = _address(process)
        assert address.endswith("/?token=mine")
    finally:
        _stop(process)


def test_serve_reports_a_bad_model_or_port_clearly(tmp_path: Path) -> None:

    bad = subprocess.run(
        [sys.executable, "-m", "agentcore.cli", "serve", "--model", "nope/none", "--port", "0"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        timeout=60,
        check=False,
    )
    assert bad.returncode == 2 and "unknown provider 'nope'" in bad.stderr
    busy = _serve(tmp_path)
    try:
        port = _address(busy).split("/?token=")[0].rsplit(":", 1)[1].strip("/")
        again = subprocess.run(
            _command(tmp_path, "--port", port),
            capture_output=True,
            text=True,
            env=_env(),
            timeout=60,
            check=False,
        )
        assert again.returncode == 2
        assert f"cannot listen on 127.0.0.1:{port}" in again.stderr
    finally:
        _stop(busy)
