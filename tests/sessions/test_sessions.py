"""Session stores: one suite run against both stores, then what is specific to each, then the
Agent writing to and resuming from a session."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sqlite3
import subprocess
import sys
import textwrap
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentcore import (
    Agent,
    AgentEvent,
    AgentToolResult,
    AssistantMessage,
    ImageContent,
    MessageFormatError,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from agentcore.llm import Model, OpenAICompletionsCompat, get_model
from agentcore.messages import register_message_type, to_json
from agentcore.sessions import (
    INTERRUPTED_TOOL_RESULT,
    SESSION_FORMAT_VERSION,
    JsonlSessionStore,
    PostgresSessionStore,
    SessionCorruptError,
    SessionError,
    SessionLockedError,
    SessionNotFoundError,
    SessionParent,
    SessionRecoveryWarning,
    SessionState,
    SessionStore,
    SqliteSessionStore,
    repair_transcript,
)
from agentcore.sessions._jsonl_format import encode_line
from agentcore.sessions._sqlite_schema import SQLITE_SCHEMA_VERSION
from agentcore.testing import FauxProvider, faux_text, faux_tool_call
from support import BACKENDS, make_tool, texts
from support.postgres import drop_schema, postgres_url, schema_for

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sessions"


def store_location(kind: str, where: Path) -> Path | str:
    """Where `open_store(kind, where)` keeps its sessions (a directory, a database file, or a
    PostgreSQL schema of its own)."""
    if kind == "postgres":
        return schema_for(where)
    return where / "sessions" if kind == "jsonl" else where / "sessions.db"


def open_store(kind: str, where: Path) -> SessionStore:
    if kind == "jsonl":
        return JsonlSessionStore(store_location(kind, where))
    if kind == "postgres":
        return PostgresSessionStore(postgres_url(), schema=schema_for(where))
    return SqliteSessionStore(store_location(kind, where))


STORE_KINDS = ["jsonl", "sqlite", pytest.param("postgres", marks=pytest.mark.external)]
"""Every store: the PostgreSQL one against `scripts/postgres`, a fresh schema per test."""

# what the child processes of these tests run to open a store of a kind at a location
OPEN_IN_CHILD = """
import os
from agentcore.sessions import JsonlSessionStore, PostgresSessionStore, SqliteSessionStore
def open_store(kind, where):
    if kind == "postgres":
        return PostgresSessionStore(os.environ["AGENTCORE_TEST_POSTGRES_URL"], schema=where)
    return JsonlSessionStore(where) if kind == "jsonl" else SqliteSessionStore(where)
