"""One conversation's event log: AG-UI events numbered for Server-Sent Events, kept for replay.

Every event gets the next sequence number; its SSE id is `<epoch>.<seq>`, where the epoch is
drawn for each log: an id from before a restart, or from before the session was closed and
opened again (a new log, numbered from 1 again), is recognised as foreign instead of being
taken as a place in this log.

Retention: every event of the run in progress is kept (a client reconnecting mid-run replays
the whole run after a snapshot of the transcript as it was when the run began); when a run ends,
the log is cut to its last `keep` events. A client whose last id is older than what is kept gets
a fresh snapshot instead, which holds everything those events said: nothing is lost, nothing is
repeated.
"""

from __future__ import annotations

import secrets
from collections import deque
from collections.abc import Callable

import anyio

from ._convert import event_json
from ._deps import ag_ui

__all__ = ["EventLog"]


class EventLog:
    """Numbered, encoded events, and a way to wait for the next one."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.epoch = secrets.token_hex(4)
        """The first part of this log's event ids."""
        self.seq = 0
        self._entries: deque[tuple[int, str]] = deque()
        self._changed = anyio.Event()
        # called with each event appended here (not `append_encoded`): the relay's publisher
        self.tap: Callable[[ag_ui.BaseEvent, str], None] | None = None

    def append(self, event: ag_ui.BaseEvent) -> int:
        """Add an event (encoded once, as the AG-UI JSON); returns its sequence number."""
        data = event_json(event)
        if self.tap is not None:
            self.tap(event, data)
        return self.append_encoded(data)

    def append_encoded(self, data: str) -> int:
        """Add an event already encoded (one relayed from another replica)."""
        self.seq += 1
        self._entries.append((self.seq, data))
        changed, self._changed = self._changed, anyio.Event()
        changed.set()
        return self.seq

    def trim(self) -> None:
        """Keep only the last `keep` events (called between runs)."""
        while len(self._entries) > self.keep:
            self._entries.popleft()

    def covers(self, seq: int) -> bool:
        """Whether every event after `seq` is still kept."""
        first = self._entries[0][0] if self._entries else self.seq + 1
        return first - 1 <= seq <= self.seq

    def after(self, seq: int) -> list[tuple[int, str]]:
        """The kept events numbered above `seq`, oldest first."""
        entries = self._entries
        if not entries or entries[-1][0] <= seq:
            return []
        start = max(0, seq - entries[0][0] + 1)
        return [entries[i] for i in range(start, len(entries))]

    async def wait(self, seconds: float) -> None:
        """Return when an event was appended, or after `seconds`."""
        with anyio.move_on_after(seconds):
            await self._changed.wait()
