"""`GET /api/sessions` lists titles and sizes from the store's listing: no session is loaded
(SQLite, PostgreSQL); a JSONL store, which cannot count messages without reading, loads only for
the count."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from agentcore.messages import AssistantMessage, TextContent, UserMessage
from agentcore.sessions import JsonlSessionStore, SessionStore, SqliteSessionStore
from agentcore.testing import FauxProvider
from agentcore.web import create_app
from support.postgres import STORE_KINDS, open_postgres_store


def open_store(kind: str, where: Path) -> SessionStore:
    if kind == "jsonl":
        return JsonlSessionStore(where / "sessions")
    if kind == "postgres":
        return open_postgres_store(where)
    return SqliteSessionStore(where / "sessions.db")


@pytest.fixture(params=STORE_KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SessionStore]:
    with open_store(str(request.param), tmp_path) as s:
        yield s


@pytest.fixture
def base(store: SessionStore) -> Iterator[str]:
    app = create_app(store, model=FauxProvider([]).model)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(500):
        if server.started:
            break
        threading.Event().wait(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)


def test_the_session_list_loads_no_session(
    store: SessionStore, base: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = []
    for n in range(12):
        answer = AssistantMessage(content=[TextContent(text="ok")], stop_reason="stop")
        session = store.create(messages=[UserMessage(content=f"prompt\nnumber {n}"), answer])
        session.close()
        ids.append(session.id)
    loaded: list[str] = []
    read = store._read

    def counted(session_id: str) -> Any:
        loaded.append(session_id)
        return read(session_id)

    monkeypatch.setattr(store, "_read", counted)
    listed = httpx.get(base + "/api/sessions", params={"limit": 10}, timeout=30)
    assert listed.status_code == 200, listed.text
    page = listed.json()
    assert [s["id"] for s in page] == ids[::-1][:10]  # newest first
    assert [s["title"] for s in page] == [f"prompt number {n}" for n in range(11, 1, -1)]
    assert [s["messages"] for s in page] == [2] * 10
    if isinstance(store, JsonlSessionStore):  # read for the count only, once per change
        assert sorted(loaded) == sorted(ids[2:])
        loaded.clear()
        httpx.get(base + "/api/sessions", params={"limit": 10}, timeout=30).raise_for_status()
    assert loaded == []
