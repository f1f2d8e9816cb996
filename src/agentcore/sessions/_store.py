"""The session store interface (`SessionStore`) and the `Session` handle."""

from __future__ import annotations

import abc
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..messages import AgentMessage
from ._base import (
    SessionData,
    SessionInfo,
    SessionParent,
    SessionState,
    check_session_id,
    creation_time,
    fresh_session_id,
    repair_transcript,
)

__all__ = ["RawSession", "Session", "SessionStore"]


# --- the interface -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class RawSession:
    """What a store reads, before repair (for implementations)."""

    info: SessionInfo
    state: SessionState
    messages: list[AgentMessage]


class SessionStore(abc.ABC):
    """Where sessions live. Implementations: `JsonlSessionStore`, `SqliteSessionStore`,
    `PostgresSessionStore`.

    Every method is synchronous, thread-safe and short; a store is a context manager that
    releases its write locks (`close()`) on exit.

    Writing a session takes its write lock, held until `Session.close()` or `close()`: a second
    writer (another store, here or in another process) gets `SessionLockedError`. Reading
    (`load`, `list`) needs no lock and sees every complete record written so far.
    """

    @property
    def blocking_writes(self) -> bool:
        """Whether a write may wait (on a disk flush, or on another process): the Agent then
        writes from a worker thread. False only for stores whose writes are quick appends to
        memory or the page cache, which the Agent does inline (cheaper than a thread hand-off)."""
        return True

    def __init__(self) -> None:
        self._lock = threading.RLock()

    # -- what implementations provide ------------------------------------------------------

    @abc.abstractmethod
    def _create(self, raw: RawSession) -> None:
        """Store a new session atomically (fail with SessionError if the id exists)."""

    @abc.abstractmethod
    def _read(self, session_id: str) -> RawSession:
        """Read a session (SessionNotFoundError if missing, SessionCorruptError if unreadable)."""

    @abc.abstractmethod
    def _write(
        self,
        session_id: str,
        truncate_to: int | None,
        messages: Sequence[AgentMessage],
        state: SessionState | None,
    ) -> None:
        """Apply one change atomically; the caller holds the write lock."""

    @abc.abstractmethod
    def _acquire(self, session_id: str) -> None:
        """Take the write lock of an existing session (idempotent within this store)."""

    @abc.abstractmethod
    def _release(self, session_id: str) -> None:
        """Give the write lock back (no-op if not held)."""

    @abc.abstractmethod
    def _list(self) -> list[SessionInfo]:
        """Every session, in any order."""

    @abc.abstractmethod
    def _delete(self, session_id: str) -> None:
        """Remove a session (SessionNotFoundError if missing); its lock is released."""

    @abc.abstractmethod
    def exists(self, session_id: str) -> bool:
        """Whether the store has a session with this id."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release every write lock and close files or connections."""

    # -- the public interface --------------------------------------------------------------

    def create(
        self,
        *,
        state: SessionState | None = None,
        messages: Sequence[AgentMessage] = (),
        metadata: Mapping[str, Any] | None = None,
        session_id: str | None = None,
        parent: SessionParent | None = None,
    ) -> Session:
        """Create a session and open it for writing.

        Args:
            state: the initial state (default: empty system prompt, no model, level "off").
            messages: an initial transcript.
            metadata: application data (a title, tags): JSON values, fixed at creation and
                returned by `list()` and `load()`.
            session_id: the id (default: a fresh, time-ordered one).
            parent: recorded for branches (see `branch`).

        Raises:
            SessionError: the id is taken.
            MessageFormatError: a message cannot be encoded.
        """
        now = creation_time()
        sid = check_session_id(session_id) if session_id is not None else fresh_session_id(now)
        raw = RawSession(
            info=SessionInfo(
                id=sid,
                created_at=now,
                updated_at=now,
                parent=parent,
                metadata=dict(metadata or {}),
            ),
            state=state or SessionState(),
            messages=list(messages),
        )
        with self._lock:
            self._create(raw)
            self._acquire(sid)
        return Session(self, sid)

    def open(self, session_id: str) -> Session:
        """Open an existing session for writing (takes its write lock).

        Raises:
            SessionNotFoundError: no such session.
            SessionLockedError: another writer has it.
        """
        check_session_id(session_id)
        with self._lock:
            self._acquire(session_id)
        return Session(self, session_id)

    def load(self, session_id: str, *, repair: bool = True) -> SessionData:
        """Read a session: transcript, state, metadata.

        With `repair` (the default), unanswered tool calls get synthetic error results (see
        `repair_transcript`); the stored records are not changed.

        Raises:
            SessionNotFoundError: no such session.
            SessionCorruptError: a record cannot be read (naming where it is).
        """
        check_session_id(session_id)
        raw = self._read(session_id)
        messages, added = repair_transcript(raw.messages) if repair else (raw.messages, 0)
        info = raw.info
        return SessionData(
            id=info.id,
            created_at=info.created_at,
            updated_at=info.updated_at,
            parent=info.parent,
            metadata=info.metadata,
            state=raw.state,
            messages=messages,
            repaired=added,
        )

    def append(self, session_id: str, message: AgentMessage) -> None:
        """Append one message (taking the write lock if this store does not hold it yet)."""
        self.update(session_id, messages=[message])

    def update(
        self,
        session_id: str,
        *,
        truncate_to: int | None = None,
        messages: Sequence[AgentMessage] = (),
        state: SessionState | None = None,
    ) -> None:
        """One atomic change: keep only the first `truncate_to` stored messages (if given), then
        append `messages`, and replace the state (if given).

        Raises:
            SessionNotFoundError: no such session.
            SessionLockedError: another writer has it.
            MessageFormatError: a message cannot be encoded (register application message types
                with `register_message_type`).
        """
        check_session_id(session_id)
        if truncate_to is not None and (not isinstance(truncate_to, int) or truncate_to < 0):
            raise ValueError(f"truncate_to must be a non-negative int, got {truncate_to!r}")
        with self._lock:
            self._acquire(session_id)
            self._write(session_id, truncate_to, list(messages), state)

    def branch(
        self,
        session_id: str,
        at_index: int,
        *,
        metadata: Mapping[str, Any] | None = None,
        new_id: str | None = None,
    ) -> Session:
        """A new session holding the first `at_index` messages of `session_id` (as loaded, so
        repaired), with its state but empty queues, and `parent` pointing back.

        To edit message *i* the way chat interfaces do, branch at *i* and prompt with the new
        text; to regenerate an answer at *i*, branch at *i* and `continue_()`.

        Raises:
            SessionNotFoundError: no such session.
            IndexError: `at_index` out of range.
        """
        data = self.load(session_id)
        if not isinstance(at_index, int) or not 0 <= at_index <= len(data.messages):
            raise IndexError(
                f"at_index {at_index!r} is out of range for session {session_id!r} "
                f"of {len(data.messages)} messages"
            )
        state = SessionState(
            system_prompt=data.state.system_prompt,
            model=data.state.model,
            thinking_level=data.state.thinking_level,
            withheld_headers=data.state.withheld_headers,
        )
        return self.create(
            state=state,
            messages=data.messages[:at_index],
            metadata=data.metadata if metadata is None else metadata,
            session_id=new_id,
            parent=SessionParent(session_id=session_id, index=at_index),
        )

    def list(self) -> list[SessionInfo]:
        """Every session, oldest first."""
        return sorted(self._list(), key=lambda s: (s.created_at, s.id))

    def delete(self, session_id: str) -> None:
        """Delete a session (its branches are kept).

        Raises:
            SessionNotFoundError: no such session.
            SessionLockedError: another writer has it.
        """
        check_session_id(session_id)
        with self._lock:
            self._acquire(session_id)
            self._delete(session_id)

    def release(self, session_id: str) -> None:
        """Give back the write lock of a session (what `Session.close()` does)."""
        with self._lock:
            self._release(session_id)

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class Session:
    """A session opened for writing in a store: `store.create()`, `store.open(id)`.

    Pass it to `Agent(session=...)`; `close()` (or `with session:`) gives back its write lock.
    """

    __slots__ = ("id", "store")

    def __init__(self, store: SessionStore, session_id: str) -> None:
        self.store = store
        self.id = session_id

    def load(self, *, repair: bool = True) -> SessionData:
        """`store.load(self.id)`."""
        return self.store.load(self.id, repair=repair)

    def append(self, message: AgentMessage) -> None:
        """`store.append(self.id, message)`."""
        self.store.append(self.id, message)

    def update(
        self,
        *,
        truncate_to: int | None = None,
        messages: Sequence[AgentMessage] = (),
        state: SessionState | None = None,
    ) -> None:
        """`store.update(self.id, ...)`."""
        self.store.update(self.id, truncate_to=truncate_to, messages=messages, state=state)

    def branch(self, at_index: int, *, metadata: Mapping[str, Any] | None = None) -> Session:
        """`store.branch(self.id, at_index)`."""
        return self.store.branch(self.id, at_index, metadata=metadata)

    def close(self) -> None:
        """Give back the write lock."""
        self.store.release(self.id)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Session({self.id!r}, store={self.store!r})"
