"""The bottom of the engine: a run's read-only inputs (`RunInputs`), what each step sees of the
run's state, and a tool call's state on its way through a batch.

The loop's run (`loop.LoopRun`) holds the inputs (`run.inputs`, fixed when it starts) apart from
its mutable state (transcript, model, thinking level, tools, phase) and provides every protocol
here; each step reaches only what its protocol names: tool execution, the approval gate and
carrying out approval decisions (`ToolRun`), compaction (`CompactionRun`, read-only). Compaction,
typed answers, approvals and bounds return values (`compaction.Compacted`, `outcome.Stopped`,
the requests of waiting calls, `LimitReached`) that the loop keeps: none writes a field of the run
or calls back into it. Nothing here imports a step, so the steps import each other and the loop
without a circle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

if TYPE_CHECKING:
    import anyio
    from anyio.abc import TaskGroup

    from ..abort import AbortSignal
    from ..approvals import ApprovalRequest
    from ..config import AgentContext, AgentLoopConfig
    from ..llm.model import Model
    from ..llm.registry import StreamFn
    from ..llm.types import ThinkingLevel, Tool
    from ..messages import AgentMessage, ToolCall
    from ..tools import AgentTool, AgentToolResult
    from .emit import Emitter
    from .guardrail_checks import RunGuards
    from .hooks import Hooks
    from .instrumentation import RunObserver, ToolObserver

__all__ = [
    "CallStage",
    "CompactionRun",
    "Immediate",
    "PipelineCall",
    "Prepared",
    "RunInputs",
    "ToolRun",
    "Waiting",
]


class ToolRun(Protocol):
    """The run as a tool batch sees it: its inputs and tools (read-only: a batch changes the run
    only through `add_message` and the events it sends)."""

    @property
    def inputs(self) -> RunInputs:
        """The run's inputs: config, hooks, signals, emitter, observer."""
        ...

    @property
    def tools_by_name(self) -> dict[str, AgentTool]:
        """The tools the model may call, by name."""
        ...

    @property
    def group(self) -> TaskGroup:
        """The run's task group: parallel calls and the update pump."""
        ...

    def context(self) -> AgentContext:
        """A copy of the run's context, for the hooks."""
        ...

    async def add_message(self, message: AgentMessage) -> None:
        """A complete message joins the transcript, with its start and end events."""
        ...


class CompactionRun(Protocol):
    """The run's state as compaction reads it (read-only: compaction returns a `Compacted`
    value, and the loop keeps its marker and its failure)."""

    @property
    def model(self) -> Model:
        """The model of the next request."""
        ...

    @property
    def reasoning(self) -> ThinkingLevel:
        """The thinking level of the next request."""
        ...

    @property
    def system_prompt(self) -> str:
        """The run's system prompt."""
        ...

    @property
    def messages(self) -> Sequence[AgentMessage]:
        """The run's transcript."""
        ...

    @property
    def llm_tools(self) -> Sequence[Tool]:
        """The tools as the model sees them."""
        ...

    @property
    def compaction_failed(self) -> bool:
        """A threshold compaction failed in this run: only an overflow compacts again."""
        ...


@dataclass(frozen=True, slots=True, eq=False)
class RunInputs:
    """What a run reads and never changes: fixed when the run starts. A stage that needs the
    run reads these (and the run's state through its protocol) and returns a value; none writes
    a field of the run.

    The bounds (`config.max_turns`, `config.usage_limits`) and the typed answer
    (`config.output_type`) are read from the config; their counts are the run's state
    (`bounds.Bounds`, `typed_answer.TypedRun`).
    """

    config: AgentLoopConfig
    hooks: Hooks  # the config's hooks, normalised when it was built
    stream_fn: StreamFn  # fallbacks included
    signal: AbortSignal  # never fires when nothing can abort the run
    abort_signal: AbortSignal | None  # the caller's; None: nothing can abort, no scopes needed
    emitter: Emitter  # where the run's events go (the sink, its lock and its failure)
    plain_transcript: bool  # requests take the transcript as it is (no hook, no policy)
    observer: RunObserver | None = None  # the instrumentation's, when one is installed
    guards: RunGuards | None = None  # the config's guardrails; None: it has none


@dataclass(slots=True)
class Prepared:
    """A call's stage after preparation: ready to execute, with its tool and validated
    arguments. (Never changed; not frozen because one is made for every call, and a frozen
    dataclass is slower to build.)"""

    tool: AgentTool
    args: Any


@dataclass(frozen=True, slots=True)
class Immediate:
    """A call's stage after preparation: it ends here, with this result (invalid arguments,
    an unknown tool, a block, the abort, a decision that denied it)."""

    result: AgentToolResult


@dataclass(frozen=True, slots=True)
class Waiting:
    """A call's stage after preparation: it waits for approval. `request` joins the transcript
    after the batch; `result` is what its `tool_execution_end` says (not a tool result)."""

    request: ApprovalRequest
    result: AgentToolResult


CallStage: TypeAlias = "Prepared | Immediate | Waiting"
"""What preparing a call returns (`ToolBatch.prepare`): the one place a call's next step is
decided."""


@dataclass(slots=True, eq=False)
class PipelineCall:
    """One tool call on its way through a batch's pipeline: the call and what its execution
    shares with the update pump and a worker thread (its stage is a value, `CallStage`)."""

    call: ToolCall
    result: AgentToolResult | None = None  # its outcome, from its `tool_execution_end` on
    finished: bool = False
    pending_updates: int = 0
    drained: anyio.Event | None = None
    abandoned: bool = False  # a sync tool whose worker thread was given up (timeout)
    observer: ToolObserver | None = None  # the instrumentation's, when one is installed
    error: BaseException | None = None  # what the tool raised, for the instrumentation
    started: float = 0.0  # perf_counter at the start, when logging at DEBUG
    waiting: ApprovalRequest | None = None  # the tool asked for input while it ran (InputRequired)
