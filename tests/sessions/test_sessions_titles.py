"""The store listing's summary (`SessionInfo.title`, `message_count`): what a list of sessions
shows, given by `list()` without loading any session, in every store, kept as messages are
appended, and filled in for stores written before it existed (SQLite schema 2, PostgreSQL 2)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentcore.messages import AssistantMessage, ImageContent, TextContent, UserMessage
from agentcore.sessions import (
    TITLE_LENGTH,
    JsonlSessionStore,
    SessionStore,
    SqliteSessionStore,
    session_title,
)
from agentcore.sessions._sqlite_schema import SQLITE_SCHEMA_VERSION
from support.postgres import STORE_KINDS, open_postgres_store, postgres_url, schema_for


def open_store(kind: str, where: Path) -> SessionStore:
    if kind == "jsonl":
        return JsonlSessionStore(where / "sessions")
    if kind == "postgres":
        return open_postgres_store(where)
    return SqliteSessionStore(where / "sessions.db")


@pytest.fixture(params=STORE_KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store(kind: str, tmp_path: Path) -> Iterator[SessionStore]:
    with open_store(kind, tmp_path) as s:
        yield s


def no_loads(store: SessionStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make every read of a whole session fail the test; returns the ids it was asked for."""
    asked: list[str] = []

    def refuse(session_id: str) -> Any:
        asked.append(session_id)
        raise AssertionError(f"session {session_id} was loaded to list it")

    monkeypatch.setattr(store, "_read", refuse)
    return asked


def answer(text: str) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)], stop_reason="stop")


