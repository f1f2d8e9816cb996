"""The bottom of the engine: what each step of a run sees of the run, and a tool call's state
on its way through a batch.

The loop's run (`loop.LoopRun`) provides every protocol here; each step reaches only what its
protocol names: tool execution and the approval gate (`ToolRun`), carrying out approval decisions
(`DecidedCallsRun`), compaction (`CompactionRun`). Nothing
here imports a step, so the steps import each other and the loop without a circle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import anyio
    from anyio.abc import TaskGroup

    from ..abort import AbortSignal
    from ..approvals import ApprovalRequest
    from ..config import AgentContext, AgentLoopConfig
    from ..llm.model import Model
    from ..llm.registry import StreamFn
    from ..llm.types import SimpleStreamOptions, Tool
    from ..messages import AgentMessage, AssistantMessage, ToolCall, ToolResultMessage
    from ..tools import AgentTool, AgentToolResult
    from .emit import Emitter
    from .hooks import Hooks
    from .instrumentation import RunObserver, ToolObserver
    from .outcome import Stopped

__all__ = ["CompactionRun", "DecidedCallsRun", "PipelineCall", "ToolRun"]


class ToolRun(Protocol):
    """The run as a tool batch sees it (read-only: a batch changes the run only through
    `add_message` and the events it sends)."""

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
    def emitter(self) -> Emitter:
        """Where events go: `send` (await what it returns, if anything) or `emit`."""
        ...

    def context(self) -> AgentContext:
        """A copy of the run's context, for the hooks."""
        ...

    async def add_message(self, message: AgentMessage) -> None:
        """A complete message joins the transcript, with its start and end events."""
        ...


class DecidedCallsRun(ToolRun, Protocol):
    """The run as the first turn that carries out approval decisions sees it: a tool batch's
    view, plus closing the turn."""

    async def turn_end(self, message: AssistantMessage, results: list[ToolResultMessage]) -> None:
        """Close the open turn with `turn_end(message, results)`."""
        ...

    async def turn_hooks(
        self, message: AssistantMessage, results: list[ToolResultMessage]
    ) -> Stopped | None:
        """Run the hooks after a turn; a `Stopped` when the run ends here."""
        ...


class CompactionRun(Protocol):
    """The run as compaction sees it (it reads the transcript and adds a marker message)."""

    @property
    def config(self) -> AgentLoopConfig:
        """The run's config: `compaction`, `convert_to_llm`, `get_api_key`, `api_key`."""
        ...

    @property
    def hooks(self) -> Hooks:
        """The normalised hooks: `transform_context`."""
        ...

    @property
    def signal(self) -> AbortSignal:
        """The run's signal (never fires when nothing can abort the run)."""
        ...

    @property
    def model(self) -> Model:
        """The model of the next request."""
        ...

    @property
    def system_prompt(self) -> str:
        """The run's system prompt."""
        ...

    @property
    def messages(self) -> list[AgentMessage]:
        """The run's transcript."""
        ...

    @property
    def llm_tools(self) -> Sequence[Tool]:
        """The tools as the model sees them."""
        ...

    @property
    def stream_fn(self) -> StreamFn:
        """The run's stream function (fallbacks included)."""
        ...

    compaction_failed: bool
    """Set when a threshold compaction failed: then only an overflow compacts again."""

    def options(self) -> SimpleStreamOptions:
        """The options of the run's requests."""
        ...

    async def add_message(self, message: AgentMessage) -> None:
        """A complete message joins the transcript, with its start and end events."""
        ...


@dataclass(slots=True, eq=False)
class PipelineCall:
    """One tool call on its way through a batch's pipeline."""

    call: ToolCall
    tool: AgentTool | None = None
    args: Any = None
    result: AgentToolResult | None = None  # its outcome, from its `tool_execution_end` on
    finished: bool = False
    pending_updates: int = 0
    drained: anyio.Event | None = None
    abandoned: bool = False  # a sync tool whose worker thread was given up (timeout)
    observer: ToolObserver | None = None  # the instrumentation's, when one is installed
    error: BaseException | None = None  # what the tool raised, for the instrumentation
    started: float = 0.0  # perf_counter at the start, when logging at DEBUG
    approved: bool = False  # an approved call: not checked for approval again
    edited: bool = False  # approved with edited arguments
    approval: ApprovalRequest | None = None  # waiting for approval (see `approval_gate`)
