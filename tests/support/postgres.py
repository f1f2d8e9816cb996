"""The PostgreSQL server of the session store's tests (`scripts/postgres`), and a fresh schema per
test. The tests that use it are marked `external`.

`scripts/test` starts the server (or sets `AGENTCORE_POSTGRES_UNAVAILABLE` when PostgreSQL cannot be
installed here: the tests then skip with that reason); run alone, the first test that needs it
starts it (the script is idempotent and locked, so xdist workers share one server). Set
`AGENTCORE_TEST_POSTGRES_URL` to use another server.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from agentcore.sessions import PostgresSessionStore

from . import ROOT

__all__ = [
    "STORE_KINDS",
    "URL_ENV",
    "drop_schema",
    "open_postgres_store",
    "postgres_url",
    "raw_dump",
    "schema_for",
]

URL_ENV = "AGENTCORE_TEST_POSTGRES_URL"
"""The server the tests use; set by `postgres_url()` for the child processes tests start."""


@functools.cache
def _start() -> str:
    proc = subprocess.run(
        [str(ROOT / "scripts" / "postgres"), "start"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if proc.returncode == 12:
        return f"!scripts/postgres could not install PostgreSQL: {proc.stderr.strip()[-500:]}"
    if proc.returncode != 0:
        raise RuntimeError(
            f"scripts/postgres start failed with exit code {proc.returncode}: {proc.stderr}"
        )
    return proc.stdout.strip().splitlines()[-1]


def postgres_url() -> str:
    """The test server's URL (starting it if needed), or a skip with the reason it cannot run."""
    reason = os.environ.get("AGENTCORE_POSTGRES_UNAVAILABLE")
    if reason:
        pytest.skip(f"PostgreSQL unavailable: {reason}")
    url = os.environ.get(URL_ENV) or _start()
    if url.startswith("!"):
        pytest.skip(url[1:])
    os.environ[URL_ENV] = url
    return url


def schema_for(where: Path) -> str:
    """A schema name of its own for the test whose temporary folder is `where`."""
    return "t_" + hashlib.sha1(str(where).encode()).hexdigest()[:20]


def drop_schema(url: str, schema: str) -> None:
    """Remove a test's schema and everything in it."""
    import psycopg

    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


STORE_KINDS = ["jsonl", "sqlite", pytest.param("postgres", marks=pytest.mark.external)]
"""Every session store, for `parametrize("kind", STORE_KINDS)`: PostgreSQL is `external`."""

_made: set[str] = set()


def open_postgres_store(where: Path) -> PostgresSessionStore:
    """A store in the test server, in the schema of the test whose folder is `where` (dropped
    when this process ends)."""
    url = postgres_url()
    schema = schema_for(where)
    if schema not in _made:
        _made.add(schema)
        if len(_made) == 1:
            atexit.register(_drop_made, url)
    return PostgresSessionStore(url, schema=schema)


def _drop_made(url: str) -> None:
    for schema in sorted(_made):
        with contextlib.suppress(Exception):
            drop_schema(url, schema)


def raw_dump(where: Path) -> Path:
    """Everything the test's schema holds, as `pg_dump` writes it (to look for leaked bytes)."""
    out = where / "postgres-dump.sql"
    bindir = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_dump"))
    pg_dump = str(bindir[-1]) if bindir else "pg_dump"
    subprocess.run(
        [pg_dump, "--schema", schema_for(where), "--file", str(out), postgres_url()],
        check=True,
        timeout=60,
    )
    return out
