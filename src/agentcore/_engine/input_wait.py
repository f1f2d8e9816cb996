"""A tool that asks the user for input while it runs (`InputRequired`, see
`agentcore._approvals.inputs`): the call stops and waits, as a call waiting for approval does.

Its `tool_execution_end` says it waits for input (not an error, no `tool_result` message); its
`ApprovalRequest` (with `input_schema`) joins the transcript after the batch, with those of the
calls that waited for approval, and the run stops. When the request is decided (answered,
declined or cancelled), the next run executes the call again (`decided_calls`), with the
answers given so far in `input_answer`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._approvals.inputs import InputRequired
from ..approvals import ApprovalRequest
from ..messages import TextContent
from ..tools import AgentToolResult
from .run_types import Waiting

if TYPE_CHECKING:
    from ..messages import ToolCall

__all__ = ["WAITING_FOR_INPUT", "wait_for_input"]

WAITING_FOR_INPUT = "Tool call did not finish: it is waiting for input from the user."
"""The result of the `tool_execution_end` of a call that asked for input."""


def wait_for_input(call: ToolCall, asked: InputRequired) -> Waiting:
    """The call waits for the input its tool asked for: its request (the batch adds it to the
    transcript) and what its `tool_execution_end` says."""
    request = ApprovalRequest(
        tool_call_id=call.id,
        tool_name=call.name,
        arguments=dict(call.arguments),
        reason=asked.message,
        input_schema=dict(asked.schema),
        input_key=asked.key,
    )
    text = f"{WAITING_FOR_INPUT} {asked.message}"
    return Waiting(request, AgentToolResult(content=[TextContent(text=text)]))
