"""What only the PostgreSQL store has: writers in several processes (as replicas would be) racing
for one session, a lease lost and taken over, a killed writer, paging, its schema and its errors.
Every test runs against the real server of `scripts/postgres` (marked `external`)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from agentcore import UserMessage
from agentcore.sessions import (
    PostgresSessionStore,
    SessionCorruptError,
    SessionError,
    SessionLockedError,
    SessionNotFoundError,
)
from agentcore.sessions._postgres_schema import POSTGRES_SCHEMA_VERSION
from support import ROOT, texts
from support.postgres import open_postgres_store, postgres_url, schema_for

pytestmark = pytest.mark.external

OPEN = """
import os, sys
from agentcore import UserMessage
from agentcore.sessions import PostgresSessionStore, SessionLockedError
store = PostgresSessionStore(os.environ["AGENTCORE_TEST_POSTGRES_URL"], schema=sys.argv[1])
sid = sys.argv[2]
"""

# a replica: open the session, append one message, close; again, counting conflicts
RACER = (
    OPEN
    + """
name, n = sys.argv[3], int(sys.argv[4])
done = conflicts = 0
while done < n:
    try:
        session = store.open(sid)
    except SessionLockedError as exc:
        assert "open for writing by another store" in str(exc), exc
        conflicts += 1
        continue
    try:
        session.append(UserMessage(content=f"{name}-{done}"))
        done += 1
    finally:
        session.close()
print(done, conflicts, flush=True)
store.close()
"""
)

# a writer that holds the session and appends one message per line read from stdin
HOLDER = (
    OPEN
    + """
session = store.open(sid)
session.append(UserMessage(content="holder-0"))
print("ready", flush=True)
for line in sys.stdin:
    try:
        session.append(UserMessage(content=line.strip()))
        print("stored", flush=True)
    except SessionLockedError as exc:
        print("conflict:", exc, flush=True)