"""


@pytest.fixture(params=STORE_KINDS)
def kind(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    kind = str(request.param)
    if kind == "postgres":
        url = postgres_url()
        yield kind
        drop_schema(url, schema_for(tmp_path))
    else:
        yield kind


@pytest.fixture
def store(kind: str, tmp_path: Path) -> Iterator[SessionStore]:
    with open_store(kind, tmp_path) as s:
        yield s


def sample_messages() -> list[Any]:
    call = ToolCall(id="call-1", name="add", arguments={"a": 1, "b": [2, {"c": None}]})
    return [
        UserMessage(content="plain text", timestamp=1),
        UserMessage(
            content=[TextContent(text="see"), ImageContent(data="aGk=", mime_type="image/png")],
            timestamp=2,
        ),
        AssistantMessage(
            content=[
                ThinkingContent(thinking="hmm", thinking_signature="sig"),
                TextContent(text="calling", text_signature="t"),
                call,
            ],
            api="faux",
            provider="p",
            model="m",
            usage=Usage(input=10, output=5, cache_read=3),
            stop_reason="tool_use",
            timestamp=3,
        ),
        ToolResultMessage(
            tool_call_id="call-1",
            tool_name="add",
            content=[TextContent(text="3")],
            details={"steps": [1, 2], "ok": True},
            is_error=False,
            timestamp=4,
        ),
        AssistantMessage(content=[TextContent(text="3")], stop_reason="stop", timestamp=5),
    ]


# --- the shared suite --------------------------------------------------------------------------


def test_create_append_load_round_trip(store: SessionStore) -> None:
    messages = sample_messages()
    model = get_model("openai", "gpt-4o-mini")
    state = SessionState(
        system_prompt="Be brief.",
        model=model,
        thinking_level="medium",
        steering=[UserMessage(content="steer", timestamp=9)],
        follow_up=[UserMessage(content="follow", timestamp=10)],
    )
    session = store.create(state=state, messages=messages[:2], metadata={"title": "Chat"})
    for message in messages[2:]:
        session.append(message)
    data = store.load(session.id)
    assert data.messages == messages
    assert data.repaired == 0
    assert data.state == state
    assert data.state.model == model
    assert data.metadata == {"title": "Chat"}
    assert data.parent is None
    assert data.created_at <= data.updated_at


def test_custom_models_round_trip(store: SessionStore) -> None:
    model = Model(
        id="my-local",
        api="openai-completions",
        provider="my-server",
        base_url="http://127.0.0.1:8080/v1",
        headers={"x-a": "b"},
        compat=OpenAICompletionsCompat(thinking_format="none", supports_strict_mode=True),
    )
    session = store.create(state=SessionState(model=model))
    loaded = store.load(session.id).state
    # header values are never stored (they are often credentials), only their names
    assert loaded.model == dataclasses.replace(model, headers={})
    assert loaded.withheld_headers == ("x-a",)
    proxied = dataclasses.replace(get_model("openai", "gpt-4o-mini"), base_url="http://proxy/v1")
    session = store.create(state=SessionState(model=proxied))
    assert store.load(session.id).state.model == proxied  # stored fields win over the catalogue


def test_update_is_one_change(store: SessionStore) -> None:
    messages = sample_messages()
    session = store.create(messages=messages)
    session.update(
        truncate_to=2,
        messages=[UserMessage(content="edited", timestamp=7)],
        state=SessionState(system_prompt="new"),
    )
    data = session.load()
    assert [texts(m) for m in data.messages] == ["plain text", "see", "edited"]
    assert data.state.system_prompt == "new"
    session.update(truncate_to=0)
    assert session.load().messages == []
    with pytest.raises(ValueError, match="truncate_to"):
        session.update(truncate_to=-1)


def test_list_and_delete(store: SessionStore) -> None:
    first = store.create(metadata={"title": "one"})
    second = store.create(metadata={"title": "two"})
    listed = store.list()
    assert [s.id for s in listed] == [first.id, second.id]
    assert [s.metadata["title"] for s in listed] == ["one", "two"]
    assert store.exists(first.id)
    store.delete(first.id)
    assert not store.exists(first.id)
    assert [s.id for s in store.list()] == [second.id]
    with pytest.raises(SessionNotFoundError):
        store.load(first.id)
    with pytest.raises(SessionNotFoundError):
        store.delete(first.id)


def test_missing_and_invalid_session_ids(store: SessionStore) -> None:
    for call in (store.load, store.open, lambda i: store.append(i, UserMessage(content="x"))):
        with pytest.raises(SessionNotFoundError, match="no-such-session"):
            call("no-such-session")
    with pytest.raises(SessionNotFoundError, match="invalid session id"):
        store.load("../etc/passwd")
    with pytest.raises(LookupError):  # SessionNotFoundError is a LookupError
        store.load("missing")
    session = store.create(session_id="fixed-id")
    assert session.id == "fixed-id"
    with pytest.raises(SessionError, match="already exists"):
        store.create(session_id="fixed-id")


def test_branch_from_any_message(store: SessionStore) -> None:
    messages = sample_messages()
    state = SessionState(system_prompt="sp", steering=[UserMessage(content="queued")])
    origin = store.create(state=state, messages=messages, metadata={"title": "t"})
    branch = origin.branch(2)
    data = branch.load()
    assert data.messages == messages[:2]
    assert data.parent == SessionParent(session_id=origin.id, index=2)
    assert data.state.system_prompt == "sp" and list(data.state.steering) == []
    assert data.metadata == {"title": "t"}
    branch.append(UserMessage(content="another way", timestamp=8))
    assert store.load(origin.id).messages == messages  # the origin is untouched
    assert len(store.load(branch.id).messages) == 3
    assert store.branch(origin.id, 0).load().messages == []
    assert store.branch(origin.id, len(messages)).load().messages == messages
    with pytest.raises(IndexError):
        store.branch(origin.id, len(messages) + 1)
    infos = {s.id: s for s in store.list()}
    assert infos[branch.id].parent == SessionParent(session_id=origin.id, index=2)


def test_repair_on_load_gives_interrupted_calls_a_result(store: SessionStore) -> None:
    calls = [ToolCall(id="a", name="t"), ToolCall(id="b", name="t"), ToolCall(id="c", name="u")]
    assistant = AssistantMessage(content=calls, stop_reason="tool_use", timestamp=5)
    got_a = ToolResultMessage(tool_call_id="a", tool_name="t", content=[TextContent(text="ok")])
    session = store.create(messages=[UserMessage(content="go"), assistant, got_a])
    data = session.load()
    assert data.repaired == 2
    assert [m.role for m in data.messages] == ["user", "assistant"] + ["tool_result"] * 3
    assert [m.tool_call_id for m in data.messages[2:]] == ["a", "b", "c"]
    synthetic = data.messages[3]
    assert synthetic.is_error and texts(synthetic) == INTERRUPTED_TOOL_RESULT
    assert synthetic.timestamp == assistant.timestamp
    assert session.load() == data  # deterministic
    assert len(session.load(repair=False).messages) == 3  # the records are untouched


def test_repair_leaves_errored_and_answered_calls_alone() -> None:
    aborted = AssistantMessage(content=[ToolCall(id="x", name="t")], stop_reason="aborted")
    answered = AssistantMessage(content=[ToolCall(id="y", name="t")], stop_reason="tool_use")
    result = ToolResultMessage(tool_call_id="y", tool_name="t")
    messages = [UserMessage(content="u"), aborted, UserMessage(content="again"), answered, result]
    assert repair_transcript(messages) == (messages, 0)
    # a call cut in the middle of a transcript is repaired in place
    middle = [UserMessage(content="u"), answered, UserMessage(content="v")]
    repaired, added = repair_transcript(middle)
    assert added == 1 and [m.role for m in repaired] == ["user", "assistant", "tool_result", "user"]


def test_unknown_message_role_is_a_clear_error(store: SessionStore, kind: str) -> None:
    session = store.create(messages=[UserMessage(content="kept")])
    session.close()
    record = {"v": 1, "role": "mystery", "content": "?"}
    if isinstance(store, JsonlSessionStore):
        with open(store.path(session.id), "ab") as f:
            f.write(encode_line({"type": "message", "message": record}))
        where = f"{session.id}.jsonl:3"
    elif isinstance(store, PostgresSessionStore):
        import psycopg

        data = json.dumps(record)
        with psycopg.connect(store.url, options=f"-c search_path={store.schema}") as conn:
            conn.execute(
                "INSERT INTO messages VALUES (%s, 1, %s, %s)",
                (session.id, data, zlib.crc32(data.encode())),
            )
            conn.execute("UPDATE sessions SET message_count = 2")
        where = "message 1"
    else:
        assert isinstance(store, SqliteSessionStore)
        data = json.dumps(record)
        with sqlite3.connect(store.path) as conn:
            conn.execute(
                "INSERT INTO messages VALUES (?, 1, ?, ?)",
                (session.id, data, zlib.crc32(data.encode())),
            )
            conn.execute("UPDATE sessions SET message_count = 2")
        where = "message 1"
    with pytest.raises(SessionCorruptError, match="unknown message role 'mystery'") as info:
        store.load(session.id)
    assert where in str(info.value)
    assert "register_message_type" in str(info.value)


def test_application_messages_need_registering(store: SessionStore) -> None:
    @dataclass(frozen=True, kw_only=True)
    class Unregistered:
        text: str
        role: str = "unregistered-note"

    session = store.create()
    with pytest.raises(MessageFormatError, match="register_message_type"):
        session.append(Unregistered(text="x"))
    assert session.load().messages == []  # nothing half-written

    @register_message_type
    @dataclass(frozen=True, kw_only=True)
    class Note:
        text: str
        role: str = "test-sessions-note"

    session.append(Note(text="remember"))
    assert session.load().messages == [Note(text="remember")]


def test_values_that_are_not_json_are_refused(store: SessionStore) -> None:
    session = store.create()
    bad = ToolResultMessage(tool_call_id="c", tool_name="t", details={"when": object()})
    with pytest.raises(MessageFormatError, match="JSON"):
        session.append(bad)
    session.append(UserMessage(content="still fine"))
    assert [texts(m) for m in session.load().messages] == ["still fine"]


def test_one_writer_per_session(store: SessionStore, kind: str, tmp_path: Path) -> None:
    session = store.create()
    with open_store(kind, tmp_path) as other:
        with pytest.raises(SessionLockedError, match="open for writing"):
            other.open(session.id)
        with pytest.raises(SessionLockedError):
            other.append(session.id, UserMessage(content="x"))
        assert other.load(session.id).messages == []  # reading needs no lock
        session.close()
        reopened = other.open(session.id)
        reopened.append(UserMessage(content="from the other store"))
        with pytest.raises(SessionLockedError):
            store.open(session.id)
        reopened.close()
    store.open(session.id).append(UserMessage(content="back"))
    assert [texts(m) for m in store.load(session.id).messages] == ["from the other store", "back"]


HOLDER = (
    OPEN_IN_CHILD
    + """
