"""Steering and follow-up over HTTP (uvicorn on 127.0.0.1, two or more clients on one session):
what each message became (taken by the run in progress, or the start of the next run; never
parked), concurrent steers, subscribers joining between runs and reconnecting mid-run, the
AG-UI equivalents, and the guard in front of the new endpoints."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from ag_ui.core import Event
from pydantic import TypeAdapter

from agentcore.sessions import JsonlSessionStore
from agentcore.testing import FauxCall, faux_error

from .faux_script import answer
from .web_support import Served, SseEvent, open_events, start_server, stop_server

EVENT = TypeAdapter(Event)


class Gate:
    """The faux model's next answer waits until `open()` (a run the test holds mid-way)."""

    def __init__(self, served: Served, *, then: Any = None) -> None:
        self.event = threading.Event()
        self.reached = threading.Event()
        first = then or answer

        async def held(call: FauxCall) -> Any:
            self.reached.set()
            await anyio.to_thread.run_sync(self.event.wait, 20)  # bounded: a failed test ends
            return first(call) if callable(first) else first

        served.faux.set_responses([held] + [answer] * 200)

    def open(self) -> None:
        self.event.set()


def _new(client: Any) -> str:
    response = client.post("/api/sessions", json={})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _send(client: Any, sid: str, kind: str, text: str) -> dict[str, Any]:
    response = client.post(f"/api/sessions/{sid}/{kind}", json={"text": text})
    assert response.status_code == 202, response.text
    return dict(response.json())


def _user_texts(events: list[SseEvent]) -> list[str]:
    """The user messages of a stream, in order (TEXT_MESSAGE_* with role user)."""
    users, texts = set(), []
    parts: dict[str, str] = {}
    for e in events:
        if e.type == "TEXT_MESSAGE_START" and e.data["role"] == "user":
            users.add(e.data["messageId"])
            parts[e.data["messageId"]] = ""
        elif e.type == "TEXT_MESSAGE_CONTENT" and e.data["messageId"] in users:
            parts[e.data["messageId"]] += e.data["delta"]
        elif e.type == "TEXT_MESSAGE_END" and e.data["messageId"] in users:
            texts.append(parts[e.data["messageId"]])
    return texts


def _stored_users(served: Served, sid: str) -> list[str]:
    stored = JsonlSessionStore(served.store_dir).load(sid)
    return [str(m.content) for m in stored.messages if m.role == "user"]


def _wait_idle(client: Any, sid: str) -> dict[str, Any]:
    for _ in range(500):
        state = client.get(f"/api/sessions/{sid}").json()["events"][1]["snapshot"]
        if not state["running"]:
            return dict(state)
        time.sleep(0.02)
    raise AssertionError("the session did not go idle")


def test_one_client_steers_while_another_watches_the_stream(served: Served) -> None:
    gate = Gate(served)
    with served.client() as watcher, served.client() as steerer:
        sid = _new(steerer)
        with open_events(watcher, sid) as reader:
            reader.until("STATE_SNAPSHOT")
            started = _send(steerer, sid, "steer", "first question")
            assert started["became"] == "started" and started["as"] == "steer"
            run = reader.until("RUN_STARTED")[-1]
            assert run.data["runId"] == started["runId"]
            assert gate.reached.wait(10)  # the run waits for its answer
            queued = _send(steerer, sid, "steer", "turn left")
            assert queued == {"became": "queued", "as": "steer", "runId": started["runId"]}
            seen = reader.until_custom("agentcore.steering_queued")[-1]
            assert seen.data["value"] == {"text": "turn left"}
            state = reader.until("STATE_SNAPSHOT")[-1].data["snapshot"]
            assert state["queued"] == {"steering": ["turn left"], "followUp": []}
            gate.open()
            events = reader.until("RUN_FINISHED")
            after = reader.until("STATE_SNAPSHOT")[-1].data["snapshot"]
    # one run took both: the steering message joined after the first answer, and was answered
    assert [e for e in events if e.type == "RUN_STARTED"] == []
    assert _user_texts(reader.seen) == ["first question", "turn left"]
    answers = "".join(e.data["delta"] for e in events if e.type == "TEXT_MESSAGE_CONTENT")
    assert answers.index("first question") < answers.index("You said: *turn left*")
    assert events[-1].data["runId"] == started["runId"]
    assert after["running"] is False and after["queued"] == {"steering": [], "followUp": []}
    assert _stored_users(served, sid) == ["first question", "turn left"]


