"""Steering and follow-up sent to a replica that is not running the session (two real `agentcore
serve` processes on one PostgreSQL database, `scripts/postgres`, marked `external`): forwarded to
the replica running it, taken by its run, seen by the readers of both; concurrent senders on both
replicas lose nothing and keep their order; a message in flight when the running replica is
killed starts the next run on the replica it was sent to, and one the running replica does not
take in time is a clear 409 (not delivered) and never taken later; the AG-UI input alike."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.postgres import open_postgres_store, postgres_url, schema_for

from .test_web_replicas import Replica, read_until, replica_pair, roles, text_of
from .web_support import SseReader, open_events

pytestmark = [pytest.mark.external, pytest.mark.timeout(240)]

# the long answer (~8000 faux tokens) streams for about 8 s: time to steer it from elsewhere
PACE = {"FAUX_TOKENS_PER_SECOND": "1000"}


@pytest.fixture
def replicas(tmp_path: Path) -> Iterator[tuple[Replica, Replica]]:
    open_postgres_store(tmp_path).close()  # the schema, dropped when the tests end
    with replica_pair(f"{postgres_url()}?schema={schema_for(tmp_path)}", **PACE) as pair:
        yield pair


def send(replica: Replica, sid: str, kind: str, text: str) -> dict[str, Any]:
    response = replica.client.post(f"/api/sessions/{sid}/{kind}", json={"text": text})
    assert response.status_code == 202, response.text
    return dict(response.json())


def users(tmp_path: Path, sid: str) -> list[str]:
    with open_postgres_store(tmp_path) as direct:
        messages = direct.load(sid).messages
    return [str(m.content) for m in messages if m.role == "user"]


def custom(reader: SseReader, name: str, seconds: float = 30) -> dict[str, Any]:
    event = read_until(reader, lambda e: e.type == "CUSTOM" and e.data["name"] == name, seconds)
    return dict(event[-1].data["value"])  # type: ignore[attr-defined]


def start_long_run(a: Replica, b: Replica, sid: str, reader_b: SseReader) -> str:
    """A long run on `a`, seen running on `b`: its run id."""
    started = send(a, sid, "steer", "long")
    assert started["became"] == "started"
    read_until(reader_b, lambda e: e.type == "RUN_STARTED", 30)
    deadline = time.monotonic() + 20
    while not b.state(sid)["running"]:
        assert time.monotonic() < deadline, "the other replica never saw the run"
        time.sleep(0.05)
    return str(started["runId"])


def test_a_steer_sent_to_the_other_replica_is_taken_by_the_running_run(
    replicas: tuple[Replica, Replica], tmp_path: Path
) -> None:
    a, b = replicas
    sid = a.client.post("/api/sessions", json={}).json()["id"]
    with open_events(a.client, sid) as reader_a, open_events(b.client, sid) as reader_b:
        reader_a.next()
        reader_b.next()
        run_id = start_long_run(a, b, sid, reader_b)
        t0 = time.monotonic()
        answer = send(b, sid, "steer", "turn left")
        took = time.monotonic() - t0
        assert answer == {"became": "queued", "as": "steer", "runId": run_id}
        assert took < 6, took  # acknowledged (a loaded machine may take more than 50 ms)
        # the readers of both replicas see it queued, then taken by the same run
        assert custom(reader_a, "agentcore.steering_queued") == {"text": "turn left"}
        assert custom(reader_b, "agentcore.steering_queued") == {"text": "turn left"}
        for reader in (reader_a, reader_b):
            events = read_until(reader, lambda e: e.type == "RUN_FINISHED", 60)
            assert "You said: *turn left*" in text_of(events)
            assert not [e for e in events if e.type == "RUN_STARTED"]  # type: ignore[attr-defined]
            assert events[-1].data["runId"] == run_id  # type: ignore[attr-defined]
    a.wait_idle(sid)
    assert users(tmp_path, sid) == ["long", "turn left"]
    assert roles(tmp_path, sid) == [("user", None), ("assistant", "stop")] * 2


def test_a_follow_up_sent_to_the_other_replica_runs_after_the_answer(
    replicas: tuple[Replica, Replica], tmp_path: Path
) -> None:
    a, b = replicas
    sid = a.client.post("/api/sessions", json={}).json()["id"]
    with open_events(a.client, sid) as reader_a, open_events(b.client, sid) as reader_b:
        reader_a.next()
        reader_b.next()
        run_id = start_long_run(a, b, sid, reader_b)
        answer = send(b, sid, "follow-up", "then this")
        assert answer == {"became": "queued", "as": "followUp", "runId": run_id}
        assert custom(reader_a, "agentcore.follow_up_queued") == {"text": "then this"}
        assert custom(reader_b, "agentcore.follow_up_queued") == {"text": "then this"}
        for reader in (reader_a, reader_b):
            events = read_until(reader, lambda e: e.type == "RUN_FINISHED", 60)
            said = text_of(events)
            assert said.index("word3999") < said.index("You said: *then this*")
            assert events[-1].data["runId"] == run_id  # type: ignore[attr-defined]
    a.wait_idle(sid)
    assert users(tmp_path, sid) == ["long", "then this"]


def test_concurrent_steers_from_both_replicas_none_lost_each_senders_in_order(
    replicas: tuple[Replica, Replica], tmp_path: Path
) -> None:
    a, b = replicas
    sid = a.client.post("/api/sessions", json={}).json()["id"]
    with open_events(b.client, sid) as reader_b:
        reader_b.next()
        run_id = start_long_run(a, b, sid, reader_b)
    answers: dict[str, list[dict[str, Any]]] = {"a": [], "b": []}
    errors: list[BaseException] = []

    def sender(name: str, replica: Replica) -> None:
        try:
            for i in range(5):
                answers[name].append(send(replica, sid, "steer", f"{name}{i}"))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=sender, args=(n, r)) for n, r in (("a", a), ("b", b))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    for name in "ab":
        assert [x["became"] for x in answers[name]] == ["queued"] * 5, answers[name]
        assert {x["runId"] for x in answers[name]} == {run_id}
    a.wait_idle(sid)
    said = users(tmp_path, sid)
    assert said[0] == "long" and sorted(said[1:]) == [f"{n}{i}" for n in "ab" for i in range(5)]
    for name in "ab":  # each sender's messages in the order it sent them
        assert [s for s in said if s.startswith(name) and s != "long"] == [
            f"{name}{i}" for i in range(5)
        ]


def test_the_running_replica_killed_while_a_steer_is_forwarded_the_next_run_here_takes_it(
    replicas: tuple[Replica, Replica], tmp_path: Path
) -> None:
    a, b = replicas
    sid = a.client.post("/api/sessions", json={}).json()["id"]
    with open_events(b.client, sid) as reader_b:
        reader_b.next()
        start_long_run(a, b, sid, reader_b)
        read_until(reader_b, lambda e: e.type == "TEXT_MESSAGE_CONTENT", 30)
        os.kill(a.process.pid, signal.SIGSTOP)  # alive, holding the lease, answering nothing
        try:
            answers: list[dict[str, Any]] = []
            t0 = time.monotonic()
            sender = threading.Thread(
                target=lambda: answers.append(send(b, sid, "steer", "still there?"))
            )
            sender.start()
            time.sleep(1.0)  # the message is on its way to a: killed before it takes it
        finally:
            os.kill(a.process.pid, signal.SIGKILL)
        a.process.wait()
        sender.join(30)
        took = time.monotonic() - t0
        # no acknowledgement: b claims the message back and, the lease being free, starts the
        # next run with it here
        assert len(answers) == 1, "the sender got no 202"
        answer = answers[0]
        assert answer["became"] == "started" and answer["as"] == "steer", answer
        assert 2.5 < took < 15, took  # after the bounded wait for an acknowledgement
        read_until(
            reader_b,
            lambda e: e.type == "RUN_STARTED" and e.data["runId"] == answer["runId"],
            30,
        )
        events = read_until(reader_b, lambda e: e.type == "RUN_FINISHED", 30)
        assert "You said: *still there?*" in text_of(events)
    b.wait_idle(sid)
    assert users(tmp_path, sid) == ["long", "still there?"]
    assert roles(tmp_path, sid) == [
        ("user", None),
        ("assistant", "aborted"),  # a's partial answer, closed by b taking the session
        ("user", None),
        ("assistant", "stop"),
    ]


def test_a_steer_the_running_replica_does_not_take_is_a_clear_409_and_never_taken_later(
    replicas: tuple[Replica, Replica], tmp_path: Path
) -> None:
    a, b = replicas
    sid = a.client.post("/api/sessions", json={}).json()["id"]
    with open_events(b.client, sid) as reader_b:
        reader_b.next()
        start_long_run(a, b, sid, reader_b)
    os.kill(a.process.pid, signal.SIGSTOP)  # stuck: holds the lease, takes nothing
    try:
        t0 = time.monotonic()
        refused = b.client.post(f"/api/sessions/{sid}/steer", json={"text": "lost?"})
        took = time.monotonic() - t0
    finally:
        os.kill(a.process.pid, signal.SIGCONT)
    assert refused.status_code == 409, refused.text
    assert "not delivered" in refused.json()["error"] and "send it again" in refused.json()["error"]
    assert 2.5 < took < 15, took
    # a wakes up: the message was claimed back, so its run never takes it
    assert a.client.post(f"/api/sessions/{sid}/abort", json={}).status_code == 200
    a.wait_idle(sid, 30)
    assert users(tmp_path, sid) == ["long"]
    # sent again, it is delivered
    again = send(b, sid, "steer", "lost?")
    assert again["became"] == "started"
    b.wait_idle(sid)
    assert users(tmp_path, sid) == ["long", "lost?"]


def test_an_ag_ui_input_on_a_thread_running_on_the_other_replica_joins_its_run(
    replicas: tuple[Replica, Replica], tmp_path: Path
) -> None:
    a, b = replicas
    sid = a.client.post("/api/sessions", json={}).json()["id"]
    with open_events(b.client, sid) as reader_b:
        reader_b.next()
        run_id = start_long_run(a, b, sid, reader_b)
    body = {
        "threadId": sid,
        "runId": "client-run",
        "messages": [{"id": "u2", "role": "user", "content": "and then?"}],
        "forwardedProps": {"agentcore": {"delivery": "follow_up"}},
    }
    events = []
    with b.client.stream("POST", "/api/ag-ui", json=body) as response:
        assert response.status_code == 200, response.read()
        for line in response.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[len("data: ") :]))
    # the joined stream, as on the replica running it: the run from its start, the transcript
    # it began with, what the message became, then the run to its end with the follow-up in it
    assert [e["type"] for e in events[:3]] == ["RUN_STARTED", "MESSAGES_SNAPSHOT", "CUSTOM"]
    assert events[0]["runId"] == run_id
    assert events[2]["value"] == {"became": "queued", "as": "followUp", "runId": run_id}
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["runId"] == run_id
    said = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert said.index("word0 word1") < said.index("You said: *and then?*")
    a.wait_idle(sid)
    assert users(tmp_path, sid) == ["long", "and then?"]


def test_a_steer_acknowledged_as_queued_is_stored_and_the_next_run_after_a_kill_takes_it(
    replicas: tuple[Replica, Replica], tmp_path: Path
) -> None:
    a, b = replicas
    sid = a.client.post("/api/sessions", json={}).json()["id"]
    with open_events(b.client, sid) as reader_b:
        reader_b.next()
        run_id = start_long_run(a, b, sid, reader_b)
        read_until(reader_b, lambda e: e.type == "TEXT_MESSAGE_CONTENT", 30)
        answer = send(a, sid, "steer", "turn right")
        assert answer == {"became": "queued", "as": "steer", "runId": run_id}
        # acknowledged: the queue is in the store before the answer, so killing the replica at
        # once (its run still streaming, the steer not yet taken) loses nothing
        os.kill(a.process.pid, signal.SIGKILL)
        a.process.wait()
    with open_postgres_store(tmp_path) as direct:
        stored = direct.load(sid)
    assert [str(m.content) for m in stored.state.steering] == ["turn right"]
    assert [str(m.content) for m in stored.messages if m.role == "user"] == ["long"]
    # the replica that takes the session over shows the stored steer queued, and its next run
    # takes it
    with open_events(b.client, sid) as reader_b:
        reader_b.next()
        again = send(b, sid, "steer", "are you there?")
        assert again["became"] == "started", again
        events = read_until(reader_b, lambda e: e.type == "RUN_FINISHED", 60)
        assert "You said: *turn right*" in text_of(events)
    b.wait_idle(sid)
    said = users(tmp_path, sid)
    assert sorted(said) == ["are you there?", "long", "turn right"] and said[0] == "long", said
    with open_postgres_store(tmp_path) as direct:
        assert direct.load(sid).state.steering == []
