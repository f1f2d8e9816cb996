"""`SqliteSessionStore`: many sessions in one SQLite database (the embedded default).

The database runs in WAL mode, so readers never block the writer and many processes can share it
(each appends in its own transaction; `busy_timeout` makes them wait their turn). Messages are one
row each, in the versioned JSON of `agentcore.messages`; a change is one transaction, so a process
killed at any moment leaves every committed message intact.

Schema 1 (`PRAGMA user_version`):

```
sessions(id PRIMARY KEY, created_at, updated_at, parent_id, parent_index, metadata, state,
         message_count)
messages(session_id, seq, data)          one row per message, seq = 0, 1, 2, ...
writers(session_id PRIMARY KEY, pid, host, token, since)
```

`writers` holds the write lease of each session: one store writes a session at a time
(`SessionLockedError` for a second one). A lease whose process has died (same host) is taken over.

Schema 0 (migrated to 1 when the database is opened): a single table
`session_messages(session_id, position, message)`.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import sys
import uuid
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..messages import AgentMessage, now_ms, to_json
from ._base import (
    SESSION_FORMAT_VERSION,
    SessionCorruptError,
    SessionError,
    SessionInfo,
    SessionLockedError,
    SessionNotFoundError,
    SessionParent,
    SessionState,
    message_from_json,
    state_from_json,
    state_to_json,
)
from ._store import RawSession, SessionStore

__all__ = ["SqliteSessionStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    parent_id TEXT,
    parent_index INTEGER,
    metadata TEXT NOT NULL DEFAULT '{}',
    state TEXT NOT NULL DEFAULT '{}',
    message_count INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS messages (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS writers (
    session_id TEXT PRIMARY KEY,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    token TEXT NOT NULL,
    since INTEGER NOT NULL
);
"""

_live_tokens: weakref.WeakValueDictionary[str, SqliteSessionStore] = weakref.WeakValueDictionary()


