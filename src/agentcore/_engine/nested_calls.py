"""Calls a tool makes while it runs (a code snippet's calls, `agentcore.codemode`), taken through
the batch's own stages (`ToolBatch.start`, `prepare`, `execute`, `end`): the same validation, tool
guardrails, hooks, approval gate, timeout, abort, events and span as a direct call, with the
parent call's id on its events. One `NestedCalls` per batch is what `agentcore.tools.tool_pipeline`
returns while the batch runs, made on the first request (`pipeline_of`, reached through the
run registered once per run and its running batch, which `run_calls` sets).

A nested call has no result message of its own: its result goes back to the calling tool, whose
own result carries what the model sees (and the usage the nested results report). A nested call
that would wait for approval, or for input, ends with an error result saying so: suspending the
calling tool mid-way is not supported yet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..messages import ToolCall
from .run_types import Prepared, Waiting
from .tool_outcomes import error_result

if TYPE_CHECKING:
    from ..tools import AgentTool, AgentToolResult
    from .tool_batch import ToolBatch

__all__ = ["NestedCalls", "WAITS_FOR_APPROVAL", "pipeline_of"]

WAITS_FOR_APPROVAL = (
    "Tool {name} needs a decision (approval or input) before it runs, and a call from code "
    "cannot wait for one: call {name} directly instead."
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

    async def call(
        self, tool: AgentTool, arguments: dict[str, Any], *, parent_tool_call_id: str
    ) -> AgentToolResult:
        """One nested call through the batch's stages; its result (never raises)."""
        from .run_types import PipelineCall

        # Numbered per parent (`<parent id>.1`, `.2`, ...): unique per parent call, and the
        # same whatever other snippets of the batch do at the same time.
        n = self.counts[parent_tool_call_id] = self.counts.get(parent_tool_call_id, 0) + 1
        call = ToolCall(id=f"{parent_tool_call_id}.{n}", name=tool.name, arguments=arguments)
        item = PipelineCall(call=call, parent=parent_tool_call_id)
        batch = self.batch
        await batch.start(item)
        stage = await batch.prepare(item, tool)
        if isinstance(stage, Prepared):
            outcome = await batch.execute(item, stage)
        else:
            outcome = stage.result if not isinstance(stage, Waiting) else stage
        if isinstance(outcome, Waiting):
            outcome = error_result(WAITS_FOR_APPROVAL.format(name=tool.name))
        await batch.end(item, outcome)
        assert item.result is not None
        return item.result


def pipeline_of(batch: ToolBatch) -> NestedCalls:
    """The batch's pipeline for the calls its tools make (`agentcore.tools.tool_pipeline`), made
    on the first request and kept on the batch: a batch whose tools never ask pays nothing."""
    nested: NestedCalls | None = batch.nested
    if nested is None:
        nested = batch.nested = NestedCalls(batch)
    return nested
