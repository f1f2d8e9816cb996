"""Running one batch of tool calls: preparation, hooks, execution, results.

Per call: `tool_execution_start` → arguments that were not one complete JSON object end the call
here (nothing else runs) → find the tool → `prepare_arguments` → validate → `before_tool_call` →
approval (`approval_gate`: a waiting call ends here, its request follows the batch) → `execute`
(`tool_execution_update` per `on_update`) → `after_tool_call` → `tool_execution_end` → result.
Every failure along the way (invalid JSON, unknown tool, invalid arguments, a blocking or raising
hook, a raising tool, a value or details that cannot be JSON, a timeout) becomes an error result.
The stages return values (`ToolBatch.prepare`: the call's stage, `Prepared` with its tool and
arguments, `Immediate` with the result it ends with, or `Waiting` with its approval request;
`execute`: the result, under the tool guardrails (`guardrail_tools`) if the run has any; `end`
keeps it and publishes it), and one driver (`run_calls`) takes a batch through them, also the
batch of approval decisions (`decided_calls`). The run is reached only through
`run_types.ToolRun`.

Parallel mode prepares calls one by one in call order, then runs the prepared ones concurrently:
`tool_execution_end` comes in completion order, result messages in call order. Sequential mode
does each call completely before the next.

On abort, running tools are cancelled (an async tool at its next await; a sync tool's worker thread
is abandoned and its result discarded), nothing prepared starts afterwards, and every call still
gets exactly one result, so the transcript can always be sent to a model again. A call's timeout
(`tool.timeout`, else `config.tool_timeout`) cancels `execute` alone the same way and gives an
error result; the hooks are not bounded. A cancellation from outside the run propagates; a
`CancelledError` that a tool lets out while nothing cancelled the run is the tool's failure.

Progress updates go through one pump task per batch, started on the first update, which emits them
in order; a call's `tool_execution_end` waits until its updates are out. Updates after a call has
finished, or after the batch is over (also when it was cancelled), are dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread
import anyio.to_thread

from .._approvals.inputs import InputRequired
from .._tools.validation import ArgumentsError
from .._tools.values import NotJsonError, to_json_value
from ..abort import AbortSignal, cancel_on_abort
from ..abort._eventloop import current_loop
from ..config import (
    AfterToolCallContext,
    AfterToolCallResult,
    BeforeToolCallContext,
    BeforeToolCallResult,
)
from ..errors import clip
from ..events import ToolExecutionEndEvent, ToolExecutionStartEvent, ToolExecutionUpdateEvent
from ..llm import describe_invalid_json
from ..messages import AssistantMessage, TextContent, ToolCall, ToolResultMessage
from ..tools import AgentTool, AgentToolResult, ToolExecutionMode
from .approval_gate import await_approval
from .emit import call_hook
from .guardrail_tools import check_call, execute_guarded
from .input_wait import wait_for_input
from .run_types import CallStage, Immediate, PipelineCall, Prepared, Waiting

if TYPE_CHECKING:
    from ..approvals import ApprovalRequest
    from .run_types import RunInputs, ToolRun

__all__ = ["execute_batch", "fail_truncated"]

ABORTED_BEFORE_START = "Tool call was not executed: the run was aborted."
ABORTED_WHILE_RUNNING = "Tool execution was aborted."
TRUNCATED = (
    "Tool call was not executed: the response hit the output token limit, so its arguments may "
    "be incomplete. Issue the call again if it is still needed."
)
BLOCKED = "Tool execution was blocked."


class _NotCancelled:
    """Stands in for the cancel scope of a run nothing can abort (as `cancel_on_abort(None)`
    gives, without its generator)."""

    cancelled_caught = False


_NO_ABORT = contextlib.nullcontext(_NotCancelled())
"""The scope of a tool call in a run that nothing can abort: no cancel scope (reusable)."""

_log = logging.getLogger("agentcore")


def error_result(text: str) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text=text)], is_error=True)


def _text(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _invalid_arguments(call: ToolCall, text: str) -> str:
    return (
        f"Tool call was not executed: the arguments for {call.name} were not valid JSON "
        f"({describe_invalid_json(text)}). Send the call again with its arguments as one "
        f"complete JSON object. Received:\n{clip(text)}"
    )


def _timed_out(tool: AgentTool, seconds: float) -> str:
    return f"Tool {tool.name!r} timed out after {seconds:g} s."


def _stray_cancel(tool: AgentTool) -> str:
    return (
        f"Tool {tool.name!r} failed: it raised CancelledError, but the run was not cancelled "
        "(did it await a task that something else cancelled?)."
    )


def _is_stray_cancellation(exc: BaseException) -> bool:
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


def _checked_result(value: Any, tool: AgentTool) -> AgentToolResult:
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


_NOT_STARTED = object()


def _execute_in_thread(
    item: PipelineCall, prepared: Prepared, signal: AbortSignal, on_update: Any
) -> Any:
    """Run a sync tool in its worker thread, and check its result there (off the event loop).

    A worker may pick the call up only after the abort or the timeout fired (it was handed over
    just before): then the tool must not start at all.
    """
    if signal.aborted or item.abandoned:
        return _NOT_STARTED
    tool = prepared.tool
    value = tool.execute(item.call.id, prepared.args, signal, on_update)
    if inspect.isawaitable(value):
        return value
    return _checked_result(value, tool)


@dataclass(slots=True, eq=False)
class ToolBatch:
    run: ToolRun
    message: AssistantMessage
    inputs: RunInputs  # the run's
    updates: deque[tuple[PipelineCall, AgentToolResult]] | None = None  # made at the first update
    pump_running: bool = False
    closed: bool = False  # the batch is over: late updates are dropped, no pump may start
    approved: bool = False  # its calls are approved: none is checked for approval again

    # -- updates -------------------------------------------------------------------------

    def on_update_for(self, item: PipelineCall) -> Any:
        loop = current_loop()  # the run's: this runs on it

        def on_update(partial: AgentToolResult) -> None:
            if loop.on_loop():
                self.enqueue(item, partial)
                return
            try:  # an anyio worker thread (a sync tool): hand over and wait, keeping the order
                anyio.from_thread.run_sync(self.enqueue, item, partial)
            except RuntimeError:  # a thread the tool started itself (or the run is gone)
                with contextlib.suppress(RuntimeError):
                    loop.call_soon(lambda: self.enqueue(item, partial))

        return on_update

    def enqueue(self, item: PipelineCall, partial: AgentToolResult) -> None:
        # Once the batch is over (also when it was cancelled from outside), the run's task group
        # may be closing: starting the pump there would create its coroutine and fail to spawn
        # it (under trio: "coroutine 'ToolBatch.pump' was never awaited").
        if item.finished or self.closed:
            return
        item.pending_updates += 1
        if self.updates is None:
            self.updates = deque()
        self.updates.append((item, partial))
        if not self.pump_running:
            self.pump_running = True
            self.run.group.start_soon(self.pump)

    async def pump(self) -> None:
        """Emit queued updates in order; exits when the queue is empty."""
        updates = self.updates
        while updates:
            item, partial = updates.popleft()
            call = item.call
            await self.inputs.emitter.emit(
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

    async def start(self, item: PipelineCall) -> None:
        call = item.call
        observer = self.inputs.observer
        if observer is not None:
            item.observer = observer.start_tool(call)
        if _log.isEnabledFor(logging.DEBUG):
            item.started = time.perf_counter()
            _log.debug("tool %r (call %s) started", call.name, call.id)
        event = ToolExecutionStartEvent(
            tool_call_id=call.id, tool_name=call.name, args=call.arguments
        )
        if (pending := self.inputs.emitter.send(event)) is not None:
            await pending

    async def prepare(self, item: PipelineCall) -> CallStage:
        """Find, adapt, validate and gate one call: `Prepared` (ready to execute), `Immediate`
        (it ends here with this result: an error, a block, the abort) or `Waiting` (for
        approval)."""
        run = self.run
        inputs = self.inputs
        call = item.call
        if inputs.signal.aborted:
            return Immediate(error_result(ABORTED_BEFORE_START))
        if call.invalid_arguments is not None:  # never guess what the model meant to send
            return Immediate(error_result(_invalid_arguments(call, call.invalid_arguments)))
        tool = run.tools_by_name.get(call.name)
        if tool is None:
            return Immediate(error_result(f"Tool {call.name} not found"))
        try:
            raw: Any = call.arguments
            prepared = tool.prepare_arguments(raw)
            if prepared is not None:
                raw = prepared
            args = tool.validator.validate(raw)
            if inputs.guards is not None and inputs.guards.tool_call_before:
                checked = await check_call(inputs.guards, call, tool, raw, args)
                if isinstance(checked, AgentToolResult):
                    return Immediate(checked)
                raw, args = checked  # (a rewrite is what an approval request shows)
            hook, decision = inputs.hooks.before_tool_call, None
            if hook is not None:
                ctx = BeforeToolCallContext(
                    assistant_message=self.message, tool_call=call, args=args, context=run.context()
                )
                decision = await call_hook(hook, ctx, inputs.signal)
                if decision is not None and not isinstance(decision, BeforeToolCallResult):
                    raise TypeError(
                        f"before_tool_call returned {type(decision).__name__}; expected "
                        "BeforeToolCallResult or None"
                    )
                if inputs.signal.aborted:
                    return Immediate(error_result(ABORTED_BEFORE_START))
                if decision is not None and decision.block:
                    return Immediate(
                        AgentToolResult(
                            content=[TextContent(text=decision.reason or BLOCKED)],
                            is_error=True,
                            terminate=bool(decision.terminate),
                        )
                    )
            if not self.approved:
                waiting = await_approval(call, tool, raw, args, decision)
                if waiting is not None:
                    return waiting
        except ArgumentsError as exc:
            return Immediate(error_result(str(exc)))
        except Exception as exc:
            return Immediate(error_result(_text(exc)))
        return Prepared(tool, args)

    async def execute(self, item: PipelineCall, prepared: Prepared) -> AgentToolResult:
        """Run a prepared call and its `after_tool_call` (under the tool guardrails, if any):
        the call's result; never raises."""
        guards = self.inputs.guards
        if guards is not None and guards.for_tools:
            return await execute_guarded(guards, item, prepared, self.execute_call)
        return await self.execute_call(item, prepared)

    async def execute_call(self, item: PipelineCall, prepared: Prepared) -> AgentToolResult:
        """Run a prepared call and its `after_tool_call`: the call's result; never raises."""
        run = self.run
        inputs = self.inputs
        call = item.call
        if inputs.signal.aborted:
            return error_result(ABORTED_BEFORE_START)
        if item.observer is None:
            result = await self.invoke(item, prepared)
        else:
            with item.observer.executing():
                result = await self.invoke(item, prepared)
        if item.pending_updates:
            item.drained = anyio.Event()
            await item.drained.wait()
        hook = inputs.hooks.after_tool_call
        if hook is None or item.waiting is not None:  # (a waiting call has no result yet)
            return result
        try:
            ctx = AfterToolCallContext(
                assistant_message=self.message,
                tool_call=call,
                args=prepared.args,
                result=result,
                is_error=result.is_error,
                context=run.context(),
            )
            change = await call_hook(hook, ctx, inputs.signal)
            if change is None:
                return result
            if not isinstance(change, AfterToolCallResult):
                raise TypeError(
                    f"after_tool_call returned {type(change).__name__}; expected "
                    "AfterToolCallResult or None"
                )
            return _changed_result(result, change)
        except Exception as exc:
            return error_result(_text(exc))

    async def invoke(self, item: PipelineCall, prepared: Prepared) -> AgentToolResult:
        """Call the tool under the run's abort and the call's timeout; never raises, outer
        cancellation aside."""
        inputs = self.inputs
        tool = prepared.tool
        timeout = tool.timeout if tool.timeout is not None else inputs.config.tool_timeout
        result: AgentToolResult | None = None
        try:
            signal = inputs.abort_signal  # None: nothing can abort the run, no scope to set up
            with cancel_on_abort(signal) if signal is not None else _NO_ABORT as scope:
                if timeout is None:
                    result = await self.call_tool(item, prepared)
                else:
                    # Only `execute` is bounded: the hooks are the application's own code.
                    with anyio.move_on_after(timeout) as deadline:
                        result = await self.call_tool(item, prepared)
                    if deadline.cancelled_caught and not inputs.signal.aborted:
                        item.abandoned = True
                        _log.warning(
                            "tool %r (call %s) timed out after %g s",
                            tool.name,
                            item.call.id,
                            timeout,
                        )
                        result = error_result(_timed_out(tool, timeout))
        finally:
            item.finished = True  # also on outer cancellation: later updates are dropped
        if result is None or scope.cancelled_caught:
            return error_result(ABORTED_WHILE_RUNNING)
        return result

    async def call_tool(self, item: PipelineCall, prepared: Prepared) -> AgentToolResult:
        """`execute`, its value checked; any failure of the tool becomes an error result."""
        inputs = self.inputs
        tool = prepared.tool
        on_update = self.on_update_for(item)
        try:
            if tool.is_async():
                value = await tool.execute(item.call.id, prepared.args, inputs.signal, on_update)  # type: ignore[misc]
            else:
                value = await anyio.to_thread.run_sync(
                    _execute_in_thread,
                    item,
                    prepared,
                    inputs.signal,
                    on_update,
                    abandon_on_cancel=True,
                )
                if value is _NOT_STARTED:
                    return error_result(ABORTED_BEFORE_START)
            if not isinstance(value, AgentToolResult) and inspect.isawaitable(value):
                value = await value
            return _checked_result(value, tool)
        except InputRequired as exc:  # the tool asked the user: the call waits (input_wait)
            return wait_for_input(item, exc)
        except Exception as exc:
            item.error = exc
            return error_result(_text(exc))
        except SystemExit as exc:  # e.g. a wrapped CLI's argparse: must not end the host
            return error_result(f"The tool exited (SystemExit: {exc.code!r}).")
        except BaseException as exc:
            if _is_stray_cancellation(exc):
                return error_result(_stray_cancel(tool))
            raise

    async def end(self, item: PipelineCall, result: AgentToolResult) -> None:
        """The call's outcome: kept on `item`, and published as its `tool_execution_end`."""
        item.result = result
        item.finished = True
        call = item.call
        observer = item.observer
        if observer is not None:
            item.observer = None  # ended: not again if the batch is cancelled
            observer.end_tool(result, result.is_error, item.error)
        if item.started:
            _log.debug(
                "tool %r (call %s) finished in %.3f s%s",
                call.name,
                call.id,
                time.perf_counter() - item.started,
                " with an error" if result.is_error else "",
            )
        event = ToolExecutionEndEvent(
            tool_call_id=call.id, tool_name=call.name, result=result, is_error=result.is_error
        )
        if (pending := self.inputs.emitter.send(event)) is not None:
            await pending

    async def publish(self, item: PipelineCall) -> ToolResultMessage:
        result = item.result
        assert result is not None
        message = ToolResultMessage(
            tool_call_id=item.call.id,
            tool_name=item.call.name,
            content=list(result.content),
            details=result.details,
            usage=result.usage,
            added_tool_names=list(result.added_tool_names) if result.added_tool_names else None,
            is_error=result.is_error,
        )
        await self.run.add_message(message)
        return message

    async def run_one(self, item: PipelineCall, prepared: Prepared) -> None:
        """Execute a prepared call and end it (one of several run concurrently)."""
        await self.end(item, await self.execute(item, prepared))


