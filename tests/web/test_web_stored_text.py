"""Text the web API acknowledges is stored as it was sent, on every store: a prompt and a steer
holding NUL characters (which PostgreSQL's `text` refuses) read back the same from JSONL, SQLite
and PostgreSQL, over the API and from the store itself."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentcore.messages import AssistantMessage, UserMessage
from agentcore.sessions import JsonlSessionStore, SessionStore, SqliteSessionStore
from agentcore.testing import FauxCall
from support.postgres import STORE_KINDS, open_postgres_store

from .faux_script import answer
from .web_support import Served, start_server, stop_server

PROMPT = "first\x00prompt \x00"
STEER = "steer \x00\x00 here"


def _open(kind: str, where: Path) -> SessionStore:
    if kind == "postgres":
        return open_postgres_store(where)
    if kind == "sqlite":
        return SqliteSessionStore(where / "s.db")
    return JsonlSessionStore(where / "sessions")


@pytest.fixture(params=STORE_KINDS)
def on_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Served, str]]:
    kind = request.param
    served = start_server(tmp_path, store=_open(kind, tmp_path))
    yield served, kind
    stop_server(served)


def _user_texts(messages: list[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in messages if m["role"] == "user"]


def _wait_idle(client: Any, sid: str) -> list[dict[str, Any]]:
    for _ in range(1000):
        events = client.get(f"/api/sessions/{sid}").json()["events"]
        if not events[1]["snapshot"]["running"]:
            return list(events[0]["messages"])
        time.sleep(0.02)
    raise AssertionError("the session did not go idle")


def test_a_prompt_and_a_steer_with_nul_are_stored_as_sent_on_every_store(
    on_store: tuple[Served, str], tmp_path: Path
) -> None:
    served, kind = on_store
    reached, release = threading.Event(), threading.Event()

    async def held(call: FauxCall) -> Any:  # the run waits, so the steer is queued into it
        reached.set()
        await anyio.to_thread.run_sync(release.wait, 20)
        return answer(call)

    served.faux.set_responses([held] + [answer] * 10)
    with served.client() as client:
        sid = client.post("/api/sessions", json={}).json()["id"]
        started = client.post(f"/api/sessions/{sid}/prompt", json={"text": PROMPT})
        assert started.status_code == 202, started.text
        assert reached.wait(20)
        queued = client.post(f"/api/sessions/{sid}/steer", json={"text": STEER})
        assert queued.status_code == 202 and queued.json()["became"] == "queued", queued.text
        release.set()
        shown = _wait_idle(client, sid)
        listed = [s for s in client.get("/api/sessions").json() if s["id"] == sid]
    assert _user_texts(shown) == [PROMPT, STEER]
    assert [m["role"] for m in shown] == ["user", "assistant", "user", "assistant"]
    stops = [m["metadata"]["agentcore"]["stopReason"] for m in shown if m["role"] == "assistant"]
    assert stops == ["stop", "stop"]
    assert listed[0]["title"] == "first\ufffdprompt \ufffd"  # a title shows a NUL as the page does
    served.store.close()
    with _open(kind, tmp_path) as store:  # a fresh store reads back what was acknowledged
        messages = store.load(sid).messages
    assert [m.content for m in messages if isinstance(m, UserMessage)] == [PROMPT, STEER]
    answers = [m for m in messages if isinstance(m, AssistantMessage)]
    assert [a.stop_reason for a in answers] == ["stop", "stop"]
    assert PROMPT in answers[0].text and STEER in answers[1].text  # the model saw them whole
