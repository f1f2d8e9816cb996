"""Steering and follow-up messages sent to a session over HTTP, and what each one became.

A message sent to a session (`POST .../steer`, `POST .../follow-up`, an AG-UI input while the
thread runs) is never parked: the answer says which of two things it became, and that is what
happens.

- `queued`: a run is going and not being stopped. The message is queued into the Agent's
  steering or follow-up queue, and the run in progress takes it: the Agent either polls it (at
  its next turn, or when it would stop) or, if it arrives while the run is closing, goes on
  with it instead of going idle (`Agent._settle`: the check and going idle are one step under
  the queues' lock). If the run ends for another reason before taking it (a model error, a
  turn or usage limit), the chat runs on from the queue at once, in the same task and under
  the same AG-UI run id (`next_run`); if it pauses for an approval, the run that continues
  after the decision takes it. Either way the message shows up in the run the answer named.
- `started`: no run is going; the message starts one, as a prompt. While a run is being
  stopped (an abort was asked), a new message cannot be taken by it: it is held and starts the
  next run as soon as the stopped one has ended (the answer carries that run's id already).

Everything here runs on the server's event loop, between awaits, so deciding and queueing are
one step for every other request.

Acknowledged means not lost: a `queued` answer is sent only once the session's store holds the
queue with the message in it (`stored`, from a worker thread for a store whose writes may wait:
the run goes on meanwhile). If the replica then dies before its run took the message, the one
that takes the session over loads it queued (its state snapshot lists it), and its next run takes
it: steering at its first turn, a follow-up when it would otherwise stop.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from .. import Agent
from ..messages import AgentMessage, UserMessage
from ._convert import block_text

__all__ = [
    "KINDS",
    "Delivery",
    "HeldMessages",
    "MessageKind",
    "NotStoredError",
    "next_run",
    "queue",
    "queued_texts",
    "stored",
]

MessageKind = Literal["steer", "follow_up"]
"""How a message sent to a running session is queued: as steering (joins at the run's next
turn) or as a follow-up (runs when the agent would otherwise stop)."""

KINDS: tuple[MessageKind, ...] = ("steer", "follow_up")


@dataclass(frozen=True, slots=True)
class Delivery:
    """What a message sent to a session became.

    Attributes:
        became: `"queued"` (taken by the run in progress) or `"started"` (the start of the next
            run: a new one now, or right after the run being stopped).
        kind: what it was sent as.
        run_id: the AG-UI run id of the run that takes it.
    """

    became: Literal["queued", "started"]
    kind: MessageKind
    run_id: str

    def json(self) -> dict[str, Any]:
        """The HTTP answer's body."""
        return {
            "became": self.became,
            "as": "followUp" if self.kind == "follow_up" else "steer",
            "runId": self.run_id,
        }


@dataclass(slots=True)
class HeldMessages:
    """Messages sent while a run is being stopped: they start the next run, under `run_id`."""

    messages: list[AgentMessage] = field(default_factory=list)
    run_id: str = ""

    def hold(self, text: str, run_id: str | None = None) -> str:
        """Hold a message; returns the id the next run will have (`run_id` if the first one
        held gives it, else a fresh one)."""
        if not self.messages:
            self.run_id = run_id or uuid.uuid4().hex
        self.messages.append(UserMessage(content=text))
        return self.run_id

    def take(self) -> tuple[list[AgentMessage], str]:
        """The held messages and their run id, emptied."""
        messages, run_id = self.messages, self.run_id
        self.messages, self.run_id = [], ""
        return messages, run_id


def queue(agent: Agent, kind: MessageKind, text: str) -> None:
    """Queue `text` into the agent's active run as `kind`."""
    if kind == "steer":
        agent.steer(UserMessage(content=text))
    else:
        agent.follow_up(UserMessage(content=text))


class NotStoredError(Exception):
    """A message was queued, but the session's store could not store the queue."""


async def stored(agent: Agent, delivery: Delivery) -> Delivery:
    """`delivery`, once what it queued is in the session's store (a `queued` one; a message
    that starts a run is stored by that run).

    Raises:
        NotStoredError: the store failed: the message is queued in this process only.
    """
    if delivery.became == "queued":
        try:
            await agent._queues_stored()
        except Exception as exc:
            raise NotStoredError(
                f"the message was queued into the run, but the session's store could not store "
                f"it ({exc}): it runs unless this server stops first"
            ) from exc
    return delivery


def next_run(
    agent: Agent, held: HeldMessages, *, stopped: bool
) -> tuple[Callable[[], Awaitable[Any]], str | None] | None:
    """The run to start right after one ended (called with no await since it ended), and its
    run id (None: the ended run's, which goes on), or None to go idle.

    Held messages start it as a prompt. Otherwise, unless the run was stopped (an abort keeps
    queued messages for the next run: they are not run against the user's stop) or waits for
    an approval (the continuation after the decision takes them), messages still queued (the
    run ended on an error or a limit before taking them) are run from the queue."""
    if held.messages:
        messages, run_id = held.take()
        return (lambda: agent.prompt(messages)), run_id
    if stopped or agent.state.pending_approvals or not agent.has_queued_messages():
        return None
    return agent.continue_, None


def queued_texts(agent: Agent) -> dict[str, list[str]]:
    """The texts of the messages queued and not yet taken, for the state snapshot."""
    return {
        "steering": [block_text(getattr(m, "content", "")) for m in agent.steering_queue],
        "followUp": [block_text(getattr(m, "content", "")) for m in agent.follow_up_queue],
    }
