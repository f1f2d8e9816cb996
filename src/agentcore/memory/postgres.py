"""`PostgresMemoryStore`: memories in PostgreSQL, searched with its text search.

Needs the `postgres` extra (psycopg 3 and psycopg_pool, as `PostgresSessionStore`). The tables
live in a PostgreSQL schema (`agentcore` by default, next to the sessions' tables):

```
memory_schema(version)                 1
memories(id PRIMARY KEY, scope, kind, text, session_id, message_ids, origin,
         created_at, updated_at, expires_at, embedding, search tsvector GENERATED, GIN index)
```

A search is `websearch_to_tsquery` of the query's words joined with `or` (the query's own
operators, quotes and punctuation are dropped first, so nothing a user or a model types changes
what is matched beyond its words), ranked by `ts_rank_cd`, in the statement that compares the
scope's key for equality. Embeddings (from `embed`) are kept as float32 `bytea` and ranked in
Python; pgvector is not used (see docs/memory.md). Calls run in a worker thread.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from .._optional import import_sdk
from ._records import EmbedFn, MemoryRecord, MemoryStoreError
from ._store import BackedMemoryStore
from .sqlite import record_of

if TYPE_CHECKING:
    import psycopg

__all__ = ["POSTGRES_MEMORY_VERSION", "PostgresMemoryStore"]

POSTGRES_MEMORY_VERSION = 1
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
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    expires_at BIGINT,
    embedding BYTEA,
    search TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', text)) STORED
);
CREATE INDEX IF NOT EXISTS memories_search ON memories USING GIN (search);
CREATE INDEX IF NOT EXISTS memories_by_scope ON memories (scope, created_at);
"""

_COLUMNS = (
    "m.id, m.scope, m.kind, m.text, m.session_id, m.message_ids, m.origin, m.created_at, "
    "m.updated_at, m.expires_at"
)
_LIVE = "m.scope = %s AND (m.expires_at IS NULL OR m.expires_at > %s)"
_OPERATORS = {"or", "and", "not"}


def websearch_text(terms: builtins.list[str]) -> str:
    """The `websearch_to_tsquery` text matching any of `terms` (words only, joined by `or`)."""
    return " or ".join(t for t in terms if t not in _OPERATORS)