def _changed_result(result: AgentToolResult, change: AfterToolCallResult) -> AgentToolResult:
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


async def execute_batch(
    run: ToolRun, message: AssistantMessage, calls: list[ToolCall]
) -> tuple[list[ToolResultMessage], bool, tuple[ApprovalRequest, ...]]:
    """Run the tool calls of one answer; returns the result messages, the terminate flag and
    the requests of the calls waiting for approval (in call order)."""
    batch = ToolBatch(run=run, inputs=run.inputs, message=message)
    items = [PipelineCall(call=c) for c in calls]
    results, waiting = await run_calls(batch, items, batch.prepare)
    terminate = bool(items) and all(i.result is not None and i.result.terminate for i in items)
    return results, terminate, waiting


async def run_calls(
    batch: ToolBatch,
    items: list[PipelineCall],
    prepare: Callable[[PipelineCall], Awaitable[CallStage]],
    before_execute: Callable[[PipelineCall], Awaitable[None]] | None = None,
    *,
    sequential: bool | None = None,
) -> tuple[list[ToolResultMessage], tuple[ApprovalRequest, ...]]:
    """Take each call through the stages: start → `prepare` (`Prepared`, `Immediate` or
    `Waiting`) → for a prepared call `before_execute` and execute → end → its result message
    (none for a call waiting for approval); returns the messages, in call order, and the
    requests of the waiting calls.

    Sequential mode (`sequential`, else the config's or any of the batch's tools') does each
    call completely before the next; parallel mode prepares them one by one, then runs the
    ready ones concurrently, then publishes the results."""
    run = batch.run
    inputs = batch.inputs
    if sequential is None:
        sequential = inputs.config.tool_execution is ToolExecutionMode.SEQUENTIAL or any(
            (t := run.tools_by_name.get(i.call.name)) is not None
            and t.execution_mode is ToolExecutionMode.SEQUENTIAL
            for i in items
        )
    results: list[ToolResultMessage] = []
    waiting: list[ApprovalRequest] | None = None
    try:
        if sequential:
            for item in items:
                await batch.start(item)
                stage = await prepare(item)
                if isinstance(stage, Prepared):
                    if before_execute is not None:
                        await before_execute(item)
                    await batch.end(item, await batch.execute(item, stage))
                    if item.waiting is not None:  # it asked for input: no result message yet
                        waiting = waiting or []
                        waiting.append(item.waiting)
                        continue
                else:
                    await batch.end(item, stage.result)
                    if isinstance(stage, Waiting):  # it has no result message yet
                        waiting = waiting or []
                        waiting.append(stage.request)
                        continue
                results.append(await batch.publish(item))
        else:
            ready: list[tuple[PipelineCall, Prepared]] = []
            published = items
            for item in items:
                await batch.start(item)
                stage = await prepare(item)
                if isinstance(stage, Prepared):
                    ready.append((item, stage))
                else:
                    await batch.end(item, stage.result)
                    if isinstance(stage, Waiting):  # it has no result message yet
                        waiting = waiting or []
                        waiting.append(stage.request)
                        published = [i for i in published if i is not item]
            if before_execute is not None:
                for item, _ in ready:
                    await before_execute(item)
            if len(ready) == 1:
                await batch.run_one(*ready[0])
            elif ready:
                await _run_concurrently(batch, ready, inputs.config.max_parallel_tools)
            asked = [i for i in published if i.waiting is not None]  # asked for input
            if asked:
                waiting = waiting or []
                waiting += [i.waiting for i in asked if i.waiting is not None]
                published = [i for i in published if i.waiting is None]
            for item in published:
                results.append(await batch.publish(item))
    except BaseException as exc:
        # Cancelled from outside: the instrumentation still learns how each open call ended.
        for item in items:
            observer = item.observer
            if observer is not None:
                item.observer = None
                observer.end_tool(error_result(ABORTED_WHILE_RUNNING), True, exc)
        raise
    finally:
        batch.closed = True  # also when cancelled from outside: no pump may start any more
    return results, tuple(waiting) if waiting is not None else ()