import sys
kind, where, sid = sys.argv[1:4]
store = open_store(kind, where)
session = store.open(sid)
session.append(__import__("agentcore").UserMessage(content="from the child"))
print("ready", flush=True)
sys.stdin.readline()
store.close()
"""
)


@contextlib.contextmanager
def held_by_a_child(
    store: SessionStore, kind: str, tmp_path: Path
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """A new session of `store`, closed here and opened for writing by a child process that runs
    `HOLDER`; yields the session's id and the child."""
    session = store.create()
    session.close()
    where = str(store_location(kind, tmp_path))
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, kind, where, session.id],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as child:
        yield session.id, child


def test_a_session_held_by_another_process(store: SessionStore, kind: str, tmp_path: Path) -> None:
    with held_by_a_child(store, kind, tmp_path) as (session_id, child):
        try:
            assert child.stdout is not None and child.stdin is not None
            assert child.stdout.readline().strip() == "ready"
            with pytest.raises(SessionLockedError, match=f"pid {child.pid}"):
                store.open(session_id)
            assert [texts(m) for m in store.load(session_id).messages] == ["from the child"]
            child.stdin.write("\n")
            child.stdin.flush()
            assert child.wait(timeout=10) == 0
        finally:
            child.kill()
    store.open(session_id).append(UserMessage(content="after"))
    assert len(store.load(session_id).messages) == 2


