"""`PostgresSessionStore`: sessions in a PostgreSQL database, shared by many processes and hosts.

Needs the `postgres` extra (`pip install 'agentcore-loop[postgres]'`: psycopg 3 and psycopg_pool).
Reads and writes go through a connection pool; a change is one transaction, so a process killed at
any moment leaves every committed message intact and nothing half-stored. The tables live in one
PostgreSQL schema (`agentcore` by default; `_postgres_schema` has them and their migrations).

One store writes a session at a time. Its write lease is a PostgreSQL advisory lock, held by a
connection the store keeps for that purpose, plus a row in `writers` naming the holder: a second
store (in this process, another one, or on another host) gets `SessionLockedError` naming the
holder. When the holder's process dies (even `kill -9`), its connection closes and PostgreSQL
releases the lock at once: the session can be opened again. Every write checks, in its
transaction and with the session's row locked, that this store still holds the lease, so a store
that lost it (its lock connection dropped and another store took the session over) gets
`SessionLockedError` for its next write instead of interleaving records with the new holder.
The lease connection has TCP keepalives on both ends, so a holder whose host vanishes (no FIN,
no RST) loses its locks in about `LEASE_DEAD_AFTER` seconds.

A run in progress can say so (`checkpoint`): how many messages were stored, and the answer it is
streaming. If its process dies before the run ends (the lease row is still there when another
store takes the session), the store that takes over closes the run in the same transaction: the
partial answer is stored as an `aborted` assistant message (its text and thinking; tool calls
that never finished streaming are left out), so the transcript can be sent to a model again.

Damage is reported, never passed on: a checksum that does not match or a missing message raise
`SessionCorruptError` naming the session (and the message); other database failures raise
`SessionError` with psycopg's exception as `__cause__`.
"""

from __future__ import annotations

import builtins
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from .._optional import import_sdk
from ..messages import AgentMessage, AssistantMessage, now_ms, to_json
from ._base import (
    SessionCorruptError,
    SessionError,
    SessionInfo,
    SessionLockedError,
    SessionNotFoundError,
    SessionState,
    encode_json,
)
from ._postgres_runs import close_interrupted_run
from ._postgres_schema import check_schema_name, migrate
from ._sql_records import (
    check_header,
    read_session,
    session_info,
    session_rows,
)
from ._sql_writes import POSTGRES_WRITES, pid_alive, write_change
from ._store import RawSession, SessionStore

if TYPE_CHECKING:
    import psycopg
    import psycopg_pool

__all__ = ["PostgresSessionStore"]

_log = logging.getLogger("agentcore.sessions")

LEASE_DEAD_AFTER = 25
"""Seconds after which the server drops the lease connection of a holder that stopped answering
(its host gone): TCP keepalives every 5 s after 10 s idle, 3 missed (client and server side)."""

_KEEPALIVES = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
}


def _blob(value: str) -> bytes:
    """A JSON column as read (text) as the bytes its checksum covers."""
    return value.encode()


def _redacted(url: str) -> str:
    """The URL without its password (for messages and `repr`)."""
    head, sep, tail = url.partition("://")
    if sep and "@" in tail:
        userinfo, _, rest = tail.rpartition("@")
        user = userinfo.split(":", 1)[0]
        return f"{head}://{user}{':***' if ':' in userinfo else ''}@{rest}"
    return url