async def _run_concurrently(
    batch: ToolBatch, ready: list[tuple[PipelineCall, Prepared]], limit: int | None
) -> None:
    """Run prepared calls as tasks of the run's task group and wait for all of them."""
    remaining = len(ready)
    all_done = anyio.Event()
    limiter = anyio.CapacityLimiter(limit) if limit is not None and limit < len(ready) else None

    async def job(item: PipelineCall, prepared: Prepared) -> None:
        nonlocal remaining
        try:
            if limiter is None:
                await batch.run_one(item, prepared)
            else:
                async with limiter:
                    await batch.run_one(item, prepared)
        finally:
            remaining -= 1
            if remaining == 0:
                all_done.set()

    for item, prepared in ready:
        batch.run.group.start_soon(job, item, prepared)
    await all_done.wait()


async def fail_truncated(
    run: ToolRun, message: AssistantMessage, calls: list[ToolCall]
) -> list[ToolResultMessage]:
    """Give every call of a `length`-truncated answer an error result without running it."""
    batch = ToolBatch(run=run, inputs=run.inputs, message=message)

    async def truncated(item: PipelineCall) -> CallStage:
        return Immediate(error_result(TRUNCATED))

    items = [PipelineCall(call=c) for c in calls]
    results, _ = await run_calls(batch, items, truncated, sequential=True)
    return results
