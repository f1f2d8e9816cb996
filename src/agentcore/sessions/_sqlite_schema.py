"""The SQLite store's schema, its migrations, its checksums, and what its errors mean.

Schema 2 (`SESSION_FORMAT_VERSION`, kept in `PRAGMA user_version`) adds a CRC-32 to every row
that holds session data, so a flipped bit that SQLite itself cannot notice (inside a text value)
is found on load instead of changing a transcript silently:

- `messages.crc`: of the `data` column's UTF-8 bytes;
- `sessions.state_crc`: of the `state` column's bytes;
- `sessions.header_crc`: of `id`, `created_at`, `parent_id`, `parent_index` and `metadata`,
  joined by NUL bytes (`""` for a null parent).

Schema 3 (`SQLITE_SCHEMA_VERSION`) adds `sessions.title`: the `session_title` of the first user
message stored (NULL while there is none), set in the transaction that stores it, so a list of
sessions reads only the `sessions` table.

Migrations run when a store opens the database, in one transaction: schema 0 (one
`session_messages` table) and schema 1 (no checksums) become schema 2, and schema 2 becomes
schema 3 (each session's title found among its stored messages). Schema 1 states may hold
a model's header values: the migration keeps only their names, with `secure_delete` on so the
old bytes are overwritten, not just unlinked.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import zlib
from collections.abc import Iterable
from typing import Any

from ..messages import now_ms
from ._base import (
    SESSION_FORMAT_VERSION,
    SessionCorruptError,
    SessionError,
    encode_json,
    load_json,
    message_from_json,
    without_credentials,
)
from ._titles import session_title

__all__ = [
    "SQLITE_SCHEMA_VERSION",
    "USER_CANDIDATES",
    "classify",
    "finish_migration",
    "first_titles",
    "header_crc",
    "migrate",
]

SQLITE_SCHEMA_VERSION = 3
"""The version of the tables `migrate` makes (`PRAGMA user_version`)."""

_TABLES = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    parent_id TEXT,
    parent_index INTEGER,
    metadata TEXT NOT NULL DEFAULT '{}',
    state TEXT NOT NULL DEFAULT '{}',
    message_count INTEGER NOT NULL DEFAULT 0,
    header_crc INTEGER,
    state_crc INTEGER
);
CREATE TABLE IF NOT EXISTS messages (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    data TEXT NOT NULL,
    crc INTEGER,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS writers (
    session_id TEXT PRIMARY KEY,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    token TEXT NOT NULL,
    since INTEGER NOT NULL
);
"""

_ADD_CHECKSUMS = """
ALTER TABLE messages ADD COLUMN crc INTEGER;
ALTER TABLE sessions ADD COLUMN header_crc INTEGER;
ALTER TABLE sessions ADD COLUMN state_crc INTEGER;
"""


def header_crc(
    session_id: bytes,
    created_at: object,
    parent_id: bytes | None,
    parent_index: object,
    metadata: bytes,
) -> int:
    """The checksum of a session row's fixed part (ids as stored, UTF-8)."""
    index = b"" if parent_index is None else str(parent_index).encode()
    parts = (session_id, str(created_at).encode(), parent_id or b"", index, metadata)
    return zlib.crc32(b"\0".join(parts))


def _scrub_state(text: Any) -> Any:
    """A stored state without header values nor `base_url` user info (unreadable: unchanged,
    so that loading it reports the damage)."""
    try:
        state = json.loads(text)
        model = state.get("model")
        if not isinstance(model, dict):
            return text
        headers = model.pop("headers", None) or {}
        names = sorted({str(k) for k in headers} | set(model.get("header_names") or []))
        if names:
            model["header_names"] = names
        if isinstance(model.get("base_url"), str):
            model["base_url"] = without_credentials(model["base_url"])
        return encode_json(state)[0]
    except Exception:  # any damage is reported when the session is loaded
        return text


def _crc(value: Any) -> int | None:
    return None if value is None else zlib.crc32(value)


def _blob(value: Any) -> bytes | None:
    return value.encode() if isinstance(value, str) else value


def _header_crc_sql(*args: Any) -> int:
    session_id, created_at, parent_id, parent_index, metadata = args
    return header_crc(
        _blob(session_id) or b"", created_at, _blob(parent_id), parent_index, _blob(metadata) or b""
    )


def migrate(conn: sqlite3.Connection, path: str) -> None:
    """Bring the database to `SQLITE_SCHEMA_VERSION` (the caller holds a write transaction)."""
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    if version > SQLITE_SCHEMA_VERSION:
        raise SessionError(
            f"{path}: session schema {version} is newer than this agentcore reads "
            f"(up to {SQLITE_SCHEMA_VERSION}); upgrade agentcore"
        )
    if version < SESSION_FORMAT_VERSION:
        _migrate_to_2(conn, version)
    if version < SQLITE_SCHEMA_VERSION:
        _add_titles(conn)
        conn.execute(f"PRAGMA user_version={SQLITE_SCHEMA_VERSION}")


