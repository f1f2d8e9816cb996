"""Running one batch of tool calls: preparation, hooks, execution, results.

Per call: `tool_execution_start` → find the tool → `prepare_arguments` → validate →
`before_tool_call` → `execute` (with `tool_execution_update` per `on_update`) → `after_tool_call` →
`tool_execution_end` → the result message. Every failure along the way (unknown tool, invalid
arguments, a blocking or raising hook, a raising tool) becomes an error result for the model.

Parallel mode prepares calls one by one in call order, then runs the prepared ones concurrently:
`tool_execution_end` comes in completion order, result messages in call order. Sequential mode
does each call completely before the next.

On abort, running tools are cancelled (an async tool at its next await; a sync tool's worker thread
is abandoned and its result discarded), nothing prepared starts afterwards, and every call still
gets exactly one result, so the transcript can always be sent to a model again.

Progress updates go through one pump task per batch, started on the first update, which emits them
in order; a call's `tool_execution_end` waits until its updates are out. Updates after a call has
finished are dropped.
"""

from __future__ import annotations

import contextlib
import inspect
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread
import anyio.to_thread

from ._validation import ArgumentsError
from .abort import AbortSignal, _threadsafe_caller, cancel_on_abort
from .config import (
    AfterToolCallContext,
    AfterToolCallResult,
    BeforeToolCallContext,
    BeforeToolCallResult,
)
from .events import ToolExecutionEndEvent, ToolExecutionStartEvent, ToolExecutionUpdateEvent
from .messages import AssistantMessage, TextContent, ToolCall, ToolResultMessage
from .tools import AgentTool, AgentToolResult, ToolExecutionMode

if TYPE_CHECKING:
    from ._loop import _Run

__all__ = ["execute_batch", "fail_truncated"]

ABORTED_BEFORE_START = "Tool call was not executed: the run was aborted."
ABORTED_WHILE_RUNNING = "Tool execution was aborted."
TRUNCATED = (
    "Tool call was not executed: the response hit the output token limit, so its arguments may "
    "be incomplete. Issue the call again if it is still needed."
)
BLOCKED = "Tool execution was blocked."


def _error(text: str) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text=text)], is_error=True)


