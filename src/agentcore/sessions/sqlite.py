"""`SqliteSessionStore`: many sessions in one SQLite database (the embedded default).

The database runs in WAL mode, so readers never block the writer and many processes can share it
(each appends in its own transaction; `busy_timeout` makes them wait their turn). Messages are one
row each, in the versioned JSON of `agentcore.messages`; a change is one transaction, so a process
killed at any moment leaves every committed message intact.

Schema 3 (`PRAGMA user_version`; `_sqlite_schema` has the details and the migrations):

```
sessions(id PRIMARY KEY, created_at, updated_at, parent_id, parent_index, metadata, state,
         message_count, header_crc, state_crc, title)
messages(session_id, seq, data, crc)     one row per message, seq = 0, 1, 2, ...
writers(session_id PRIMARY KEY, pid, host, token, since)
```

`title` is the first user message's `session_title`, set by the change that stores it: `list()`
gives each session's title, message count and last change from this table alone.

`writers` holds the write lease of each session: one store writes a session at a time
(`SessionLockedError` for a second one). A lease whose process has died (same host) is taken over.

Damage is reported, never passed on: a file that is not a database, a malformed page, text that
is not UTF-8, a checksum that does not match, a row of the wrong type or a missing message raise
`SessionCorruptError` naming the file (and the session and message), on open and on load; other
SQLite failures (busy, read-only, disk full) raise `SessionError`. The raw `sqlite3` exception is
kept as `__cause__`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import sqlite3
import uuid
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..messages import AgentMessage, now_ms
from ._base import (
    PRIVATE_FILE,
    SessionCorruptError,
    SessionError,
    SessionInfo,
    SessionLockedError,
    SessionNotFoundError,
    SessionState,
)
from ._sql_records import (
    check_header,
    read_session,
    session_info,
    session_rows,
)
from ._sql_writes import SQLITE_WRITES, pid_alive, write_change
from ._sqlite_schema import classify, finish_migration, migrate
from ._store import RawSession, SessionStore

__all__ = ["SqliteSessionStore"]

_log = logging.getLogger("agentcore.sessions")

_live_tokens: weakref.WeakValueDictionary[str, SqliteSessionStore] = weakref.WeakValueDictionary()


def _blob(value: Any) -> bytes:
    """A JSON column as read (`CAST(... AS BLOB)`: bytes, or None for NULL) as bytes."""
    return value or b""


class SqliteSessionStore(SessionStore):
    """Sessions in one SQLite database file (created if missing).

    Args:
        path: the database file (`":memory:"` for a private in-memory store).
        fsync: `synchronous=FULL` (survives power loss; slower). The default, `NORMAL`, loses
            nothing when a process is killed.
        timeout: seconds to wait for another process's transaction before failing.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, fsync: bool = False, timeout: float = 10.0
    ) -> None:
        super().__init__()
        self.path = os.fspath(path)
        self._token = uuid.uuid4().hex
        self._host = socket.gethostname()
        self._held: set[str] = set()
        self._closed = False
        with self._errors("opening the session database"):
            _create_private(self.path)
            self._conn = sqlite3.connect(
                self.path, timeout=timeout, check_same_thread=False, isolation_level=None
            )
            try:
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute(f"PRAGMA synchronous={'FULL' if fsync else 'NORMAL'}")
                self._conn.execute("PRAGMA foreign_keys=ON")
                with self._lock:
                    self._migrate()
            except BaseException:
                self._conn.close()
                raise
        _live_tokens[self._token] = self

    def __repr__(self) -> str:
        return f"SqliteSessionStore({self.path!r})"

    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        """sqlite3's exceptions as SessionCorruptError (a damaged file) or SessionError."""
        try:
            yield
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            raise classify(exc, self.path, doing) from exc

    @contextmanager
    def _transaction(self, mode: str = "IMMEDIATE") -> Iterator[sqlite3.Connection]:
        conn = self._conn
        conn.execute(f"BEGIN {mode}")
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:  # SQLite may have rolled back already (a damaged page)
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _migrate(self) -> None:
        with self._transaction() as conn:
            (version,) = conn.execute("PRAGMA user_version").fetchone()
            migrate(conn, self.path)
        if version == 1:
            finish_migration(self._conn)

    def _where(self, session_id: str) -> str:
        return f"{self.path}: session {session_id!r}"

    # -- creating and reading --------------------------------------------------------------

    def exists(self, session_id: str) -> bool:
        with self._lock, self._errors(f"looking up session {session_id!r}"):
            row = self._conn.execute("SELECT 1 FROM sessions WHERE id=?", (session_id,)).fetchone()
        return row is not None

    def _create(self, raw: RawSession) -> None:
        header, rows = session_rows(raw)
        session_id = raw.info.id
        with self._errors(f"creating session {session_id!r}"), self._transaction() as conn:
            try:
                conn.execute(
                    "INSERT INTO sessions (id, created_at, updated_at, parent_id, parent_index, "
                    "metadata, state, message_count, header_crc, state_crc, title) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    header,
                )
            except sqlite3.IntegrityError:
                raise SessionError(
                    f"session {session_id!r} already exists in {self.path}"
                ) from None
            conn.executemany(
                "INSERT INTO messages (session_id, seq, data, crc) VALUES (?, ?, ?, ?)", rows
            )

    def _read(self, session_id: str) -> RawSession:
        where = self._where(session_id)
        with (
            self._lock,
            self._errors(f"reading session {session_id!r}"),
            self._transaction("DEFERRED") as conn,
        ):
            row = conn.execute(
                "SELECT created_at, updated_at, parent_id, parent_index, CAST(metadata AS BLOB), "
                "CAST(state AS BLOB), message_count, header_crc, state_crc "
                "FROM sessions WHERE id=?",
                (session_id,),
            ).fetchone()
            if row is None:
                raise SessionNotFoundError(f"no session {session_id!r} in {self.path}")
            rows = conn.execute(
                "SELECT seq, CAST(data AS BLOB), crc FROM messages WHERE session_id=? ORDER BY seq",
                (session_id,),
            ).fetchall()
        created, updated, parent_id, parent_index = row[:4]
        count = row[6]
        for name, value, types in (
            ("created_at", created, int),
            ("updated_at", updated, int),
            ("message_count", count, int),
            ("parent_id", parent_id, (str, type(None))),
            ("parent_index", parent_index, (int, type(None))),
        ):
            if not isinstance(value, types):
                raise SessionCorruptError(
                    f"{where}: {name} holds a value of type {type(value).__name__}"
                )
        return read_session(session_id, where, row, rows, _blob)

    def _list(self) -> list[SessionInfo]:
        with self._lock, self._errors("listing sessions"):
            rows = self._conn.execute(
                "SELECT CAST(id AS BLOB), created_at, updated_at, CAST(parent_id AS BLOB), "
                "parent_index, CAST(metadata AS BLOB), header_crc, CAST(title AS BLOB), "
                "message_count FROM sessions"
            ).fetchall()
        out: list[SessionInfo] = []
        for sid, created, updated, parent_id, index, metadata, checksum, title, count in rows:
            where = f"{self.path}: session {sid!r}"
            try:
                check_header(sid, created, parent_id, index, metadata or b"", checksum, where)
                out.append(
                    session_info(
                        sid.decode(),
                        created,
                        updated,
                        parent_id and parent_id.decode(),
                        index,
                        metadata or b"",
                        where,
                        title=title.decode(errors="replace") if title is not None else None,
                        message_count=count,
                    )
                )
            except (SessionCorruptError, ValueError) as exc:
                _log.warning("skipping unreadable session %r in %s: %s", sid, self.path, exc)
        return out

    # -- writing ---------------------------------------------------------------------------

    def _acquire(self, session_id: str) -> None:
        if session_id in self._held:
            return
        with self._errors(f"opening session {session_id!r}"), self._transaction() as conn:
            if not conn.execute("SELECT 1 FROM sessions WHERE id=?", (session_id,)).fetchone():
                raise SessionNotFoundError(f"no session {session_id!r} in {self.path}")
            row = conn.execute(
                "SELECT pid, host, token FROM writers WHERE session_id=?", (session_id,)
            ).fetchone()
            if row is not None and row[2] != self._token and self._lease_alive(*row):
                raise SessionLockedError(
                    f"session {session_id!r} in {self.path} is open for writing by another "
                    f"store (pid {row[0]} on {row[1]}); close it there first"
                )
            conn.execute(
                "INSERT OR REPLACE INTO writers (session_id, pid, host, token, since) "
                "VALUES (?, ?, ?, ?, ?)",
                (session_id, os.getpid(), self._host, self._token, now_ms()),
            )
        self._held.add(session_id)

    def _lease_alive(self, pid: int, host: str, token: str) -> bool:
        if host != self._host:
            return True  # cannot tell: assume the other host's writer is alive
        if pid == os.getpid():
            return token in _live_tokens  # another store of this process, unless it is gone
        return pid_alive(pid)

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
                SQLITE_WRITES,
                session_id,
                truncate_to,
                messages,
                state,
                token=self._token,
                not_found=lambda: SessionNotFoundError(f"no session {session_id!r} in {self.path}"),
                lost_lease=lambda: self._lost(session_id),
            )

    def _lost(self, session_id: str) -> SessionLockedError:
        self._held.discard(session_id)
        return SessionLockedError(
            f"session {session_id!r} in {self.path}: this store lost its write lease "
            "(another store took it over); open the session again"
        )

    def _release(self, session_id: str) -> None:
        if session_id not in self._held:
            return
        self._held.discard(session_id)
        with self._errors(f"closing session {session_id!r}"), self._transaction() as conn:
            conn.execute(
                "DELETE FROM writers WHERE session_id=? AND token=?", (session_id, self._token)
            )

    def _delete(self, session_id: str) -> None:
        with self._errors(f"deleting session {session_id!r}"), self._transaction() as conn:
            deleted = conn.execute("DELETE FROM sessions WHERE id=?", (session_id,)).rowcount
            conn.execute("DELETE FROM writers WHERE session_id=?", (session_id,))
        self._held.discard(session_id)
        if not deleted:
            raise SessionNotFoundError(f"no session {session_id!r} in {self.path}")

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            try:
                for session_id in list(self._held):
                    self._release(session_id)
            finally:
                self._conn.close()
                self._closed = True


def _create_private(path: str) -> None:
    """Create the database file readable by its owner only (0600) before SQLite does: SQLite
    gives its `-wal` and `-shm` files the database file's mode. An existing file is left as it
    is; `:memory:` and `file:` URIs are SQLite's."""
    if path == ":memory:" or path.startswith("file:") or path == "":
        return
    with contextlib.suppress(OSError):  # exists; or cannot be: SQLite then says why
        os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))
