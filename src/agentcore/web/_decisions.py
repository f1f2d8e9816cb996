"""Decisions on waiting tool calls taken over the web (REST and AG-UI `resume`), checked before
any is applied.

The server decides only for tools its own agents hold. A session shared with `agentcore chat`
can end with a call to a tool the server lacks (`shell` under `chat --shell`): approving it
here, above all with edited arguments nothing here can check, would let the terminal run a
command no one there saw. Such a decision is refused (403); it belongs to the surface that runs
the tool.

Several decisions (AG-UI `resume`) are all checked first, then applied together: an unknown
call id or invalid arguments in the last one leaves the session as it was.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import Agent, OutputSpec, OutputValidationError

__all__ = ["Decision", "DecisionError", "apply_decisions", "check_decision"]


class DecisionError(Exception):
    """A decision the server will not take: the HTTP status and what was wrong."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """A checked decision, ready to apply."""

    call_id: str
    approved: bool
    arguments: dict[str, Any] | None = None
    reason: str | None = None


def check_decision(
    agent: Agent,
    call_id: str,
    approved: bool,
    arguments: Mapping[str, Any] | None,
    reason: str | None,
    *,
    taken: Sequence[str] = (),
) -> Decision:
    """Check one decision against the agent's waiting calls and tools (changing nothing).

    Raises:
        DecisionError: 400 for an unknown or already decided call (also one in `taken`, decided
            earlier in the same request) or invalid arguments; 403 for a call to a tool this
            server's agent does not hold.
    """
    waiting = {p.tool_call_id: p for p in agent.state.pending_approvals}
    request = waiting.get(call_id)
    if request is None or call_id in taken:
        names = ", ".join(repr(k) for k in waiting) or "none"
        raise DecisionError(
            400, f"no tool call {call_id!r} waits for a decision here (waiting: {names})"
        )
    tool = next((t for t in agent.state.tools if t.name == request.tool_name), None)
    if tool is None:
        raise DecisionError(
            403,
            f"tool call {call_id!r} is for the tool {request.tool_name!r}, which this server "
            "does not hold: decide it where that tool runs (for instance `agentcore chat "
            "--continue` with the same tools)",
        )
    edited: dict[str, Any] | None = None
    if request.input_schema is not None:  # a question of the running tool: the answer
        if approved:
            if not isinstance(arguments, Mapping):
                raise DecisionError(
                    400,
                    f"tool call {call_id!r} asks for input ({request.reason}): send the answer "
                    "as 'arguments', a JSON object",
                )
            edited = dict(arguments)
            try:
                OutputSpec(request.input_schema).validate(edited)
            except OutputValidationError as exc:  # names the failing fields
                raise DecisionError(
                    400, f"the answer does not match the requested schema: {exc}"
                ) from None
    elif approved and arguments is not None:
        if not isinstance(arguments, Mapping):
            raise DecisionError(
                400, f"expected 'arguments' to be a JSON object, got {type(arguments).__name__}"
            )
        edited = dict(arguments)
        try:
            prepared = tool.prepare_arguments(edited)
            tool.validator.validate(edited if prepared is None else prepared)
        except Exception as exc:  # the validator's error names the failing paths
            raise DecisionError(400, f"invalid arguments for {tool.name!r}: {exc}") from None
    if reason is not None and not isinstance(reason, str):
        raise DecisionError(400, f"expected 'reason' to be a string, got {type(reason).__name__}")
    return Decision(call_id=call_id, approved=approved, arguments=edited, reason=reason)


def apply_decisions(agent: Agent, decisions: Sequence[Decision]) -> None:
    """Apply checked decisions (each joins the transcript and the session)."""
    for decision in decisions:
        if decision.approved:
            agent.approve(decision.call_id, arguments=decision.arguments)
        else:
            agent.deny(decision.call_id, reason=decision.reason)
