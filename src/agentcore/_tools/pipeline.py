"""The context variable the engine sets while a batch of tool calls runs: the batch's pipeline,
for a tool that calls other tools (code mode); `agentcore.tools.tool_pipeline` reads it."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

__all__ = ["current"]

current: ContextVar[Any] = ContextVar("agentcore_tool_pipeline", default=None)
"""The running batch's `agentcore.tools.ToolPipeline`, or None outside a batch."""