USER_CANDIDATES = """data LIKE '%"role"%"user"%'"""
"""An SQL condition on `messages.data` true for every user message (and a few others): what a
migration reads to find each session's first user message."""


def first_titles(rows: Iterable[tuple[str, bytes]]) -> dict[str, str]:
    """Each session's title from `(session_id, data)` rows of candidate messages (see
    `USER_CANDIDATES`) in `(session_id, seq)` order: the first that decodes as a user message.
    Rows that cannot be read are passed over (loading the session reports them)."""
    titles: dict[str, str] = {}
    for session_id, data in rows:
        if session_id in titles:
            continue
        try:
            message = message_from_json(load_json(data), session_id)
        except (SessionCorruptError, ValueError, TypeError):
            continue
        title = session_title([message])
        if title is not None:
            titles[session_id] = title
    return titles


def _add_titles(conn: sqlite3.Connection) -> None:
    """Schema 2 to 3: the `title` column, filled from each session's first user message."""
    conn.execute("ALTER TABLE sessions ADD COLUMN title TEXT")
    rows = conn.execute(
        f"SELECT session_id, CAST(data AS BLOB) FROM messages WHERE {USER_CANDIDATES} "
        "ORDER BY session_id, seq"
    )
    titles = first_titles((sid, data or b"") for sid, data in rows)
    conn.executemany(
        "UPDATE sessions SET title=? WHERE id=?", [(t, sid) for sid, t in titles.items()]
    )


def _migrate_to_2(conn: sqlite3.Connection, version: int) -> None:
    """Schema 0 or 1 to 2."""
    conn.create_function("agentcore_crc32", 1, _crc, deterministic=True)
    conn.create_function("agentcore_header_crc", 5, _header_crc_sql, deterministic=True)
    conn.create_function("agentcore_scrub_state", 1, _scrub_state, deterministic=True)
    if version == 0:
        for statement in _TABLES.split(";"):
            if statement.strip():
                conn.execute(statement)
        legacy = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='session_messages'"
        ).fetchone()
        if legacy:  # schema 0
            now = now_ms()
            conn.execute(
                "INSERT INTO sessions (id, created_at, updated_at, message_count) "
                "SELECT session_id, ?, ?, COUNT(*) FROM session_messages GROUP BY session_id",
                (now, now),
            )
            conn.execute(
                "INSERT INTO messages (session_id, seq, data) "
                "SELECT session_id, ROW_NUMBER() OVER "
                "(PARTITION BY session_id ORDER BY position) - 1, message "
                "FROM session_messages"
            )
            conn.execute("DROP TABLE session_messages")
    else:  # schema 1
        conn.execute("PRAGMA secure_delete=ON")  # the header values are overwritten, not unlinked
        for statement in _ADD_CHECKSUMS.split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute("UPDATE sessions SET state = agentcore_scrub_state(state)")
    conn.execute("UPDATE messages SET crc = agentcore_crc32(CAST(data AS BLOB))")
    conn.execute(
        "UPDATE sessions SET state_crc = agentcore_crc32(CAST(state AS BLOB)), "
        "header_crc = agentcore_header_crc(CAST(id AS BLOB), created_at, "
        "CAST(parent_id AS BLOB), parent_index, CAST(metadata AS BLOB))"
    )


def finish_migration(conn: sqlite3.Connection) -> None:
    """After a migration that scrubbed header values: no copy of the old pages is left in the
    write-ahead log or free pages, as far as other readers allow (best effort)."""
    with contextlib.suppress(sqlite3.Error):
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA secure_delete=OFF")


def classify(exc: sqlite3.Error | UnicodeDecodeError, path: str, doing: str) -> SessionError:
    """The SessionError for an sqlite3 failure: `SessionCorruptError` when the file is damaged
    (not a database, a malformed page, text that is not UTF-8), `SessionError` otherwise (busy,
    read-only, disk full, cannot open)."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    text = str(exc)
    if (
        primary in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
        or isinstance(exc, UnicodeDecodeError)
        or text.startswith("Could not decode to UTF-8")
    ):
        error: SessionError = SessionCorruptError(
            f"{path}: {doing}: the database file is damaged ({text}); "
            "it was left as it is (restore it from a backup, or recover it with sqlite3's .recover)"
        )
    elif primary in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        error = SessionError(
            f"{path}: {doing}: the database is busy ({text}): another process held a "
            "transaction longer than the store's timeout"
        )
    else:
        error = SessionError(f"{path}: {doing}: {text}")
    return error
