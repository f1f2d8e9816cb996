"""Calls a tool makes while it runs (a code snippet's calls, `agentcore.codemode`), taken through
the batch's own stages (`ToolBatch.start`, `prepare`, `execute`, `end`): the same validation, tool
guardrails, hooks, approval gate, timeout, abort, events and span as a direct call, with the
parent call's id on its events. One `NestedCalls` per batch is what `agentcore.tools.tool_pipeline`
returns while the batch runs, made on the first request (`pipeline_of`, reached through the
run registered once per run and its running batch, which `run_calls` sets).

A nested call has no result message of its own: its result goes back to the calling tool, whose
own result carries what the model sees (and the usage the nested results report). A nested call
that would wait for approval, or for input, ends with an error result saying so, unless the
calling tool can suspend (`can_wait=True`: code mode): then it raises `CallWaits` after its
`tool_execution_end`, and the tool suspends (`CallSuspended`, see `agentcore._approvals.suspend`).
When the batch carries out decisions (`decided_calls`), the tool runs again, reads where it
stopped (`suspended_state`) and carries on its decided calls (`call(..., call_id=...)`): a denied
one ends with the denial as its error, an approved one runs (no approval check again), an
answered input request runs again with the answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .._approvals.suspend import CallWaits
from .._approvals.transcript import denied_text
from ..messages import ToolCall
from .run_types import Immediate, PipelineCall, Prepared, Waiting
from .tool_outcomes import error_result

if TYPE_CHECKING:
    from .._approvals.transcript import CallState
    from ..tools import AgentTool, AgentToolResult
    from .run_types import CallStage
    from .tool_batch import ToolBatch

__all__ = ["NOT_DECIDED", "NestedCalls", "WAITS_FOR_APPROVAL", "pipeline_of"]

WAITS_FOR_APPROVAL = (
    "Tool {name} needs a decision (approval or input) before it runs, and a call from code "
    "cannot wait for one: call {name} directly instead."
)

NOT_DECIDED = (
    "Tool call {id} of {name} is not a decided call of {parent} waiting to go on: it was not run."
)


@dataclass(slots=True, eq=False)
class NestedCalls:
    """The pipeline of one batch, for the calls its tools make (`agentcore.tools.ToolPipeline`)."""

    batch: ToolBatch
    counts: dict[str, int] = field(default_factory=dict)  # parent call id -> its calls so far

    @property
    def scope(self) -> object:
        """The run: per-run state is keyed by it."""
        return self.batch.run

    def suspended_state(self, tool_call_id: str) -> dict[str, Any] | None:
        """The state call `tool_call_id` kept when it suspended (`CallSuspended`), while it
        runs again after the calls it waited for were decided; else None."""
        suspended = self.batch.suspended
        kept = suspended.get(tool_call_id) if suspended is not None else None
        return dict(kept.state) if kept is not None else None

    async def call(
        self,
        tool: AgentTool,
        arguments: dict[str, Any],
        *,
        parent_tool_call_id: str,
        call_id: str | None = None,
        can_wait: bool = False,
    ) -> AgentToolResult:
        """One nested call through the batch's stages; its result (never raises but
        `CallWaits`, with `can_wait`). `call_id`: a call that waited for a decision, carried
        on now as decided."""
        batch = self.batch
        decided: CallState | None = None
        if call_id is None:
            # Numbered per parent (`<parent id>.1`, `.2`, ...): unique per parent call, and
            # the same whatever other snippets of the batch do at the same time; a call that
            # suspended goes on from the number it had reached.
            n = self.counts.get(parent_tool_call_id)
            if n is None:
                kept = batch.suspended.get(parent_tool_call_id) if batch.suspended else None
                n = kept.nested_calls if kept is not None else 0
            n = self.counts[parent_tool_call_id] = n + 1
            call_id = f"{parent_tool_call_id}.{n}"
            carried = False
        else:
            carried = True
            decided = (batch.carried or {}).get(call_id)
            if decided is not None and (
                decided.request.parent_tool_call_id != parent_tool_call_id
                or decided.decision is None
            ):
                decided = None
            if decided is not None:
                decision = decided.decision
                assert decision is not None
                if (
                    decision.approved
                    and decision.arguments is not None
                    and decided.request.input_schema is None  # (an input's: the answer)
                ):
                    arguments = decision.arguments
        call = ToolCall(id=call_id, name=tool.name, arguments=arguments)
        item = PipelineCall(call=call, parent=parent_tool_call_id)
        await batch.start(item)
        stage = await self._stage(item, tool, carried, decided)
        if isinstance(stage, Prepared):
            outcome = await batch.execute(item, stage)
        else:
            outcome = stage.result if not isinstance(stage, Waiting) else stage
        if isinstance(outcome, Waiting) and not can_wait:
            outcome = error_result(WAITS_FOR_APPROVAL.format(name=tool.name))
        waiting = await batch.end(item, outcome)
        if waiting is not None:  # (the request joins with the calling tool's suspension)
            raise CallWaits(replace(waiting.request, parent_tool_call_id=parent_tool_call_id))
        assert item.result is not None
        return item.result

    async def _stage(
        self, item: PipelineCall, tool: AgentTool, carried: bool, decided: CallState | None
    ) -> CallStage:
        """A new call's preparation, or a decided one's: denied (its error), approved or
        answered (prepared without the approval check), or not a decided call (an error)."""
        batch = self.batch
        if not carried:
            return await batch.prepare(item, tool)
        if decided is None:
            parent = item.parent or ""
            text = NOT_DECIDED.format(id=item.call.id, name=tool.name, parent=parent)
            return Immediate(error_result(text))
        decision = decided.decision
        assert decision is not None
        if not decision.approved and decided.request.input_schema is None:
            return Immediate(error_result(denied_text(decision)))
        return await batch.prepare(item, tool, decided=True)


def pipeline_of(batch: ToolBatch) -> NestedCalls:
    """The batch's pipeline for the calls its tools make (`agentcore.tools.tool_pipeline`), made
    on the first request and kept on the batch: a batch whose tools never ask pays nothing."""
    nested: NestedCalls | None = batch.nested
    if nested is None:
        nested = batch.nested = NestedCalls(batch)
    return nested
