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
from .run_types import Waiting

if TYPE_CHECKING:
    from ..messages import ToolCall

__all__ = ["WAITING", "await_approval"]

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
    call: ToolCall, tool: AgentTool, raw: Any, args: Any, decision: BeforeToolCallResult | None
) -> Waiting | None:
    """If the tool or the hook's `decision` asks for approval: the call's `Waiting` stage (its
    request, and the result of its `tool_execution_end`: "waiting for approval", not an error);
    else None. A raising `requires_approval` function raises here (the pipeline turns it into
    the call's error result)."""
    if decision is not None and decision.require_approval:
        reason = decision.reason
    elif _required(tool, args):
        reason = None
    else:
        return None
    arguments = raw if isinstance(raw, dict) else call.arguments
    request = ApprovalRequest(
        tool_call_id=call.id, tool_name=call.name, arguments=dict(arguments), reason=reason
    )
    text = WAITING if reason is None else f"{WAITING} {reason}"
    return Waiting(request, AgentToolResult(content=[TextContent(text=text)]))
