"""The web server under attack (issue 21), all over HTTP on 127.0.0.1: the token on loopback
(`agentcore serve` as a subprocess), the cookie and redirect, decisions for tools the server does
not hold, an atomic AG-UI resume, body limits, hostile `Last-Event-ID`s, lone surrogates in a
stored session, the write lock given back, and clients that never finish their headers."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from agentcore import tool
from agentcore.messages import ToolCall, UserMessage
from agentcore.sessions import JsonlSessionStore, SessionLockedError
from agentcore.testing import faux_message, faux_text, faux_tool_call
from agentcore.web import create_app
from support.slow_clients import FD_LIMIT, all_closed_within, low_fd_limit, open_slow_connections

from .test_web_guard import _address, _command, _env, _serve, _stop
from .web_support import Served, SseReader, open_events, start_server, stop_server

# -- the token -------------------------------------------------------------------------------


def test_an_empty_token_is_refused_not_an_open_door(tmp_path: Path) -> None:
    store = JsonlSessionStore(tmp_path / "s")
    try:
        for empty in ("", "   "):
            with pytest.raises(ValueError, match="token is empty"):
                create_app(store, model=_model(), token=empty)
    finally:
        store.close()


def test_an_empty_cookie_is_not_the_token(tmp_path: Path) -> None:
    served = start_server(tmp_path, token="t0ken")
    try:
        port = served.base_url.rsplit(":", 1)[1]
        with served.client() as client:
            empty = client.get("/api/sessions", headers={"Cookie": f"agentcore_token_{port}="})
            assert empty.status_code == 401
            token_itself = client.get(
                "/api/sessions", headers={"Cookie": f"agentcore_token_{port}=t0ken"}
            )
            assert token_itself.status_code == 401  # the cookie holds a digest, not the token
    finally:
        stop_server(served)


def test_the_token_redirect_never_leaves_the_server(tmp_path: Path) -> None:
    served = start_server(tmp_path, token="T")
    try:
        with served.client() as client:
            for path in ("//evil.example/", "///evil.example/x", "/\\evil.example/"):
                response = client.get(httpx.URL(served.base_url + path + "?token=T"))
                assert response.status_code == 303, path
                location = response.headers["location"]
                assert location.startswith("/") and not location.startswith(("//", "/\\")), (
                    path,
                    location,
                )
    finally:
        stop_server(served)


@pytest.mark.parametrize("token", ["a b;c=d", 'x"y,z\\', "ünï cödé"])
def test_any_token_logs_the_browser_in(tmp_path: Path, token: str) -> None:
    served = start_server(tmp_path, token=token)
    try:
        with served.client() as client:
            opened = client.get(f"/?token={quote(token, safe='')}", follow_redirects=True)
            assert opened.status_code == 200 and "<title>agentcore chat</title>" in opened.text
            assert client.get("/api/sessions").status_code == 200  # the cookie works
    finally:
        stop_server(served)


def test_serve_no_token_warns_and_serves_any_loopback_address(tmp_path: Path) -> None:
    process = _serve(tmp_path, "--host", "127.0.0.2", "--no-token")
    try:
        address = _address(process)
        assert address.startswith("http://127.0.0.2:") and "token" not in address
        with httpx.Client(base_url=address, timeout=30) as client:
            assert client.get("/api/info").status_code == 200  # Host 127.0.0.2 is loopback
            rebound = client.get("/api/info", headers={"Host": "evil.example"})
            assert rebound.status_code == 403
    finally:
        err = _stop(process)
    assert "WARNING" in err and "--no-token" in err


def test_serve_with_a_token_on_127_0_0_2(tmp_path: Path) -> None:
    process = _serve(tmp_path, "--host", "127.0.0.2")
    try:
        address = _address(process)
        base, token = address.split("/?token=")
        with httpx.Client(base_url=base, timeout=30) as client:
            assert client.get("/api/info").status_code == 401
            ok = client.get("/api/info", headers={"Authorization": f"Bearer {token}"})
            assert ok.status_code == 200
    finally:
        _stop(process)


def test_serve_no_token_off_loopback_is_refused(tmp_path: Path) -> None:
    done = subprocess.run(
        _command(tmp_path, "--host", "0.0.0.0", "--no-token"),
        capture_output=True,
        text=True,
        env=_env(),
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and "--no-token serves only a loopback address" in done.stderr


# -- decisions -------------------------------------------------------------------------------


def _model() -> Any:
    from agentcore.testing import FauxProvider

    return FauxProvider([faux_text("x")]).model


@tool(requires_approval=True)
def remove(path: str) -> str:
    """Remove a file."""
    return f"removed {path}"


@tool(requires_approval=True)
def shell(command: str) -> str:
    """Run a command (a stand-in for `chat --shell`'s tool)."""
    return f"ran {command}"


def _interrupted(client: httpx.Client, sid: str) -> list[str]:
    with open_events(client, sid) as reader:
        reader.until("STATE_SNAPSHOT")
        assert client.post(f"/api/sessions/{sid}/prompt", json={"text": "go"}).status_code == 202
        reader.until("RUN_FINISHED", "RUN_ERROR")
        state = reader.until("STATE_SNAPSHOT")[-1].data["snapshot"]
    return [p["toolCallId"] for p in state["pendingApprovals"]]


def test_the_web_never_decides_for_a_tool_it_does_not_hold(tmp_path: Path) -> None:
    # A "terminal" with the shell tool leaves a call waiting in the shared store...
    terminal = start_server(tmp_path, tools=[remove, shell])
    terminal.faux.set_responses([faux_tool_call("shell", {"command": "ls"}, id="call_sh")])
    try:
        with terminal.client() as client:
            sid = client.post("/api/sessions", json={}).json()["id"]
            assert _interrupted(client, sid) == ["call_sh"]
    finally:
        stop_server(terminal)
    # ... and a server without it is asked to approve it, with edited arguments.
    web = start_server(tmp_path, tools=[remove])
    try:
        with web.client() as client:
            edited = {"approved": True, "arguments": {"command": "touch /tmp/pwned"}}
            refused = client.post(f"/api/sessions/{sid}/approvals/call_sh", json=edited)
            assert refused.status_code == 403, refused.text
            assert "'shell'" in refused.json()["error"]
            plain = client.post(f"/api/sessions/{sid}/approvals/call_sh", json={"approved": True})
            assert plain.status_code == 403
            resume = {
                "threadId": sid,
                "runId": "r2",
                "messages": [],
                "resume": [{"interruptId": "call_sh", "status": "resolved", "payload": edited}],
            }
            agui = client.post("/api/ag-ui", json=resume)
            assert agui.status_code == 403 and "'shell'" in agui.json()["error"]
            state = client.get(f"/api/sessions/{sid}").json()["events"][-1]["snapshot"]
            assert [p["toolCallId"] for p in state["pendingApprovals"]] == ["call_sh"]
    finally:
        stop_server(web)
    with JsonlSessionStore(tmp_path / "sessions") as store:
        kinds = [m.role for m in store.load(sid).messages]
    assert "approval_decision" not in json.dumps(kinds)


def test_an_ag_ui_resume_is_all_or_nothing(tmp_path: Path) -> None:
    served = start_server(tmp_path, tools=[remove])
    two = faux_message(
        ToolCall(id="c1", name="remove", arguments={"path": "a"}),
        ToolCall(id="c2", name="remove", arguments={"path": "b"}),
    )
    served.faux.set_responses([two, faux_text("Done.")])
    try:
        with served.client() as client:
            sid = client.post("/api/sessions", json={}).json()["id"]
            assert _interrupted(client, sid) == ["c1", "c2"]
            ok = {"status": "resolved", "payload": {"approved": True}}
            bad_cases = [
                [{"interruptId": "c1", **ok}, {"interruptId": "nope", **ok}],
                [
                    {"interruptId": "c1", **ok},
                    {
                        "interruptId": "c2",
                        "status": "resolved",
                        "payload": {"approved": True, "arguments": {"path": 5}},
                    },
                ],
                [{"interruptId": "c1", **ok}, {"interruptId": "c1", **ok}],
                [{"interruptId": "c1", **ok}],  # c2 left undecided
            ]
            for i, entries in enumerate(bad_cases):
                body = {"threadId": sid, "runId": f"r{i}", "messages": [], "resume": entries}
                answer = client.post("/api/ag-ui", json=body)
                assert answer.status_code == 400, (i, answer.text)
                assert "resume" in answer.json()["error"] or "await" in answer.json()["error"]
                state = client.get(f"/api/sessions/{sid}").json()["events"][-1]["snapshot"]
                assert [p["toolCallId"] for p in state["pendingApprovals"]] == ["c1", "c2"], i
            good = {
                "threadId": sid,
                "runId": "rg",
                "messages": [],
                "resume": [{"interruptId": "c1", **ok}, {"interruptId": "c2", **ok}],
            }
            with client.stream("POST", "/api/ag-ui", json=good) as response:
                assert response.status_code == 200
                text = "".join(response.iter_text())
            assert "removed a" in text and "removed b" in text
    finally:
        stop_server(served)


# -- bodies, event ids, stored text ----------------------------------------------------------


def test_large_and_deeply_nested_bodies_are_refused_clearly(served: Served) -> None:
    with served.client() as client:
        sid = client.post("/api/sessions", json={}).json()["id"]
        big = json.dumps({"text": "x" * (30 * 1024 * 1024)}).encode()
        headers = {"Content-Type": "application/json"}
        too_big = client.post(f"/api/sessions/{sid}/prompt", content=big, headers=headers)
        assert too_big.status_code == 413 and "larger" in too_big.json()["error"]

        def chunks() -> Any:  # no Content-Length: the cap applies while reading
            for _ in range(40):
                yield b"x" * (1024 * 1024)

        streamed = client.post(f"/api/sessions/{sid}/prompt", content=chunks(), headers=headers)
        assert streamed.status_code == 413
        deep = b'{"text": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
        nested = client.post(f"/api/sessions/{sid}/prompt", content=deep, headers=headers)
        assert nested.status_code == 400 and "nested" in nested.json()["error"]
        deep_agui = b'{"threadId": "t", "runId": "r", "state": ' + b"[" * 100_000
        deep_agui += b"]" * 100_000 + b"}"
        agui = client.post("/api/ag-ui", content=deep_agui, headers=headers)
        assert agui.status_code == 400
        assert client.get("/api/info").status_code == 200


def test_hostile_last_event_ids_give_a_fresh_stream(served: Served) -> None:
    with served.client() as client:
        sid = client.post("/api/sessions", json={}).json()["id"]
        with open_events(client, sid) as reader:
            first = reader.next()
        assert first.id is not None
        epoch = first.id.split(".")[0]
        for last in (f"{epoch}.\u00b2", f"{epoch}." + "9" * 5000, f"{epoch}.-1", "x" * 3000):
            headers = {"Last-Event-ID": last.encode("utf-8")}
            path = f"/api/sessions/{sid}/events"
            with client.stream("GET", path, headers=headers) as response:
                assert response.status_code == 200, last[:30]
                reader = SseReader(response, response.iter_lines())
                assert reader.next().type == "MESSAGES_SNAPSHOT", last[:30]


def test_a_lone_surrogate_in_a_session_does_not_break_the_list_or_the_view(
    served: Served,
) -> None:
    with served.client() as client:
        sid = client.post("/api/sessions", json={}).json()["id"]
        raw = b'{"text": "half \\ud83d of an emoji, and \\udc00 alone"}'
        sent = client.post(
            f"/api/sessions/{sid}/prompt",
            content=raw,
            headers={"Content-Type": "application/json"},
        )
        assert sent.status_code == 202
        for _ in range(200):
            listed = client.get("/api/sessions")
            assert listed.status_code == 200, listed.text
            if listed.json()[0]["messages"] >= 2:
                break
            time.sleep(0.05)
        assert "\ufffd" in listed.json()[0]["title"]
        view = client.get(f"/api/sessions/{sid}")
        assert view.status_code == 200 and "\ufffd" in view.text
        with open_events(client, sid) as reader:
            snapshot = reader.next()
        assert snapshot.type == "MESSAGES_SNAPSHOT"
        assert "\ufffd" in json.dumps(snapshot.data, ensure_ascii=False)


def test_the_session_list_pages(served: Served) -> None:
    with served.client() as client:
        ids = [client.post("/api/sessions", json={}).json()["id"] for _ in range(3)]
        assert [s["id"] for s in client.get("/api/sessions?limit=2").json()] == ids[::-1][:2]
        rest = client.get("/api/sessions?limit=2&offset=2").json()
        assert [s["id"] for s in rest] == ids[:1]
        assert client.get("/api/sessions?limit=x").status_code == 400


# -- the write lock --------------------------------------------------------------------------


def _running(client: httpx.Client, sid: str) -> bool:
    events = client.get(f"/api/sessions/{sid}").json()["events"]
    return bool(events[-1]["snapshot"]["running"])


def test_the_server_holds_a_session_lock_only_while_a_run_writes(tmp_path: Path) -> None:
    """The write lock is the run's, not the page's: while a run goes, another writer (the
    terminal, another replica) cannot open the session; once it has ended, the terminal can
    continue the session though a page follows it, the server's next prompt is 409 while the
    terminal holds it, and then goes on from what the terminal stored."""
    served = start_server(tmp_path, tokens_per_second=400)
    try:
        with served.client() as client:
            sid = client.post("/api/sessions", json={}).json()["id"]
            with JsonlSessionStore(tmp_path / "sessions") as other:
                other.open(sid).close()  # a new, idle session: not held
                started = client.post(f"/api/sessions/{sid}/prompt", json={"text": "long"})
                assert started.status_code == 202
                assert _running(client, sid)
                with pytest.raises(SessionLockedError):
                    other.open(sid)
                assert client.post(f"/api/sessions/{sid}/abort", json={}).status_code == 200
            with open_events(client, sid) as reader:  # a page follows it: it stays unlocked
                reader.next()
                deadline = time.monotonic() + 10
                with JsonlSessionStore(tmp_path / "sessions") as other:  # "the terminal"
                    while True:
                        try:
                            terminal = other.open(sid)
                            break
                        except SessionLockedError:
                            assert time.monotonic() < deadline, "the server kept the lock"
                            time.sleep(0.05)
                    terminal.append(UserMessage(content="from the terminal"))
                    refused = client.post(f"/api/sessions/{sid}/prompt", json={"text": "hi"})
                    assert refused.status_code == 409, refused.text
                    assert "running on another replica or process" in refused.json()["error"]
                    terminal.close()
            # the server opens it again on its next use, reloaded with the terminal's message
            assert client.post(f"/api/sessions/{sid}/prompt", json={"text": "again"}).status_code
            deadline = time.monotonic() + 20
            while _running(client, sid):
                assert time.monotonic() < deadline
                time.sleep(0.05)
        with JsonlSessionStore(tmp_path / "sessions") as other:
            roles = [(m.role, getattr(m, "stop_reason", None)) for m in other.load(sid).messages]
        assert roles == [
            ("user", None),
            ("assistant", "aborted"),
            ("user", None),  # the terminal's
            ("user", None),
            ("assistant", "stop"),
        ]
    finally:
        stop_server(served)


# -- connections that never finish their headers ---------------------------------------------


def test_slow_clients_cannot_starve_the_server(tmp_path: Path) -> None:
    process = subprocess.Popen(
        _command(tmp_path, "--token", "tok", "--header-timeout", "2", "--max-connections", "30"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        preexec_fn=low_fd_limit,
    )
    slow: list[socket.socket] = []
    try:
        base = _address(process).split("/?token=")[0]
        slow = open_slow_connections(int(base.rsplit(":", 1)[1]))
        assert len(slow) > FD_LIMIT  # more than the server has file descriptors
        started = time.monotonic()
        with httpx.Client(base_url=base, timeout=15) as client:
            answer = client.get("/api/info", headers={"Authorization": "Bearer tok"})
        assert answer.status_code == 200
        assert time.monotonic() - started < 10
        # the slow ones are closed by the header timeout
        assert all_closed_within(slow, 2.5) == len(slow)
    finally:
        for s in slow:
            s.close()
        _stop(process)


@pytest.mark.skipif(sys.platform != "linux", reason="file descriptor limits as on Linux")
def test_header_timeout_is_an_option(tmp_path: Path) -> None:
    bad = subprocess.run(
        _command(tmp_path, "--header-timeout", "0"),
        capture_output=True,
        text=True,
        env={**_env(), "PATH": os.environ.get("PATH", "")},
        timeout=60,
        check=False,
    )
    assert bad.returncode == 2 and "positive number of seconds" in bad.stderr


def test_a_lone_surrogate_from_the_model_reaches_readers_as_valid_text(served: Served) -> None:
    served.faux.set_responses([faux_text("half \ud83d of an emoji")])
    with served.client() as client:
        sid = client.post("/api/sessions", json={}).json()["id"]
        with open_events(client, sid) as reader:
            reader.until("STATE_SNAPSHOT")
            client.post(f"/api/sessions/{sid}/prompt", json={"text": "hi"})
            events = reader.until("RUN_FINISHED", "RUN_ERROR")
        assert events[-1].type == "RUN_FINISHED"
        deltas = "".join(e.data.get("delta", "") for e in events if e.type.startswith("TEXT"))
        assert deltas.endswith("half \ufffd of an emoji")
        assert client.get("/api/sessions").status_code == 200
        assert client.get(f"/api/sessions/{sid}").status_code == 200


def test_event_streams_are_bounded(tmp_path: Path) -> None:
    served = start_server(tmp_path, max_readers=2)
    try:
        with served.client() as client:
            sid = client.post("/api/sessions", json={}).json()["id"]
            with open_events(client, sid) as one, open_events(client, sid) as two:
                one.next()
                two.next()
                third = client.get(f"/api/sessions/{sid}/events")
                assert third.status_code == 503 and "at most 2" in third.json()["error"]
            for _ in range(100):  # the server notices the readers left
                with client.stream("GET", f"/api/sessions/{sid}/events") as again:
                    if again.status_code == 200:
                        break
                time.sleep(0.05)
            assert again.status_code == 200
    finally:
        stop_server(served)


def test_a_bodiless_abort_is_accepted_and_a_body_must_still_be_json(tmp_path: Path) -> None:
    """`POST /abort` takes no body (the API table lists none): sent without one and without a
    Content-Type (curl -X POST) it stops the run; a body that is not JSON, or an empty form, is
    still 415 (issue 30)."""
    served = start_server(tmp_path, tokens_per_second=400)
    try:
        with served.client() as client:
            sid = client.post("/api/sessions", json={}).json()["id"]
            started = client.post(f"/api/sessions/{sid}/prompt", json={"text": "long"})
            assert started.status_code == 202 and _running(client, sid)
            form = {"Content-Type": "application/x-www-form-urlencoded"}
            assert client.post(f"/api/sessions/{sid}/abort", headers=form).status_code == 415
            untyped = client.post(f"/api/sessions/{sid}/abort", content=b"{}")
            assert untyped.status_code == 415
            assert _running(client, sid)  # none of the refused ones stopped it
            bare = client.post(f"/api/sessions/{sid}/abort")
            assert bare.status_code == 200, bare.text
            assert "content-type" not in bare.request.headers
            deadline = time.monotonic() + 10
            while _running(client, sid) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not _running(client, sid)
    finally:
        stop_server(served)
