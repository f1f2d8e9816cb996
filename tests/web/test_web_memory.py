"""The page's memory (`GET /api/memory`, `DELETE /api/memory/{id}`) over real HTTP (uvicorn on
127.0.0.1), against the real SQLite memory store: the agents' `remember` writes show in the list,
a delete removes one, and only the scope of the app's `memory` option is ever listed or deleted."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest

from agentcore.memory import Memory, MemoryScope, SqliteMemoryStore

from .web_support import Served, open_events, start_server, stop_server

HERE = Path(__file__).parent
SRC = HERE.parents[1] / "src"
ALICE, BOB = MemoryScope(user="alice"), MemoryScope(user="bob")


@pytest.fixture
def memory_store(tmp_path: Path) -> Iterator[SqliteMemoryStore]:
    with SqliteMemoryStore(tmp_path / "memory.db") as store:
        yield store


@pytest.fixture
def alices(tmp_path: Path, memory_store: SqliteMemoryStore) -> Iterator[Served]:
    """A server whose agents remember for alice."""
    served = start_server(tmp_path, agent_options={"memory": Memory(memory_store, ALICE)})
    yield served
    stop_server(served)


def add(store: SqliteMemoryStore, text: str, scope: MemoryScope) -> str:
    async def go() -> str:
        return (await store.add(text, scope=scope)).id

    return anyio.run(go)


def ids(store: SqliteMemoryStore, scope: MemoryScope) -> list[str]:
    async def go() -> list[str]:
        return [r.id for r in await store.list(scope=scope)]

    return anyio.run(go)


def test_what_the_agent_remembers_is_listed_and_deleted(
    alices: Served, memory_store: SqliteMemoryStore
) -> None:
    with alices.client() as client:
        assert client.get("/api/info").json()["memory"] is True
        assert client.get("/api/memory").json() == {"user": "alice", "memories": []}
        sid = client.post("/api/sessions", json={}).json()["id"]
        with open_events(client, sid) as reader:
            reader.until("STATE_SNAPSHOT")
            started = client.post(
                f"/api/sessions/{sid}/prompt", json={"text": "remember: Likes tea"}
            )
            assert started.status_code == 202
            reader.until("RUN_FINISHED")
        listed = client.get("/api/memory").json()
        assert listed["user"] == "alice"
        [memory] = listed["memories"]
        assert memory["text"] == "Likes tea" and memory["kind"] == "fact"
        assert memory["session_id"] == sid and memory["origin"] == "remember"
        gone = client.delete(f"/api/memory/{memory['id']}")
        assert gone.status_code == 200 and gone.json() == {"deleted": memory["id"]}
        assert client.get("/api/memory").json()["memories"] == []
        again = client.delete(f"/api/memory/{memory['id']}")
        assert again.status_code == 404 and "no memory" in again.json()["error"]
    assert ids(memory_store, ALICE) == []


def test_another_users_memories_are_never_listed_or_deleted(
    alices: Served, memory_store: SqliteMemoryStore
) -> None:
    mine = add(memory_store, "Alice likes tea", ALICE)
    theirs = add(memory_store, "Bob's door code is 1234", BOB)
    wider = add(memory_store, "Alice, for the support agent", MemoryScope(user="alice", agent="x"))
    with alices.client() as client:
        for query in ("", "?user=bob", "?scope=bob&limit=1000"):
            listed = client.get("/api/memory" + query).json()["memories"]
            assert [m["id"] for m in listed] == [mine]
        for other in (theirs, wider, "mem_nope"):
            refused = client.delete(f"/api/memory/{other}")
            assert refused.status_code == 404, refused.text
        assert client.delete(f"/api/memory/{theirs}?user=bob").status_code == 404
        cross_site = client.delete(f"/api/memory/{mine}", headers={"Origin": "http://evil.test"})
        assert cross_site.status_code == 403
    assert ids(memory_store, BOB) == [theirs]
    assert ids(memory_store, MemoryScope(user="alice", agent="x")) == [wider]
    assert ids(memory_store, ALICE) == [mine]


def test_a_server_without_memory_says_so(served: Served) -> None:
    with served.client() as client:
        assert client.get("/api/info").json()["memory"] is False
        for response in (client.get("/api/memory"), client.delete("/api/memory/mem_x")):
            assert response.status_code == 404
            assert "keeps no memories" in response.json()["error"]


def test_the_memory_api_needs_the_token(tmp_path: Path, memory_store: SqliteMemoryStore) -> None:
    add(memory_store, "Alice likes tea", ALICE)
    served = start_server(
        tmp_path, token="s3cret", agent_options={"memory": Memory(memory_store, ALICE)}
    )
    try:
        with served.client() as client:
            assert client.get("/api/memory").status_code == 401
            listed = client.get("/api/memory", headers={"Authorization": "Bearer s3cret"})
            assert listed.status_code == 200 and len(listed.json()["memories"]) == 1
            record = listed.json()["memories"][0]["id"]
            assert client.delete(f"/api/memory/{record}").status_code == 401
        assert ids(memory_store, ALICE) == [record]
    finally:
        stop_server(served)


def test_a_bad_limit_is_a_400(alices: Served) -> None:
    with alices.client() as client:
        response = client.get("/api/memory?limit=0")
        assert response.status_code == 400 and "'limit'" in response.json()["error"]


def test_agentcore_serve_memory_serves_the_users_memories(tmp_path: Path) -> None:
    """`agentcore serve --memory --memory-user ann` (a subprocess, the faux model): the agents
    remember in `memory.db` beside the sessions, and the page's API lists ann's memories only."""
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    with SqliteMemoryStore(sessions / "memory.db") as store:
        add(store, "Ann likes tea", MemoryScope(user="ann"))
        add(store, "Bob likes coffee", MemoryScope(user="bob"))
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    env.pop("AGENTCORE_TOKEN", None)
    argv = ["--port", "0", "--no-token", "--sessions-dir", str(sessions), "--memory"]
    process = subprocess.Popen(
        [sys.executable, str(HERE / "faux_serve.py"), *argv, "--memory-user", "ann"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    try:
        line = process.stdout.readline()
        assert line.startswith("agentcore serve: http://"), line + process.stderr.read()
        with httpx.Client(base_url=line.split(": ", 1)[1].strip(), timeout=30) as client:
            sid = client.post("/api/sessions", json={}).json()["id"]
            with open_events(client, sid) as reader:
                reader.until("STATE_SNAPSHOT")
                prompt = {"text": "remember: Ann lives in Lyon"}
                assert client.post(f"/api/sessions/{sid}/prompt", json=prompt).status_code == 202
                reader.until("RUN_FINISHED")
            listed = client.get("/api/memory").json()
        assert listed["user"] == "ann"
        assert [m["text"] for m in listed["memories"]] == ["Ann lives in Lyon", "Ann likes tea"]
        assert listed["memories"][0]["session_id"] == sid
    finally:
        process.terminate()
        try:
            process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
