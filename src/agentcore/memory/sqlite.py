"""`SqliteMemoryStore`: memories in a SQLite database with a full-text index (FTS5, standard
library `sqlite3`; nothing to install).

```
memory_schema(version)                 1
memories(id PRIMARY KEY, scope, kind, text, session_id, message_ids, origin,
         created_at, updated_at, expires_at, embedding)
memories_fts(text)                     FTS5, external content (memories), porter stemming
```

The tables may share a file with `SqliteSessionStore`'s (they have their own version table), or
live in a file of their own (the CLI's `memory.db` next to the sessions). Every query is
parameterised; a search is an FTS5 `MATCH` of the query's words, each quoted as a string (so no
query is FTS syntax), joined with `OR`, ranked by `bm25`, inside the same statement that
compares the scope's key for equality. Calls run in a worker thread, one at a time per store.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ._records import EmbedFn, MemoryRecord, MemoryScope, MemoryStoreError
from ._store import BackedMemoryStore

__all__ = ["SQLITE_MEMORY_VERSION", "SqliteMemoryStore"]

SQLITE_MEMORY_VERSION = 1
"""The version of the tables this agentcore makes (in `memory_schema`)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memory_schema (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS memories (
    id TEXT PRIMARY KEY,
    scope TEXT NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    session_id TEXT,
    message_ids TEXT NOT NULL,
    origin TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    expires_at INTEGER,
    embedding BLOB
);
CREATE INDEX IF NOT EXISTS memories_by_scope ON memories (scope, created_at);
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
    text, content='memories', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
CREATE TRIGGER IF NOT EXISTS memories_au AFTER UPDATE OF text ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    INSERT INTO memories_fts(rowid, text) VALUES (new.rowid, new.text);
END;
"""

_COLUMNS = (
    "m.id, m.scope, m.kind, m.text, m.session_id, m.message_ids, m.origin, m.created_at, "
    "m.updated_at, m.expires_at"
)
_LIVE = "m.scope = ? AND (m.expires_at IS NULL OR m.expires_at > ?)"


def fts_query(terms: builtins.list[str]) -> str:
    """An FTS5 query matching any of `terms`, each a quoted string (never FTS syntax)."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def record_of(row: tuple[Any, ...]) -> MemoryRecord:
    """A `MemoryRecord` from the `_COLUMNS` of one row."""
    rid, scope, kind, text, session_id, message_ids, origin, created, updated, expires = row
    return MemoryRecord(
        id=rid,
        text=text,
        kind=kind,
        scope=MemoryScope.from_key(scope),
        session_id=session_id,
        message_ids=tuple(json.loads(message_ids)),
        origin=origin,
        created_at=created,
        updated_at=updated,
        expires_at=expires,
    )


class SqliteMemoryStore(BackedMemoryStore):
    """Memories in one SQLite database file (created if missing; `":memory:"` for a private one).

    Args:
        path: the database file (a sessions database works too: the tables do not collide).
        embed: an embedding function (texts -> vectors, sync or async) to rank by meaning as
            well as by words; None (the default) searches words only. Vectors are kept as
            float32 blobs and compared in Python over the scope's records.
        timeout: seconds to wait for another process's transaction before failing.

    Raises:
        MemoryStoreError: the file is not a database, or its tables are newer than this agentcore.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        embed: EmbedFn | None = None,
        timeout: float = 10.0,
    ) -> None:
        super().__init__(embed=embed)
        self.path = os.fspath(path)
        with self._errors("opening the memory database"):
            if self.path not in ("", ":memory:") and not self.path.startswith("file:"):
                with contextlib.suppress(OSError):  # owner-only, like the session database
                    os.close(os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
            self._conn = sqlite3.connect(
                self.path, timeout=timeout, check_same_thread=False, isolation_level=None
            )
            try:
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute("PRAGMA synchronous=NORMAL")
                with self._lock:
                    self._conn.executescript(_SCHEMA)  # IF NOT EXISTS: idempotent
                with self._transaction() as conn:
                    row = conn.execute("SELECT max(version) FROM memory_schema").fetchone()
                    if row[0] is None:
                        conn.execute(
                            "INSERT INTO memory_schema (version) VALUES (?)",
                            (SQLITE_MEMORY_VERSION,),
                        )
                    elif row[0] > SQLITE_MEMORY_VERSION:
                        raise MemoryStoreError(
                            f"{self.path}: the memory tables are version {row[0]}; this "
                            f"agentcore reads version {SQLITE_MEMORY_VERSION} (upgrade agentcore)"
                        )
            except BaseException:
                self._conn.close()
                raise

    def __repr__(self) -> str:
        return f"SqliteMemoryStore({self.path!r})"

    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise MemoryStoreError(f"{self.path}: {doing}: {exc}") from exc

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _read(self, sql: str, args: tuple[Any, ...], doing: str) -> builtins.list[Any]:
        with self._lock, self._errors(doing):
            return self._conn.execute(sql, args).fetchall()

    def _insert(self, record: MemoryRecord, vector: bytes | None) -> None:
        with self._errors("adding a memory"), self._transaction() as conn:
            conn.execute(
                "INSERT INTO memories (id, scope, kind, text, session_id, message_ids, origin, "
                "created_at, updated_at, expires_at, embedding) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.id,
                    record.scope.key,
                    record.kind,
                    record.text,
                    record.session_id,
                    json.dumps(list(record.message_ids)),
                    record.origin,
                    record.created_at,
                    record.updated_at,
                    record.expires_at,
                    vector,
                ),
            )

    def _search_text(
        self, terms: builtins.list[str], scope: str, now: int, limit: int, kinds: tuple[str, ...]
    ) -> builtins.list[MemoryRecord]:
        kind_sql = f" AND m.kind IN ({', '.join('?' * len(kinds))})" if kinds else ""
        rows = self._read(
            f"SELECT {_COLUMNS} FROM memories_fts f JOIN memories m ON m.rowid = f.rowid "
            f"WHERE memories_fts MATCH ? AND {_LIVE}{kind_sql} "
            "ORDER BY bm25(memories_fts), m.updated_at DESC LIMIT ?",
            (fts_query(terms), scope, now, *kinds, limit),
            "searching memories",
        )
        return [record_of(r) for r in rows]

    def _vectors(
        self, scope: str, now: int, kinds: tuple[str, ...]
    ) -> builtins.list[tuple[str, bytes]]:
        kind_sql = f" AND m.kind IN ({', '.join('?' * len(kinds))})" if kinds else ""
        rows = self._read(
            f"SELECT m.id, m.embedding FROM memories m WHERE {_LIVE}{kind_sql} "
            "AND m.embedding IS NOT NULL",
            (scope, now, *kinds),
            "reading memory embeddings",
        )
        return [(rid, bytes(data)) for rid, data in rows]

    def _get(self, ids: builtins.list[str], scope: str, now: int) -> builtins.list[MemoryRecord]:
        if not ids:
            return []
        rows = self._read(
            f"SELECT {_COLUMNS} FROM memories m WHERE m.id IN ({', '.join('?' * len(ids))}) "
            f"AND {_LIVE}",
            (*ids, scope, now),
            "reading memories",
        )
        found = {r.id: r for r in map(record_of, rows)}
        return [found[i] for i in ids if i in found]

    def _list(self, scope: str, now: int, limit: int | None) -> builtins.list[MemoryRecord]:
        rows = self._read(
            f"SELECT {_COLUMNS} FROM memories m WHERE {_LIVE} "
            "ORDER BY m.created_at DESC, m.id LIMIT ?",
            (scope, now, -1 if limit is None else limit),
            "listing memories",
        )
        return [record_of(r) for r in rows]

    def _replace(self, record: MemoryRecord, vector: bytes | None, now: int) -> bool:
        with self._errors("updating a memory"), self._transaction() as conn:
            changed = conn.execute(
                "UPDATE memories SET text=?, kind=?, expires_at=?, updated_at=?, "
                "embedding=COALESCE(?, embedding) WHERE id=? AND scope=? "
                "AND (expires_at IS NULL OR expires_at > ?)",
                (
                    record.text,
                    record.kind,
                    record.expires_at,
                    record.updated_at,
                    vector,
                    record.id,
                    record.scope.key,
                    now,
                ),
            ).rowcount
        return bool(changed)

    def _delete(self, record_id: str, scope: str) -> bool:
        with self._errors("deleting a memory"), self._transaction() as conn:
            deleted = conn.execute(
                "DELETE FROM memories WHERE id=? AND scope=?", (record_id, scope)
            ).rowcount
        return bool(deleted)

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._conn.close()
