"""The loop's polls of an `Agent`'s queues, as plain functions of the queues and the active run.

`steer`, `follow_up` and the queue views are the Agent's own methods on its `Queues`
(`_agent/state.py`); these are what the Agent hands each run's `AgentLoopConfig` as
`get_steering_messages` and `get_follow_up_messages`.
"""

from __future__ import annotations

from ..messages import AgentMessage
from .run import ActiveRun
from .state import Queues

__all__ = ["poll_follow_up", "poll_steering", "take_queued"]


def poll_steering(queues: Queues, run: ActiveRun | None) -> list[AgentMessage]:
    """The steering messages to inject now: none outside a run, or at the poll a run that
    started from the steering queue skips."""
    if run is None:
        return []
    if run.skip_steering_poll:
        run.skip_steering_poll = False
        return []
    return queues.take("steering")


def poll_follow_up(queues: Queues, run: ActiveRun | None) -> list[AgentMessage]:
    """The loop's last poll before it ends because the model is done: nothing taken means the
    run is closing (see `Agent._run`: what is queued after this still runs now)."""
    if run is None:
        return []
    taken = queues.take("follow_up")
    run.closing = not taken
    return taken


def take_queued(queues: Queues, run: ActiveRun) -> list[AgentMessage]:
    """The prompts of a run started from the queues: the steering queue first (then the run's
    first steering poll waits for the next turn), else the follow-up queue."""
    prompts = queues.take("steering")
    run.skip_steering_poll = bool(prompts)
    return prompts or queues.take("follow_up")