"""
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[PostgresSessionStore]:
    with open_postgres_store(tmp_path) as s:
        yield s


def child(tmp_path: Path, script: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, schema_for(tmp_path), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )


@pytest.mark.timeout(120)
def test_two_replicas_racing_for_one_session_lose_nothing(
    store: PostgresSessionStore, tmp_path: Path
) -> None:
    sid = store.create().id
    store.release(sid)
    n = 60
    results = []
    with (
        child(tmp_path, RACER, sid, "a", str(n)) as one,
        child(tmp_path, RACER, sid, "b", str(n)) as two,
    ):
        for racer in (one, two):
            out, _ = racer.communicate(timeout=100)
            assert racer.returncode == 0, out
            done, conflicts = map(int, out.split())
            results.append((done, conflicts))
    assert [done for done, _ in results] == [n, n]
    stored = [texts(m) for m in store.load(sid).messages]
    assert len(stored) == 2 * n  # every append that succeeded is stored, once
    for name in ("a", "b"):  # each writer's messages in its own order
        assert [t for t in stored if t.startswith(f"{name}-")] == [f"{name}-{i}" for i in range(n)]
    print(f"conflicts seen by the racers: {[c for _, c in results]}")


def test_a_writer_that_lost_its_lease_gets_a_conflict_and_stores_nothing(
    store: PostgresSessionStore, tmp_path: Path
) -> None:
    sid = store.create().id
    store.release(sid)
    with child(tmp_path, HOLDER, sid) as holder:
        try:
            assert holder.stdout is not None and holder.stdin is not None
            assert holder.stdout.readline().strip() == "ready"
            with pytest.raises(SessionLockedError, match=f"pid {holder.pid}"):
                store.open(sid)
            # the holder's lease connection drops (a network cut, a server-side kill)
            with psycopg.connect(postgres_url(), autocommit=True) as admin:
                killed = admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE application_name = %s",
                    (f"agentcore-lease-{holder.pid}",),
                ).fetchall()
            assert killed == [(True,)]
            deadline = time.monotonic() + 10
            while True:  # the lock is gone once the server process has ended
                try:
                    taken = store.open(sid)
                    break
                except SessionLockedError:
                    assert time.monotonic() < deadline, "the dropped lease was never freed"
                    time.sleep(0.05)
            taken.append(UserMessage(content="taker-0"))
            holder.stdin.write("holder-1\n")
            holder.stdin.flush()
            answer = holder.stdout.readline()
            assert answer.startswith("conflict:"), answer
            assert (
                "lost its write lease" in answer and "nothing of this change was stored" in answer
            )
            taken.append(UserMessage(content="taker-1"))
        finally:
            holder.kill()
            holder.wait()
    assert [texts(m) for m in store.load(sid).messages] == ["holder-0", "taker-0", "taker-1"]


def test_a_killed_writer_frees_the_session_at_once(
    store: PostgresSessionStore, tmp_path: Path
) -> None:
    sid = store.create().id
    store.release(sid)
    with child(tmp_path, HOLDER, sid) as holder:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "ready"
        holder.kill()  # kill -9: its connections close, PostgreSQL frees its advisory lock
        holder.wait()
    t0 = time.monotonic()
    session = store.open(sid)
    assert time.monotonic() - t0 < 5
    session.append(UserMessage(content="after"))
    assert [texts(m) for m in store.load(sid).messages] == ["holder-0", "after"]


def test_another_host_holding_a_session_is_a_conflict_without_waiting(
    store: PostgresSessionStore, tmp_path: Path
) -> None:
    sid = store.create().id
    with open_postgres_store(tmp_path) as other:
        t0 = time.monotonic()
        with pytest.raises(SessionLockedError, match=f"pid {os.getpid()}"):
            other.open(sid)
        assert time.monotonic() - t0 < 1  # a live holder: no waiting for it to die


def test_list_pages_read_headers_only(store: PostgresSessionStore) -> None:
    ids = []
    for i in range(7):
        session = store.create(messages=[UserMessage(content="x" * 1000)], metadata={"i": i})
        session.close()
        ids.append(session.id)
    pages = []
    after = None
    while True:
        page = store.list_page(limit=3, after=after)
        if not page:
            break
        pages.append([s.id for s in page])
        after = page[-1]
    assert pages == [ids[0:3], ids[3:6], ids[6:7]]
    assert [s.id for s in store.list()] == ids
    assert [s.metadata["i"] for s in store.list_page(limit=2, after=ids[4])] == [5, 6]
    with pytest.raises(SessionNotFoundError, match="after='nope'"):
        store.list_page(after="nope")
    with pytest.raises(ValueError, match="limit must be a positive int"):
        store.list_page(limit=0)


def test_a_changed_record_is_corruption_naming_the_message(
    store: PostgresSessionStore,
) -> None:
    session = store.create(messages=[UserMessage(content="a"), UserMessage(content="b")])
    with psycopg.connect(store.url, options=f"-c search_path={store.schema}") as conn:
        conn.execute("UPDATE messages SET data = replace(data, '\"b\"', '\"B\"') WHERE seq = 1")
    with pytest.raises(SessionCorruptError, match="message 1: checksum mismatch"):
        store.load(session.id)
    with psycopg.connect(store.url, options=f"-c search_path={store.schema}") as conn:
        conn.execute("DELETE FROM messages WHERE seq = 1")
    with pytest.raises(SessionCorruptError, match="rows were lost"):
        store.load(session.id)


def test_a_newer_schema_is_refused_and_stores_opening_at_once_migrate_once(
    tmp_path: Path,
) -> None:
    url, schema = postgres_url(), schema_for(tmp_path)
    opened = [open_postgres_store(tmp_path) for _ in range(3)]
    for s in opened:
        s.close()
    with psycopg.connect(url, options=f"-c search_path={schema}") as conn:
        assert conn.execute("SELECT version FROM schema_version").fetchall() == [
            (POSTGRES_SCHEMA_VERSION,)
        ]
        conn.execute("UPDATE schema_version SET version = 99")
    with pytest.raises(SessionError, match="schema 99 is newer than this agentcore reads"):
        PostgresSessionStore(url, schema=schema)


def test_bad_arguments_and_an_unreachable_server_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="schema must be a PostgreSQL schema name"):
        PostgresSessionStore("postgresql://x@127.0.0.1:1/x", schema="Robert'); DROP")
    with pytest.raises(ValueError, match="max_connections must be an int >= 1"):
        PostgresSessionStore("postgresql://x@127.0.0.1:1/x", max_connections=0)
    t0 = time.monotonic()
    with pytest.raises(SessionError, match=r"postgresql://x:\*\*\*@127\.0\.0\.1:1/x") as info:
        PostgresSessionStore("postgresql://x:secret@127.0.0.1:1/x", timeout=2)
    assert "secret" not in str(info.value)
    assert time.monotonic() - t0 < 10


def terminate(application_name: str) -> int:
    """End the server processes of the connections with this name; how many there were."""
    with psycopg.connect(postgres_url(), autocommit=True) as admin:
        return len(
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = %s",
                (application_name,),
            ).fetchall()
        )


def test_dropped_connections_are_replaced_and_nothing_is_stored_half(tmp_path: Path) -> None:
    with open_postgres_store(tmp_path) as store:
        session = store.create()
        session.append(UserMessage(content="before"))
        # every pooled connection and the lease connection drop (a proxy's idle timeout, a
        # failover): the next change gets a fresh connection
        assert terminate(f"agentcore-sessions-{os.getpid()}") >= 1
        session.append(UserMessage(content="after"))
        assert [texts(m) for m in store.load(session.id).messages] == ["before", "after"]
        assert terminate(f"agentcore-lease-{os.getpid()}") == 1
        session.append(UserMessage(content="lease lost, still the holder"))
        assert len(store.load(session.id).messages) == 3


def test_a_full_pool_is_a_clear_error_in_bounded_time(tmp_path: Path) -> None:
    url, schema = postgres_url(), schema_for(tmp_path)
    open_postgres_store(tmp_path).close()
    with PostgresSessionStore(url, schema=schema, max_connections=1, timeout=1) as store:
        session = store.create()
        with store._pool.connection():  # something holds the only connection
            t0 = time.monotonic()
            with pytest.raises(SessionError, match="writing session") as info:
                session.append(UserMessage(content="lost?"))
            assert time.monotonic() - t0 < 5
            assert "connection" in str(info.value).lower()
        session.append(UserMessage(content="kept"))
        assert [texts(m) for m in store.load(session.id).messages] == ["kept"]


@pytest.mark.timeout(180)
def test_a_database_restarted_mid_run_loses_nothing(tmp_path: Path) -> None:
    """A server of its own (scripts/postgres on another port) stopped and started between two
    changes: a change while it is down fails with SessionError in bounded time and stores
    nothing; the next one after the restart is stored on a fresh connection."""
    postgres_url()  # skips when PostgreSQL cannot run here
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    data = Path(f"/var/tmp/agentcore-pgtest-{os.getpid()}-{port}") if os.getuid() == 0 else tmp_path
    env = {
        **os.environ,
        "AGENTCORE_POSTGRES_PORT": str(port),
        "AGENTCORE_POSTGRES_DATA": str(data / "cluster"),
    }
    script = str(ROOT / "scripts" / "postgres")

    def run(action: str) -> str:
        done = subprocess.run(
            [script, action], env=env, capture_output=True, text=True, timeout=120, check=False
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    if os.getuid() == 0:
        data.mkdir()
        shutil.chown(data, "postgres", "postgres")
    try:
        url = run("start")
        with PostgresSessionStore(url, schema="restart", timeout=5) as store:
            session = store.create()
            session.append(UserMessage(content="before"))
            run("stop")
            with pytest.raises(SessionError):  # the server is down: an error, not a hang
                session.append(UserMessage(content="while down"))
            run("start")
            session.append(UserMessage(content="after"))
            assert [texts(m) for m in store.load(session.id).messages] == ["before", "after"]
    finally:
        subprocess.run([script, "stop"], env=env, capture_output=True, timeout=60, check=False)
        shutil.rmtree(data / "cluster", ignore_errors=True)
        if os.getuid() == 0:
            shutil.rmtree(data, ignore_errors=True)
