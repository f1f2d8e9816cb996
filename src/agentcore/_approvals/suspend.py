"""A running tool that suspends because calls it made wait for a decision (a code snippet's
nested calls, `agentcore.codemode`), and reads back where it stopped when it runs again.

A call made through the run's pipeline with `can_wait=True` that would wait for approval or for
input raises `CallWaits` (after its `tool_execution_end`, which says it waits) instead of ending
with an error result. The calling tool then raises `CallSuspended` with the requests it collected
and the state it needs to go on: its call waits like a call waiting for approval, with a
`SuspendedCall` message (the state) and one `ApprovalRequest` per nested call (with
`parent_tool_call_id`). Once every one is decided, the next run executes the calling tool again;
`suspended_state(tool_call_id)` then returns its state, and the nested calls it carries on
(`ToolPipeline.call(..., call_id=<the nested id>)`) are carried out as their decisions say.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any

from ..messages import AgentMessage, AssistantMessage
from .messages import ApprovalRequest, SuspendedCall

__all__ = [
    "CallSuspended",
    "CallWaits",
    "current_suspended",
    "suspended_of",
    "suspended_state",
]


class CallWaits(Exception):
    """Raised by `ToolPipeline.call(..., can_wait=True)` when the call waits for a decision
    (approval, or the input its tool asked for): `request` is its `ApprovalRequest`, naming the
    calling tool's call as `parent_tool_call_id`. The call has had its `tool_execution_end`."""

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__(f"tool call {request.tool_call_id} waits for a decision")
        self.request = request


class CallSuspended(Exception):
    """Raised by a tool's `execute` when calls it made wait for decisions (each `CallWaits`'s
    request): its call waits for them as a call waiting for approval does, `state` (a JSON
    object) is kept in the transcript as a `SuspendedCall`, and the next run, once every
    request is decided, executes the call again (`suspended_state` returns `state`).

    Raises:
        ValueError: no requests, or a request that is not a call this tool made.
    """

    def __init__(self, requests: Sequence[ApprovalRequest], state: dict[str, Any]) -> None:
        super().__init__(f"{len(requests)} calls wait for a decision")
        if not requests:
            raise ValueError("CallSuspended: give the requests of the calls that wait")
        if not isinstance(state, dict):
            raise ValueError(f"CallSuspended: state must be a dict, got {type(state).__name__}")
        self.requests = tuple(requests)
        self.state = state


current_suspended: ContextVar[dict[str, dict[str, Any]] | None] = ContextVar(
    "agentcore_suspended", default=None
)
"""Tool call id -> the state its `SuspendedCall` kept, while decided calls run again."""


def suspended_state(tool_call_id: str) -> dict[str, Any] | None:
    """The state call `tool_call_id` kept when it suspended (`CallSuspended`), while it runs
    again after the calls it waited for were decided; else None."""
    states = current_suspended.get()
    return None if states is None else states.get(tool_call_id)


def suspended_of(messages: Sequence[AgentMessage]) -> dict[str, dict[str, Any]]:
    """The calls of the transcript's last batch that suspended: call id -> the state of its
    latest `SuspendedCall`."""
    k = len(messages) - 1
    while k >= 0 and not isinstance(messages[k], AssistantMessage):
        k -= 1
    return {m.tool_call_id: m.state for m in messages[k + 1 :] if isinstance(m, SuspendedCall)}
