"""A tripped guardrail as data: `GuardrailTrip`, what ends a run on `agent_end.guardrail`.

Kept apart from the rest of `agentcore.guardrails` (and free of its imports) so that the event
types can name it without importing the guardrails themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

__all__ = ["GuardrailKind", "GuardrailTrip"]

GuardrailKind: TypeAlias = Literal["input", "output", "tool_call", "tool_result"]
"""What a guardrail checks: the request's input, the final answer, a tool call's arguments, or a
tool call's result."""

_WHAT = {
    "input": "the request",
    "output": "the answer",
    "tool_call": "the tool call",
    "tool_result": "the tool result",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class GuardrailTrip:
    """A guardrail that ended a run (input and output guardrails; a tool guardrail's block
    gives that call an error result instead). `str()` of it is a sentence naming it.

    Attributes:
        guardrail: the guardrail's name.
        kind: `"input"` or `"output"` (what it checked).
        reason: why: the reason of its `Block`, or what went wrong with the guardrail itself.
        failed: True when the guardrail did not give a verdict (it raised, timed out or returned
            something else than a result): a guardrail fails closed.
    """

    guardrail: str
    kind: GuardrailKind
    reason: str
    failed: bool = False

    def __str__(self) -> str:
        verb = "failed on" if self.failed else "blocked"
        return f"{self.kind} guardrail {self.guardrail!r} {verb} {_WHAT[self.kind]}: {self.reason}"

    def to_json(self) -> dict[str, Any]:
        """The trip as a JSON object (`guardrail`, `kind`, `reason`, `failed`)."""
        return {
            "guardrail": self.guardrail,
            "kind": self.kind,
            "reason": self.reason,
            "failed": self.failed,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GuardrailTrip:
        """The trip `to_json` wrote.

        Raises:
            ValueError: `data` lacks a field or has one of the wrong type.
        """
        try:
            guardrail, kind, reason = data["guardrail"], data["kind"], data["reason"]
        except (KeyError, TypeError) as exc:
            raise ValueError(
                f"a guardrail trip needs guardrail, kind and reason, got {data!r}"
            ) from exc
        if kind not in _WHAT or not isinstance(guardrail, str) or not isinstance(reason, str):
            raise ValueError(f"not a guardrail trip: {data!r}")
        return cls(guardrail=guardrail, kind=kind, reason=reason, failed=bool(data.get("failed")))