class PostgresSessionStore(SessionStore):
    """Sessions in a PostgreSQL database (the tables are made, or migrated, on open).

    Args:
        url: a libpq connection string, e.g. `postgresql://user@127.0.0.1:5432/app`.
        schema: the PostgreSQL schema holding the tables (made if missing): lower-case letters,
            digits and `_`. Stores with different schemas in one database are independent.
        max_connections: the most connections the pool opens for reads and writes (the write
            lease uses one more).
        timeout: seconds to wait for a connection (from the pool or the server) before failing
            with `SessionError`.

    Raises:
        MissingExtraError: psycopg is not installed.
        ValueError: a bad schema name or pool size.
        SessionError: the server cannot be reached, or its tables are newer than this agentcore.
    """

    def __init__(
        self,
        url: str,
        *,
        schema: str = "agentcore",
        max_connections: int = 4,
        timeout: float = 10.0,
    ) -> None:
        super().__init__()
        if not isinstance(url, str) or not url:
            raise ValueError(f"url must be a PostgreSQL connection string, got {url!r}")
        if not isinstance(max_connections, int) or max_connections < 1:
            raise ValueError(f"max_connections must be an int >= 1, got {max_connections!r}")
        self.schema = check_schema_name(schema)
        self._psycopg = import_sdk(
            "psycopg", "postgres", needed_by="agentcore.sessions.PostgresSessionStore"
        )
        pool_module = import_sdk(
            "psycopg_pool", "postgres", needed_by="agentcore.sessions.PostgresSessionStore"
        )
        self.url = url
        self._shown = _redacted(url)
        self._token = uuid.uuid4().hex
        self._host = socket.gethostname()
        self._held: set[str] = set()
        self._closed = False
        self._lease_lock = threading.Lock()
        self._timeout = timeout
        self._connect_args: dict[str, Any] = {
            "options": f"-c search_path={self.schema}",
            "connect_timeout": max(1, int(timeout)),
            "application_name": f"agentcore-sessions-{os.getpid()}",
        }
        self._lease_conn: psycopg.Connection[Any] | None = None
        pool: psycopg_pool.ConnectionPool[Any] = pool_module.ConnectionPool(
            url,
            min_size=1,
            max_size=max_connections,
            timeout=timeout,
            kwargs=self._connect_args,
            # a connection is checked as it leaves the pool: one the server dropped (a restart,
            # an idle timeout) is replaced before a change starts on it
            check=pool_module.ConnectionPool.check_connection,
            open=False,
            name="agentcore-sessions",
        )
        self._pool = pool
        try:
            with self._errors("opening the session database"):
                pool.open(wait=True, timeout=timeout)
            with self._errors("migrating the session tables"), self._transaction() as conn:
                migrate(conn, self.schema, self._shown)
        except BaseException:
            pool.close()
            raise

    def __repr__(self) -> str:
        return f"PostgresSessionStore({self._shown!r}, schema={self.schema!r})"

    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        """psycopg's and the pool's exceptions as SessionError."""
        try:
            yield
        except SessionError:
            raise
        except Exception as exc:
            if not _is_database_error(exc):
                raise
            text = str(exc).strip() or type(exc).__name__
            raise SessionError(f"{self._shown}: {doing}: {text}") from exc

    @contextmanager
    def _transaction(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection inside one transaction (committed on success)."""
        with self._pool.connection() as conn, conn.transaction():
            yield conn

    def _where(self, session_id: str) -> str:
        return f"{self._shown} (schema {self.schema}): session {session_id!r}"

    def _not_found(self, session_id: str) -> SessionNotFoundError:
        return SessionNotFoundError(
            f"no session {session_id!r} in {self._shown} (schema {self.schema})"
        )

    # -- creating and reading --------------------------------------------------------------

    def exists(self, session_id: str) -> bool:
        with self._errors(f"looking up session {session_id!r}"), self._transaction() as conn:
            row = conn.execute("SELECT 1 FROM sessions WHERE id=%s", (session_id,)).fetchone()
        return row is not None

    def _create(self, raw: RawSession) -> None:
        header, rows = session_rows(raw)
        session_id = raw.info.id
        with self._errors(f"creating session {session_id!r}"), self._transaction() as conn:
            inserted = conn.execute(
                "INSERT INTO sessions (id, created_at, updated_at, parent_id, parent_index, "
                "metadata, state, message_count, header_crc, state_crc, title) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING",
                header,
            ).rowcount
            if not inserted:
                raise SessionError(
                    f"session {session_id!r} already exists in {self._shown} (schema {self.schema})"
                )
            if rows:
                with conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO messages (session_id, seq, data, crc) VALUES (%s, %s, %s, %s)",
                        rows,
                    )

    def _read(self, session_id: str) -> RawSession:
        where = self._where(session_id)
        with (
            self._errors(f"reading session {session_id!r}"),
            self._pool.connection() as conn,
            conn.transaction(),
        ):
            # one snapshot for the header and the messages
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            row = conn.execute(
                "SELECT created_at, updated_at, parent_id, parent_index, metadata, state, "
                "message_count, header_crc, state_crc FROM sessions WHERE id=%s",
                (session_id,),
            ).fetchone()
            if row is None:
                raise self._not_found(session_id)
            rows = conn.execute(
                "SELECT seq, data, crc FROM messages WHERE session_id=%s ORDER BY seq",
                (session_id,),
            ).fetchall()
        return read_session(session_id, where, row, rows, _blob)

    def _list(self) -> list[SessionInfo]:
        return self.list_page(limit=None)

    def list(self) -> list[SessionInfo]:
        """Every session, oldest first (headers only: no message is read; each with its title and
        message count, see `SessionInfo`)."""
        return self.list_page(limit=None)

    def list_page(
        self, *, limit: int | None = 100, after: SessionInfo | str | None = None
    ) -> builtins.list[SessionInfo]:
        """Up to `limit` sessions, oldest first, starting after `after` (the last session of the
        previous page, or its id); `limit=None` for all of them. Reads only the sessions'
        headers (with their titles and message counts), with one indexed query per page.

        Raises:
            ValueError: `limit` is not a positive int or None.
            SessionNotFoundError: `after` names no session.
        """
        if limit is not None and (not isinstance(limit, int) or limit < 1):
            raise ValueError(f"limit must be a positive int or None, got {limit!r}")
        query = (
            "SELECT id, created_at, updated_at, parent_id, parent_index, metadata, header_crc, "
            "title, message_count FROM sessions"
        )
        params: builtins.list[Any] = []
        with self._errors("listing sessions"), self._transaction() as conn:
            if after is not None:
                after_id = after.id if isinstance(after, SessionInfo) else after
                mark = conn.execute(
                    "SELECT created_at FROM sessions WHERE id=%s", (after_id,)
                ).fetchone()
                if mark is None:
                    raise SessionNotFoundError(
                        f"list_page(after={after_id!r}): no such session in {self._shown} "
                        f"(schema {self.schema})"
                    )
                query += " WHERE (created_at, id) > (%s, %s)"
                params += [mark[0], after_id]
            query += " ORDER BY created_at, id"
            if limit is not None:
                query += " LIMIT %s"
                params.append(limit)
            rows = conn.execute(query, params).fetchall()
        out: builtins.list[SessionInfo] = []
        for sid, created, updated, parent_id, index, metadata, checksum, title, count in rows:
            where = self._where(sid)
            metadata_bytes = metadata.encode()
            try:
                check_header(
                    sid.encode(),
                    created,
                    parent_id.encode() if parent_id is not None else None,
                    index,
                    metadata_bytes,
                    checksum,
                    where,
                )
                out.append(
                    session_info(
                        sid,
                        created,
                        updated,
                        parent_id,
                        index,
                        metadata_bytes,
                        where,
                        title=title,
                        message_count=count,
                    )
                )
            except (SessionCorruptError, ValueError) as exc:
                _log.warning("skipping unreadable session %r: %s", sid, exc)
        return out

    # -- the write lease -------------------------------------------------------------------

    def _lease(self) -> psycopg.Connection[Any]:
        """The connection holding this store's advisory locks (reopened if it was lost: the
        locks went with it, and each write checks the `writers` row)."""
        conn = self._lease_conn
        if conn is None or conn.closed or conn.broken:
            # named after this process, so an operator can see who holds which lease
            args = {
                **self._connect_args,
                **_KEEPALIVES,
                "application_name": f"agentcore-lease-{os.getpid()}",
                "options": self._connect_args["options"]
                + " -c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5"
                " -c tcp_keepalives_count=3",
            }
            conn = self._psycopg.Connection.connect(self.url, autocommit=True, **args)
            self._lease_conn = conn
        return conn

    @staticmethod
    def _lock_key(session_id: str) -> str:
        return f"session:{session_id}"

    def _acquire(self, session_id: str) -> None:
        if session_id in self._held:
            return
        with self._errors(f"opening session {session_id!r}"):
            if not self.exists(session_id):
                raise self._not_found(session_id)
            deadline = time.monotonic() + self._timeout
            while True:
                if self._try_lock(session_id):
                    break
                with self._transaction() as conn:
                    row = conn.execute(
                        "SELECT pid, host FROM writers WHERE session_id=%s", (session_id,)
                    ).fetchone()
                # a holder on this host whose process is gone (kill -9): its server process
                # ends as soon as it sees the connection closed, which takes milliseconds
                dead = row is not None and row[1] == self._host and not pid_alive(row[0])
                if dead and time.monotonic() < deadline:
                    time.sleep(0.02)
                    continue
                holder = "" if row is None else f" (pid {row[0]} on {row[1]})"
                raise SessionLockedError(
                    f"session {session_id!r} in {self._shown} (schema {self.schema}) is open "
                    f"for writing by another store{holder}; close it there first"
                )
            try:
                with self._transaction() as conn:
                    # the session's row locked: a write of the previous holder in flight ends
                    # first, and its next one sees this store's token
                    found = conn.execute(
                        "SELECT 1 FROM sessions WHERE id=%s FOR UPDATE", (session_id,)
                    ).fetchone()
                    if found is None:
                        raise self._not_found(session_id)
                    self._close_dangling_run(conn, session_id)
                    conn.execute(
                        "INSERT INTO writers (session_id, token, pid, host, since) "
                        "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (session_id) DO UPDATE SET "
                        "token=EXCLUDED.token, pid=EXCLUDED.pid, host=EXCLUDED.host, "
                        "since=EXCLUDED.since, run_at=NULL, partial=NULL",
                        (session_id, self._token, os.getpid(), self._host, now_ms()),
                    )
            except BaseException:
                self._unlock(session_id)
                raise
        self._held.add(session_id)

    def _close_dangling_run(self, conn: psycopg.Connection[Any], session_id: str) -> None:
        """In the takeover's transaction: close a run whose process died (`_postgres_runs`)."""
        close_interrupted_run(conn, session_id, self._token, self._where(session_id))

    def checkpoint(self, session_id: str, at: int, partial: AssistantMessage | None = None) -> None:
        """Say that a run is writing the session: `at` messages are stored, and `partial` is the
        answer streaming now (None: none yet). If this process dies before the run ends (its
        lease is taken over with this still recorded), the store taking over stores `partial`
        (or an empty answer, after a prompt or tool results) as an `aborted` assistant message.
        The lease's `release` forgets it. Needs the session's write lease (`open`).

        Raises:
            SessionLockedError: this store does not hold the session's lease.
            SessionError: the database failed.
        """
        partial_text = None
        if partial is not None:
            partial_text = encode_json(to_json(partial))[0]
        with self._errors(f"checkpointing session {session_id!r}"), self._transaction() as conn:
            updated = conn.execute(
                "UPDATE writers SET run_at=%s, partial=%s WHERE session_id=%s AND token=%s",
                (at, partial_text, session_id, self._token),
            ).rowcount
        if not updated:  # (an advisory lock this store may hold is left to `release`)
            raise SessionLockedError(
                f"session {session_id!r} in {self._shown} (schema {self.schema}): this store "
                "does not hold its write lease (open the session first)"
            )

    def _try_lock(self, session_id: str) -> bool:
        with self._lease_lock:
            key = f"{self.schema}:{self._lock_key(session_id)}"
            row = (
                self._lease()
                .execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (key,))
                .fetchone()
            )
        return bool(row and row[0])

    def _unlock(self, session_id: str) -> None:
        with self._lease_lock:
            conn = self._lease_conn
            if conn is None or conn.closed or conn.broken:
                return
            key = f"{self.schema}:{self._lock_key(session_id)}"
            try:
                conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (key,))
            except Exception as exc:
                if not _is_database_error(exc):
                    raise

    def _write(
        self,
        session_id: str,
        truncate_to: int | None,
        messages: Sequence[AgentMessage],
        state: SessionState | None,
    ) -> None:
        with self._errors(f"writing session {session_id!r}"):
            write_change(
                self._transaction,
                POSTGRES_WRITES,
                session_id,
                truncate_to,
                messages,
                state,
                token=self._token,
                not_found=lambda: self._not_found(session_id),
                lost_lease=lambda: self._lost(session_id),
            )

    def _lost(self, session_id: str) -> SessionLockedError:
        self._held.discard(session_id)
        return SessionLockedError(
            f"session {session_id!r} in {self._shown} (schema {self.schema}): this "
            "store lost its write lease (another store took the session over); nothing "
            "of this change was stored: open the session again"
        )

    def _release(self, session_id: str) -> None:
        if session_id not in self._held:
            return
        self._held.discard(session_id)
        try:
            with self._errors(f"closing session {session_id!r}"), self._transaction() as conn:
                conn.execute(
                    "DELETE FROM writers WHERE session_id=%s AND token=%s",
                    (session_id, self._token),
                )
        finally:
            self._unlock(session_id)

    def _delete(self, session_id: str) -> None:
        try:
            with self._errors(f"deleting session {session_id!r}"), self._transaction() as conn:
                deleted = conn.execute("DELETE FROM sessions WHERE id=%s", (session_id,)).rowcount
                conn.execute("DELETE FROM writers WHERE session_id=%s", (session_id,))
        finally:
            if session_id in self._held:
                self._held.discard(session_id)
                self._unlock(session_id)
        if not deleted:
            raise self._not_found(session_id)

    def close(self) -> None:
        """Release every write lease and close the connections (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                for session_id in list(self._held):
                    self._release(session_id)
            finally:
                with self._lease_lock:
                    if self._lease_conn is not None:
                        self._lease_conn.close()
                        self._lease_conn = None
                self._pool.close()


def _is_database_error(exc: BaseException) -> bool:
    """psycopg's errors and the pool's (a timeout waiting for a connection)."""
    module = type(exc).__module__ or ""
    return module.split(".")[0] in ("psycopg", "psycopg_pool")
