"""A running tool that suspends because calls it made wait for a decision (a code snippet's
nested calls, `agentcore.codemode`).

A call made through the run's pipeline with `can_wait=True` (`ToolPipeline.call`) that would
wait for approval or for input raises `CallWaits` (after its `tool_execution_end`, which says it
waits) instead of ending with an error result. The calling tool then raises `CallSuspended` with
the requests it collected and the state it needs to go on: its call waits as a call waiting for
approval does, with a `SuspendedCall` message (the state) and one `ApprovalRequest` per nested
call (with `parent_tool_call_id`). Once every one is decided, the next run executes the calling
tool again; `ToolPipeline.suspended_state(tool_call_id)` then returns its state, and the nested
calls it carries on (`ToolPipeline.call(..., call_id=<the nested id>)`) are carried out as their
decisions say.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .messages import ApprovalRequest

__all__ = ["CallSuspended", "CallWaits"]


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
    request is decided, executes the call again (`ToolPipeline.suspended_state` returns
    `state`).

    Raises:
        ValueError: no requests, or a state that is not a dict.
    """

    def __init__(self, requests: Sequence[ApprovalRequest], state: dict[str, Any]) -> None:
        if not requests:
            raise ValueError("CallSuspended: give the requests of the calls that wait")
        if not isinstance(state, dict):
            raise ValueError(f"CallSuspended: state must be a dict, got {type(state).__name__}")
        super().__init__(f"{len(requests)} tool calls wait for a decision")
        self.requests = tuple(requests)
        self.state = state
