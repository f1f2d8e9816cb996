"""Keeping a session in step with an `Agent`.

The binding knows which messages the store holds (`stored`, compared by identity with the
Agent's transcript) and the state last written. Its methods block and are serialised by one lock.

When things are written:
- each message at its `message_end`, before the listeners hear of it and before the run goes on,
  in one record with the state if the state changed (so a steering message leaves the stored
  queue in the same write that adds it to the transcript);
- at the start and end of each run: whatever differs (edits of `state.messages`, a new system
  prompt or model, the repair of a transcript loaded with unanswered tool calls);
- queue changes at once when made from another thread or while idle; from the event loop's own
  thread during a run, with the next message or at the end of the run.

Where writes run: a store whose writes may wait (`SessionStore.blocking_writes`: SQLite, which may
wait for another process's transaction or a checkpoint; any store with `fsync=True`) is written
from a worker thread, so the event loop never waits on a disk. A JSONL store without fsync
appends one line to the page cache — a few microseconds, less than handing the work to a thread —
and is written inline.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import anyio.to_thread

from .messages import AgentMessage
from .sessions import Session, SessionData, SessionState, repair_transcript

__all__ = ["SessionBinding"]


def _key(state: SessionState) -> tuple[object, ...]:
    return (
        state.system_prompt,
        state.model,
        state.thinking_level,
        list(state.steering),
        list(state.follow_up),
    )


def _same(a: tuple[object, ...] | None, b: tuple[object, ...]) -> bool:
    """Fingerprints are compared by identity, element by element: cheap, and never wrong in
    the direction that matters (different objects only cost a full comparison)."""
    return a is not None and len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


class SessionBinding:
    """The link between one Agent and one open `Session`.

    Args:
        session: the open session.
        snapshot: builds the Agent's `SessionState` (thread-safe).
        fingerprint: a cheap tuple that changes whenever the snapshot may have.
    """

    __slots__ = (
        "data",
        "fingerprint",
        "inline",
        "lock",
        "messages",
        "saved",
        "saved_print",
        "session",
        "snapshot",
        "stored",
    )

    def __init__(
        self,
        session: Session,
        snapshot: Callable[[], SessionState],
        fingerprint: Callable[[], tuple[object, ...]],
    ) -> None:
        data = session.load(repair=False)
        self.session = session
        self.snapshot = snapshot
        self.fingerprint = fingerprint
        self.inline = not session.store.blocking_writes
        self.data: SessionData = data
        self.stored: list[AgentMessage] = list(data.messages)
        self.saved = _key(data.state)
        self.saved_print: tuple[object, ...] | None = None
        self.messages, _added = repair_transcript(data.messages)
        self.lock = threading.Lock()

    async def run(self, fn: Callable[..., None], *args: Any) -> None:
        """Call a writing method inline or in a worker thread, per the store."""
        if self.inline:
            fn(*args)
        else:
            await anyio.to_thread.run_sync(fn, *args)

    def _changed_state(self) -> SessionState | None:
        """The state to write, or None if it equals the saved one. Caller holds the lock."""
        fingerprint = self.fingerprint()  # before the snapshot: a change in between is re-checked
        if _same(self.saved_print, fingerprint):
            return None
        snapshot = self.snapshot()
        key = _key(snapshot)
        self.saved_print = fingerprint
        if key == self.saved:
            return None
        self.saved = key
        return snapshot

    def _forget(self) -> None:
        """A write failed: what is stored is unknown, so the state is written next time."""
        self.saved_print = None
        self.saved = ()

    def in_step(self, messages: Sequence[AgentMessage]) -> bool:
        """Whether the store already holds exactly `messages` and the current state (cheap)."""
        stored = self.stored
        return (
            len(stored) == len(messages)
            and all(a is b for a, b in zip(stored, messages, strict=True))
            and _same(self.saved_print, self.fingerprint())
        )

    def sync(self, messages: Sequence[AgentMessage]) -> None:
        """Make the stored transcript and state equal to the given ones."""
        with self.lock:
            stored = self.stored
            limit = min(len(stored), len(messages))
            n = 0
            while n < limit and stored[n] is messages[n]:
                n += 1
            truncate = n if n < len(stored) else None
            new = list(messages[n:])
            state = self._changed_state()
            if truncate is None and not new and state is None:
                return
            try:
                self.session.update(truncate_to=truncate, messages=new, state=state)
            except BaseException:
                self._forget()
                raise
            self.stored = stored[:n] + new

    def append(self, message: AgentMessage) -> None:
        """Store one message that reached the transcript, with the state if it changed."""
        with self.lock:
            state = self._changed_state()
            try:
                if state is None:
                    self.session.append(message)
                else:
                    self.session.update(messages=[message], state=state)
            except BaseException:
                self._forget()
                raise
            self.stored.append(message)

    def save_state(self) -> None:
        """Store the state if it changed."""
        with self.lock:
            state = self._changed_state()
            if state is not None:
                try:
                    self.session.update(state=state)
                except BaseException:
                    self._forget()
                    raise