def test_a_follow_up_waits_for_the_answer_and_when_idle_starts_the_next_run(
    served: Served,
) -> None:
    gate = Gate(served)
    with served.client() as watcher, served.client() as sender:
        sid = _new(sender)
        with open_events(watcher, sid) as reader:
            reader.until("STATE_SNAPSHOT")
            first = _send(sender, sid, "follow-up", "start here")
            assert first["became"] == "started" and first["as"] == "followUp"
            assert gate.reached.wait(10)
            later = _send(sender, sid, "follow-up", "and afterwards this")
            assert later == {"became": "queued", "as": "followUp", "runId": first["runId"]}
            reader.until_custom("agentcore.follow_up_queued")
            gate.open()
            run1 = reader.until("RUN_FINISHED")
            assert run1[-1].data["runId"] == first["runId"]
            # idle now: a follow-up starts the next run, under the id it was answered with
            _wait_idle(sender, sid)
            nxt = _send(sender, sid, "follow-up", "a new run")
            assert nxt["became"] == "started" and nxt["runId"] != first["runId"]
            run2 = reader.until("RUN_FINISHED")
    assert [e.data["runId"] for e in run2 if e.type == "RUN_STARTED"] == [nxt["runId"]]
    assert _user_texts(run1) == ["and afterwards this"]  # after the first answer, same run
    assert _user_texts(run2) == ["a new run"]
    assert _stored_users(served, sid) == ["start here", "and afterwards this", "a new run"]