class PostgresMemoryStore(BackedMemoryStore):
    """Memories in a PostgreSQL database (the tables are made on open).

    Args:
        url: a libpq connection string, e.g. `postgresql://user@127.0.0.1:5432/app`.
        schema: the PostgreSQL schema holding the tables (made if missing).
        embed: an embedding function (texts -> vectors); None (the default): words only.
        max_connections: the most connections the pool opens.
        timeout: seconds to wait for a connection before failing with `MemoryStoreError`.

    Raises:
        MissingExtraError: psycopg is not installed.
        MemoryStoreError: the server cannot be reached, or the tables are newer than this
            agentcore.
    """

    def __init__(
        self,
        url: str,
        *,
        schema: str = "agentcore",
        embed: EmbedFn | None = None,
        max_connections: int = 4,
        timeout: float = 10.0,
    ) -> None:
        super().__init__(embed=embed)
        if not isinstance(url, str) or not url:
            raise ValueError(f"url must be a PostgreSQL connection string, got {url!r}")
        from ..sessions._postgres_schema import check_schema_name  # (not loaded with the loop)

        self.schema = check_schema_name(schema)
        self._psycopg = import_sdk(
            "psycopg", "postgres", needed_by="agentcore.memory.PostgresMemoryStore"
        )
        pool_module = import_sdk(
            "psycopg_pool", "postgres", needed_by="agentcore.memory.PostgresMemoryStore"
        )
        self._shown = url.split("@")[-1] if "@" in url else url
        self._pool = pool_module.ConnectionPool(
            url,
            min_size=1,
            max_size=max_connections,
            timeout=timeout,
            kwargs={
                "options": f"-c search_path={self.schema}",
                "connect_timeout": max(1, int(timeout)),
                "application_name": "agentcore-memory",
            },
            check=pool_module.ConnectionPool.check_connection,
            open=False,
            name="agentcore-memory",
        )
        try:
            with self._errors("opening the memory database"):
                self._pool.open(wait=True, timeout=timeout)
            with self._errors("making the memory tables"), self._transaction() as conn:
                conn.execute("SELECT pg_advisory_xact_lock(hashtext('agentcore.memory'))")
                conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{self.schema}"')
                conn.execute(_SCHEMA)
                row = conn.execute("SELECT max(version) FROM memory_schema").fetchone()
                version = row[0] if row is not None else None
                if version is None:
                    conn.execute(
                        "INSERT INTO memory_schema (version) VALUES (%s)",
                        (POSTGRES_MEMORY_VERSION,),
                    )
                elif version > POSTGRES_MEMORY_VERSION:
                    raise MemoryStoreError(
                        f"{self._shown} (schema {self.schema}): the memory tables are version "
                        f"{version}; this agentcore reads version {POSTGRES_MEMORY_VERSION}"
                    )
        except BaseException:
            self._pool.close()
            raise

    def __repr__(self) -> str:
        return f"PostgresMemoryStore({self._shown!r}, schema={self.schema!r})"

    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        try:
            yield
        except MemoryStoreError:
            raise
        except Exception as exc:
            if not isinstance(exc, self._psycopg.Error):
                raise
            raise MemoryStoreError(f"{self._shown}: {doing}: {exc}") from exc

    @contextmanager
    def _transaction(self) -> Iterator[psycopg.Connection[Any]]:
        with self._pool.connection() as conn, conn.transaction():
            yield conn

    def _read(self, sql: str, args: tuple[Any, ...], doing: str) -> builtins.list[Any]:
        with self._errors(doing), self._transaction() as conn:
            return conn.execute(sql, args).fetchall()

    def _insert(self, record: MemoryRecord, vector: bytes | None) -> None:
        with self._errors("adding a memory"), self._transaction() as conn:
            conn.execute(
                "INSERT INTO memories (id, scope, kind, text, session_id, message_ids, origin, "
                "created_at, updated_at, expires_at, embedding) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
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
        text = websearch_text(terms)
        if not text:
            return []
        kind_sql = " AND m.kind = ANY(%s)" if kinds else ""
        rows = self._read(
            f"SELECT {_COLUMNS} FROM memories m, websearch_to_tsquery('english', %s) q "
            f"WHERE m.search @@ q AND {_LIVE}{kind_sql} "
            "ORDER BY ts_rank_cd(m.search, q) DESC, m.updated_at DESC LIMIT %s",
            (text, scope, now, *([list(kinds)] if kinds else []), limit),
            "searching memories",
        )
        return [record_of(r) for r in rows]

    def _vectors(
        self, scope: str, now: int, kinds: tuple[str, ...]
    ) -> builtins.list[tuple[str, bytes]]:
        kind_sql = " AND m.kind = ANY(%s)" if kinds else ""
        rows = self._read(
            f"SELECT m.id, m.embedding FROM memories m WHERE {_LIVE}{kind_sql} "
            "AND m.embedding IS NOT NULL",
            (scope, now, *([list(kinds)] if kinds else [])),
            "reading memory embeddings",
        )
        return [(rid, bytes(data)) for rid, data in rows]

    def _get(self, ids: builtins.list[str], scope: str, now: int) -> builtins.list[MemoryRecord]:
        if not ids:
            return []
        rows = self._read(
            f"SELECT {_COLUMNS} FROM memories m WHERE m.id = ANY(%s) AND {_LIVE}",
            (list(ids), scope, now),
            "reading memories",
        )
        found = {r.id: r for r in map(record_of, rows)}
        return [found[i] for i in ids if i in found]

    def _list(self, scope: str, now: int, limit: int | None) -> builtins.list[MemoryRecord]:
        rows = self._read(
            f"SELECT {_COLUMNS} FROM memories m WHERE {_LIVE} "
            "ORDER BY m.created_at DESC, m.id LIMIT %s",
            (scope, now, limit),
            "listing memories",
        )
        return [record_of(r) for r in rows]

    def _replace(self, record: MemoryRecord, vector: bytes | None, now: int) -> bool:
        with self._errors("updating a memory"), self._transaction() as conn:
            changed = conn.execute(
                "UPDATE memories SET text=%s, kind=%s, expires_at=%s, updated_at=%s, "
                "embedding=COALESCE(%s, embedding) WHERE id=%s AND scope=%s "
                "AND (expires_at IS NULL OR expires_at > %s)",
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
                "DELETE FROM memories WHERE id=%s AND scope=%s", (record_id, scope)
            ).rowcount
        return bool(deleted)

    def close(self) -> None:
        """Close the connection pool."""
        self._pool.close()
