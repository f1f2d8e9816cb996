"""The endpoint over real HTTP (uvicorn on 127.0.0.1): AG-UI events of real runs, validated
against the `ag-ui-protocol` models; reconnects with Last-Event-ID; several sessions at once;
abort, steering, model switch, branching and persistence."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import anyio
from ag_ui.core import Event
from pydantic import TypeAdapter

from agentcore.sessions import JsonlSessionStore
from agentcore.testing import faux_text, faux_tool_call

from .web_support import Served, SseEvent, open_events, start_server, stop_server

EVENT = TypeAdapter(Event)


def _new(client: Any, **body: Any) -> str:
    response = client.post("/api/sessions", json=body)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _prompt(client: Any, sid: str, text: str) -> str:
    response = client.post(f"/api/sessions/{sid}/prompt", json={"text": text})
    assert response.status_code == 202, response.text
    return str(response.json()["status"])


def _validated(events: list[SseEvent]) -> list[Any]:
    return [EVENT.validate_python(e.data) for e in events]


def test_a_tool_using_run_streams_valid_ag_ui_events_in_order(served: Served) -> None:
    with served.client() as client:
        sid = _new(client)
        with open_events(client, sid) as reader:
            snapshot = reader.until("STATE_SNAPSHOT")
            assert [e.type for e in snapshot] == ["MESSAGES_SNAPSHOT", "STATE_SNAPSHOT"]
            assert snapshot[0].data["messages"] == []
            assert _prompt(client, sid, "use the tool") == "started"
            events = reader.until("RUN_FINISHED", "RUN_ERROR")
    models = _validated(events)  # every event is a valid AG-UI event
    types = [e.type for e in events]
    run = types[types.index("RUN_STARTED") :]
    core = [t for t in run if t not in ("CUSTOM", "STEP_STARTED", "STEP_FINISHED")]
    assert core[:4] == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
    ]
    assert events[types.index("TEXT_MESSAGE_START")].data["role"] == "user"
    # the answer: text, then the tool call with its arguments streamed, its result, a final text
    tail = core[4:]
    assert tail[0] == "TEXT_MESSAGE_START" and "TOOL_CALL_START" in tail
    start = tail.index("TOOL_CALL_START")
    assert tail[start + 1] == "TOOL_CALL_ARGS"
    assert tail.index("TOOL_CALL_END") < tail.index("TOOL_CALL_RESULT")
    assert tail[-1] == "RUN_FINISHED"
    args = "".join(e.data["delta"] for e in events if e.type == "TOOL_CALL_ARGS")
    assert json.loads(args) == {"expression": "6*7"}
    result = next(e.data for e in events if e.type == "TOOL_CALL_RESULT")
    assert result["content"] == "6*7 = 42"
    assert result["metadata"]["agentcore"] == {"isError": False, "toolName": "calculator"}
    call = next(e.data for e in events if e.type == "TOOL_CALL_START")
    assert call["toolCallName"] == "calculator" and call["parentMessageId"] == "m1"
    final = "".join(
        e.data["delta"]
        for e in events
        if e.type == "TEXT_MESSAGE_CONTENT" and e.data["messageId"] == "m3"
    )
    assert final == "The calculator says: **6*7 = 42**."
    # the tool's execution, usage per answer and per run
    names = [e.data["name"] for e in events if e.type == "CUSTOM"]
    assert names.index("agentcore.tool_execution_start") < names.index(
        "agentcore.tool_execution_end"
    )
    ends = [
        e.data["value"]
        for e in events
        if e.type == "CUSTOM" and e.data["name"] == "agentcore.message_end"
    ]
    assert [v["messageId"] for v in ends] == ["m1", "m3"]
    assert all(v["usage"]["totalTokens"] > 0 for v in ends)
    finished = models[-1]
    assert finished.outcome.type == "success"
    assert finished.thread_id == sid and finished.usage[0].output_tokens > 0
    # ids are increasing, and every event has one
    numbers = [int(str(e.id).split(".")[1]) for e in events]
    assert numbers == sorted(numbers)


def test_the_snapshot_holds_the_transcript_and_the_session_is_stored(served: Served) -> None:
    with served.client() as client:
        sid = _new(client)
        with open_events(client, sid) as reader:
            reader.until("STATE_SNAPSHOT")
            _prompt(client, sid, "use the tool")
            reader.until("RUN_FINISHED")
        shown = client.get(f"/api/sessions/{sid}").json()["events"]
        listed = client.get("/api/sessions").json()
    messages = EVENT.validate_python(shown[0]).messages
    assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[1].tool_calls[0].function.name == "calculator"
    assert (
        messages[2].content == "6*7 = 42"
        and messages[2].tool_call_id == messages[1].tool_calls[0].id
    )
    assert messages[3].content == "The calculator says: **6*7 = 42**."
    assert messages[3].metadata["agentcore"]["stopReason"] == "stop"
    assert listed[0]["id"] == sid and listed[0]["title"] == "use the tool"
    assert listed[0]["messages"] == 4
    stored = JsonlSessionStore(served.store_dir).load(sid)
    assert [m.role for m in stored.messages] == ["user", "assistant", "tool_result", "assistant"]


def test_a_reconnect_with_last_event_id_resumes_without_loss_or_duplicates(served: Served) -> None:
    with served.client() as client:
        sid = _new(client)
        with open_events(client, sid) as reader:
            reader.until("STATE_SNAPSHOT")
            _prompt(client, sid, "use the tool")
            everything = reader.until("RUN_FINISHED")
        # a client that saw only the run's first events, then lost the connection
        cut = 5
        seen = everything[:cut]
        with open_events(client, sid, last_event_id=seen[-1].id) as reader:
            rest = reader.until("RUN_FINISHED")
        assert [e.data for e in seen + rest] == [e.data for e in everything]
        assert [e.id for e in seen + rest] == [e.id for e in everything]
        # an id from another server process (or unknown) gets a fresh snapshot instead
        with open_events(client, sid, last_event_id="deadbeef.3") as reader:
            again = reader.until("STATE_SNAPSHOT")
        assert [e.type for e in again] == ["MESSAGES_SNAPSHOT", "STATE_SNAPSHOT"]
        assert len(again[0].data["messages"]) == 4


def test_a_reader_joining_mid_run_gets_the_run_from_its_start(slow_served: Served) -> None:
    with slow_served.client() as client:
        sid = _new(client)
        with open_events(client, sid) as first:
            first.until("STATE_SNAPSHOT")
            _prompt(client, sid, "a long answer please")  # minutes long, unless stopped
            while first.until("TEXT_MESSAGE_CONTENT")[-1].data["messageId"] != "m1":
                pass
            with open_events(client, sid) as late:
                late.until("TEXT_MESSAGE_CONTENT")
                client.post(f"/api/sessions/{sid}/abort", json={})
                late.until("RUN_FINISHED")
                joined = late.seen
            first.until("RUN_FINISHED")
    assert joined[0].type == "MESSAGES_SNAPSHOT" and joined[0].data["messages"] == []
    assert "RUN_STARTED" in [e.type for e in joined]

    def answer(events: list[SseEvent]) -> str:
        return "".join(
            e.data["delta"]
            for e in events
            if e.type == "TEXT_MESSAGE_CONTENT" and e.data["messageId"] == "m1"
        )

    # the late reader saw the whole answer, from its first word, exactly as the first one did
    assert answer(joined) == answer(first.seen) and answer(joined).startswith("word0 word1")


def test_two_sessions_run_at_once_each_with_its_own_stream(slow_served: Served) -> None:
    with slow_served.client() as client:
        a, b = _new(client), _new(client)
        with open_events(client, a) as ra, open_events(client, b) as rb:
            ra.until("STATE_SNAPSHOT")
            rb.until("STATE_SNAPSHOT")
            _prompt(client, a, "first conversation")
            _prompt(client, b, "use the tool")
            # both runs are going at the same time
            ra.until("TEXT_MESSAGE_CONTENT")
            rb.until("TEXT_MESSAGE_CONTENT")
            events_a = ra.until("RUN_FINISHED")
            events_b = rb.until("RUN_FINISHED")
    threads_a = {e.data["threadId"] for e in ra.seen if "threadId" in e.data}
    threads_b = {e.data["threadId"] for e in rb.seen if "threadId" in e.data}
    assert threads_a == {a} and threads_b == {b}
    assert not any(e.type.startswith("TOOL_CALL") for e in ra.seen)
    assert any(e.type == "TOOL_CALL_RESULT" for e in events_b)
    text_a = "".join(e.data["delta"] for e in ra.seen if e.type == "TEXT_MESSAGE_CONTENT")
    assert "You said: *first conversation*" in text_a and events_a


def test_abort_stops_the_answer_and_keeps_the_transcript_clean(slow_served: Served) -> None:
    with slow_served.client() as client:
        sid = _new(client)
        with open_events(client, sid) as reader:
            reader.until("STATE_SNAPSHOT")
            _prompt(client, sid, "a long answer please")
            reader.until("TEXT_MESSAGE_CONTENT")
            assert client.post(f"/api/sessions/{sid}/abort", json={}).status_code == 200
            events = reader.until("RUN_FINISHED", "RUN_ERROR")
        finished = EVENT.validate_python(events[-1].data)
        assert finished.outcome.type == "cancelled"
        ends = [
            e.data["value"]
            for e in events
            if e.type == "CUSTOM" and e.data["name"] == "agentcore.message_end"
        ]
        assert ends[-1]["stopReason"] == "aborted"
        # the next prompt runs normally on the same session
        with open_events(client, sid) as reader:
            reader.until("STATE_SNAPSHOT")
            _prompt(client, sid, "hello again")
            reader.until("RUN_FINISHED")
    stored = JsonlSessionStore(slow_served.store_dir).load(sid)
    roles = [(m.role, getattr(m, "stop_reason", None)) for m in stored.messages]
    assert roles == [
        ("user", None),
        ("assistant", "aborted"),
        ("user", None),
        ("assistant", "stop"),
    ]


def test_a_prompt_while_running_steers_the_run(served: Served) -> None:
    gate = threading.Event()

    async def held(call: Any) -> Any:  # the second answer waits until the test opens the gate
        await anyio.to_thread.run_sync(gate.wait)
        return faux_text("Computed.")

    served.faux.set_responses(
        [faux_tool_call("calculator", {"expression": "6*7"}), held, faux_text("Hi!")]
    )
    with served.client() as client:
        sid = _new(client)
        with open_events(client, sid) as reader:
            reader.until("STATE_SNAPSHOT")
            _prompt(client, sid, "use the tool")
            reader.until("TOOL_CALL_RESULT")  # the run now waits for its second answer
            assert _prompt(client, sid, "and then say hi") == "steered"
            queued = reader.until_custom("agentcore.steering_queued")[-1]
            assert queued.data["value"] == {"text": "and then say hi"}
            gate.set()
            events = reader.until("RUN_FINISHED")
    texts = [
        (e.data["messageId"], e.data["delta"]) for e in events if e.type == "TEXT_MESSAGE_CONTENT"
    ]
    # the steering message joins after the answer that was running, and is answered
    assert texts == [("m3", "Computed."), ("m4", "and then say hi"), ("m5", "Hi!")]
    stored = JsonlSessionStore(served.store_dir).load(sid)
    assert [m.role for m in stored.messages] == [
        "user",
        "assistant",
        "tool_result",
        "assistant",
        "user",
        "assistant",
    ]


def test_model_switch_and_branch(served: Served) -> None:
    other = "local/qwen2.5-coder-1.5b"  # in the catalogue, needs no key: only switched to
    with served.client() as client:
        sid = _new(client)
        with open_events(client, sid) as reader:
            reader.until("STATE_SNAPSHOT")
            _prompt(client, sid, "first")
            reader.until("RUN_FINISHED")
            _prompt(client, sid, "second")
            reader.until("RUN_FINISHED")
            assert reader.until("STATE_SNAPSHOT")[-1].data["snapshot"]["running"] is False
            response = client.post(f"/api/sessions/{sid}/model", json={"model": other})
            assert response.status_code == 200, response.text
            state = reader.until("STATE_SNAPSHOT")[-1]
            assert state.data["snapshot"]["model"] == other
        bad = client.post(f"/api/sessions/{sid}/model", json={"model": "nope"})
        assert bad.status_code == 400 and "provider/id" in bad.json()["error"]
        unknown = client.post(f"/api/sessions/{sid}/model", json={"model": "nope/x"})
        assert unknown.status_code == 400 and "unknown provider" in unknown.json()["error"]
        branched = client.post(f"/api/sessions/{sid}/branch", json={"index": 2})
        assert branched.status_code == 201, branched.text
        bid = branched.json()["id"]
        with open_events(client, bid) as reader:
            snap = reader.until("STATE_SNAPSHOT")
        messages = snap[0].data["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant"]
        assert messages[0]["content"] == "first"
        assert snap[1].data["snapshot"]["parent"] == {"sessionId": sid, "index": 2}
        assert snap[1].data["snapshot"]["model"] == other
        out_of_range = client.post(f"/api/sessions/{sid}/branch", json={"index": 99})
        assert out_of_range.status_code == 400 and "out of range" in out_of_range.json()["error"]


def test_bad_requests_get_clear_errors(served: Served) -> None:
    with served.client() as client:
        missing = client.get("/api/sessions/nosuchsession/events")
        assert missing.status_code == 404 and "nosuchsession" in missing.json()["error"]
        sid = _new(client)
        empty = client.post(f"/api/sessions/{sid}/prompt", json={"text": "  "})
        assert empty.status_code == 400 and "empty" in empty.json()["error"]
        wrong = client.post(f"/api/sessions/{sid}/prompt", json={"text": 3})
        assert wrong.status_code == 400 and "'text'" in wrong.json()["error"]
        not_json = client.post(
            f"/api/sessions/{sid}/prompt",
            content=b"{",
            headers={"Content-Type": "application/json"},
        )
        assert not_json.status_code == 400 and "not JSON" in not_json.json()["error"]


def test_the_models_list_says_which_models_can_be_used(served: Served) -> None:
    with served.client() as client:
        models = client.get("/api/models").json()
        info = client.get("/api/info").json()
    refs = {m["ref"]: m for m in models}
    assert info["defaultModel"] in refs
    assert info["tools"] == ["read_file", "list_files", "calculator"]
    assert len({m["provider"] for m in models}) > 3
    assert all(set(m) >= {"ref", "name", "usable", "reason"} for m in models)


def test_sessions_persist_across_a_server_restart(tmp_path: Path) -> None:
    first = start_server(tmp_path)
    try:
        with first.client() as client:
            sid = _new(client)
            with open_events(client, sid) as reader:
                reader.until("STATE_SNAPSHOT")
                _prompt(client, sid, "remember me")
                reader.until("RUN_FINISHED")
    finally:
        stop_server(first)
    second = start_server(tmp_path)
    try:
        with second.client() as client:
            with open_events(client, sid) as reader:
                snap = reader.until("STATE_SNAPSHOT")
            assert [m["role"] for m in snap[0].data["messages"]] == ["user", "assistant"]
            assert snap[0].data["messages"][0]["content"] == "remember me"
    finally:
        stop_server(second)


def _agui_run(client: Any, body: dict[str, Any]) -> list[dict[str, Any]]:
    """POST a RunAgentInput to the AG-UI endpoint; the run's events, from its SSE response."""
    events = []
    headers = {"Accept": "text/event-stream"}
    with client.stream("POST", "/api/ag-ui", json=body, headers=headers) as response:
        assert response.status_code == 200, response.read()
        for line in response.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[len("data: ") :]))
    return events