def test_concurrent_steers_are_none_lost_and_in_order(served: Served) -> None:
    gate = Gate(served)
    senders, each = 4, 5
    replies: dict[int, list[dict[str, Any]]] = {}
    with served.client() as watcher, served.client() as starter:
        sid = _new(starter)
        with open_events(watcher, sid) as reader:
            reader.until("STATE_SNAPSHOT")
            run_id = _send(starter, sid, "steer", "go")["runId"]
            assert gate.reached.wait(10)

            def send_all(n: int) -> None:
                with served.client() as client:  # a connection of its own
                    replies[n] = [_send(client, sid, "steer", f"s{n}.{i}") for i in range(each)]

            threads = [threading.Thread(target=send_all, args=(n,)) for n in range(senders)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(30)
            queued: list[str] = []  # the order the server accepted them in
            while len(queued) < senders * each:
                e = reader.next()
                if e.type == "CUSTOM" and e.data["name"] == "agentcore.steering_queued":
                    queued.append(e.data["value"]["text"])
            gate.open()
            reader.until("RUN_FINISHED")
    assert all(
        r == {"became": "queued", "as": "steer", "runId": run_id}
        for v in replies.values()
        for r in v
    )
    delivered = _user_texts(reader.seen)[1:]
    # every one arrived once, in the order the server accepted them, each sender's in its order
    assert sorted(delivered) == sorted(f"s{n}.{i}" for n in range(senders) for i in range(each))
    assert delivered == queued
    for n in range(senders):
        mine = [t for t in delivered if t.startswith(f"s{n}.")]
        assert mine == [f"s{n}.{i}" for i in range(each)]
    assert _stored_users(served, sid) == ["go", *delivered]


def test_a_message_sent_while_a_run_is_stopped_starts_the_next_run(served: Served) -> None:
    gate = Gate(served)  # the answer in progress ends only when the gate opens, abort or not
    with served.client() as watcher, served.client() as sender:
        sid = _new(sender)
        with open_events(watcher, sid) as reader:
            reader.until("STATE_SNAPSHOT")
            first = _send(sender, sid, "steer", "hello")
            assert gate.reached.wait(10)
            before = _send(sender, sid, "steer", "queued before the stop")
            assert before["became"] == "queued"
            assert sender.post(f"/api/sessions/{sid}/abort", json={}).status_code == 200
            # the run is stopping: it cannot take this one, which starts the next run
            after = _send(sender, sid, "steer", "after the stop")
            assert after["became"] == "started" and after["runId"] != first["runId"]
            assert reader.until_custom("agentcore.message_held")[-1].data["value"] == {
                "text": "after the stop",
                "runId": after["runId"],
            }
            gate.open()
            stopped = reader.until("RUN_FINISHED")
            assert EVENT.validate_python(stopped[-1].data).outcome.type == "cancelled"
            nxt = reader.until("RUN_FINISHED")
    assert [e.data["runId"] for e in nxt if e.type == "RUN_STARTED"] == [after["runId"]]
    # the stopped run's queued message was kept (an abort loses none), and went with the next
    assert _user_texts(nxt) == ["after the stop", "queued before the stop"]
    assert _stored_users(served, sid) == ["hello", "after the stop", "queued before the stop"]


def test_steering_a_run_that_ends_on_an_error_runs_it_right_after(served: Served) -> None:
    gate = Gate(served, then=faux_error("the model failed"))
    started: list[dict[str, Any]] = []  # an AG-UI client started the run and reads it
    with served.client() as watcher, served.client() as sender, served.client() as agui:
        sid = _new(sender)
        with open_events(watcher, sid) as reader:
            reader.until("STATE_SNAPSHOT")
            body = {
                "threadId": sid,
                "runId": "run-1",
                "messages": [{"id": "u1", "role": "user", "content": "hello"}],
            }
            runner = threading.Thread(target=lambda: started.extend(_agui(agui, body)))
            runner.start()
            assert gate.reached.wait(10)
            queued = _send(sender, sid, "steer", "try again")
            assert queued == {"became": "queued", "as": "steer", "runId": "run-1"}
            gate.open()
            failed = reader.until("RUN_FINISHED", "RUN_ERROR")
            nxt = reader.until("RUN_FINISHED")
            state = reader.until("STATE_SNAPSHOT")[-1].data["snapshot"]
            runner.join(30)
    assert failed[-1].type == "RUN_ERROR" and "the model failed" in failed[-1].data["message"]
    # the queued message was not left in the queue: the run went on at once, under the id the
    # answer named, and took it
    assert [e.data["runId"] for e in reader.seen if e.type == "RUN_STARTED"] == ["run-1"] * 2
    assert _user_texts(nxt) == ["try again"]
    assert state["queued"] == {"steering": [], "followUp": []} and state["running"] is False
    assert _stored_users(served, sid) == ["hello", "try again"]
    # the AG-UI client's stream followed it on, to its end
    for event in started:
        EVENT.validate_python(event)
    kinds = [e["type"] for e in started]
    assert kinds.count("RUN_STARTED") == 2 and kinds[-1] == "RUN_FINISHED"
    assert "You said: *try again*" in "".join(
        e["delta"] for e in started if e["type"] == "TEXT_MESSAGE_CONTENT"
    )


def test_steers_past_a_turn_limit_are_run_after_it(tmp_path: Path) -> None:
    served = start_server(tmp_path, agent_options={"max_turns": 2})
    try:
        gate = Gate(served)
        with served.client() as watcher, served.client() as sender:
            sid = _new(sender)
            with open_events(watcher, sid) as reader:
                reader.until("STATE_SNAPSHOT")
                _send(sender, sid, "steer", "one")
                assert gate.reached.wait(10)
                for text in ("two", "three", "four"):
                    assert _send(sender, sid, "steer", text)["became"] == "queued"
                gate.open()
                state = None
                while state is None or state["running"]:
                    state = reader.until("STATE_SNAPSHOT")[-1].data["snapshot"]
        assert _user_texts(reader.seen) == ["one", "two", "three", "four"]
        assert _stored_users(served, sid) == ["one", "two", "three", "four"]
    finally:
        stop_server(served)


def test_messages_sent_as_runs_end_are_each_taken_or_start_a_run(served: Served) -> None:
    """The race the Agent closed for prompts, over HTTP: a message sent as a run ends is either
    taken by it or starts the next one; none is left queued with no run to take it."""
    rounds = 12
    with served.client() as first, served.client() as second:
        sid = _new(first)
        sent: list[str] = []
        for i in range(rounds):
            _send(first, sid, "steer", f"prompt {i}")
            replies: list[dict[str, Any]] = []

            def steer(i: int = i, replies: list[dict[str, Any]] = replies) -> None:
                replies.append(_send(second, sid, "steer", f"steer {i}"))

            t = threading.Thread(target=steer)
            time.sleep(0.003 * (i % 4))  # sent a little later each time: around the run's end
            t.start()
            t.join(30)
            sent += [f"prompt {i}", f"steer {i}"]
            assert replies and replies[0]["became"] in ("queued", "started")
            state = _wait_idle(first, sid)
            assert state["queued"] == {"steering": [], "followUp": []}
    stored = _stored_users(served, sid)
    assert sorted(stored) == sorted(sent) and len(stored) == 2 * rounds


def test_a_reconnect_with_last_event_id_mid_run_loses_nothing(served: Served) -> None:
    gate = Gate(served)
    with served.client() as steady, served.client() as flaky, served.client() as sender:
        sid = _new(sender)
        with open_events(steady, sid) as whole:
            whole.until("STATE_SNAPSHOT")
            with open_events(flaky, sid) as part:
                part.until("STATE_SNAPSHOT")
                _send(sender, sid, "steer", "use the tool")
                assert gate.reached.wait(10)
                _send(sender, sid, "steer", "then this")
                part.until_custom("agentcore.steering_queued")
                seen = list(part.seen)  # the connection drops here, mid-run
            gate.open()
            with open_events(flaky, sid, last_event_id=seen[-1].id) as again:
                rest = again.until("RUN_FINISHED")
            whole.until("RUN_FINISHED")
            everything = whole.seen
    assert [(e.id, e.data) for e in seen + rest] == [(e.id, e.data) for e in everything]
    assert _user_texts(everything) == ["use the tool", "then this"]


def test_subscribers_joining_between_runs_and_during_a_steer_started_run_see_everything(
    served: Served,
) -> None:
    with served.client() as sender, served.client() as early, served.client() as late:
        sid = _new(sender)
        _send(sender, sid, "steer", "first")
        _wait_idle(sender, sid)
        gate = Gate(served)
        with open_events(early, sid) as between:  # between runs: the whole transcript
            snapshot = between.until("STATE_SNAPSHOT")
            assert [m["role"] for m in snapshot[0].data["messages"]] == ["user", "assistant"]
            started = _send(sender, sid, "steer", "second")
            assert gate.reached.wait(10)
            with open_events(late, sid) as joined:  # during the run the steer started
                joined_snapshot = joined.until("STATE_SNAPSHOT")
                gate.open()
                joined_run = joined.until("RUN_FINISHED")
            run = between.until("RUN_FINISHED")
    # the late one got the transcript as the run began, then the run from its start
    assert [m["role"] for m in joined_snapshot[0].data["messages"]] == ["user", "assistant"]
    mine = [e.data for e in run if e.type != "STATE_SNAPSHOT"]
    theirs = [e.data for e in joined_run if e.type != "STATE_SNAPSHOT"]
    assert mine == theirs and theirs[0]["runId"] == started["runId"]
    assert _user_texts(joined_run) == ["second"]


def test_an_event_id_from_an_earlier_opening_of_the_session_gets_a_fresh_snapshot(
    tmp_path: Path,
) -> None:
    served = start_server(tmp_path, close_idle_after=0.1)
    try:
        with served.client() as client:
            sid = _new(client)
            with open_events(client, sid) as reader:
                reader.until("STATE_SNAPSHOT")
                _send(client, sid, "steer", "one")
                last = reader.until("RUN_FINISHED")[-1].id
            hub = served.app.state.hub  # (its open sessions are looked at, not changed)
            for _ in range(200):  # the idle session is closed; it opens again on next use
                if sid not in hub._chats:
                    break
                time.sleep(0.02)
            assert sid not in hub._chats
            for text in ("two", "three"):  # the new log passes the old id's number
                _send(client, sid, "steer", text)
                _wait_idle(client, sid)
            with open_events(client, sid, last_event_id=last) as again:
                snapshot = again.until("STATE_SNAPSHOT")
        assert snapshot[0].type == "MESSAGES_SNAPSHOT"
        users = [m["content"] for m in snapshot[0].data["messages"] if m["role"] == "user"]
        assert users == ["one", "two", "three"]
    finally:
        stop_server(served)


# -- AG-UI ------------------------------------------------------------------------------------


def _agui(client: Any, body: dict[str, Any]) -> list[dict[str, Any]]:
    events = []
    with client.stream("POST", "/api/ag-ui", json=body) as response:
        assert response.status_code == 200, response.read()
        for line in response.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[len("data: ") :]))
    return events