def _text(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


_NOT_STARTED = object()


def _execute_unless_aborted(
    tool: AgentTool, tool_call_id: str, args: Any, signal: AbortSignal, on_update: Any
) -> Any:
    """Run a sync tool in its worker thread. A worker may pick the call up only after the
    abort fired (it was handed over just before): then the tool must not start at all."""
    if signal.aborted:
        return _NOT_STARTED
    return tool.execute(tool_call_id, args, signal, on_update)


@dataclass(slots=True, eq=False)
class _Call:
    """One tool call on its way through the pipeline."""

    call: ToolCall
    tool: AgentTool | None = None
    args: Any = None
    result: AgentToolResult | None = None
    is_error: bool = False
    finished: bool = False
    pending_updates: int = 0
    drained: anyio.Event | None = None


@dataclass(slots=True, eq=False)
class _Batch:
    run: _Run
    message: AssistantMessage
    updates: deque[tuple[_Call, AgentToolResult]] = field(default_factory=deque)
    pump_running: bool = False
    loop_thread: int = field(default_factory=threading.get_ident)
    call_soon: Callable[[Callable[[], Any]], None] | None = None

    # -- updates -------------------------------------------------------------------------

    def on_update_for(self, item: _Call) -> Any:
        if self.call_soon is None:
            self.call_soon = _threadsafe_caller()
        call_soon = self.call_soon

        def on_update(partial: AgentToolResult) -> None:
            if threading.get_ident() == self.loop_thread:
                self.enqueue(item, partial)
                return
            try:  # an anyio worker thread (a sync tool): hand over and wait, keeping the order
                anyio.from_thread.run_sync(self.enqueue, item, partial)
            except RuntimeError:  # a thread the tool started itself (or the run is gone)
                with contextlib.suppress(RuntimeError):
                    call_soon(lambda: self.enqueue(item, partial))

        return on_update

    def enqueue(self, item: _Call, partial: AgentToolResult) -> None:
        if item.finished:
            return
        item.pending_updates += 1
        self.updates.append((item, partial))
        if not self.pump_running:
            self.pump_running = True
            self.run.group.start_soon(self.pump)

    async def pump(self) -> None:
        """Emit queued updates in order; exits when the queue is empty."""
        while self.updates:
            item, partial = self.updates.popleft()
            call = item.call
            await self.run.emit(
                ToolExecutionUpdateEvent(
                    tool_call_id=call.id,
                    tool_name=call.name,
                    args=call.arguments,
                    partial_result=partial,
                )
            )
            item.pending_updates -= 1
            if item.pending_updates == 0 and item.drained is not None:
                item.drained.set()
        self.pump_running = False

    # -- the pipeline --------------------------------------------------------------------

    async def start(self, item: _Call) -> None:
        call = item.call
        await self.run.emit(
            ToolExecutionStartEvent(tool_call_id=call.id, tool_name=call.name, args=call.arguments)
        )

    def settle(self, item: _Call, result: AgentToolResult, is_error: bool) -> None:
        item.result = result
        item.is_error = is_error

    async def prepare(self, item: _Call) -> bool:
        """Find, adapt, validate and gate one call; False if it already has its outcome."""
        run = self.run
        call = item.call
        if run.signal.aborted:
            self.settle(item, _error(ABORTED_BEFORE_START), True)
            return False
        tool = run.tools_by_name.get(call.name)
        if tool is None:
            self.settle(item, _error(f"Tool {call.name} not found"), True)
            return False
        item.tool = tool
        try:
            raw: Any = call.arguments
            prepared = tool.prepare_arguments(raw)
            if prepared is not None:
                raw = prepared
            args = tool.validator.validate(raw)
            hook = run.config.before_tool_call
            if hook is not None:
                ctx = BeforeToolCallContext(
                    assistant_message=self.message, tool_call=call, args=args, context=run.context()
                )
                decision = await run.call_ctx_hook("before_tool_call", ctx)
                if decision is not None and not isinstance(decision, BeforeToolCallResult):
                    raise TypeError(
                        f"before_tool_call returned {type(decision).__name__}; expected "
                        "BeforeToolCallResult or None"
                    )
                if run.signal.aborted:
                    self.settle(item, _error(ABORTED_BEFORE_START), True)
                    return False
                if decision is not None and decision.block:
                    result = _error(decision.reason or BLOCKED)
                    if decision.terminate:
                        result = AgentToolResult(
                            content=result.content, is_error=True, terminate=True
                        )
                    self.settle(item, result, True)
                    return False
        except ArgumentsError as exc:
            self.settle(item, _error(str(exc)), True)
            return False
        except Exception as exc:
            self.settle(item, _error(_text(exc)), True)
            return False
        item.args = args
        return True

    async def execute(self, item: _Call) -> None:
        """Run a prepared call and its `after_tool_call`; never raises."""
        run = self.run
        tool = item.tool
        assert tool is not None
        call = item.call
        if run.signal.aborted:
            self.settle(item, _error(ABORTED_BEFORE_START), True)
            return
        on_update = self.on_update_for(item)
        result: AgentToolResult | None = None
        is_error = False
        with cancel_on_abort(run.abort_signal) as scope:
            try:
                if tool.is_async():
                    value = await tool.execute(call.id, item.args, run.signal, on_update)  # type: ignore[misc]
                else:
                    value = await anyio.to_thread.run_sync(
                        _execute_unless_aborted,
                        tool,
                        call.id,
                        item.args,
                        run.signal,
                        on_update,
                        abandon_on_cancel=True,
                    )
                    if value is _NOT_STARTED:
                        value = _error(ABORTED_BEFORE_START)
                    if inspect.isawaitable(value):
                        value = await value
                if not isinstance(value, AgentToolResult):
                    raise TypeError(
                        f"tool {tool.name!r} returned {type(value).__name__}; expected "
                        "AgentToolResult (use @tool to return plain values)"
                    )
                result = value
                is_error = value.is_error
            except Exception as exc:
                result = _error(_text(exc))
                is_error = True
            except SystemExit as exc:  # e.g. a wrapped CLI's argparse: must not end the host
                result = _error(f"The tool exited (SystemExit: {exc.code!r}).")
                is_error = True
        item.finished = True
        if scope.cancelled_caught:
            result = _error(ABORTED_WHILE_RUNNING)
            is_error = True
        assert result is not None
        if item.pending_updates:
            item.drained = anyio.Event()
            await item.drained.wait()
        hook = run.config.after_tool_call
        if hook is not None:
            try:
                ctx = AfterToolCallContext(
                    assistant_message=self.message,
                    tool_call=call,
                    args=item.args,
                    result=result,
                    is_error=is_error,
                    context=run.context(),
                )
                change = await run.call_ctx_hook("after_tool_call", ctx)
                if change is not None:
                    if not isinstance(change, AfterToolCallResult):
                        raise TypeError(
                            f"after_tool_call returned {type(change).__name__}; expected "
                            "AfterToolCallResult or None"
                        )
                    if change.is_error is not None:
                        is_error = change.is_error
                    result = AgentToolResult(
                        content=result.content if change.content is None else change.content,
                        details=result.details if change.details is None else change.details,
                        usage=result.usage if change.usage is None else change.usage,
                        added_tool_names=result.added_tool_names,
                        terminate=result.terminate
                        if change.terminate is None
                        else change.terminate,
                        is_error=is_error,
                    )
            except Exception as exc:
                result = _error(_text(exc))
                is_error = True
        self.settle(item, result, is_error)

    async def end(self, item: _Call) -> None:
        assert item.result is not None
        item.finished = True
        call = item.call
        await self.run.emit(
            ToolExecutionEndEvent(
                tool_call_id=call.id,
                tool_name=call.name,
                result=item.result,
                is_error=item.is_error,
            )
        )

    async def publish(self, item: _Call) -> ToolResultMessage:
        result = item.result
        assert result is not None
        message = ToolResultMessage(
            tool_call_id=item.call.id,
            tool_name=item.call.name,
            content=list(result.content),
            details=result.details,
            usage=result.usage,
            added_tool_names=list(result.added_tool_names) if result.added_tool_names else None,
            is_error=item.is_error,
        )
        await self.run.add_message(message)
        return message

    async def run_one(self, item: _Call) -> None:
        """Execute a prepared call and emit its end (parallel mode)."""
        await self.execute(item)
        await self.end(item)


async def execute_batch(
    run: _Run, message: AssistantMessage, calls: list[ToolCall]
) -> tuple[list[ToolResultMessage], bool]:
    """Run the tool calls of one answer; returns the result messages and the terminate flag."""
    batch = _Batch(run=run, message=message)
    items = [_Call(call=c) for c in calls]
    sequential = run.config.tool_execution is ToolExecutionMode.SEQUENTIAL or any(
        (t := run.tools_by_name.get(c.name)) is not None
        and t.execution_mode is ToolExecutionMode.SEQUENTIAL
        for c in calls
    )
    results: list[ToolResultMessage] = []
    if sequential:
        for item in items:
            await batch.start(item)
            if await batch.prepare(item):
                await batch.execute(item)
            await batch.end(item)
            results.append(await batch.publish(item))
    else:
        prepared: list[_Call] = []
        for item in items:
            await batch.start(item)
            if await batch.prepare(item):
                prepared.append(item)
            else:
                await batch.end(item)
        if len(prepared) == 1:
            await batch.run_one(prepared[0])
        elif prepared:
            await _run_concurrently(batch, prepared, run.config.max_parallel_tools)
        for item in items:
            results.append(await batch.publish(item))
    terminate = bool(items) and all(i.result is not None and i.result.terminate for i in items)
    return results, terminate


async def _run_concurrently(batch: _Batch, items: list[_Call], limit: int | None) -> None:
    """Run prepared calls as tasks of the run's task group and wait for all of them."""
    remaining = len(items)
    all_done = anyio.Event()
    limiter = anyio.CapacityLimiter(limit) if limit is not None and limit < len(items) else None

    async def job(item: _Call) -> None:
        nonlocal remaining
        try:
            if limiter is None:
                await batch.run_one(item)
            else:
                async with limiter:
                    await batch.run_one(item)
        finally:
            remaining -= 1
            if remaining == 0:
                all_done.set()

    for item in items:
        batch.run.group.start_soon(job, item)
    await all_done.wait()


async def fail_truncated(run: _Run, calls: list[ToolCall]) -> list[ToolResultMessage]:
    """Give every call of a `length`-truncated answer an error result without running it."""
    batch = _Batch(run=run, message=AssistantMessage())
    results = []
    for call in calls:
        item = _Call(call=call)
        await batch.start(item)
        batch.settle(item, _error(TRUNCATED), True)
        await batch.end(item)
        results.append(await batch.publish(item))
    return results