def test_a_dead_writer_does_not_block_the_session(
    store: SessionStore, kind: str, tmp_path: Path
) -> None:
    with held_by_a_child(store, kind, tmp_path) as (session_id, child):
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        child.kill()  # SIGKILL: no chance to release anything
        child.wait()
    store.open(session_id).append(UserMessage(content="taken over"))
    assert len(store.load(session_id).messages) == 2


WRITER = (
    OPEN_IN_CHILD
    + """
import sys
from agentcore import UserMessage
kind, where, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = open_store(kind, where)
session = store.create()
for i in range(n):
    session.append(UserMessage(content=f"m{i}"))
print(session.id)
store.close()
"""
)


def test_two_processes_writing_one_store_at_once(kind: str, tmp_path: Path) -> None:
    where = str(store_location(kind, tmp_path))
    open_store(kind, tmp_path).close()  # create the directory or database first
    command = [sys.executable, "-c", WRITER, kind, where, "300"]
    ids = []
    with (
        subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as one,
        subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as two,
    ):
        for child in (one, two):
            out, _ = child.communicate(timeout=60)
            assert child.returncode == 0
            ids.append(out.strip())
    with open_store(kind, tmp_path) as store:
        for sid in ids:
            assert [texts(m) for m in store.load(sid).messages] == [f"m{i}" for i in range(300)]


# --- JSONL specifics ---------------------------------------------------------------------------


def jsonl_session(tmp_path: Path, n: int = 3) -> tuple[JsonlSessionStore, str, Path]:
    store = JsonlSessionStore(tmp_path)
    session = store.create(messages=[UserMessage(content=f"m{i}") for i in range(n)])
    session.close()
    return store, session.id, store.path(session.id)


@pytest.mark.parametrize("tail", [b'{"type":"message","mess', b"\x00\x00"])
def test_jsonl_torn_last_line_is_dropped_with_a_warning(tmp_path: Path, tail: bytes) -> None:
    store, sid, path = jsonl_session(tmp_path)
    with open(path, "ab") as f:
        f.write(tail)
    with pytest.warns(SessionRecoveryWarning, match=r"\.jsonl:5: dropped a torn last record"):
        data = store.load(sid)
    assert [texts(m) for m in data.messages] == ["m0", "m1", "m2"]
    with pytest.warns(SessionRecoveryWarning, match="cut off a torn last record"):
        session = store.open(sid)
    session.append(UserMessage(content="m3"))
    assert [texts(m) for m in store.load(sid).messages] == ["m0", "m1", "m2", "m3"]


