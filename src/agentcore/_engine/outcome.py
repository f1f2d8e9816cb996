"""How a turn ends, and how a run ends, as typed values.

A turn returns `NEXT` (its tool results want an answer), `DONE` (the model answered, or the
tools terminate) or one of the stop variants below; a run ends with `DONE` or a stop. Each stop
is its own type with its own data (no `Any` payload): `Aborted`, `Failed`, `HookStopped`,
`LimitHit`, `AwaitingApprovals`, `Answered`, `OutOfRetries`, `Tripped`.

`agent_end` (the run's last event) is built from the run's end by one function, `agent_end`
below; everything that reports how a run ended (the `EventStream`'s `limit`, `output`,
`pending_approvals`, `guardrail` and `usage`, the instrumentation's end) reads that event.

To add a stop reason: add a variant here (its data as typed fields), add it to `Stopped`, say in
`agent_end` which field of the event its data fills (if any), and return it from the stage that
finds it. The loop ends the run on any `Stopped`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from ..events import AgentEndEvent

if TYPE_CHECKING:
    from ..approvals import ApprovalRequest
    from ..guardrails._trip import GuardrailTrip
    from ..limits import LimitReached
    from ..messages import AgentMessage, AssistantMessage

__all__ = [
    "DONE",
    "NEXT",
    "Aborted",
    "Answered",
    "AwaitingApprovals",
    "Done",
    "Failed",
    "HookStopped",
    "LimitHit",
    "Next",
    "OutOfRetries",
    "RunEnd",
    "Stopped",
    "Tripped",
    "TurnOutcome",
    "agent_end",
]


@dataclass(frozen=True, slots=True)
class Next:
    """The turn's tool results want an answer: another request follows."""


@dataclass(frozen=True, slots=True)
class Done:
    """The model answered, or the tools terminate: only queued messages go on."""


NEXT = Next()
"""The one `Next` value (a turn returns it without making an object)."""

DONE = Done()
"""The one `Done` value."""


@dataclass(frozen=True, slots=True)
class Aborted:
    """The run's signal fired; `answer` is the aborted answer, when the turn had one."""

    answer: AssistantMessage | None = None


@dataclass(frozen=True, slots=True)
class Failed:
    """The answer failed (`answer`, `stop_reason="error"`), or the run failed (`error`)."""

    answer: AssistantMessage | None = None
    error: BaseException | None = None


@dataclass(frozen=True, slots=True)
class HookStopped:
    """`should_stop_after_turn` said stop."""


@dataclass(frozen=True, slots=True)
class LimitHit:
    """A bound was reached (`max_turns`, a usage limit)."""

    limit: LimitReached


@dataclass(frozen=True, slots=True)
class AwaitingApprovals:
    """Calls wait for a decision: their requests joined the transcript."""

    requests: tuple[ApprovalRequest, ...]


@dataclass(frozen=True, slots=True)
class Answered:
    """A typed run's validated answer."""

    output: Any


@dataclass(frozen=True, slots=True)
class OutOfRetries:
    """A typed run ran out of output retries."""

    limit: LimitReached


@dataclass(frozen=True, slots=True)
class Tripped:
    """An input or output guardrail ended the run."""

    trip: GuardrailTrip


Stopped: TypeAlias = (
    Aborted
    | Failed
    | HookStopped
    | LimitHit
    | AwaitingApprovals
    | Answered
    | OutOfRetries
    | Tripped
)
"""The run ends after this turn: why, with its data. The one list of stop reasons."""

STOPS = (Aborted, Failed, HookStopped, LimitHit, AwaitingApprovals, Answered, OutOfRetries, Tripped)
"""The stop variants, for `isinstance` (the members of `Stopped`)."""

TurnOutcome: TypeAlias = Next | Done | Stopped
"""What a turn (or the first turn carrying out approval decisions) returns."""

RunEnd: TypeAlias = Done | Stopped
"""How a run ended."""


def agent_end(end: RunEnd, messages: Sequence[AgentMessage]) -> AgentEndEvent:
    """The run's `agent_end` event, built from how it ended: the one place a stop's data becomes
    a field of the event (`limit`, `output`, `pending_approvals`, `guardrail`)."""
    added = list(messages)
    if isinstance(end, LimitHit | OutOfRetries):
        return AgentEndEvent(messages=added, limit=end.limit)
    if isinstance(end, AwaitingApprovals):
        return AgentEndEvent(messages=added, pending_approvals=end.requests)
    if isinstance(end, Answered):
        return AgentEndEvent(messages=added, output=end.output)
    if isinstance(end, Tripped):
        return AgentEndEvent(messages=added, guardrail=end.trip)
    return AgentEndEvent(messages=added)
