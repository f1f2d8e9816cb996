"""The PostgreSQL store's schema and its migrations.

Every table lives in one PostgreSQL schema (`agentcore` unless told otherwise), so a database can
hold several independent stores. Schema version 3 (`POSTGRES_SCHEMA_VERSION`, kept in the
`schema_version` table):

```
sessions(id PRIMARY KEY, created_at, updated_at, parent_id, parent_index, metadata, state,
         message_count, header_crc, state_crc, title)
messages(session_id, seq, data, crc)     one row per message, seq = 0, 1, 2, ...
writers(session_id PRIMARY KEY, token, pid, host, since, run_at, partial)
relay(...)                                the web chat's relay (see below)
```

Version 2 added `writers.run_at` and `writers.partial` (a run in progress: how many messages were
stored when it last said so, and the answer it was streaming, as message JSON; see
`PostgresSessionStore.checkpoint`) and the `relay` table (batches of a web server's live events,
read by the other replicas). That table is the web chat's: its shape from then on, and its own
version, are `agentcore.web`'s (`web/_replicas/schema.py`, which creates it where it is missing);
the store never reads or writes it, and migration 2 still makes it only because a migration
once released is history, which a database at any version must replay the same way.

Version 3 added `sessions.title`: the `session_title` of the first user message stored (NULL
while there is none), set in the transaction that stores it, so a list of sessions reads only
`sessions`. The migration fills it from each session's stored messages.

The checksums are the SQLite store's (`_sqlite_schema.header_crc`, CRC-32 of each record's UTF-8
bytes). Migrations run when a store opens the database, in one transaction holding an advisory
lock, so stores opening at once migrate once.
"""

from __future__ import annotations

import re
from typing import Any

from ._base import SessionError
from ._sqlite_schema import USER_CANDIDATES, first_titles

__all__ = ["POSTGRES_SCHEMA_VERSION", "check_schema_name", "migrate"]

POSTGRES_SCHEMA_VERSION = 3
"""The version of the tables `migrate` makes."""

_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")

# each migration brings the tables from version i to i + 1
_MIGRATIONS = [
    """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        parent_id TEXT,
        parent_index INTEGER,
        metadata TEXT NOT NULL,
        state TEXT NOT NULL,
        message_count INTEGER NOT NULL,
        header_crc BIGINT NOT NULL,
        state_crc BIGINT NOT NULL
    );
    CREATE INDEX sessions_by_creation ON sessions (created_at, id);
    CREATE TABLE messages (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        data TEXT NOT NULL,
        crc BIGINT NOT NULL,
        PRIMARY KEY (session_id, seq)
    );
    CREATE TABLE writers (
        session_id TEXT PRIMARY KEY,
        token TEXT NOT NULL,
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        since BIGINT NOT NULL
    );
    """,
    """
    ALTER TABLE writers ADD COLUMN run_at INTEGER;
    ALTER TABLE writers ADD COLUMN partial TEXT;
    CREATE TABLE relay (
        id BIGSERIAL PRIMARY KEY,
        session_id TEXT NOT NULL,
        origin TEXT NOT NULL,
        at BIGINT NOT NULL,
        run_start BOOLEAN NOT NULL,
        events TEXT NOT NULL
    );
    CREATE INDEX relay_by_session ON relay (session_id, id);
    CREATE INDEX relay_by_time ON relay (at);
    """,
    """
    ALTER TABLE sessions ADD COLUMN IF NOT EXISTS title TEXT;
    """,
]
assert len(_MIGRATIONS) == POSTGRES_SCHEMA_VERSION


def check_schema_name(schema: object) -> str:
    """The PostgreSQL schema name, checked (lower-case letters, digits, `_`; 63 at most)."""
    if not isinstance(schema, str) or not _NAME.fullmatch(schema):
        raise ValueError(
            f"schema must be a PostgreSQL schema name of lower-case letters, digits and '_' "
            f"(not starting with a digit, at most 63), got {schema!r}"
        )
    return schema


def _fill_titles(conn: Any) -> None:
    """Version 3's `title` of every stored session, from its first user message."""
    rows = conn.execute(
        f"SELECT session_id, data FROM messages WHERE {USER_CANDIDATES} ORDER BY session_id, seq"
    )
    titles = first_titles((sid, data.encode()) for sid, data in rows)
    if titles:
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE sessions SET title=%s WHERE id=%s",
                [(title, sid) for sid, title in titles.items()],
            )


def migrate(conn: Any, schema: str, where: str) -> int:
    """Bring the tables in `schema` to `POSTGRES_SCHEMA_VERSION` (the caller's transaction is
    committed by the caller); return the version found."""
    conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"migrate:{schema}",))
    conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
    conn.execute(f'CREATE TABLE IF NOT EXISTS "{schema}".schema_version (version INTEGER NOT NULL)')
    row = conn.execute(f'SELECT version FROM "{schema}".schema_version').fetchone()
    version = 0 if row is None else int(row[0])
    if version > POSTGRES_SCHEMA_VERSION:
        raise SessionError(
            f"{where}: session schema {version} is newer than this agentcore reads "
            f"(up to {POSTGRES_SCHEMA_VERSION}); upgrade agentcore"
        )
    for step in _MIGRATIONS[version:]:
        for statement in step.split(";"):
            if statement.strip():
                conn.execute(statement)
    if 0 < version < 3:  # existing sessions get their titles
        _fill_titles(conn)
    if row is None:
        conn.execute(
            f'INSERT INTO "{schema}".schema_version (version) VALUES (%s)',
            (POSTGRES_SCHEMA_VERSION,),
        )
    elif version != POSTGRES_SCHEMA_VERSION:
        conn.execute(
            f'UPDATE "{schema}".schema_version SET version = %s', (POSTGRES_SCHEMA_VERSION,)
        )
    return version
