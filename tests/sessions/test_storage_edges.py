"""Storage at its edges (issue 8): records are checksummed and damage is named, never passed on
or dropped; session ids are matched whole; no secret reaches a store; whatever a tool returns, an
Agent's session stays equal to its memory and the next prompt works."""

from __future__ import annotations

import dataclasses
import datetime
import json
import logging
import math
import random
import sqlite3
import tempfile
import warnings
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from agentcore import (
    Agent,
    AgentTool,
    AgentToolResult,
    AssistantMessage,
    MessageFormatError,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from agentcore._agent.session import SessionBinding
from agentcore.llm import Model
from agentcore.messages import register_message_type, to_json
from agentcore.sessions import (
    SESSION_FORMAT_VERSION,
    JsonlSessionStore,
    SessionCorruptError,
    SessionError,
    SessionNotFoundError,
    SessionRecoveryWarning,
    SessionState,
    SessionStore,
    SqliteSessionStore,
)
from agentcore.sessions._sqlite_schema import SQLITE_SCHEMA_VERSION
from agentcore.testing import FauxProvider, faux_text, faux_tool_call
from support.postgres import STORE_KINDS, open_postgres_store, raw_dump


def open_store(kind: str, where: Path) -> SessionStore:
    if kind == "jsonl":
        return JsonlSessionStore(where / "sessions")
    if kind == "postgres":
        return open_postgres_store(where)
    return SqliteSessionStore(where / "sessions.db")


def raw_files(kind: str, where: Path) -> list[Path]:
    """Every file a store wrote (the database's WAL and shared-memory files too)."""
    if kind == "jsonl":
        return sorted((where / "sessions").iterdir())
    if kind == "postgres":
        return [raw_dump(where)]  # what the database holds, as pg_dump writes it
    return sorted(where.glob("sessions.db*"))


@pytest.fixture(params=STORE_KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store(kind: str, tmp_path: Path) -> Iterator[SessionStore]:
    with open_store(kind, tmp_path) as s:
        yield s


def transcript() -> list[Any]:
    return [
        UserMessage(content="What is 2 + 3?", timestamp=1),
        AssistantMessage(
            content=[TextContent(text="Let me add."), ToolCall(id="c1", name="add")],
            stop_reason="tool_use",
            timestamp=2,
        ),
        ToolResultMessage(
            tool_call_id="c1", tool_name="add", content=[TextContent(text="5")], timestamp=3
        ),
        AssistantMessage(content=[TextContent(text="It is five.")], timestamp=4),
    ]


# --- session ids --------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["abc\n", "abc\r\n", "\nabc", "a/b", "", "a" * 129, "ab c"])
def test_session_ids_are_matched_whole(store: SessionStore, bad: str) -> None:
    for call in (
        lambda: store.create(session_id=bad),
        lambda: store.load(bad),
        lambda: store.open(bad),
        lambda: store.append(bad, UserMessage(content="x")),
    ):
        with pytest.raises(SessionNotFoundError, match="invalid session id"):
            call()
    assert store.list() == []


# --- JSONL: checksums, torn writes and corruption -----------------------------------------------


def jsonl(tmp_path: Path) -> tuple[JsonlSessionStore, str, Path]:
    store = JsonlSessionStore(tmp_path)
    session = store.create(state=SessionState(system_prompt="Be brief."), messages=transcript())
    session.close()
    return store, session.id, store.path(session.id)


def test_jsonl_records_carry_a_checksum_of_their_json(tmp_path: Path) -> None:
    _, _, path = jsonl(tmp_path)
    lines = path.read_bytes().splitlines()
    assert len(lines) == 5
    for line in lines:
        record = json.loads(line)  # still plain JSON
        body = line[: line.rindex(b',"crc":"')] + b"}"
        assert record["crc"] == f"{zlib.crc32(body):08x}"
        assert json.loads(body) == {k: v for k, v in record.items() if k != "crc"}
    assert json.loads(lines[0])["format"] == SESSION_FORMAT_VERSION == 2


def test_jsonl_a_flipped_byte_in_a_complete_last_record_is_corruption(tmp_path: Path) -> None:
    store, sid, path = jsonl(tmp_path)
    data = bytearray(path.read_bytes())
    at = data.rindex(b"five")
    data[at] ^= 0x01  # "five" -> "give": still valid JSON, newline-terminated
    path.write_bytes(bytes(data))
    with pytest.raises(SessionCorruptError, match=rf"{sid}\.jsonl:5: checksum mismatch"):
        store.load(sid)
    with pytest.raises(SessionCorruptError, match=r"\.jsonl:5: checksum mismatch"):
        Agent(session=store.open(sid))
    assert path.read_bytes() == bytes(data)  # never cut away on the next open


def test_jsonl_a_damaged_last_line_that_is_not_json_is_corruption(tmp_path: Path) -> None:
    store, sid, path = jsonl(tmp_path)
    data = path.read_bytes()
    damaged = data[:-30] + b"\x00" + data[-29:]  # newline-terminated, not JSON
    path.write_bytes(damaged)
    with pytest.raises(SessionCorruptError, match=r"\.jsonl:5: checksum mismatch"):
        store.load(sid)
    with pytest.raises(SessionCorruptError):
        store.open(sid).append(UserMessage(content="more"))
        store.load(sid)
    assert path.read_bytes().startswith(damaged)  # the damaged record was not cut away


def test_jsonl_every_flipped_bit_is_detected(tmp_path: Path) -> None:
    """Flip a bit of each byte of a session file in turn (every bit of the last record's end):
    the load either fails naming the line, or gives exactly what was stored (a newline that
    became a vertical tab is whitespace)."""
    store, sid, path = jsonl(tmp_path)
    original = path.read_bytes()
    expected = store.load(sid)
    outcomes = {"corrupt": 0, "same": 0}
    rng = random.Random(8)
    flips = [(at, rng.randrange(8)) for at in range(len(original) - 40)]
    flips += [(at, bit) for at in range(len(original) - 40, len(original)) for bit in range(8)]
    for at, bit in flips:
        data = bytearray(original)
        data[at] ^= 1 << bit
        path.write_bytes(bytes(data))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", SessionRecoveryWarning)
                loaded = store.load(sid)
        except SessionCorruptError as exc:
            assert f"{sid}.jsonl:" in str(exc)
            outcomes["corrupt"] += 1
        else:
            assert loaded.messages == expected.messages, (at, bit)
            assert loaded.state == expected.state and loaded.metadata == expected.metadata
            outcomes["same"] += 1
    assert outcomes["corrupt"] >= len(flips) - 1, outcomes


def test_jsonl_only_an_unterminated_partial_line_is_a_torn_write(tmp_path: Path) -> None:
    store, sid, path = jsonl(tmp_path)
    whole = path.read_bytes()
    last = whole.splitlines(keepends=True)[-1]
    for cut in (1, len(last) // 2, len(last) - 2):
        path.write_bytes(whole[: len(whole) - len(last) + cut])
        with pytest.warns(SessionRecoveryWarning, match=r"\.jsonl:5: dropped a torn last record"):
            assert len(store.load(sid).messages) == 3


def test_jsonl_a_last_record_that_lost_only_its_newline_is_kept(tmp_path: Path) -> None:
    store, sid, path = jsonl(tmp_path)
    path.write_bytes(path.read_bytes()[:-1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert store.load(sid).messages == transcript()
        session = store.open(sid)  # completes the line before appending
    session.append(UserMessage(content="next", timestamp=5))
    assert store.load(sid).messages == [*transcript(), UserMessage(content="next", timestamp=5)]


def test_jsonl_a_complete_record_with_a_damaged_line_end_is_corruption(tmp_path: Path) -> None:
    store, sid, path = jsonl(tmp_path)
    damaged = path.read_bytes()[:-1] + b"*"  # the newline flipped into another byte
    path.write_bytes(damaged)
    with pytest.raises(SessionCorruptError, match=r"\.jsonl:5:"):
        store.load(sid)
    with pytest.raises(SessionCorruptError, match=r"\.jsonl:5: the last line is damaged"):
        store.open(sid)
    assert path.read_bytes() == damaged


def test_jsonl_a_record_of_the_wrong_shape_names_file_line_and_field(tmp_path: Path) -> None:
    from agentcore.sessions._jsonl_format import encode_line

    store, sid, path = jsonl(tmp_path)
    bad = {"v": 1, "role": "user", "content": 5}
    with open(path, "ab") as f:
        f.write(encode_line({"type": "message", "message": bad}))
    with pytest.raises(SessionCorruptError) as info:
        store.load(sid)
    assert f"{sid}.jsonl:6: UserMessage.content must be a string or a list" in str(info.value)


def format_1_file(path: Path, state: dict[str, Any]) -> list[Any]:
    """A session file as agentcore wrote it before checksums (format 1)."""
    messages = transcript()
    header = {
        "type": "session",
        "format": 1,
        "id": path.stem,
        "created_at": 5,
        "parent": None,
        "metadata": {"title": "old"},
        "state": state,
    }
    lines = [header] + [{"type": "message", "message": to_json(m)} for m in messages[:3]]
    lines.append({"type": "update", "messages": [to_json(messages[3])]})
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return messages


SECRET = "sk-test-5ecret-value"
MODEL_WITH_SECRETS = Model(
    id="gateway-model",
    api="openai-completions",
    provider="my-gateway",
    base_url="https://bob:pw-5ecret@gateway.example/v1",
    headers={"Authorization": f"Bearer {SECRET}", "X-Team": "blue"},
)


def test_jsonl_format_1_files_still_load_and_are_rewritten_checked(tmp_path: Path) -> None:
    store = JsonlSessionStore(tmp_path)
    path = tmp_path / "old.jsonl"
    state = {
        "system_prompt": "sp",
        "model": {"id": "gateway-model", "api": "openai-completions", "provider": "my-gateway"}
        | {"headers": dict(MODEL_WITH_SECRETS.headers)},
    }
    messages = format_1_file(path, state)
    data = store.load("old")
    assert data.messages == messages and data.metadata == {"title": "old"}
    assert dict(data.state.model.headers) == dict(MODEL_WITH_SECRETS.headers)  # type: ignore[union-attr]
    assert SECRET in path.read_text()  # reading changes nothing
    session = store.open("old")  # rewritten in format 2: checksums, no header values
    session.append(UserMessage(content="new", timestamp=9))
    text = path.read_text()
    assert SECRET not in text
    assert all('"crc":"' in line for line in text.splitlines())
    assert json.loads(text.splitlines()[0])["format"] == 2
    again = store.load("old")
    assert again.messages == [*messages, UserMessage(content="new", timestamp=9)]
    assert again.created_at == 5 and again.state.system_prompt == "sp"
    assert again.state.withheld_headers == ("Authorization", "X-Team")
    assert again.state.model is not None and dict(again.state.model.headers) == {}


def test_jsonl_a_format_2_header_without_its_checksum_is_corruption(tmp_path: Path) -> None:
    store, sid, path = jsonl(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    header = json.loads(lines[0])
    del header["crc"]
    path.write_bytes(json.dumps(header).encode() + b"\n" + b"".join(lines[1:]))
    with pytest.raises(SessionCorruptError, match=r"\.jsonl:1: the format-2 session header"):
        store.load(sid)
    assert [s.id for s in store.list()] == []  # listed as unreadable (a warning), not raised


# --- SQLite: damage is SessionCorruptError ------------------------------------------------------


def sqlite_session(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "s.db"
    with SqliteSessionStore(path) as store:
        session = store.create(state=SessionState(system_prompt="Be brief."), messages=transcript())
    assert not Path(f"{path}-wal").exists()  # checkpointed into the database file
    return path, session.id


def test_sqlite_garbage_is_not_a_session_database(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    path.write_bytes(b"these are not the pages you are looking for\n" * 200)
    with pytest.raises(SessionCorruptError, match=r"s\.db") as info:
        SqliteSessionStore(path)
    assert isinstance(info.value.__cause__, sqlite3.DatabaseError)
    assert "file is not a database" in str(info.value)


def test_sqlite_a_truncated_file_is_corruption(tmp_path: Path) -> None:
    path, sid = sqlite_session(tmp_path)
    with SqliteSessionStore(path) as store:  # a bigger session, over several pages
        store.append(sid, UserMessage(content="x" * 20_000, timestamp=9))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(SessionCorruptError, match=r"s\.db"), SqliteSessionStore(path) as store:
        store.load(sid)


def test_sqlite_a_flipped_byte_in_a_message_is_corruption(tmp_path: Path) -> None:
    path, sid = sqlite_session(tmp_path)
    data = bytearray(path.read_bytes())
    at = data.index(b"It is five.")
    data[at] ^= 0x20  # "It" -> "it": valid JSON, valid UTF-8, different text
    path.write_bytes(bytes(data))
    with (
        SqliteSessionStore(path) as store,
        pytest.raises(SessionCorruptError, match=rf"session '{sid}' message 3: checksum"),
    ):
        store.load(sid)


@pytest.mark.parametrize("column", ["data", "state", "metadata"])
def test_sqlite_broken_utf8_or_json_is_corruption(tmp_path: Path, column: str) -> None:
    path, sid = sqlite_session(tmp_path)
    with sqlite3.connect(path) as conn:
        if column == "data":
            conn.execute(
                "UPDATE messages SET data = CAST(X'7b22ff' AS TEXT), crc = ? WHERE seq = 1",
                (zlib.crc32(b'{"\xff'),),
            )
        else:
            conn.execute(f"UPDATE sessions SET {column} = CAST(X'7bff7d' AS TEXT)")
    with SqliteSessionStore(path) as store:
        with pytest.raises(SessionCorruptError, match=r"s\.db: session"):
            store.load(sid)
        if column == "metadata":
            assert store.list() == []  # listed as unreadable (a warning), not raised


def test_sqlite_lost_rows_are_corruption(tmp_path: Path) -> None:
    path, sid = sqlite_session(tmp_path)
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM messages WHERE seq = 1")
    with (
        SqliteSessionStore(path) as store,
        pytest.raises(SessionCorruptError, match="3 message rows, expected 4"),
    ):
        store.load(sid)


def test_sqlite_random_flips_never_leak_sqlite_errors_or_change_data(tmp_path: Path) -> None:
    path, sid = sqlite_session(tmp_path)
    original = path.read_bytes()
    with SqliteSessionStore(path) as store:
        expected = store.load(sid)
    rng = random.Random(8)
    outcomes: dict[str, int] = {}
    for _ in range(150):
        data = bytearray(original)
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        path.write_bytes(bytes(data))
        for suffix in ("-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        try:
            with SqliteSessionStore(path) as store:
                loaded = store.load(sid)
        except SessionError as exc:  # SessionCorruptError, or a header flip ("newer schema")
            outcomes[type(exc).__name__] = outcomes.get(type(exc).__name__, 0) + 1
        else:
            assert loaded.messages == expected.messages
            assert loaded.state == expected.state and loaded.metadata == expected.metadata
            outcomes["same"] = outcomes.get("same", 0) + 1
    assert outcomes.get("same", 0) > 0


def schema_1_database(path: Path) -> list[Any]:
    """A database as agentcore wrote it before checksums (schema 1), with header values."""
    messages = transcript()
    state = {
        "system_prompt": "sp",
        "model": {
            "id": "gateway-model",
            "api": "openai-completions",
            "provider": "my-gateway",
            "base_url": MODEL_WITH_SECRETS.base_url,
            "headers": dict(MODEL_WITH_SECRETS.headers),
        },
    }
    with sqlite3.connect(path) as conn:
        conn.executescript(
            """
            CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL, parent_id TEXT, parent_index INTEGER,
                metadata TEXT NOT NULL DEFAULT '{}', state TEXT NOT NULL DEFAULT '{}',
                message_count INTEGER NOT NULL DEFAULT 0);
            CREATE TABLE messages (session_id TEXT NOT NULL REFERENCES sessions(id)
                ON DELETE CASCADE, seq INTEGER NOT NULL, data TEXT NOT NULL,
                PRIMARY KEY (session_id, seq)) WITHOUT ROWID;
            CREATE TABLE writers (session_id TEXT PRIMARY KEY, pid INTEGER NOT NULL,
                host TEXT NOT NULL, token TEXT NOT NULL, since INTEGER NOT NULL);
            PRAGMA user_version=1;
            """
        )
        conn.execute(
            "INSERT INTO sessions VALUES ('old', 5, 6, NULL, NULL, '{\"t\":1}', ?, ?)",
            (json.dumps(state), len(messages)),
        )
        conn.executemany(
            "INSERT INTO messages VALUES ('old', ?, ?)",
            [(i, json.dumps(to_json(m))) for i, m in enumerate(messages)],
        )
    return messages


def test_sqlite_schema_1_is_migrated_with_checksums_and_without_secrets(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    messages = schema_1_database(path)
    assert SECRET.encode() in path.read_bytes()
    with SqliteSessionStore(path) as store:
        data = store.load("old")
        assert data.messages == messages and data.metadata == {"t": 1}
        assert data.state.withheld_headers == ("Authorization", "X-Team")
        assert data.state.model is not None
        assert data.state.model.base_url == "https://gateway.example/v1"
    for file in tmp_path.iterdir():
        assert SECRET.encode() not in file.read_bytes(), file
        assert b"pw-5ecret" not in file.read_bytes(), file
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (SQLITE_SCHEMA_VERSION,)
        conn.execute("UPDATE messages SET data = replace(data, 'five', 'six!') WHERE seq = 3")
    with SqliteSessionStore(path) as store, pytest.raises(SessionCorruptError, match="checksum"):
        store.load("old")


# --- no secret reaches a store ------------------------------------------------------------------


@pytest.mark.anyio
async def test_no_header_value_or_api_key_reaches_a_store(
    kind: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    faux = FauxProvider([faux_text("one"), faux_text("two"), faux_text("three")])
    with open_store(kind, tmp_path) as store:
        session = store.create()
        agent = Agent(
            initial_state={"model": MODEL_WITH_SECRETS, "system_prompt": "sp"},
            session=session,
            stream_fn=faux.stream_fn,
            api_key="sk-agent-key-123",
            headers={"X-Request-Key": "rk-secret-456"},
        )
        await agent.prompt("hello")
        agent.steer("queued")  # the state, with the model, is written again
        branch = session.branch(2)
        assert faux.calls[0].model.headers == MODEL_WITH_SECRETS.headers  # in memory: used
        session.close()

        # resumed with the stored model: no header values, a warning that says what to do
        resumed = Agent(session=store.open(session.id), stream_fn=faux.stream_fn)
        assert resumed.state.model == dataclasses.replace(
            MODEL_WITH_SECRETS, headers={}, base_url="https://gateway.example/v1"
        )
        with caplog.at_level(logging.WARNING, logger="agentcore.sessions"):
            await resumed.prompt("again")
        assert "Authorization, X-Team" in caplog.text and "initial_state" in caplog.text
        assert store.load(session.id).state.withheld_headers == ("Authorization", "X-Team")
        resumed.session.close()  # type: ignore[union-attr]

        # resumed with the model passed again: its headers are used, no warning
        caplog.clear()
        again = Agent(
            initial_state={"model": MODEL_WITH_SECRETS},
            session=store.open(session.id),
            stream_fn=faux.stream_fn,
        )
        with caplog.at_level(logging.WARNING, logger="agentcore.sessions"):
            await again.prompt("once more")
        assert faux.calls[-1].model.headers == MODEL_WITH_SECRETS.headers
        assert "whose values sessions never store" not in caplog.text
        assert branch.load().state.withheld_headers == ("Authorization", "X-Team")
    for file in raw_files(kind, tmp_path):
        raw = file.read_bytes()
        for secret in (SECRET, "pw-5ecret", "sk-agent-key-123", "rk-secret-456"):
            assert secret.encode() not in raw, (file, secret)
    assert b"Authorization" in b"".join(f.read_bytes() for f in raw_files(kind, tmp_path))


# --- an Agent with a session never wedges -------------------------------------------------------


def odd_values() -> dict[str, Any]:
    looped: list[Any] = ["me"]
    looped.append(looped)
    return {
        "nan": math.nan,
        "inf": {"score": -math.inf},
        "datetime": {"when": datetime.datetime(2024, 6, 1, 12, 0)},
        "bytes": b"\x89PNG",
        "set": {"tags": {"a", "b"}},
        "tuple-keys": {(1, 2): "pair"},
        "generator": (n for n in range(3)),
        "cycle": looped,
        "tuple": {"point": (1, 2)},
        "int-keys": {1: "one"},
    }


def odd_tool(details: Any) -> AgentTool:
    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult(content=[TextContent(text="measured")], details=details)

    return AgentTool(
        name="measure", description="Measure.", parameters={"type": "object"}, execute=execute
    )


async def run_odd_tool(store: SessionStore, details: Any) -> tuple[Agent, str]:
    faux = FauxProvider([faux_tool_call("measure", {}), faux_text("done"), faux_text("again")])
    session = store.create()
    agent = Agent(
        initial_state={"model": faux.model, "tools": [odd_tool(details)]}, session=session
    )
    await agent.prompt("measure it")
    assert [m.role for m in agent.state.messages] == [
        "user",
        "assistant",
        "tool_result",
        "assistant",
    ]
    assert agent.state.messages[-1].text == "done"
    await agent.prompt("and again")  # the next prompt works
    assert agent.state.messages[-1].text == "again"
    return agent, session.id


@pytest.mark.anyio
@pytest.mark.parametrize("name", list(odd_values()))
async def test_odd_tool_values_never_wedge_an_agent(store: SessionStore, name: str) -> None:
    agent, sid = await run_odd_tool(store, odd_values()[name])
    stored = store.load(sid).messages
    assert len(stored) == len(agent.state.messages) == 6
    assert stored == agent.state.messages
    result = stored[2]
    assert isinstance(result, ToolResultMessage)
    text = result.content[0].text  # type: ignore[union-attr]
    if name in ("nan", "inf", "bytes", "tuple-keys", "generator", "cycle"):
        # The loop's JSON rule makes the call an error result naming what was not JSON (the
        # session's own "details not stored" fallback is for values that bypass the loop).
        assert result.is_error and result.details is None
        assert text.startswith("tool 'measure' returned details that are not JSON")
    else:  # converted by the rule: JSON on disk and in memory alike
        assert not result.is_error and text == "measured"
        assert result.details == json.loads(json.dumps(to_json(result)["details"]))


@pytest.mark.anyio
async def test_disk_equals_memory_whatever_a_tool_returns(store: SessionStore) -> None:
    for details in odd_values().values():
        agent, sid = await run_odd_tool(store, details)
        assert store.load(sid).messages == agent.state.messages
        assert store.load(sid, repair=False).messages == agent.state.messages


@register_message_type
@dataclasses.dataclass(frozen=True, kw_only=True)
class Marker:
    """An application message: a marker in the transcript."""

    label: str
    points: Any = None
    role: str = "test-storage-edges-marker"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Unregistered:
    label: str
    role: str = "test-storage-edges-unregistered"


def without_markers(messages: list[Any]) -> list[Any]:
    return [m for m in messages if m.role in ("user", "assistant", "tool_result")]


@pytest.mark.anyio
async def test_custom_messages_never_wedge_an_agent(store: SessionStore) -> None:
    faux = FauxProvider([faux_text("a"), faux_text("b"), faux_text("c")])
    session = store.create()
    agent = Agent(
        initial_state={"model": faux.model}, session=session, convert_to_llm=without_markers
    )
    await agent.prompt([UserMessage(content="hi"), Marker(label="m", points=(1, 2))])
    assert agent.state.messages[1] == Marker(label="m", points=[1, 2])  # kept as stored
    await agent.prompt(Unregistered(label="x"))  # cannot be stored: not kept, the run says so
    last = agent.state.messages[-1]
    assert last.stop_reason == "error" and "register_message_type" in last.error_message
    assert not any(isinstance(m, Unregistered) for m in agent.state.messages)
    assert store.load(session.id).messages == agent.state.messages
    await agent.prompt("go on")
    assert agent.state.messages[-1].text == "b"
    assert store.load(session.id).messages == agent.state.messages


def test_the_binding_keeps_and_stores_the_same_form(store: SessionStore) -> None:
    """`SessionBinding.prepare` (what the Agent keeps) and `append` (what is stored) agree."""
    session = store.create()
    binding = SessionBinding(session, SessionState, lambda: ())
    kept = []
    for details in odd_values().values():
        result = ToolResultMessage(tool_call_id="c", tool_name="measure", details=details)
        form = binding.prepare(result)
        binding.append(form)
        kept.append(form)
    exact = ToolResultMessage(tool_call_id="c", tool_name="measure", details={"ok": [1]})
    assert binding.prepare(exact) is exact
    binding.append(exact)
    kept.append(exact)
    assert store.load(session.id).messages == kept
    with pytest.raises(MessageFormatError, match="register_message_type"):
        binding.prepare(Unregistered(label="x"))
    # a message appended without `prepare` is stored in its stored form, once
    odd = ToolResultMessage(tool_call_id="d", tool_name="measure", details={"x": math.nan})
    binding.append(odd)
    assert binding.in_step([*kept, odd])
    binding.sync([*kept, odd])  # nothing to write: the form is known
    assert len(store.load(session.id).messages) == len(kept) + 1


# --- a property: whatever a tool returns ---------------------------------------------------------


class Opaque:
    """Not a JSON value."""


def _awkward_leaf() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(),  # NaN and infinities included
        st.text(max_size=8),
        st.sampled_from(["\ud800", "lone \udcff surrogate"]),  # what surrogateescape leaves
        st.binary(max_size=4),
        st.datetimes(),
        st.uuids(),
        st.decimals(),
        st.builds(Opaque),
        st.builds(lambda: (n for n in range(2))),
    )


def _awkward() -> st.SearchStrategy[Any]:
    return st.recursive(
        _awkward_leaf(),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.tuples(inner, inner),
            st.frozensets(st.integers(), max_size=3),
            st.dictionaries(
                st.one_of(st.text(max_size=4), st.integers(), st.tuples(st.integers())),
                inner,
                max_size=3,
            ),
            st.builds(lambda v: [v, v], inner),  # the same object twice is not a cycle
            inner.map(_looped),
        ),
        max_leaves=6,
    )


def _looped(value: Any) -> list[Any]:
    looped: list[Any] = [value]
    looped.append(looped)
    return looped


PROPERTY = settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],  # examples are small: no shrinking needed
)


def run_awkward_tool(kind: str, details: Any, text: Any, *, exact: bool) -> None:
    """An Agent on a `kind` store runs a tool returning `details` (and `text` as its text when
    that is a string), then prompts again. Memory and disk: equal (`exact`), or at least the
    same length."""

    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        content = [TextContent(text=text if isinstance(text, str) else "measured")]
        return AgentToolResult(content=content, details=details)

    tool = AgentTool(
        name="measure", description="Measure.", parameters={"type": "object"}, execute=execute
    )

    def check(store: SessionStore, sid: str, agent: Agent) -> None:
        stored = store.load(sid, repair=False).messages
        if exact:
            assert stored == agent.state.messages
        assert len(stored) == len(agent.state.messages)

    async def main(where: Path) -> None:
        with open_store(kind, where) as store:
            faux = FauxProvider(
                [faux_tool_call("measure", {}), faux_text("done"), faux_text("more")]
            )
            session = store.create()
            agent = Agent(initial_state={"model": faux.model, "tools": [tool]}, session=session)
            await agent.prompt("measure")
            check(store, session.id, agent)
            await agent.prompt("again")
            assert agent.state.messages[-1].text == "more"
            check(store, session.id, agent)

    with tempfile.TemporaryDirectory() as where:
        anyio.run(main, Path(where))


@pytest.mark.parametrize("kind", STORE_KINDS)
@PROPERTY
@given(details=_awkward(), text=_awkward())
def test_whatever_a_tool_returns_the_next_prompt_works(kind: str, details: Any, text: Any) -> None:
    run_awkward_tool(kind, details, text, exact=False)


@pytest.mark.parametrize("kind", STORE_KINDS)
@PROPERTY
@given(details=_awkward(), text=_awkward())
def test_whatever_a_tool_returns_disk_equals_memory(kind: str, details: Any, text: Any) -> None:
    run_awkward_tool(kind, details, text, exact=True)
