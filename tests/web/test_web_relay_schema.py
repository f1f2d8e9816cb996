"""The replicas' relay owns its table (`web/_replicas/schema.py`): a database whose `relay` table
the session store's schema made keeps it and its rows, a database without one gets it from the
relay's first connection, and a newer relay table is refused. Against the server of
`scripts/postgres` (external)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentcore.web._replicas.relay import Relay
from agentcore.web._replicas.schema import RELAY_SCHEMA_VERSION, RelaySchemaError, migrate_relay
from support.postgres import open_postgres_store, postgres_url, schema_for

psycopg = pytest.importorskip("psycopg")


def connect(tmp_path: Path) -> Any:
    return psycopg.Connection.connect(
        postgres_url(), autocommit=True, options=f"-c search_path={schema_for(tmp_path)}"
    )


def test_a_relay_table_the_store_made_is_kept_with_its_rows(tmp_path: Path) -> None:
    open_postgres_store(tmp_path).close()  # the store's schema, as databases made before have it
    schema = schema_for(tmp_path)
    with connect(tmp_path) as conn:
        conn.execute(
            "INSERT INTO relay (session_id, origin, at, run_start, events) "
            "VALUES ('s', 'o', 1, true, '[]')"
        )
        assert migrate_relay(conn, schema) == 0  # no version of its own yet
        assert migrate_relay(conn, schema) == RELAY_SCHEMA_VERSION  # once only
        assert conn.execute("SELECT session_id, events FROM relay").fetchall() == [("s", "[]")]
        assert conn.execute("SELECT version FROM relay_schema_version").fetchall() == [
            (RELAY_SCHEMA_VERSION,)
        ]


def test_the_relay_makes_its_table_where_there_is_none(tmp_path: Path) -> None:
    store = open_postgres_store(tmp_path)
    try:
        with connect(tmp_path) as conn:
            conn.execute("DROP TABLE relay")
        relay = Relay(store, hub=None)  # type: ignore[arg-type]  # no hub: rows only
        try:
            row_id = relay.insert("s", ["msg", {"id": "m"}])
            assert row_id > 0
            assert relay.reclaim(row_id)
        finally:
            relay.stop()
        with connect(tmp_path) as conn:
            assert conn.execute("SELECT count(*) FROM relay").fetchall() == [(0,)]
            indexes = {
                r[0]
                for r in conn.execute(
                    "SELECT indexname FROM pg_indexes WHERE "
                    "schemaname = current_schema() AND tablename = 'relay'"
                )
            }
            assert {"relay_by_session", "relay_by_time"} <= indexes
    finally:
        store.close()


def test_a_newer_relay_table_is_refused(tmp_path: Path) -> None:
    open_postgres_store(tmp_path).close()
    schema = schema_for(tmp_path)
    with connect(tmp_path) as conn:
        migrate_relay(conn, schema)
        conn.execute("UPDATE relay_schema_version SET version = %s", (RELAY_SCHEMA_VERSION + 1,))
        with pytest.raises(RelaySchemaError, match="newer than this agentcore reads"):
            migrate_relay(conn, schema)