def test_ag_ui_input_on_a_running_thread_is_queued_into_the_run(served: Served) -> None:
    gate = Gate(served)
    user = {"id": "u1", "role": "user", "content": "start"}
    first: list[dict[str, Any]] = []
    with served.client() as a, served.client() as b:
        runner = threading.Thread(
            target=lambda: first.extend(
                _agui(a, {"threadId": "th-1", "runId": "run-1", "messages": [user]})
            )
        )
        runner.start()
        assert gate.reached.wait(10)
        follow = {"id": "u2", "role": "user", "content": "after that"}
        body = {
            "threadId": "th-1",
            "runId": "run-2",
            "messages": [user, follow],
            "forwardedProps": {"agentcore": {"delivery": "follow_up"}},
        }
        with b.stream("POST", "/api/ag-ui", json=body) as response:
            assert response.status_code == 200
            lines = response.iter_lines()
            head = []
            for line in lines:
                if line.startswith("data: "):
                    head.append(json.loads(line[6:]))
                if len(head) == 3:
                    break
            gate.open()
            second = head + [json.loads(x[6:]) for x in lines if x.startswith("data: ")]
        runner.join(30)
        bad = b.post(
            "/api/ag-ui",
            json={**body, "forwardedProps": {"agentcore": {"delivery": "later"}}},
        )
    assert bad.status_code == 400 and "'steer' or 'follow_up'" in bad.json()["error"]
    for event in first + second:
        EVENT.validate_python(event)
    # the joined stream: the run in progress from its start, the transcript it began with,
    # what the message became, then the run to its end (the follow-up answered in it)
    assert [e["type"] for e in second[:3]] == ["RUN_STARTED", "MESSAGES_SNAPSHOT", "CUSTOM"]
    assert second[0]["runId"] == "run-1" and second[1]["messages"] == []
    assert second[2]["value"] == {"became": "queued", "as": "followUp", "runId": "run-1"}
    assert second[-1]["type"] == "RUN_FINISHED" and second[-1]["runId"] == "run-1"
    texts = "".join(e["delta"] for e in second if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert "You said: *after that*" in texts
    # the client that started the run got its run, with the follow-up in it
    assert first[0]["runId"] == "run-1" and first[-1]["type"] == "RUN_FINISHED"
    assert first[1] == {
        "type": "CUSTOM",
        "name": "agentcore.delivery",
        "value": {"became": "started", "as": "steer", "runId": "run-1"},
    }


# -- the guard --------------------------------------------------------------------------------


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[Served]:
    s = start_server(tmp_path, token="s3cret-token", max_body_bytes=2000)
    yield s
    stop_server(s)


def test_steer_and_follow_up_are_guarded_like_the_other_endpoints(guarded: Served) -> None:
    auth = {"Authorization": "Bearer s3cret-token"}
    with guarded.client(headers=auth) as client, guarded.client() as stranger:
        sid = _new(client)
        for kind in ("steer", "follow-up"):
            path = f"/api/sessions/{sid}/{kind}"
            refused = stranger.post(path, json={"text": "hi"})
            assert refused.status_code == 401 and "token" in refused.json()["error"]
            wrong = stranger.post(path, json={"text": "hi"}, headers={"Authorization": "Bearer x"})
            assert wrong.status_code == 401
            cross = client.post(
                path, json={"text": "hi"}, headers={"Origin": "http://evil.example"}
            )
            assert cross.status_code == 403 and "cross-origin" in cross.json()["error"]
            form = client.post(path, content=b"text=hi", headers={"Content-Type": "text/plain"})
            assert form.status_code == 415
            big = client.post(path, json={"text": "x" * 5000})
            assert big.status_code == 413
            empty = client.post(path, json={"text": " "})
            assert empty.status_code == 400 and "empty" in empty.json()["error"]
            typed = client.post(path, json={"text": ["hi"]})
            assert typed.status_code == 400 and "'text'" in typed.json()["error"]
            missing = client.post("/api/sessions/nosuch/" + kind, json={"text": "hi"})
            assert missing.status_code == 404
        agui = stranger.post(
            "/api/ag-ui",
            json={
                "threadId": sid,
                "runId": "r",
                "messages": [{"id": "u", "role": "user", "content": "x"}],
            },
        )
        assert agui.status_code == 401
        _wait_idle(client, sid)  # nothing was started by a refused request
        assert client.get(f"/api/sessions/{sid}").json()["events"][0]["messages"] == []


def test_without_a_token_steering_answers_only_loopback_host_names(served: Served) -> None:
    with served.client() as client:
        sid = _new(client)
        rebound = client.post(
            f"/api/sessions/{sid}/steer", json={"text": "hi"}, headers={"Host": "evil.example"}
        )
        assert rebound.status_code == 403 and "evil.example" in rebound.json()["error"]


def test_ag_ui_input_while_the_run_is_stopped_starts_the_next_run_under_its_run_id(
    served: Served,
) -> None:
    gate = Gate(served)
    with served.client() as client, served.client() as watcher:
        sid = _new(client)
        with open_events(watcher, sid) as log:
            log.until("STATE_SNAPSHOT")
            first = _send(client, sid, "steer", "hello")
            assert gate.reached.wait(10)
            # steering by default: queued into the run going
            steered: list[dict[str, Any]] = []
            body = {
                "threadId": sid,
                "runId": "ignored",
                "messages": [{"id": "u1", "role": "user", "content": "steered in"}],
            }
            reader = threading.Thread(target=lambda: steered.extend(_agui(client, body)))
            reader.start()
            log.until_custom("agentcore.steering_queued")
            assert client.post(f"/api/sessions/{sid}/abort", json={}).status_code == 200
            body = {
                "threadId": sid,
                "runId": "next-run",
                "messages": [{"id": "u2", "role": "user", "content": "after the stop"}],
            }
            result: list[dict[str, Any]] = []
            runner = threading.Thread(target=lambda: result.extend(_agui(client, body)))
            runner.start()
            held = log.until_custom("agentcore.message_held")[-1]
            assert held.data["value"] == {"text": "after the stop", "runId": "next-run"}
            gate.open()
            runner.join(30)
            reader.join(30)
    for event in result + steered:
        EVENT.validate_python(event)
    assert steered[2]["value"] == {"became": "queued", "as": "steer", "runId": first["runId"]}
    # only the next run's events, under the input's run id, from its start to its end
    assert result[0]["type"] == "RUN_STARTED" and result[0]["runId"] == "next-run"
    assert result[1]["value"] == {"became": "started", "as": "steer", "runId": "next-run"}
    assert result[-1]["type"] == "RUN_FINISHED" and result[-1]["runId"] == "next-run"
    assert {e.get("runId") for e in result} <= {"next-run", None}
    texts = [e["delta"] for e in result if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert texts[0] == "after the stop"
