"""When an `Agent`'s queues reach its session's store, without the run's event loop waiting.

A queue change (`steer`, `follow_up`, a clear) is written:
- at once, on the caller's thread, when made from another thread or while the agent is idle;
- from the run's event-loop thread during a run (a listener, a task beside the run, a web
  request): never there and then, since a store whose writes may wait (PostgreSQL, SQLite, fsync)
  would hold up the loop. It is marked `pending` and written by the run's own task at its next
  event (`write`, from a worker thread for such a store), with the next message if that comes
  first, and at the end of the run at the latest;
- and whoever must know it is stored (a surface about to answer "queued") awaits `stored`: it
  returns once the queues as they were when it was called are in the store, from a worker thread
  for a store whose writes may wait.

Writes never go back in time: every write takes the binding's lock and snapshots the state under
it (`SessionBinding.save_state`, `append`, `sync`), so of two writes the later one holds the later
state, whichever task or thread asked first; a write that finds the state already stored is
skipped. A write that fails is forgotten (`SessionBinding._forget`), so the next one writes the
state again.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from ..sessions import SessionState
from .state import UNKNOWN_MODEL

if TYPE_CHECKING:
    from .run import ActiveRun
    from .session import SessionBinding
    from .state import AgentState, Queues

__all__ = ["QueueWrites"]

_log = logging.getLogger("agentcore.sessions")


class QueueWrites:
    """The writes of one Agent's queues (and the rest of its `SessionState`) to its session.

    Args:
        state: the Agent's state.
        queues: the Agent's queues.

    `binding` is set once the Agent has opened its session (None: nothing is written).
    """

    __slots__ = ("binding", "pending", "queues", "state")

    def __init__(self, state: AgentState, queues: Queues) -> None:
        self.state = state
        self.queues = queues
        self.binding: SessionBinding | None = None
        self.pending = False
        """A queue change made on the run's loop thread is not stored yet."""

    def snapshot(self) -> SessionState:
        """The `SessionState` to store (thread-safe)."""
        steering, follow_up = self.queues.snapshot()
        state = self.state
        model = state.model
        return SessionState(
            system_prompt=state.system_prompt,
            model=None if model is UNKNOWN_MODEL else model,
            thinking_level=state.thinking_level,
            steering=steering,
            follow_up=follow_up,
        )

    def fingerprint(self) -> tuple[object, ...]:
        """A cheap tuple that changes whenever `snapshot` may have."""
        state = self.state
        return (state.system_prompt, state.model, state.thinking_level, self.queues.version)

    def changed(self, run: ActiveRun | None) -> None:
        """The queues changed: store them now, or mark them for the run's next event."""
        binding = self.binding
        if binding is None:
            return
        if run is not None and threading.get_ident() == run.loop_thread:
            self.pending = True
            return
        binding.save_state()

    async def write(self) -> None:
        """The run's own write of a pending change (a failure is logged: the run goes on, and
        its next message or its end writes the state again)."""
        self.pending = False
        binding = self.binding
        if binding is None:
            return
        try:
            await binding.run(binding.save_state)
        except Exception:
            _log.exception("session %s: could not store the queues", binding.session.id)

    async def stored(self) -> None:
        """Return once the queues as they are now are in the store.

        Raises:
            Exception: what the store raised (the queues are not known to be stored).
        """
        binding = self.binding
        if binding is not None:
            await binding.run(binding.save_state)
