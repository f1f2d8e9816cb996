"""Keeping a session in step with an `Agent`.

The binding knows which messages the store holds (`stored`, compared by identity with the
Agent's transcript) and the state last written. Its methods block and are serialised by one lock;
the Agent calls them from worker threads during a run, so the event loop never waits on a disk.

When things are written:
- each message at its `message_end`, in one record with the state if the state changed (so a
  steering message leaves the stored queue in the same write that adds it to the transcript);
- at the start and end of each run: whatever differs (edits of `state.messages`, a new system
  prompt or model, the repair of a transcript loaded with unanswered tool calls);
- queue changes at once when made from another thread or while idle; from the event loop's own
  thread during a run, with the next message or at the end of the run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

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


class SessionBinding:
    """The link between one Agent and one open `Session`."""

    __slots__ = ("data", "lock", "messages", "saved", "session", "stored")

    def __init__(self, session: Session) -> None:
        data = session.load(repair=False)
        self.session = session
        self.data: SessionData = data
        self.stored: list[AgentMessage] = list(data.messages)
        self.saved = _key(data.state)
        self.messages, _added = repair_transcript(data.messages)
        self.lock = threading.Lock()

    def sync(self, messages: Sequence[AgentMessage], state: Callable[[], SessionState]) -> None:
        """Make the stored transcript and state equal to the given ones (blocking)."""
        with self.lock:
            stored = self.stored
            limit = min(len(stored), len(messages))
            n = 0
            while n < limit and stored[n] is messages[n]:
                n += 1
            truncate = n if n < len(stored) else None
            new = list(messages[n:])
            snapshot = state()
            key = _key(snapshot)
            changed = key != self.saved
            if truncate is None and not new and not changed:
                return
            self.session.update(
                truncate_to=truncate, messages=new, state=snapshot if changed else None
            )
            self.stored = stored[:n] + new
            self.saved = key

    def append(self, message: AgentMessage, state: Callable[[], SessionState]) -> None:
        """Store one message that reached the transcript, with the state if it changed."""
        with self.lock:
            snapshot = state()
            key = _key(snapshot)
            if key == self.saved:
                self.session.append(message)
            else:
                self.session.update(messages=[message], state=snapshot)
                self.saved = key
            self.stored.append(message)

    def save_state(self, state: Callable[[], SessionState]) -> None:
        """Store the state if it changed."""
        with self.lock:
            snapshot = state()
            key = _key(snapshot)
            if key != self.saved:
                self.session.update(state=snapshot)
                self.saved = key
