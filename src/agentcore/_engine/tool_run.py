"""What running a batch of tool calls needs from its run: the narrow interface between the loop
(`_loop._Run` provides it) and tool execution (`_tool_execution`, `_approval_check`), which reach
nothing else of the run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from ..abort import AbortSignal
    from ..config import AgentContext, AgentLoopConfig
    from ..messages import AgentMessage
    from ..tools import AgentTool
    from .emit import Emitter
    from .hooks import Hooks
    from .request import RunObserver

__all__ = ["ToolRun"]


class ToolRun(Protocol):
    """The run as a tool batch sees it (read-only: a batch changes the run only through
    `add_message`, the events it sends, and the requests it appends to `pending_approvals`)."""

    @property
    def config(self) -> AgentLoopConfig:
        """The run's config: `tool_execution`, `max_parallel_tools`, `tool_timeout`."""
        ...

    @property
    def hooks(self) -> Hooks:
        """The normalised hooks: `before_tool_call`, `after_tool_call`."""
        ...

    @property
    def signal(self) -> AbortSignal:
        """The run's signal (never fires when nothing can abort the run)."""
        ...

    @property
    def abort_signal(self) -> AbortSignal | None:
        """The caller's signal; None when nothing can abort the run (no scopes needed)."""
        ...

    @property
    def tools_by_name(self) -> dict[str, AgentTool]:
        """The tools the model may call, by name."""
        ...

    @property
    def observer(self) -> RunObserver | None:
        """The instrumentation's observer of the run, when one is installed."""
        ...

    @property
    def group(self) -> TaskGroup:
        """The run's task group: parallel calls and the update pump."""
        ...

    @property
    def pending_approvals(self) -> list[Any]:
        """Where calls waiting for approval leave their `ApprovalRequest`s."""
        ...

    @property
    def emitter(self) -> Emitter:
        """Where events go: `send` (await what it returns, if anything) or `emit`."""
        ...

    def context(self) -> AgentContext:
        """A copy of the run's context, for the hooks."""
        ...

    async def add_message(self, message: AgentMessage) -> None:
        """A complete message joins the transcript, with its start and end events."""
        ...
