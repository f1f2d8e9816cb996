"""Carrying out approval decisions: the first turn of a run whose transcript ends in decided
`ApprovalRequest`s (see `agentcore.approvals`).

That turn has no model answer of its own: it finishes the batch that stopped for approval. The
turn is already open (`agent_start`, `turn_start`); then, for each decided call without a result,
in call order: `tool_execution_start`, then
- denied: an error result with the decision's reason (an input request, see `input_wait`, is run
  again whatever the decision: the tool is given the answer, a decline or a cancel);
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

A call whose tool suspended because calls it made waited (`SuspendedCall`, code mode) is run
once more when all of them are decided, whatever the decisions (with its marker first, as an
approved call): the tool reads where it stopped (`ToolPipeline.suspended_state`) and carries on
each decided call itself (`ToolPipeline.call(..., call_id=...)`, see `nested_calls`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from .._approvals.inputs import answers_of, current_answers
from .._approvals.transcript import ApprovalBatch, CallState, denied_text, last_batch
from ..approvals import INTERRUPTED_APPROVED_CALL, ApprovalRequest, ApprovedCallStarted
from ..messages import AgentMessage, TextContent, ToolResultMessage
from .run_types import CallStage, Executed, Immediate, PipelineCall, ToolRun, Waiting
from .tool_batch import ToolBatch
from .tool_execution import run_calls
from .tool_outcomes import error_result

__all__ = ["decided", "resolve"]


def decided(messages: Sequence[AgentMessage]) -> ApprovalBatch | None:
    """The last batch, if it has decided calls still without a result."""
    batch = last_batch(messages)
    return batch if batch is not None and batch.decided else None


async def _prepare(batch: ToolBatch, item: PipelineCall, state: CallState) -> CallStage:
    """A decided call: denied, or interrupted after it started (its result says so), else
    prepared as any call is (minus the approval check). A suspended tool's call (its calls
    were decided) runs again whatever the decisions: it carries them out itself."""
    decision = state.decision
    assert decision is not None
    nested = state.request.parent_tool_call_id is not None  # (its tool goes on: `carried`)
    if not decision.approved and state.request.input_schema is None and not nested:
        return Immediate(error_result(denied_text(decision)))
    if state.started:
        return Immediate(error_result(INTERRUPTED_APPROVED_CALL))
    return await batch.prepare(item)


@dataclass(slots=True, eq=False)
class DecidedBatch(ToolBatch):
    """A batch of decided calls: approved (none is checked for approval again), and the result
    of a call approved with edited arguments starts by saying so (the model only knows the
    arguments it sent), from its `tool_execution_end` on."""

    edited: frozenset[PipelineCall] = frozenset()

    async def end(self, item: PipelineCall, outcome: Executed) -> Waiting | None:
        if item in self.edited:
            note = [
                TextContent(
                    text=f"Approved with edited arguments: {json.dumps(item.call.arguments)}"
                )
            ]
            if isinstance(outcome, Waiting):
                result = outcome.result
                outcome = replace(outcome, result=replace(result, content=[*note, *result.content]))
            else:
                outcome = replace(outcome, content=[*note, *outcome.content])
        return await ToolBatch.end(self, item, outcome)  # (no bare super() in a slots dataclass)


async def resolve(
    run: ToolRun, stopped: ApprovalBatch
) -> tuple[list[ToolResultMessage], bool, tuple[ApprovalRequest, ...]]:
    """Carry out the decisions of `stopped` in the run's open first turn: the result messages,
    whether the calls terminate (the loop then closes the turn as after any batch), and the
    requests of calls that, run again, asked for more input (the run then stops again)."""
    states: list[CallState] = []
    carried: dict[str, CallState] = {}  # the decided calls of suspended tools, by their ids
    for state in stopped.decided:
        if state.request.parent_tool_call_id is None:
            states.append(state)
            continue
        carried[state.request.tool_call_id] = state
        if not any(s.call is state.call for s in states):  # one run of the suspended call
            states.append(state)
    items = []
    edited = []
    for state in states:
        call = state.call
        decision = state.decision
        if (
            decision is not None
            and decision.approved
            and decision.arguments is not None
            and state.request.input_schema is None  # (an input request's arguments: the answer)
            and state.request.parent_tool_call_id is None  # (a nested call's: its own)
        ):
            call = replace(call, arguments=decision.arguments)
        items.append(item := PipelineCall(call=call))
        if call is not state.call:
            edited.append(item)
    batch = DecidedBatch(
        run=run,
        inputs=run.inputs,
        services=run.services,
        message=stopped.message,
        approved=True,
        carried=carried or None,
        suspended={s.tool_call_id: s for s in stopped.suspended.values()} or None,
        edited=frozenset(edited),
    )
    state_of = dict(zip(items, states, strict=True))

    async def prepare(item: PipelineCall) -> CallStage:
        return await _prepare(batch, item, state_of[item])

    async def started(item: PipelineCall) -> None:  # the marker: the approved call is about to run
        await run.transcript.join(ApprovedCallStarted(tool_call_id=item.call.id))

    token = current_answers.set(answers_of(run.transcript.messages))  # (input requests)
    try:
        results, waiting = await run_calls(batch, items, prepare, started)
    finally:
        current_answers.reset(token)
    terminate = all(i.result is not None and i.result.terminate for i in items)
    return results, terminate, waiting
