"""Tool guardrails in a batch: on a call's arguments before it runs (`check_arguments`),
alongside its execution (`execute_guarded`: a block cancels it), and on its result before the
model sees it.

A block gives the call an error result naming the guardrail, so every call still has exactly one
result; the run goes on (the model reads why). Called only when the run has guardrails
(`RunInputs.guards`), so a batch without them runs as before.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import anyio

from ..guardrails._values import (
    Block,
    Guardrail,
    Rewrite,
    ToolCallGuardrailContext,
    ToolResultGuardrailContext,
)
from ..messages import ImageContent, TextContent, ToolCall
from ..tools import AgentTool, AgentToolResult
from .guardrail_checks import verdict

if TYPE_CHECKING:
    from .guardrail_checks import RunGuards
    from .run_types import Executed, PipelineCall, Prepared

__all__ = ["check_arguments", "execute_guarded"]

_log = logging.getLogger("agentcore")


def blocked_result(guard: Guardrail, block: Block, failed: bool) -> AgentToolResult:
    """The error result of a call a tool guardrail blocked."""
    if failed:
        text = f"Tool call blocked: guardrail {guard.name!r} failed: {block.reason}"
    else:
        text = f"Tool call blocked by guardrail {guard.name!r}: {block.reason}"
    _log.warning("%s", text)
    return AgentToolResult(content=[TextContent(text=text)], is_error=True)


async def check_arguments(
    guards: RunGuards, call: ToolCall, tool: AgentTool, raw: Any, args: Any
) -> tuple[Any, Any] | AgentToolResult:
    """The arguments to run the call with after the `"before"` tool-call guardrails, raw and
    validated, or the error result of one that blocked it. A rewrite is validated against the
    schema again."""
    for guard in guards.tool_call_before:
        if not guard.applies_to(call.name):
            continue
        result, failed = await verdict(
            guard, ToolCallGuardrailContext(tool_call=call, args=args), guards.abort_signal
        )
        if isinstance(result, Rewrite):
            if not isinstance(result.value, dict):
                result, failed = (
                    Block(
                        f"it returned Rewrite({type(result.value).__name__}); expected a dict "
                        "(the call's arguments)"
                    ),
                    True,
                )
            else:
                raw = result.value
                args = tool.validator.validate(raw)  # invalid: the call's error result
                continue
        if isinstance(result, Block):
            return blocked_result(guard, result, failed)
    return raw, args


async def _alongside(
    guards: RunGuards,
    item: PipelineCall,
    prepared: Prepared,
    run_call: Callable[[PipelineCall, Prepared], Awaitable[Executed]],
) -> Executed:
    """Run the call while its alongside guardrails check it; a block cancels the call."""
    call = item.call
    applying = [g for g in guards.tool_call_alongside if g.applies_to(call.name)]
    if not applying:
        return await run_call(item, prepared)
    blocked: AgentToolResult | None = None
    result: Executed | None = None
    ctx = ToolCallGuardrailContext(tool_call=call, args=prepared.args)
    async with anyio.create_task_group() as group:

        async def check() -> None:
            nonlocal blocked
            for guard in applying:
                verdict_, failed = await verdict(guard, ctx, guards.abort_signal)
                if isinstance(verdict_, Rewrite):
                    verdict_, failed = (
                        Block("it returned Rewrite in mode 'alongside' (the call was running)"),
                        True,
                    )
                if isinstance(verdict_, Block):
                    blocked = blocked_result(guard, verdict_, failed)
                    item.abandoned = True  # a worker thread not started yet must not start
                    group.cancel_scope.cancel()
                    return

        group.start_soon(check)
        result = await run_call(item, prepared)
    if blocked is not None:
        return blocked
    assert result is not None
    return result


def _content(value: Any) -> list[TextContent | ImageContent] | None:
    if isinstance(value, str):
        return [TextContent(text=value)]
    if isinstance(value, list) and all(isinstance(c, TextContent | ImageContent) for c in value):
        return list(value)
    return None


async def check_result(
    guards: RunGuards, call: ToolCall, args: Any, result: AgentToolResult
) -> AgentToolResult:
    """The result the model sees after the tool-result guardrails."""
    for guard in guards.tool_result:
        if not guard.applies_to(call.name):
            continue
        ctx = ToolResultGuardrailContext(tool_call=call, args=args, result=result)
        checked, failed = await verdict(guard, ctx, guards.abort_signal)
        if isinstance(checked, Rewrite):
            content = _content(checked.value)
            if content is None:
                checked, failed = (
                    Block(
                        f"it returned Rewrite({type(checked.value).__name__}); expected a str "
                        "or a list of TextContent/ImageContent"
                    ),
                    True,
                )
            else:
                result = replace(result, content=content)
                continue
        if isinstance(checked, Block):
            return blocked_result(guard, checked, failed)
    return result


async def execute_guarded(
    guards: RunGuards,
    item: PipelineCall,
    prepared: Prepared,
    run_call: Callable[[PipelineCall, Prepared], Awaitable[Executed]],
) -> Executed:
    """A prepared call run under its alongside guardrails, its result checked (a call that
    waits for input has no result to check yet)."""
    result = await _alongside(guards, item, prepared, run_call)
    if guards.tool_result and isinstance(result, AgentToolResult):
        result = await check_result(guards, item.call, prepared.args, result)
    return result
