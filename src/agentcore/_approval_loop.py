"""Carrying out approval decisions: the first turn of a run whose transcript ends in decided
`ApprovalRequest`s (see `agentcore.approvals`).

That turn has no model answer of its own: it finishes the batch that stopped for approval. The
turn is already open (`agent_start`, `turn_start`); then, for each decided call without a result,
in call order: `tool_execution_start`, then
- denied: an error result with the decision's reason;
- approved, but an `ApprovedCallStarted` marker and no result (the process stopped while it ran):
  an error result saying it may or may not have completed — it is never run again;
- approved: the usual pipeline from `prepare_arguments` on, on the decision's edited arguments if
  it has some (validated again); `before_tool_call` is called again (a block still wins; a request
  for approval is ignored: the call is approved); right before `execute`, an
  `ApprovedCallStarted` message joins the transcript (an Agent stores it before going on), so a
  kill at any point can never make the call run twice; the result of a call run on edited
  arguments starts with a text block giving them (the model knows only the ones it sent);
then `tool_execution_end` and the `tool_result` message (in parallel mode: markers for every
prepared call, the calls run concurrently, results in call order). The turn ends with
`turn_end(the batch's assistant message, these results)`; `prepare_next_turn` and
`should_stop_after_turn` are called as after any turn. A prompt run defers its prompts to the next
turn, so they follow the results; a continue run goes on like after any batch.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ._approval_tail import Batch, CallState, denied_text, last_batch
from ._tool_execution import ABORTED_WHILE_RUNNING, _Batch, _Call, _error, _run_concurrently
from .approvals import INTERRUPTED_APPROVED_CALL, ApprovedCallStarted
from .messages import AgentMessage, TextContent, ToolResultMessage
from .tools import ToolExecutionMode

if TYPE_CHECKING:
    from ._loop import _Run

__all__ = ["decided", "resolve"]


def decided(messages: Sequence[AgentMessage]) -> Batch | None:
    """The last batch, if it has decided calls still without a result."""
    batch = last_batch(messages)
    return batch if batch is not None and batch.decided else None


async def _prepare(batch: _Batch, item: _Call, state: CallState) -> bool:
    decision = state.decision
    assert decision is not None
    if not decision.approved:
        batch.settle(item, _error(denied_text(decision)), True)
        return False
    if state.started:
        batch.settle(item, _error(INTERRUPTED_APPROVED_CALL), True)
        return False
    return await batch.prepare(item)


class _DecidedBatch(_Batch):
    """A batch of decided calls: the result of a call approved with edited arguments starts by
    saying so (the model only knows the arguments it sent), from its `tool_execution_end` on."""

    async def end(self, item: _Call) -> None:
        if item.edited and item.result is not None:
            note = f"Approved with edited arguments: {json.dumps(item.call.arguments)}"
            content = [TextContent(text=note), *item.result.content]
            item.result = replace(item.result, content=content)
        await super().end(item)


async def _started(run: _Run, item: _Call) -> None:
    await run.add_message(ApprovedCallStarted(tool_call_id=item.call.id))


async def resolve(run: _Run, stopped: Batch) -> bool:
    """Carry out the decisions of `stopped` in the run's open first turn, up to its `turn_end`
    and the hooks after it. Returns whether the model should be asked next."""
    batch = _DecidedBatch(run=run, message=stopped.message)
    states = stopped.decided
    items = []
    for state in states:
        call = state.call
        decision = state.decision
        if decision is not None and decision.approved and decision.arguments is not None:
            call = replace(call, arguments=decision.arguments)
        items.append(_Call(call=call, approved=True, edited=call is not state.call))
    sequential = run.config.tool_execution is ToolExecutionMode.SEQUENTIAL or any(
        (t := run.tools_by_name.get(i.call.name)) is not None
        and t.execution_mode is ToolExecutionMode.SEQUENTIAL
        for i in items
    )
    results: list[ToolResultMessage] = []
    try:
        if sequential:
            for item, state in zip(items, states, strict=True):
                await batch.start(item)
                if await _prepare(batch, item, state):
                    await _started(run, item)
                    await batch.execute(item)
                await batch.end(item)
                results.append(await batch.publish(item))
        else:
            prepared: list[_Call] = []
            for item, state in zip(items, states, strict=True):
                await batch.start(item)
                if await _prepare(batch, item, state):
                    prepared.append(item)
                else:
                    await batch.end(item)
            for item in prepared:
                await _started(run, item)
            if len(prepared) == 1:
                await batch.run_one(prepared[0])
            elif prepared:
                await _run_concurrently(batch, prepared, run.config.max_parallel_tools)
            for item in items:
                results.append(await batch.publish(item))
    except BaseException as exc:
        for item in items:  # cancelled from outside: the instrumentation learns how calls ended
            observer = item.observer
            if observer is not None:
                item.observer = None
                observer.end_tool(_error(ABORTED_WHILE_RUNNING), True, exc)
        raise
    finally:
        batch.closed = True
    terminate = all(i.result is not None and i.result.terminate for i in items)
    await run.turn_end(stopped.message, results)
    run.emitter.check()
    if run.signal.aborted:
        return False
    if await run.turn_hooks_stop(stopped.message, results):
        return False
    return not terminate
