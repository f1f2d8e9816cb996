"""Two real `agentcore serve` processes (replicas) on one PostgreSQL database (`scripts/postgres`,
marked `external`): any replica continues any idle session, a session running on one replica is a
409 on the other, a run's live events reach a reader connected to the other replica, and a
replica killed mid-run (kill -9) leaves the session consistent for the other to continue."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from agentcore.messages import AssistantMessage
from support.postgres import open_postgres_store, postgres_url, schema_for

from .web_support import SseReader, open_events

pytestmark = [pytest.mark.external, pytest.mark.timeout(240)]

HERE = Path(__file__).parent
SRC = HERE.parents[1] / "src"
TOKEN = "replica-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


class Replica:
    """`agentcore serve --store postgresql://...` (faux_serve.py's faux model) on a free port."""

    def __init__(self, store: str, **env_vars: str) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), *sys.path]), **env_vars}
        env.pop("AGENTCORE_TOKEN", None)
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "faux_serve.py"), "--port", "0", "--token", TOKEN,
             "--store", store],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )  # fmt: skip
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line.startswith("agentcore serve: http://"), line + (
            self.process.stderr.read() if self.process.stderr else ""
        )
        self.url = line.split(": ", 1)[1].strip().split("/?token=")[0]
        self.client = httpx.Client(base_url=self.url, timeout=30, headers=AUTH)

    def prompt(self, sid: str, text: str) -> httpx.Response:
        return self.client.post(f"/api/sessions/{sid}/prompt", json={"text": text})

    def state(self, sid: str) -> dict[str, object]:
        shown = self.client.get(f"/api/sessions/{sid}")
        assert shown.status_code == 200, shown.text
        events = shown.json()["events"]
        return dict(events[-1]["snapshot"])

    def wait_idle(self, sid: str, seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        while self.state(sid)["running"]:
            assert time.monotonic() < deadline, "the run never ended"
            time.sleep(0.05)

    def stop(self) -> None:
        self.client.close()
        if self.process.poll() is None:
            self.process.terminate()
        try:
            self.process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.communicate()


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    open_postgres_store(tmp_path).close()  # the schema, dropped when the tests end
    return f"{postgres_url()}?schema={schema_for(tmp_path)}"


@contextmanager
def replica_pair(store_url: str, **env: str) -> Iterator[tuple[Replica, Replica]]:
    """Two `serve` replicas on one database (`env`: extra environment for both)."""
    one = Replica(store_url, **env)
    try:
        two = Replica(store_url, **env)
    except BaseException:
        one.stop()
        raise
    try:
        yield one, two
    finally:
        one.stop()
        two.stop()


@pytest.fixture
def replicas(store_url: str) -> Iterator[tuple[Replica, Replica]]:
    with replica_pair(store_url) as pair:
        yield pair


def roles(tmp_path: Path, sid: str) -> list[tuple[str, str | None]]:
    with open_postgres_store(tmp_path) as direct:
        messages = direct.load(sid).messages
    return [(m.role, getattr(m, "stop_reason", None)) for m in messages]


def text_of(events: list[object]) -> str:
    return "".join(
        e.data.get("delta", "")  # type: ignore[attr-defined]
        for e in events
        if e.type == "TEXT_MESSAGE_CONTENT"  # type: ignore[attr-defined]
    )


def read_until(reader: SseReader, predicate: object, seconds: float = 60) -> list[object]:
    """Events until `predicate(event)` holds (bounded)."""
    deadline = time.monotonic() + seconds
    out: list[object] = []
    while True:
        assert time.monotonic() < deadline, f"not seen in {seconds} s: {out[-5:]}"
        event = reader.next()
        out.append(event)
        if predicate(event):  # type: ignore[operator]
            return out


def test_any_replica_continues_any_idle_session_and_a_running_one_is_a_conflict(
    replicas: tuple[Replica, Replica], tmp_path: Path
) -> None:
    a, b = replicas
    sid = a.client.post("/api/sessions", json={}).json()["id"]
    assert a.prompt(sid, "hello").status_code == 202
    a.wait_idle(sid)
    # the first replica stays up, with the session open: the second continues it
    assert b.prompt(sid, "more").status_code == 202
    b.wait_idle(sid)
    assert a.prompt(sid, "third").status_code == 202  # and back: reloaded with b's turn
    a.wait_idle(sid)
    assert roles(tmp_path, sid) == [("user", None), ("assistant", "stop")] * 3
    # a run going on one replica: the other answers 409 at once, not after a wait
    assert a.prompt(sid, "long").status_code == 202
    t0 = time.monotonic()
    refused = b.prompt(sid, "meanwhile")
    assert refused.status_code == 409, refused.text
    assert "running on another replica" in refused.json()["error"]
    assert time.monotonic() - t0 < 5
    # the other replica shows it running, and its Stop reaches the replica running it
    deadline = time.monotonic() + 20
    while not b.state(sid)["running"]:
        assert time.monotonic() < deadline, "the other replica never saw the run"
        time.sleep(0.05)
    assert b.client.post(f"/api/sessions/{sid}/abort", json={}).status_code == 200
    a.wait_idle(sid, 20)
    b.wait_idle(sid, 20)
    assert b.prompt(sid, "after the abort").status_code == 202
    b.wait_idle(sid)
    assert roles(tmp_path, sid)[-4:] == [
        ("user", None),
        ("assistant", "aborted"),
        ("user", None),
        ("assistant", "stop"),
    ]


def test_a_runs_live_events_reach_a_reader_on_the_other_replica(
    replicas: tuple[Replica, Replica],
) -> None:
    a, b = replicas
    sid = a.client.post("/api/sessions", json={}).json()["id"]
    with open_events(b.client, sid) as reader:
        assert reader.next().type == "MESSAGES_SNAPSHOT"
        t0 = time.monotonic()
        assert a.prompt(sid, "relayed").status_code == 202
        events = read_until(reader, lambda e: e.type == "RUN_FINISHED", 30)
        assert "You said: *relayed*" in text_of(events)
        assert time.monotonic() - t0 < 10
        # the run's end: the reader's replica shows it idle
        read_until(
            reader, lambda e: e.type == "STATE_SNAPSHOT" and not e.data["snapshot"]["running"]
        )
    # a reader connecting to the other replica mid-run is caught up from the run's start
    assert a.prompt(sid, "long").status_code == 202
    time.sleep(1.0)
    with open_events(b.client, sid) as late:
        first = late.next()
        assert first.type == "MESSAGES_SNAPSHOT"
        said = [m.get("content") for m in first.data["messages"]]
        assert "relayed" in said and "long" not in said  # the transcript as the run began
        events: list[object] = []
        while "word0 word1 word2" not in text_of(events):
            events += read_until(late, lambda e: e.type == "TEXT_MESSAGE_CONTENT", 30)
        assert any(e.type == "TEXT_MESSAGE_START" for e in events)  # type: ignore[attr-defined]
    assert a.client.post(f"/api/sessions/{sid}/abort", json={}).status_code == 200


def test_a_replica_killed_mid_run_leaves_the_session_consistent(
    replicas: tuple[Replica, Replica], tmp_path: Path
) -> None:
    a, b = replicas
    sid = a.client.post("/api/sessions", json={}).json()["id"]
    with open_events(b.client, sid) as reader:
        reader.next()
        assert a.prompt(sid, "long").status_code == 202
        seen = read_until(reader, lambda e: len(text_of([e])) > 0, 30)
        time.sleep(1.5)  # the answer streams; a checkpoint of it is stored
        seen += read_until(reader, lambda e: e.type == "TEXT_MESSAGE_CONTENT", 30)
        os.kill(a.process.pid, signal.SIGKILL)
        a.process.wait()
        # the reader's replica hears no more from it, takes the session over, and shows the
        # transcript with the partial answer kept as aborted
        t0 = time.monotonic()
        events = read_until(
            reader,
            lambda e: e.type == "MESSAGES_SNAPSHOT" and len(e.data["messages"]) == 2,
            30,
        )
        assert time.monotonic() - t0 < 20
        partial = events[-1].data["messages"][1]  # type: ignore[attr-defined]
        assert partial["role"] == "assistant"
        assert partial["content"].startswith("word0 word1 word2")
    with open_postgres_store(tmp_path) as direct:
        stored = direct.load(sid).messages
    assert [m.role for m in stored] == ["user", "assistant"]
    closing = stored[1]
    assert isinstance(closing, AssistantMessage) and closing.stop_reason == "aborted"
    assert closing.text.startswith("word0 word1 word2") and len(closing.text) > 20
    assert "stopped before the run ended" in (closing.error_message or "")
    # the other replica continues it; the transcript goes to the model again as it is
    assert b.prompt(sid, "again").status_code == 202
    b.wait_idle(sid)
    assert roles(tmp_path, sid) == [
        ("user", None),
        ("assistant", "aborted"),
        ("user", None),
        ("assistant", "stop"),
    ]
