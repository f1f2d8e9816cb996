"""The memory store every test of an agent with memory runs against: the in-memory one, and the
real SQLite and PostgreSQL (`scripts/postgres`) ones."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.postgres import drop_schema, postgres_url, schema_for

from agentcore.memory import BackedMemoryStore, InMemoryMemoryStore, SqliteMemoryStore


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.external)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BackedMemoryStore]:
    made: BackedMemoryStore
    if request.param == "memory":
        made = InMemoryMemoryStore()
    elif request.param == "sqlite":
        made = SqliteMemoryStore(tmp_path / "m.db")
    else:
        from agentcore.memory import PostgresMemoryStore

        made = PostgresMemoryStore(postgres_url(), schema=schema_for(tmp_path))
    try:
        yield made
    finally:
        made.close()
        if request.param == "postgres":
            drop_schema(postgres_url(), schema_for(tmp_path))
