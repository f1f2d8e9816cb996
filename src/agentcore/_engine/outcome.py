"""How a turn ends, as a value: `NEXT`, `DONE` or `Stopped(cause, data)`.

Every stage of the loop that can end the run returns one of these instead of setting a field of
the run: the loop reads the value and decides what comes next, and `agent_end` (its `limit`,
`output`, `pending_approvals` and `guardrail`, and the same on the `EventStream`) is built from
the run's final `Stopped` value alone.

To add a stop reason: add a member to `StopCause` below (its name and the `agent_end` field its
data fills, or None), and return `Stopped(StopCause.X, data)` from the stage that finds it. Nothing
else changes: the loop ends the run on any `Stopped`, and `agent_end` reads its field from here.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from ..guardrails._trip import GuardrailTrip
from ..limits import LimitReached

__all__ = ["DONE", "NEXT", "Done", "Next", "StopCause", "Stopped", "TurnOutcome"]

EndField: TypeAlias = Literal["limit", "output", "pending_approvals", "guardrail"]
"""The fields of `AgentEndEvent` (and of the `EventStream`) a stop's data may fill."""


class StopCause(enum.Enum):
    """Why a run stopped, each with the `agent_end` field its `Stopped.data` fills (None: the
    data is for the loop and the logs only). The one list of stop reasons."""

    ABORTED = ("aborted", None)  # the run's signal fired (data: the answer, or None)
    ERROR = ("error", None)  # the answer failed, or the run failed (data: the answer / exception)
    HOOK = ("hook", None)  # `should_stop_after_turn` said stop
    LIMIT = ("limit", "limit")  # a bound was reached (data: its `LimitReached`)
    APPROVALS = ("approvals", "pending_approvals")  # calls wait (data: the `ApprovalRequest`s)
    ANSWERED = ("answered", "output")  # a typed run's answer (data: the validated output)
    OUTPUT_RETRIES = ("output_retries", "limit")  # out of output retries (data: `LimitReached`)
    GUARDRAIL = ("guardrail", "guardrail")  # an input/output guardrail (data: `GuardrailTrip`)

    def __init__(self, label: str, field: EndField | None) -> None:
        self.label = label
        self.field = field


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
class Stopped:
    """The run ends after this turn: why (`cause`) and what goes with it (`data`)."""

    cause: StopCause
    data: Any = None

    def _field(self, name: EndField) -> Any:
        return self.data if self.cause.field == name else None

    @property
    def limit(self) -> LimitReached | None:
        """The bound that ended the run (`agent_end.limit`), or None."""
        limit: LimitReached | None = self._field("limit")
        return limit

    @property
    def guardrail(self) -> GuardrailTrip | None:
        """The guardrail that ended the run (`agent_end.guardrail`), or None."""
        trip: GuardrailTrip | None = self._field("guardrail")
        return trip

    @property
    def output(self) -> Any:
        """A typed run's validated answer (`agent_end.output`), or None."""
        return self._field("output")

    @property
    def pending_approvals(self) -> tuple[Any, ...]:
        """The requests of calls waiting for approval (`agent_end.pending_approvals`)."""
        waiting: tuple[Any, ...] | None = self._field("pending_approvals")
        return waiting if waiting is not None else ()


TurnOutcome: TypeAlias = Next | Done | Stopped
"""What a turn (or the first turn carrying out approval decisions) returns."""