def test_jsonl_corruption_before_the_last_line_names_file_and_line(tmp_path: Path) -> None:
    store, sid, path = jsonl_session(tmp_path)
    lines = path.read_bytes().split(b"\n")
    lines[2] = lines[2][:20]
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(SessionCorruptError, match=rf"{sid}\.jsonl:3: not valid JSON"):
        store.load(sid)
    with pytest.raises(SessionCorruptError, match=":3: not valid JSON"):
        Agent(session=store.open(sid))


def test_jsonl_bad_files(tmp_path: Path) -> None:
    store, sid, path = jsonl_session(tmp_path)
    path.write_bytes(b"")
    with pytest.raises(SessionCorruptError, match="empty"):
        store.load(sid)
    header = {"type": "session", "format": 99, "id": sid, "created_at": 0}
    path.write_text(json.dumps(header) + "\n")
    with pytest.raises(SessionCorruptError, match="newer than this agentcore"):
        store.load(sid)
    header["format"] = 1
    path.write_text(json.dumps(header) + "\n" + json.dumps({"type": "surprise"}) + "\n")
    with pytest.raises(SessionCorruptError, match=r":2: unknown record type 'surprise'"):
        store.load(sid)


def test_jsonl_format_0_is_read_and_migrated_when_written(tmp_path: Path) -> None:
    fixture = FIXTURES / "v0.jsonl"
    store = JsonlSessionStore(tmp_path)
    (tmp_path / "legacy.jsonl").write_bytes(fixture.read_bytes())
    data = store.load("legacy")
    assert [m.role for m in data.messages] == ["user", "assistant", "tool_result", "assistant"]
    assert data.state.system_prompt == "You are a calculator."
    assert data.state.model == get_model("openai", "gpt-4o-mini")
    assert data.state.thinking_level == "low"
    assert [s.id for s in store.list()] == ["legacy"]
    session = store.open("legacy")  # rewritten in format 1
    first = json.loads((tmp_path / "legacy.jsonl").read_text().splitlines()[0])
    assert first["type"] == "session" and first["format"] == SESSION_FORMAT_VERSION
    session.append(UserMessage(content="new"))
    again = store.load("legacy")
    assert again.messages[:4] == data.messages and texts(again.messages[4]) == "new"
    assert again.state == data.state


def test_jsonl_bare_transcripts_are_format_0(tmp_path: Path) -> None:
    messages = sample_messages()
    lines = [json.dumps(to_json(m)) for m in messages]
    (tmp_path / "dump.jsonl").write_text("\n".join(lines) + "\n")
    assert JsonlSessionStore(tmp_path).load("dump").messages == messages


def test_jsonl_records_are_written_as_they_happen(tmp_path: Path) -> None:
    store = JsonlSessionStore(tmp_path, fsync=True)
    session = store.create()
    session.append(UserMessage(content="one"))
    # nothing buffered: another reader sees the record at once
    lines = store.path(session.id).read_text().splitlines()
    assert json.loads(lines[-1])["message"]["content"] == "one"
    store.close()


# --- SQLite specifics --------------------------------------------------------------------------


def test_sqlite_schema_0_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    messages = sample_messages()
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE session_messages (session_id TEXT, position INTEGER, message TEXT)"
        )
        for i, m in reversed(list(enumerate(messages))):
            conn.execute(
                "INSERT INTO session_messages VALUES ('old', ?, ?)",
                (i * 10, json.dumps(to_json(m))),
            )
    with SqliteSessionStore(path) as store:
        assert store.load("old").messages == messages
        assert [s.id for s in store.list()] == ["old"]
        store.append("old", UserMessage(content="new"))
        assert len(store.load("old").messages) == len(messages) + 1
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (SQLITE_SCHEMA_VERSION,)
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_sqlite_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version=7")
    with pytest.raises(SessionError, match="newer than this agentcore"):
        SqliteSessionStore(path)


# --- the Agent with a session ------------------------------------------------------------------


