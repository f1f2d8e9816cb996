"""`agentcore serve --store postgresql://...`: two serve processes (as two replicas would be) on one
PostgreSQL database, the server of `scripts/postgres` (marked `external`)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from support.postgres import open_postgres_store, postgres_url, schema_for

pytestmark = pytest.mark.external

HERE = Path(__file__).parent
SRC = HERE.parents[1] / "src"
TOKEN = "replica-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def replica(store: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), *sys.path])}
    env.pop("AGENTCORE_TOKEN", None)
    return subprocess.Popen(
        [sys.executable, str(HERE / "faux_serve.py"), "--port", "0", "--token", TOKEN,
         "--store", store],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )  # fmt: skip


def address(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("agentcore serve: http://"), line + (
        process.stderr.read() if process.stderr else ""
    )
    return line.split(": ", 1)[1].strip().split("/?token=")[0]


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()


def wait_for_messages(client: httpx.Client, session_id: str, count: int) -> dict[str, object]:
    deadline = time.monotonic() + 60
    while True:
        listed = client.get("/api/sessions", headers=AUTH)
        assert listed.status_code == 200, listed.text
        found = [s for s in listed.json() if s["id"] == session_id]
        if found and found[0]["messages"] >= count:
            return dict(found[0])
        assert time.monotonic() < deadline, f"never {count} messages: {found}"
        time.sleep(0.1)


@pytest.mark.timeout(180)
def test_two_serve_processes_share_the_sessions_of_one_database(tmp_path: Path) -> None:
    open_postgres_store(tmp_path).close()  # the schema, dropped when the tests end
    store = f"{postgres_url()}?schema={schema_for(tmp_path)}"
    one, two = replica(store), replica(store)
    try:
        with (
            httpx.Client(base_url=address(one), timeout=30) as a,
            httpx.Client(base_url=address(two), timeout=30) as b,
        ):
            created = a.post("/api/sessions", headers=AUTH, json={})
            assert created.status_code == 201, created.text
            sid = created.json()["id"]
            started = a.post(f"/api/sessions/{sid}/prompt", headers=AUTH, json={"text": "hello"})
            assert started.status_code < 300, started.text
            wait_for_messages(a, sid, 2)
            # the other replica lists it, read from the shared database
            seen = wait_for_messages(b, sid, 2)
            assert seen["title"] == "hello"
            stop(one)  # the first replica goes away: the other one opens and continues it
            shown = b.get(f"/api/sessions/{sid}", headers=AUTH)
            assert shown.status_code == 200, shown.text
            assert "hello" in shown.text
            again = b.post(f"/api/sessions/{sid}/prompt", headers=AUTH, json={"text": "more"})
            assert again.status_code < 300, again.text
            wait_for_messages(b, sid, 4)
    finally:
        stop(one)
        stop(two)
    with open_postgres_store(tmp_path) as direct:
        messages = direct.load(sid).messages
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]


def test_serve_store_errors_are_clear(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), *sys.path])}
    for args, expected in [
        (["--store", "mysql://x/y"], "--store expects a PostgreSQL URL"),
        (["--store", "postgresql://x@127.0.0.1:1/x?schema=Bad"], "schema must be a PostgreSQL"),
        (["--store", "postgresql://x@127.0.0.1:1/x", "--sessions-dir", str(tmp_path)], "not both"),
    ]:
        run = subprocess.run(
            [sys.executable, str(HERE / "faux_serve.py"), "--port", "0", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )
        assert run.returncode != 0 and expected in run.stderr, (args, run.stderr)
