"""Whether a call must wait for approval: the step of the per-call pipeline between
`before_tool_call` and `execute` (see `tool_execution`).

The check comes after argument validation (a request always carries valid arguments) and after
`before_tool_call` (a hook that blocks the call wins: blocked calls are never offered for
approval). A call already approved is not checked again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..approvals import ApprovalRequest
from ..config import BeforeToolCallResult
from ..messages import TextContent
from ..tools import AgentTool, AgentToolResult

if TYPE_CHECKING:
    from .run_types import PipelineCall

__all__ = ["WAITING", "await_approval", "request_approvals"]

WAITING = "Tool call was not executed: it is waiting for approval."
"""The result of a waiting call's `tool_execution_end` event (not a tool result message)."""


def _required(tool: AgentTool, args: Any) -> bool:
    flag = tool.requires_approval
    if isinstance(flag, bool):
        return flag
    answer = flag(args)
    if not isinstance(answer, bool):
        raise TypeError(
            f"tool {tool.name!r}: requires_approval returned {type(answer).__name__}; "
            "expected True or False"
        )
    return answer


def await_approval(
    item: PipelineCall, tool: AgentTool, raw: Any, args: Any, decision: BeforeToolCallResult | None
) -> AgentToolResult | None:
    """If the tool or the hook's `decision` asks for approval: `item` gets its request, and the
    result of its `tool_execution_end` ("waiting for approval", not an error) is returned; else
    None. A raising `requires_approval` function raises here (the pipeline turns it into the
    call's error result)."""
    if decision is not None and decision.require_approval:
        reason = decision.reason
    elif _required(tool, args):
        reason = None
    else:
        return None
    call = item.call
    arguments = raw if isinstance(raw, dict) else call.arguments
    item.approval = ApprovalRequest(
        tool_call_id=call.id, tool_name=call.name, arguments=dict(arguments), reason=reason
    )
    text = WAITING if reason is None else f"{WAITING} {reason}"
    return AgentToolResult(content=[TextContent(text=text)])


def request_approvals(items: list[PipelineCall]) -> tuple[ApprovalRequest, ...]:
    """After a batch: the `ApprovalRequest` of each waiting call, in call order (the loop adds
    them to the transcript and the run ends after this turn)."""
    for item in items:
        if item.approval is not None:
            return tuple(i.approval for i in items if i.approval is not None)
    return ()