def _pid_alive(pid: int) -> bool:
    if sys.platform == "win32":  # os.kill(pid, 0) would send CTRL_C_EVENT there
        import ctypes

        kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined,unused-ignore]
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return False
        code = ctypes.c_ulong()
        try:
            kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
        finally:
            kernel32.CloseHandle(handle)
        return code.value == 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        from ..errors import MessageFormatError

        raise MessageFormatError(
            f"cannot store the session record: {exc} (tool result `details` and message "
            "fields must be JSON values to be stored)"
        ) from exc


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
        self._conn = sqlite3.connect(
            self.path, timeout=timeout, check_same_thread=False, isolation_level=None
        )
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(f"PRAGMA synchronous={'FULL' if fsync else 'NORMAL'}")
        self._conn.execute("PRAGMA foreign_keys=ON")
        self._token = uuid.uuid4().hex
        self._host = socket.gethostname()
        self._held: set[str] = set()
        self._closed = False
        _live_tokens[self._token] = self
        with self._lock:
            self._migrate()

    def __repr__(self) -> str:
        return f"SqliteSessionStore({self.path!r})"

    @contextmanager
    def _transaction(self, mode: str = "IMMEDIATE") -> Iterator[sqlite3.Connection]:
        conn = self._conn
        conn.execute(f"BEGIN {mode}")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _migrate(self) -> None:
        with self._transaction() as conn:
            (version,) = conn.execute("PRAGMA user_version").fetchone()
            if version > SESSION_FORMAT_VERSION:
                raise SessionError(
                    f"{self.path}: session schema {version} is newer than this agentcore reads "
                    f"(up to {SESSION_FORMAT_VERSION}); upgrade agentcore"
                )
            if version == SESSION_FORMAT_VERSION:
                return
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            legacy = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name='session_messages'"
            ).fetchone()
            if legacy:  # schema 0
                now = now_ms()
                conn.execute(
                    "INSERT INTO sessions (id, created_at, updated_at, message_count) "
                    "SELECT session_id, ?, ?, COUNT(*) FROM session_messages GROUP BY session_id",
                    (now, now),
                )
                conn.execute(
                    "INSERT INTO messages (session_id, seq, data) "
                    "SELECT session_id, ROW_NUMBER() OVER "
                    "(PARTITION BY session_id ORDER BY position) - 1, message "
                    "FROM session_messages"
                )
                conn.execute("DROP TABLE session_messages")
            conn.execute(f"PRAGMA user_version={SESSION_FORMAT_VERSION}")

    def _where(self, session_id: str) -> str:
        return f"{self.path}: session {session_id!r}"

    # -- creating and reading --------------------------------------------------------------

    def exists(self, session_id: str) -> bool:
        with self._lock:
            row = self._conn.execute("SELECT 1 FROM sessions WHERE id=?", (session_id,)).fetchone()
        return row is not None

    def _create(self, raw: RawSession) -> None:
        info = raw.info
        parent = info.parent
        rows = [(info.id, i, _dumps(to_json(m))) for i, m in enumerate(raw.messages)]
        state = _dumps(state_to_json(raw.state))
        metadata = _dumps(dict(info.metadata))
        with self._transaction() as conn:
            try:
                conn.execute(
                    "INSERT INTO sessions (id, created_at, updated_at, parent_id, parent_index, "
                    "metadata, state, message_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        info.id,
                        info.created_at,
                        info.updated_at,
                        parent.session_id if parent else None,
                        parent.index if parent else None,
                        metadata,
                        state,
                        len(rows),
                    ),
                )
            except sqlite3.IntegrityError:
                raise SessionError(f"session {info.id!r} already exists in {self.path}") from None
            conn.executemany("INSERT INTO messages (session_id, seq, data) VALUES (?, ?, ?)", rows)

    def _read(self, session_id: str) -> RawSession:
        with self._lock, self._transaction("DEFERRED") as conn:
            row = conn.execute(
                "SELECT created_at, updated_at, parent_id, parent_index, metadata, state "
                "FROM sessions WHERE id=?",
                (session_id,),
            ).fetchone()
            if row is None:
                raise SessionNotFoundError(f"no session {session_id!r} in {self.path}")
            rows = conn.execute(
                "SELECT seq, data FROM messages WHERE session_id=? ORDER BY seq", (session_id,)
            ).fetchall()
        where = self._where(session_id)
        created, updated, parent_id, parent_index, metadata, state = row
        messages = [
            message_from_json(self._json(data, f"{where} message {seq}"), f"{where} message {seq}")
            for seq, data in rows
        ]
        info = SessionInfo(
            id=session_id,
            created_at=created,
            updated_at=updated,
            parent=self._parent(parent_id, parent_index),
            metadata=self._json(metadata, f"{where} metadata"),
        )
        return RawSession(
            info=info,
            state=state_from_json(self._json(state, f"{where} state"), f"{where} state"),
            messages=messages,
        )

    @staticmethod
    def _json(text: str, where: str) -> Any:
        try:
            return json.loads(text)
        except (TypeError, ValueError) as exc:
            raise SessionCorruptError(f"{where}: not valid JSON: {exc}") from None

    @staticmethod
    def _parent(parent_id: str | None, index: int | None) -> SessionParent | None:
        if parent_id is None or index is None:
            return None
        return SessionParent(session_id=parent_id, index=index)

    def _list(self) -> list[SessionInfo]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, created_at, updated_at, parent_id, parent_index, metadata FROM sessions"
            ).fetchall()
        return [
            SessionInfo(
                id=sid,
                created_at=created,
                updated_at=updated,
                parent=self._parent(parent_id, index),
                metadata=self._json(metadata, f"{self._where(sid)} metadata"),
            )
            for sid, created, updated, parent_id, index, metadata in rows
        ]

    # -- writing ---------------------------------------------------------------------------

    def _acquire(self, session_id: str) -> None:
        if session_id in self._held:
            return
        with self._transaction() as conn:
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
        return _pid_alive(pid)

    def _write(
        self,
        session_id: str,
        truncate_to: int | None,
        messages: Sequence[AgentMessage],
        state: SessionState | None,
    ) -> None:
        datas = [_dumps(to_json(m)) for m in messages]
        state_text = _dumps(state_to_json(state)) if state is not None else None
        with self._transaction() as conn:
            row = conn.execute(
                "SELECT s.message_count, w.token FROM sessions s "
                "LEFT JOIN writers w ON w.session_id = s.id WHERE s.id=?",
                (session_id,),
            ).fetchone()
            if row is None:
                raise SessionNotFoundError(f"no session {session_id!r} in {self.path}")
            count, token = row
            if token != self._token:
                self._held.discard(session_id)
                raise SessionLockedError(
                    f"session {session_id!r} in {self.path}: this store lost its write lease "
                    "(another store took it over); open the session again"
                )
            if truncate_to is not None and truncate_to < count:
                conn.execute(
                    "DELETE FROM messages WHERE session_id=? AND seq>=?", (session_id, truncate_to)
                )
                count = truncate_to
            conn.executemany(
                "INSERT INTO messages (session_id, seq, data) VALUES (?, ?, ?)",
                [(session_id, count + i, d) for i, d in enumerate(datas)],
            )
            conn.execute(
                "UPDATE sessions SET message_count=?, updated_at=?, state=COALESCE(?, state) "
                "WHERE id=?",
                (count + len(datas), now_ms(), state_text, session_id),
            )

    def _release(self, session_id: str) -> None:
        if session_id not in self._held:
            return
        self._held.discard(session_id)
        with self._transaction() as conn:
            conn.execute(
                "DELETE FROM writers WHERE session_id=? AND token=?", (session_id, self._token)
            )

    def _delete(self, session_id: str) -> None:
        with self._transaction() as conn:
            deleted = conn.execute("DELETE FROM sessions WHERE id=?", (session_id,)).rowcount
            conn.execute("DELETE FROM writers WHERE session_id=?", (session_id,))
        self._held.discard(session_id)
        if not deleted:
            raise SessionNotFoundError(f"no session {session_id!r} in {self.path}")

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            for session_id in list(self._held):
                self._release(session_id)
            self._conn.close()
            self._closed = True
