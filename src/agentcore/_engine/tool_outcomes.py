"""What a tool call can end with: the texts of the results the engine gives a call (aborted,
truncated, blocked, invalid JSON, timed out, a stray cancellation), error results, and the checks
that make a tool's value (or `after_tool_call`'s change) a result whose details are JSON.

Plain values and functions, shared by the stages of a call (`tool_batch`), the batch driver
(`tool_execution`) and the approval decisions carried out (`decided_calls`).
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import replace
from typing import Any

import anyio

from .._tools.values import NotJsonError, to_json_value
from ..config import AfterToolCallResult
from ..errors import clip
from ..llm import describe_invalid_json
from ..messages import TextContent, ToolCall
from ..tools import AgentTool, AgentToolResult

__all__ = [
    "ABORTED_BEFORE_START",
    "ABORTED_WHILE_RUNNING",
    "BLOCKED",
    "TRUNCATED",
    "changed_result",
    "checked_result",
    "error_result",
    "invalid_arguments",
    "is_stray_cancellation",
    "stray_cancel",
    "timed_out",
]

ABORTED_BEFORE_START = "Tool call was not executed: the run was aborted."
ABORTED_WHILE_RUNNING = "Tool execution was aborted."
TRUNCATED = (
    "Tool call was not executed: the response hit the output token limit, so its arguments may "
    "be incomplete. Issue the call again if it is still needed."
)
BLOCKED = "Tool execution was blocked."


def error_result(text: str) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text=text)], is_error=True)


def invalid_arguments(call: ToolCall, text: str) -> str:
    return (
        f"Tool call was not executed: the arguments for {call.name} were not valid JSON "
        f"({describe_invalid_json(text)}). Send the call again with its arguments as one "
        f"complete JSON object. Received:\n{clip(text)}"
    )


def timed_out(tool: AgentTool, seconds: float) -> str:
    return f"Tool {tool.name!r} timed out after {seconds:g} s."


def stray_cancel(tool: AgentTool) -> str:
    return (
        f"Tool {tool.name!r} failed: it raised CancelledError, but the run was not cancelled "
        "(did it await a task that something else cancelled?)."
    )


def is_stray_cancellation(exc: BaseException) -> bool:
    """Whether a cancellation exception escaping a tool was not aimed at this task.

    A tool may await a task that someone else cancelled and let its `CancelledError` out. That
    is the tool's failure, not a cancellation of the run: none of the cancel scopes around the
    call was cancelled (anyio reports that as an effective deadline of -inf) and, under asyncio,
    nobody called `cancel()` on this task.
    """
    if not isinstance(exc, asyncio.CancelledError | anyio.get_cancelled_exc_class()):
        return False
    deadline = anyio.current_effective_deadline()
    if deadline == -math.inf or deadline <= anyio.current_time():
        return False
    try:
        task = asyncio.current_task()
    except RuntimeError:  # not running under asyncio (trio)
        return True
    return task is None or task.cancelling() == 0


def checked_result(value: Any, tool: AgentTool) -> AgentToolResult:
    """The tool's return value as a result whose details are JSON (raises otherwise)."""
    if not isinstance(value, AgentToolResult):
        raise TypeError(
            f"tool {tool.name!r} returned {type(value).__name__}; expected "
            "AgentToolResult (use @tool to return plain values)"
        )
    result: AgentToolResult = value
    details = result.details
    if details is not None:
        try:
            data = to_json_value(details)
        except NotJsonError as exc:
            raise TypeError(
                f"tool {tool.name!r} returned details that are not JSON: {exc}"
            ) from None
        if data is not details:
            result = replace(result, details=data)
    return result


def changed_result(result: AgentToolResult, change: AfterToolCallResult) -> AgentToolResult:
    """`result` with what `after_tool_call` replaced; its details made JSON like a tool's."""
    try:
        changed = AgentToolResult(
            content=result.content if change.content is None else change.content,
            details=result.details,
            usage=result.usage if change.usage is None else change.usage,
            added_tool_names=result.added_tool_names,
            terminate=result.terminate if change.terminate is None else change.terminate,
            is_error=result.is_error if change.is_error is None else change.is_error,
        )
    except TypeError as exc:
        raise TypeError(f"after_tool_call returned an invalid result: {exc}") from None
    if change.details is None:
        return changed
    try:
        details = to_json_value(change.details)
    except NotJsonError as exc:
        raise TypeError(f"after_tool_call returned details that are not JSON: {exc}") from None
    return replace(changed, details=details)
