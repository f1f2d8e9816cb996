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
keeps it and publishes it), and one driver (`run_calls`, here) takes a batch through them, also
the batch of approval decisions (`decided_calls`). The stages are `tool_batch.ToolBatch`'s; the
texts of the engine's results and the checks of a tool's value are in `tool_outcomes`. The run is
reached only through `run_types.ToolRun`.

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

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import anyio

from ..messages import AssistantMessage, ToolCall, ToolResultMessage
from ..tools import ToolExecutionMode
from .run_types import CallStage, Immediate, PipelineCall, Prepared, Waiting
from .tool_batch import ToolBatch
from .tool_outcomes import ABORTED_WHILE_RUNNING, TRUNCATED, error_result

if TYPE_CHECKING:
    from ..approvals import ApprovalRequest
    from .run_types import ToolRun

__all__ = ["execute_batch", "fail_truncated", "run_calls"]


async def execute_batch(
    run: ToolRun, message: AssistantMessage, calls: list[ToolCall]
) -> tuple[list[ToolResultMessage], bool, tuple[ApprovalRequest, ...]]:
    """Run the tool calls of one answer; returns the result messages, the terminate flag and
    the requests of the calls waiting for approval (in call order)."""
    batch = ToolBatch(run=run, inputs=run.inputs, services=run.services, message=message)
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
            (t := run.transcript.tools_by_name.get(i.call.name)) is not None
            and t.execution_mode is ToolExecutionMode.SEQUENTIAL
            for i in items
        )
    results: list[ToolResultMessage] = []
    waiting: list[ApprovalRequest] | None = None
    # The batch a tool that calls tools (code mode) reaches through `tool_pipeline()`: the
    # run is registered once per run (`LoopRun.run_events`), the pipeline made on first use.
    previous, run.batch = run.batch, batch
    try:
        if sequential:
            for item in items:
                await batch.start(item)
                stage = await prepare(item)
                if isinstance(stage, Prepared):
                    if before_execute is not None:
                        await before_execute(item)
                    asked = await batch.run_one(item, stage)
                    if asked is not None:  # it asked for input: no result message yet
                        waiting = waiting or []
                        waiting += asked.requests
                        continue
                else:
                    await batch.end(item, stage.result)
                    if isinstance(stage, Waiting):  # it has no result message yet
                        waiting = waiting or []
                        waiting += stage.requests
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
                        waiting += stage.requests
                        published = [i for i in published if i is not item]
            if before_execute is not None:
                for item, _ in ready:
                    await before_execute(item)
            asking: dict[PipelineCall, Waiting] | None = None  # the calls that asked for input
            if len(ready) == 1:
                item, prepared = ready[0]
                if (asked := await batch.run_one(item, prepared)) is not None:
                    asking = {item: asked}
            elif ready:
                asking = await _run_concurrently(batch, ready, inputs.config.max_parallel_tools)
            if asking:
                waiting = waiting or []
                waiting += [r for i in published if i in asking for r in asking[i].requests]
                published = [i for i in published if i not in asking]
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
        run.batch = previous
        batch.closed = True  # also when cancelled from outside: no pump may start any more
    return results, tuple(waiting) if waiting is not None else ()


async def _run_concurrently(
    batch: ToolBatch, ready: list[tuple[PipelineCall, Prepared]], limit: int | None
) -> dict[PipelineCall, Waiting] | None:
    """Run prepared calls as tasks of the run's task group and wait for all of them; the
    calls that asked for input, with their `Waiting`."""
    asking: dict[PipelineCall, Waiting] | None = None
    remaining = len(ready)
    all_done = anyio.Event()
    limiter = anyio.CapacityLimiter(limit) if limit is not None and limit < len(ready) else None

    async def job(item: PipelineCall, prepared: Prepared) -> None:
        nonlocal remaining, asking
        try:
            if limiter is None:
                asked = await batch.run_one(item, prepared)
            else:
                async with limiter:
                    asked = await batch.run_one(item, prepared)
            if asked is not None:
                asking = asking or {}
                asking[item] = asked
        finally:
            remaining -= 1
            if remaining == 0:
                all_done.set()

    for item, prepared in ready:
        batch.run.group.start_soon(job, item, prepared)
    await all_done.wait()
    return asking


async def fail_truncated(
    run: ToolRun, message: AssistantMessage, calls: list[ToolCall]
) -> list[ToolResultMessage]:
    """Give every call of a `length`-truncated answer an error result without running it."""
    batch = ToolBatch(run=run, inputs=run.inputs, services=run.services, message=message)

    async def truncated(item: PipelineCall) -> CallStage:
        return Immediate(error_result(TRUNCATED))

    items = [PipelineCall(call=c) for c in calls]
    results, _ = await run_calls(batch, items, truncated, sequential=True)
    return results