def echo(name: str = "echo") -> Any:
    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult.text(f"echo {args}")

    return make_tool(name, execute)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_agent_stores_each_message_at_message_end(
    store: SessionStore, anyio_backend: str
) -> None:
    faux = FauxProvider([faux_tool_call("echo", {"x": 1}), faux_text("done")])
    session = store.create()
    agent = Agent(
        initial_state={"model": faux.model, "tools": [echo()], "system_prompt": "sp"},
        session=session,
    )
    stored_at_end: list[tuple[int, int]] = []

    def listener(event: AgentEvent) -> None:
        if event.type == "message_end":
            stored = store.load(session.id, repair=False).messages
            stored_at_end.append((len(stored), len(agent.state.messages)))
            assert stored[-1] == event.message

    agent.subscribe(listener)
    await agent.prompt("hi")
    assert stored_at_end == [(1, 1), (2, 2), (3, 3), (4, 4)]
    data = store.load(session.id)
    assert data.messages == agent.state.messages
    assert data.state.system_prompt == "sp" and data.state.model == faux.model
    assert faux.calls[0].options.session_id == session.id  # prompt-cache affinity by default


@pytest.mark.anyio
async def test_agent_resumes_a_session(store: SessionStore) -> None:
    faux = FauxProvider([faux_text("first")])
    session = store.create()
    agent = Agent(
        initial_state={"model": faux.model, "system_prompt": "sp", "thinking_level": "high"},
        session=session,
    )
    await agent.prompt("hi")
    agent.follow_up("queued for later")
    session.close()

    later = FauxProvider([faux_text("second")])
    resumed = Agent(session=store.open(session.id), stream_fn=later.stream_fn)
    assert resumed.state.messages == agent.state.messages
    assert resumed.state.system_prompt == "sp" and resumed.state.thinking_level == "high"
    assert resumed.state.model == faux.model
    assert [texts(m) for m in resumed.follow_up_queue] == ["queued for later"]
    await resumed.continue_()  # the assistant tail runs the queued follow-up
    assert [texts(m) for m in resumed.state.messages] == [
        "hi",
        "first",
        "queued for later",
        "second",
    ]
    assert store.load(session.id).messages == resumed.state.messages
    assert list(store.load(session.id).state.follow_up) == []


@pytest.mark.anyio
async def test_agent_resumes_an_interrupted_tool_batch(store: SessionStore) -> None:
    calls = AssistantMessage(
        content=[ToolCall(id="c1", name="echo"), ToolCall(id="c2", name="echo")],
        stop_reason="tool_use",
    )
    first = ToolResultMessage(tool_call_id="c1", tool_name="echo", content=[TextContent(text="1")])
    session = store.create(messages=[UserMessage(content="go"), calls, first])
    faux = FauxProvider([faux_text("recovered")])
    agent = Agent(initial_state={"model": faux.model}, session=session)
    assert [m.role for m in agent.state.messages][-2:] == ["tool_result", "tool_result"]
    await agent.continue_()
    sent = faux.calls[0].context.messages
    assert [getattr(m, "tool_call_id", None) for m in sent if m.role == "tool_result"] == [
        "c1",
        "c2",
    ]
    stored = store.load(session.id, repair=False).messages
    assert stored == agent.state.messages  # the repair was written
    assert texts(stored[3]) == INTERRUPTED_TOOL_RESULT


@pytest.mark.anyio
async def test_agent_keeps_the_stored_queues_current(store: SessionStore) -> None:
    gate = anyio.Event()

    async def respond(call: Any) -> AssistantMessage:
        await gate.wait()
        return faux_text("answer")

    faux = FauxProvider([respond])
    session = store.create()
    agent = Agent(initial_state={"model": faux.model}, session=session)
    agent.steer("idle steer")  # written at once
    assert [texts(m) for m in store.load(session.id).state.steering] == ["idle steer"]
    agent.clear_steering_queue()
    assert list(store.load(session.id).state.steering) == []
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.prompt, "hi")
        with anyio.fail_after(5):
            while faux.call_count == 0:  # noqa: ASYNC110
                await anyio.sleep(0.001)
        await anyio.to_thread.run_sync(agent.follow_up, "from a thread")  # written at once
        assert [texts(m) for m in store.load(session.id).state.follow_up] == ["from a thread"]
        agent.follow_up("from the loop")  # written with the next message
        agent.abort()
        gate.set()
    data = store.load(session.id)
    assert data.messages == agent.state.messages
    assert data.messages[-1].stop_reason == "aborted"
    assert [texts(m) for m in data.state.follow_up] == ["from a thread", "from the loop"]


