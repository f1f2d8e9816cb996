"""The context variable that lets a tool reach the tool pipeline of the batch it runs in (code
mode's snippets call tools through it); `agentcore.tools.tool_pipeline` reads it.

The engine sets it once per run, to the run itself (a `Source`), not once per batch: a batch whose
tools never ask for the pipeline pays nothing for it. `Source.tool_pipeline()` builds the running
batch's pipeline on the first request and keeps it for the rest of that batch."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Protocol

__all__ = ["Source", "current"]


class Source(Protocol):
    """What the variable holds while a run is in progress: the run's handle."""

    def tool_pipeline(self) -> Any:
        """The running batch's `agentcore.tools.ToolPipeline`, or None between batches."""
        ...


current: ContextVar[Source | None] = ContextVar("agentcore_tool_pipeline", default=None)
"""The run in progress in this context (its `Source`), or None outside a run."""