def test_an_ag_ui_client_runs_the_agent_with_run_agent_input(served: Served) -> None:
    """What an AG-UI `HttpAgent` does: POST the thread's messages, read the run's events."""
    first = {
        "threadId": "thread-1",
        "runId": "run-1",
        "messages": [{"id": "u1", "role": "user", "content": "use the tool"}],
    }
    with served.client() as client:
        events = _agui_run(client, first)
        models = [EVENT.validate_python(e) for e in events]
        assert events[0]["type"] == "RUN_STARTED"
        assert (events[0]["threadId"], events[0]["runId"]) == ("thread-1", "run-1")
        assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["runId"] == "run-1"
        assert models[-1].outcome.type == "success"
        assert any(e["type"] == "TOOL_CALL_RESULT" for e in events)
        # the next run sends the history plus a new prompt: the server's transcript goes on
        history = [
            *first["messages"],
            {"id": "a1", "role": "assistant", "content": "The calculator says: **6*7 = 42**."},
            {"id": "u2", "role": "user", "content": "thanks"},
        ]
        second = _agui_run(client, {"threadId": "thread-1", "runId": "run-2", "messages": history})
        assert second[-1]["runId"] == "run-2"
        texts = [e["delta"] for e in second if e["type"] == "TEXT_MESSAGE_CONTENT"]
        assert texts[0] == "thanks" and "You said: *thanks*" in "".join(texts[1:])
        listed = client.get("/api/sessions").json()
        assert listed[0]["id"] == "thread-1" and listed[0]["messages"] == 6
        # what cannot be run is said clearly
        no_prompt = client.post(
            "/api/ag-ui",
            json={"threadId": "thread-1", "runId": "r", "messages": history[:2]},
        )
        assert no_prompt.status_code == 400 and "user message" in no_prompt.json()["error"]
        invalid = client.post("/api/ag-ui", json={"threadId": "t"})
        assert invalid.status_code == 400 and "RunAgentInput" in invalid.json()["error"]
        bad_id = client.post(
            "/api/ag-ui",
            json={"threadId": "no spaces!", "runId": "r", "messages": first["messages"]},
        )
        assert bad_id.status_code == 400 and "threadId" in bad_id.json()["error"]


def test_a_session_can_be_created_with_the_default_model_even_if_not_in_the_catalogue(
    served: Served,
) -> None:
    with served.client() as client:
        default = client.get("/api/info").json()["defaultModel"]
        created = client.post("/api/sessions", json={"model": default})
        assert created.status_code == 201, created.text
        shown = client.get(f"/api/sessions/{created.json()['id']}").json()["events"][1]
    assert shown["snapshot"]["model"] == default
