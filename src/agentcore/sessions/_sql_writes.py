"""What the SQL session stores (SQLite and PostgreSQL) share beyond their rows: storing a change
under the write lease (`write_change`), and telling whether a lease holder's process lives
(`pid_alive`).

A change is encoded before its transaction begins; in the transaction the session's row is read
with its writer (locked, where the dialect can lock a row), the change is refused unless this
store still holds the lease, messages past `truncate_to` are deleted, the new ones inserted
after the kept ones, and the session's count, time, state and title updated: all or nothing.
The stores keep their connections, transactions, error translation and error texts; only the
SQL spelling differs (`WriteStatements`: `SQLITE_WRITES`, `POSTGRES_WRITES`).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from ..messages import AgentMessage, now_ms
from ._base import SessionState
from ._sql_records import encode_messages, encode_state, message_rows
from ._titles import session_title

__all__ = ["POSTGRES_WRITES", "SQLITE_WRITES", "WriteStatements", "pid_alive", "write_change"]


@dataclass(frozen=True, slots=True)
class WriteStatements:
    """The statements of `write_change` in one SQL dialect."""

    session: str
    """The session's message count and its writer's token (one row, or none)."""
    truncate: str
    """Delete the session's messages from a seq on."""
    insert: str
    """Insert one `messages` row."""
    update: str
    """The session's new count and time, its state and title unless none was given."""


def _statements(mark: str, lock_row: str) -> WriteStatements:
    return WriteStatements(
        session=(
            "SELECT s.message_count, w.token FROM sessions s "
            f"LEFT JOIN writers w ON w.session_id = s.id WHERE s.id={mark}{lock_row}"
        ),
        truncate=f"DELETE FROM messages WHERE session_id={mark} AND seq>={mark}",
        insert=(
            f"INSERT INTO messages (session_id, seq, data, crc) VALUES ({mark}, {mark}, {mark}, "
            f"{mark})"
        ),
        update=(
            f"UPDATE sessions SET message_count={mark}, updated_at={mark}, "
            f"state=COALESCE({mark}, state), state_crc=COALESCE({mark}, state_crc), "
            f"title=COALESCE(title, {mark}) WHERE id={mark}"
        ),
    )


SQLITE_WRITES = _statements("?", "")
"""`sqlite3`'s spelling (the store's transaction is `BEGIN IMMEDIATE`: no row lock needed)."""

POSTGRES_WRITES = _statements("%s", " FOR UPDATE OF s")
"""psycopg's spelling, the session's row locked for the transaction."""


def write_change(
    transaction: Callable[[], AbstractContextManager[Any]],
    sql: WriteStatements,
    session_id: str,
    truncate_to: int | None,
    messages: Sequence[AgentMessage],
    state: SessionState | None,
    *,
    token: str,
    not_found: Callable[[], Exception],
    lost_lease: Callable[[], Exception],
) -> None:
    """Store one change of a session in one transaction, if this store (`token`) still holds
    its write lease.

    Args:
        transaction: opens the store's transaction and gives its connection (committed when
            the block ends, rolled back when it raises).
        sql: the statements in the store's dialect.
        truncate_to: keep only the messages before this index first (None: keep all).
        messages: appended after the kept messages.
        state: the new state (None: the stored one is kept).
        token: this store's lease token.
        not_found: the error to raise when there is no such session.
        lost_lease: the error to raise when another store holds the lease now (nothing of the
            change is stored).
    """
    datas = encode_messages(messages)
    state_text, state_crc = encode_state(state)
    title = session_title(messages)
    with transaction() as conn:
        row = conn.execute(sql.session, (session_id,)).fetchone()
        if row is None:
            raise not_found()
        count, holder = row
        if holder != token:
            raise lost_lease()
        if truncate_to is not None and truncate_to < count:
            conn.execute(sql.truncate, (session_id, truncate_to))
            count = truncate_to
        if datas:
            with contextlib.closing(conn.cursor()) as cur:
                cur.executemany(sql.insert, message_rows(session_id, count, datas))
        conn.execute(
            sql.update, (count + len(datas), now_ms(), state_text, state_crc, title, session_id)
        )


def pid_alive(pid: int) -> bool:
    """Whether a process of this machine with this id is running (a lease holder's, say)."""
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
