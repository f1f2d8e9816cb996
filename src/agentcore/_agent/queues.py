"""The queue half of `Agent`: `steer`, `follow_up`, the queue views and the loop's polls."""

from __future__ import annotations

from ..messages import AgentMessage
from .run import ActiveRun, queued_message
from .state import QueueKind, Queues

__all__ = ["QueueMethods"]


class QueueMethods:
    """Steering and follow-up queues of an `Agent` (a base class of it; see `Agent`)."""

    _queues: Queues
    _active: ActiveRun | None

    def _queues_changed(self) -> None:
        raise NotImplementedError  # the Agent writes the queues to its session

    def steer(self, message: str | AgentMessage) -> None:
        """Queue a message to inject at the next turn of the current (or next) run.

        Safe from any thread. A string becomes a user message."""
        self._queues.push("steering", queued_message(message))
        self._queues_changed()

    def follow_up(self, message: str | AgentMessage) -> None:
        """Queue a message to send when the agent would otherwise stop. Safe from any thread."""
        self._queues.push("follow_up", queued_message(message))
        self._queues_changed()

    def clear_steering_queue(self) -> None:
        """Drop the queued steering messages."""
        self._clear("steering")

    def clear_follow_up_queue(self) -> None:
        """Drop the queued follow-up messages."""
        self._clear("follow_up")

    def clear_all_queues(self) -> None:
        """Drop every queued message."""
        self._clear("steering", "follow_up")

    def _clear(self, *kinds: QueueKind) -> None:
        self._queues.clear(*kinds)
        self._queues_changed()

    def has_queued_messages(self) -> bool:
        """Whether a steering or follow-up message is queued."""
        return bool(self._queues)

    @property
    def steering_queue(self) -> tuple[AgentMessage, ...]:
        """The queued steering messages, oldest first (a snapshot)."""
        return self._queues.queued("steering")

    @property
    def follow_up_queue(self) -> tuple[AgentMessage, ...]:
        """The queued follow-up messages, oldest first (a snapshot)."""
        return self._queues.queued("follow_up")

    def _poll_steering(self) -> list[AgentMessage]:
        run = self._active
        if run is None:
            return []
        if run.skip_steering_poll:
            run.skip_steering_poll = False
            return []
        return self._queues.take("steering")

    def _poll_follow_up(self) -> list[AgentMessage]:
        """The loop's last poll before it ends because the model is done: nothing taken means
        the run is closing (see `Agent._run`: what is queued after this still runs now)."""
        run = self._active
        if run is None:
            return []
        taken = self._queues.take("follow_up")
        run.closing = not taken
        return taken