def test_the_listing_gives_titles_and_counts_without_loading_a_session(
    store: SessionStore, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = store.create(messages=[UserMessage(content="What is\n2 + 3?"), answer("5")])
    first.append(UserMessage(content="and 4 + 4?"))
    empty = store.create()
    later = store.create()
    later.append(answer("hello first"))  # no prompt yet: no title
    later.append(
        UserMessage(
            content=[TextContent(text="look at"), ImageContent(data="eA==", mime_type="image/png")]
        )
    )
    asked = no_loads(store, monkeypatch)
    listed = {info.id: info for info in store.list()}
    assert asked == []
    assert listed[first.id].title == "What is 2 + 3?"
    assert listed[empty.id].title == ""
    assert listed[later.id].title == "look at [image]"
    counts = [listed[s.id].message_count for s in (first, empty, later)]
    assert counts == ([None] * 3 if kind == "jsonl" else [3, 0, 2])


def test_a_title_is_one_bounded_line_of_valid_text(store: SessionStore) -> None:
    long = "word " * 100
    a = store.create(messages=[UserMessage(content="  tabs\tand\r\nlines  " + long)])
    b = store.create(messages=[UserMessage(content="half \ud83d of an emoji")])
    titles = {info.id: info.title for info in store.list()}
    assert titles[a.id].startswith("tabs and lines word word")
    assert len(titles[a.id]) <= TITLE_LENGTH and titles[a.id].endswith("…")
    assert titles[b.id] == "half \ufffd of an emoji"
    titles[b.id].encode()  # valid UTF-8


def test_the_title_is_kept_when_a_change_cuts_the_transcript(store: SessionStore) -> None:
    session = store.create(messages=[UserMessage(content="the first question"), answer("a")])
    session.update(truncate_to=0, messages=[UserMessage(content="a summary"), answer("b")])
    branch = session.branch(0)
    branch.append(UserMessage(content="another start"))
    titles = {info.id: info.title for info in store.list()}
    assert titles[session.id] == "the first question"
    assert titles[branch.id] == "another start"


def test_session_title_rules() -> None:
    assert session_title([answer("no prompt")]) is None
    assert session_title(
        [answer("x"), UserMessage(content="second"), UserMessage(content="3")]
    ) == ("second")
    assert session_title([UserMessage(content="x" * (TITLE_LENGTH + 5))]) == (
        "x" * (TITLE_LENGTH - 1) + "…"
    )


# --- stores written by the previous version ----------------------------------------------------


def test_a_schema_2_sqlite_database_is_migrated_and_lists_titles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "sessions.db"
    schema_2_database(path)
    with SqliteSessionStore(path) as store:
        asked = no_loads(store, monkeypatch)
        listed = {info.id: info for info in store.list()}
        assert asked == []
        assert listed["s1"].title == "first prompt" and listed["s1"].message_count == 3
        assert listed["s2"].title == "" and listed["s2"].message_count == 1
        assert listed["s3"].title == "" and listed["s3"].message_count == 0
        monkeypatch.undo()
        store.append("s2", UserMessage(content="now a prompt"))
        assert {i.id: i.title for i in store.list()}["s2"] == "now a prompt"
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (SQLITE_SCHEMA_VERSION,)


def schema_2_database(path: Path) -> None:
    """A database as agentcore wrote it at schema 2 (before titles): its tables, made by SQL of
    that version, holding three sessions (`s1` with a prompt after an answer, `s2` without a
    prompt, `s3` empty). Rows are written the way that version wrote them (checksums included)."""
    from agentcore.messages import to_json
    from agentcore.sessions._sqlite_schema import header_crc

    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL, parent_id TEXT, parent_index INTEGER,
            metadata TEXT NOT NULL DEFAULT '{}', state TEXT NOT NULL DEFAULT '{}',
            message_count INTEGER NOT NULL DEFAULT 0, header_crc INTEGER, state_crc INTEGER);
        CREATE TABLE messages (session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL, data TEXT NOT NULL, crc INTEGER,
            PRIMARY KEY (session_id, seq)) WITHOUT ROWID;
        CREATE TABLE writers (session_id TEXT PRIMARY KEY, pid INTEGER NOT NULL,
            host TEXT NOT NULL, token TEXT NOT NULL, since INTEGER NOT NULL);
        PRAGMA user_version=2;
        """
    )
    import zlib

    sessions = {
        "s1": [answer("hi"), UserMessage(content="first  prompt"), UserMessage(content="two")],
        "s2": [answer("only an answer")],
        "s3": [],
    }
    state = '{"system_prompt":"","model":null,"thinking_level":"off","steering":[],"follow_up":[]}'
    for n, (sid, messages) in enumerate(sessions.items()):
        crc = header_crc(sid.encode(), n + 1, None, None, b"{}")
        conn.execute(
            "INSERT INTO sessions VALUES (?, ?, ?, NULL, NULL, '{}', ?, ?, ?, ?)",
            (sid, n + 1, n + 1, state, len(messages), crc, zlib.crc32(state.encode())),
        )
        for seq, message in enumerate(messages):
            data = json.dumps(to_json(message), separators=(",", ":"), ensure_ascii=False)
            conn.execute(
                "INSERT INTO messages VALUES (?, ?, ?, ?)",
                (sid, seq, data, zlib.crc32(data.encode())),
            )
    conn.commit()
    conn.close()


@pytest.mark.external
def test_a_schema_2_postgres_store_is_migrated_and_lists_titles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg

    with open_postgres_store(tmp_path) as store:
        titled = store.create(messages=[answer("hi"), UserMessage(content="first\nprompt")])
        untitled = store.create(messages=[answer("no prompt")])
        titled.close()
        untitled.close()
    url, schema = postgres_url(), schema_for(tmp_path)
    with psycopg.connect(url, options=f"-c search_path={schema}") as conn:  # back to version 2
        conn.execute("ALTER TABLE sessions DROP COLUMN title")
        conn.execute("UPDATE schema_version SET version = 2")
    with open_postgres_store(tmp_path) as store:
        asked = no_loads(store, monkeypatch)
        listed = {info.id: info for info in store.list()}
        assert asked == []
        assert listed[titled.id].title == "first prompt"
        assert listed[titled.id].message_count == 2
        assert listed[untitled.id].title == ""
    with psycopg.connect(url, options=f"-c search_path={schema}") as conn:
        assert conn.execute("SELECT version FROM schema_version").fetchall() == [(3,)]


def test_old_jsonl_files_list_their_titles(tmp_path: Path) -> None:
    where = tmp_path / "sessions"
    where.mkdir()
    fixture = Path(__file__).parent.parent / "fixtures" / "sessions" / "v0.jsonl"
    (where / "old0.jsonl").write_bytes(fixture.read_bytes())
    # format 1: records without checksums
    header = {"type": "session", "format": 1, "id": "old1", "created_at": 5, "parent": None,
              "metadata": {}, "state": {}}  # fmt: skip
    records = [header, {"type": "message", "message": {"v": 1, "role": "user",
               "content": "format one", "timestamp": 1}}]  # fmt: skip
    (where / "old1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    with JsonlSessionStore(where) as store:
        titles = {info.id: info.title for info in store.list()}
        expected = session_title(store.load("old0").messages) or ""
    assert titles == {"old0": expected, "old1": "format one"}
    assert expected  # the fixture has a prompt