@pytest.mark.anyio
async def test_agent_edits_reset_and_initial_messages_reach_the_session(
    store: SessionStore,
) -> None:
    faux = FauxProvider([faux_text("a1"), faux_text("a2")])
    session = store.create()
    earlier = [UserMessage(content="earlier"), AssistantMessage(content=[TextContent(text="ok")])]
    agent = Agent(initial_state={"model": faux.model, "messages": earlier}, session=session)
    await agent.prompt("q1")
    assert [texts(m) for m in store.load(session.id).messages] == ["earlier", "ok", "q1", "a1"]
    agent.state.messages = agent.state.messages[:1]  # an edit, written at the next run
    await agent.prompt("q2")
    assert [texts(m) for m in store.load(session.id).messages] == ["earlier", "q2", "a2"]
    agent.reset()
    assert store.load(session.id).messages == []
    with pytest.raises(Exception, match="already has"):
        Agent(initial_state={"messages": earlier}, session=store.create(messages=earlier))


@pytest.mark.anyio
async def test_agent_with_an_unstorable_message_fails_clearly(store: SessionStore) -> None:
    @dataclass(frozen=True, kw_only=True)
    class Private:
        role: str = "private-unregistered"

    faux = FauxProvider([faux_text("never"), faux_text("later")])
    session = store.create()
    agent = Agent(
        initial_state={"model": faux.model},
        session=session,
        convert_to_llm=lambda ms: [m for m in ms if m.role != "private-unregistered"],
    )
    await agent.prompt(Private())  # not kept (it cannot be stored): the run says so
    assert agent.state.messages[-1].stop_reason == "error"
    assert "register_message_type" in (agent.state.error_message or "")
    assert not agent.state.is_streaming
    stored = store.load(session.id).messages
    assert [m.role for m in stored] == ["assistant"]  # the error is stored; nothing else lost
    assert stored == agent.state.messages
    await agent.prompt("next")  # and the agent is not wedged
    assert agent.state.messages[-1].text == "never"
    assert store.load(session.id).messages == agent.state.messages


def test_agent_session_must_be_a_session(tmp_path: Path) -> None:
    with pytest.raises(Exception, match=r"store\.create"):
        Agent(session="some-id")  # type: ignore[arg-type]


def test_fixture_v0_exists() -> None:
    assert (FIXTURES / "v0.jsonl").is_file()


def test_sessions_module_docstring_example_names_exist() -> None:
    import agentcore.sessions as sessions

    assert set(sessions.__all__) <= set(dir(sessions))
    source = textwrap.dedent(sessions.__doc__ or "")
    assert "SqliteSessionStore" in source


# --- against a real model (scripts/local-model) ------------------------------------------------


@pytest.mark.local_llm
@pytest.mark.anyio
@pytest.mark.timeout(300)
async def test_a_session_resumed_in_a_new_agent_remembers_on_the_local_model(
    tmp_path: Path,
) -> None:
    from e2e.local_server import LocalModelUnavailable, ensure_local_model

    try:
        local = ensure_local_model()
    except LocalModelUnavailable as exc:
        pytest.skip(str(exc))
    options: dict[str, Any] = {"temperature": 0.0, "max_tokens": 24}
    with SqliteSessionStore(tmp_path / "chats.db") as store:
        session = store.create()
        agent = Agent(
            initial_state={
                "model": local.model,
                "system_prompt": "You are a terse assistant. Answer in a few words.",
            },
            session=session,
            **options,
        )
        with anyio.fail_after(240):
            await agent.prompt("My name is Alice. Just reply OK.")
        assert agent.state.messages[-1].stop_reason in ("stop", "length")
        session.close()

        resumed = Agent(session=store.open(session.id), **options)  # model and prompt restored
        assert resumed.state.model == local.model
        with anyio.fail_after(240):
            await resumed.prompt("What is my name? Answer with the name only.")
        answer = resumed.state.messages[-1]
        assert answer.stop_reason in ("stop", "length"), answer.error_message
        assert "alice" in answer.text.lower()
        assert store.load(session.id).messages == resumed.state.messages
