"""When an `Agent`'s queues reach its session's store, without the run's event loop waiting.

A queue change (`steer`, `follow_up`, a clear) is written:
- at once, on the caller's thread, when made from another thread or while the agent is idle;
- when made on the run's event-loop thread during a run (a listener, a task beside the run, a web
  request): never there and then, since a store whose writes may wait (PostgreSQL, SQLite, fsync)
  would hold up the loop. It goes with the run's next message, or the run's end, and whoever must
  know it is stored (a surface about to answer "queued") awaits `stored`, which returns once the
  queues as they were when it was called are in the store. For such a store it writes from a
  worker thread: the loop and the run's events go on meanwhile, and the run waits on the write
  only if it has a message of its own to store at the same time.

Writes never go back in time: every write takes the binding's lock and snapshots the state under
it (`SessionBinding.save_state`, `append`, `sync`), so of two writes the later one holds the later
state, whichever task or thread asked first; a write that finds the state already stored is
skipped. A write that fails is forgotten (`SessionBinding._forget`), so the next one writes the
state again.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from ..sessions import SessionState
from .state import UNKNOWN_MODEL

if TYPE_CHECKING:
    from .run import ActiveRun
    from .session import SessionBinding
    from .state import AgentState, Queues

__all__ = ["QueueWrites"]


class QueueWrites:
    """The writes of one Agent's queues (and the rest of its `SessionState`) to its session.

    Args:
        state: the Agent's state.
        queues: the Agent's queues.

    `binding` is set once the Agent has opened its session (None: nothing is written).
    """

    __slots__ = ("binding", "queues", "state")

    def __init__(self, state: AgentState, queues: Queues) -> None:
        self.state = state
        self.queues = queues
        self.binding: SessionBinding | None = None

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
        """The queues changed: store them now, unless on the run's loop thread."""
        binding = self.binding
        if binding is None:
            return
        if run is not None and threading.get_ident() == run.loop_thread:
            return  # with the run's next message, at its end, or by whoever awaits `stored`
        binding.save_state()

    async def stored(self) -> None:
        """Return once the queues as they are now are in the store.

        Raises:
            Exception: what the store raised (the queues are not known to be stored).
        """
        binding = self.binding
        if binding is not None:
            await binding.run(binding.save_state)
