"""The relay's table and its migrations: owned by the web chat, beside the session store's tables
in the same PostgreSQL schema (`PostgresSessionStore.schema`), versioned on its own.

```
relay(id BIGSERIAL PRIMARY KEY, session_id, origin, at, run_start, events)
relay_schema_version(version)
```

Version 1 is the table as the session store's migration 2 made it (and, since a released
migration is history, still makes it): `CREATE ... IF NOT EXISTS` keeps that table and its rows
as they are, and makes it where it is missing. `relay_schema_version` records the relay's own
version, so a later change of the table is a migration here, never the store's; the store never
reads or writes the table. The relay migrates on its first connection, before any query.
Migrations run in one transaction holding an advisory lock, so replicas
starting at once migrate once.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RELAY_SCHEMA_VERSION", "RelaySchemaError", "migrate_relay"]

RELAY_SCHEMA_VERSION = 1
"""The version of the table `migrate_relay` makes."""

# each migration brings the table from version i to i + 1 ({s}: the quoted schema name)
_MIGRATIONS = [
    """
    CREATE TABLE IF NOT EXISTS {s}.relay (
        id BIGSERIAL PRIMARY KEY,
        session_id TEXT NOT NULL,
        origin TEXT NOT NULL,
        at BIGINT NOT NULL,
        run_start BOOLEAN NOT NULL,
        events TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS relay_by_session ON {s}.relay (session_id, id);
    CREATE INDEX IF NOT EXISTS relay_by_time ON {s}.relay (at);
    """,
]
assert len(_MIGRATIONS) == RELAY_SCHEMA_VERSION


class RelaySchemaError(Exception):
    """The relay's table is newer than this agentcore reads."""


def migrate_relay(conn: Any, schema: str) -> int:
    """Bring the relay's table in `schema` (a checked PostgreSQL schema name) to
    `RELAY_SCHEMA_VERSION`, in a transaction of its own on `conn` (an autocommit psycopg
    connection); return the version found.

    Raises:
        RelaySchemaError: the table is of a newer version.
    """
    s = f'"{schema}"'
    with conn.transaction():
        conn.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"migrate-relay:{schema}",)
        )
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {s}")
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {s}.relay_schema_version (version INTEGER NOT NULL)"
        )
        row = conn.execute(f"SELECT version FROM {s}.relay_schema_version").fetchone()
        version = 0 if row is None else int(row[0])
        if version > RELAY_SCHEMA_VERSION:
            raise RelaySchemaError(
                f"the relay table in schema {schema} is version {version}, newer than this "
                f"agentcore reads (up to {RELAY_SCHEMA_VERSION}); upgrade agentcore"
            )
        for step in _MIGRATIONS[version:]:
            for statement in step.split(";"):
                if statement.strip():
                    conn.execute(statement.format(s=s))
        if row is None:
            conn.execute(
                f"INSERT INTO {s}.relay_schema_version (version) VALUES (%s)",
                (RELAY_SCHEMA_VERSION,),
            )
        elif version != RELAY_SCHEMA_VERSION:
            conn.execute(
                f"UPDATE {s}.relay_schema_version SET version = %s", (RELAY_SCHEMA_VERSION,)
            )
    return version
