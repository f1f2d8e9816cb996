"""The bottom of the engine: a run's frozen inputs (`RunInputs`) and per-run services
(`RunServices`), what each step sees of the run, and a tool call's values on its way through a
batch (`Prepared`, `Immediate`, `Waiting`, `Executed`).

The driver (`loop.LoopRun`) holds the inputs (`run.inputs`, fixed when it starts), the services
(`run.services`: emitter, guardrails, observer) and the transcript (`run.transcript`, the one
writer of the messages) and provides every protocol here; each step reaches only what its
protocol names: tool execution, the approval gate and carrying out approval decisions
(`ToolRun`), compaction (`CompactionRun`, read-only). Compaction, typed outputs, approvals and
bounds return values (`compaction.Compacted`, the stop variants of `outcome`, the requests of
waiting calls, `LimitReached`) that the loop keeps: none writes a field of the run or calls back
into it. Nothing here imports a step, so the steps import each other and the loop without a
circle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

if TYPE_CHECKING:
    import anyio
    from anyio.abc import TaskGroup

    from ..abort import AbortSignal
    from ..approvals import ApprovalRequest, SuspendedCall
    from ..config import AgentLoopConfig
    from ..events import AgentEndEvent
    from ..llm.model import Model
    from ..llm.registry import StreamFn
    from ..llm.types import ThinkingLevel
    from ..messages import ToolCall
    from ..tools import AgentTool, AgentToolResult
    from .emit import Emitter
    from .guardrail_checks import RunGuards
    from .handoffs import RunHandoffs
    from .hooks import Hooks
    from .instrumentation import RunObserver, ToolObserver
    from .transcript import Transcript

__all__ = [
    "CallStage",
    "CompactionRun",
    "Executed",
    "Immediate",
    "PipelineCall",
    "Prepared",
    "RunInputs",
    "RunServices",
    "ToolRun",
    "Waiting",
]


class ToolRun(Protocol):
    """The run as a tool batch sees it: its inputs, its services and its transcript (a batch
    changes the run only by joining messages to the transcript and sending its events)."""

    @property
    def inputs(self) -> RunInputs:
        """The run's inputs: config, hooks, stream function, signals."""
        ...

    @property
    def services(self) -> RunServices:
        """The run's emitter, guardrails and observer."""
        ...

    @property
    def transcript(self) -> Transcript:
        """The run's transcript: its tools, its messages (joined with `join`)."""
        ...

    @property
    def group(self) -> TaskGroup:
        """The run's task group: parallel calls and the update pump."""
        ...

    batch: Any  # a `tool_batch.ToolBatch` or None (not imported here: the steps import this)
    """The batch running now (`tool_execution.run_calls` sets it), None between batches: the
    one whose pipeline `agentcore.tools.tool_pipeline` returns."""


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
    def transcript(self) -> Transcript:
        """The run's transcript (its system prompt, messages and tools)."""
        ...


@dataclass(frozen=True, slots=True, eq=False)
class RunInputs:
    """What a run reads and never changes: fixed when the run starts. A stage that needs the
    run reads these (and the run's state through its protocol) and returns a value; none writes
    a field of the run.

    The bounds (`config.max_turns`, `config.usage_limits`) and the typed output
    (`config.output_type`) are read from the config; their counts are the run's state
    (`bounds.Bounds`, `typed_output.TypedRun`). What a run changes while it goes (where its
    events go, what its guardrails are checking) is its `RunServices`.
    """

    config: AgentLoopConfig
    hooks: Hooks  # the config's hooks, normalised when it was built
    stream_fn: StreamFn  # fallbacks included
    signal: AbortSignal  # never fires when nothing can abort the run
    abort_signal: AbortSignal | None  # the caller's; None: nothing can abort, no scopes needed
    plain_transcript: bool  # requests take the transcript as it is (no hook, no policy)


@dataclass(slots=True, eq=False)
class RunServices:
    """What one run uses and that changes as it goes, apart from its frozen inputs: the emitter
    (the sink, its lock and its failure), the guardrails (what runs alongside a request), the
    instrumentation's observer (set once, before the first event), and where an `EventStream`
    learns the run's end (`on_end`, given the `agent_end` event before it is sent)."""

    emitter: Emitter
    guards: RunGuards | None = None  # the config's guardrails; None: it has none
    observer: RunObserver | None = None  # the instrumentation's, when one is installed
    on_end: Callable[[AgentEndEvent], None] | None = None
    handoffs: RunHandoffs | None = None  # the run's handoffs; None: it has none


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
    """A call that waits for a decision: for approval (after preparation), or for the input its
    tool asked for while it ran (after execution). `request` joins the transcript after the
    batch; `result` is what its `tool_execution_end` says (not a tool result). A call whose tool
    suspended (`CallSuspended`) waits for the requests of its nested calls (`requests`), and its
    `suspended` message joins the transcript at its end."""

    request: ApprovalRequest
    result: AgentToolResult
    more: tuple[ApprovalRequest, ...] = ()  # a suspended call's further nested requests
    suspended: SuspendedCall | None = None  # a suspended call's state (joins at its end)

    @property
    def requests(self) -> tuple[ApprovalRequest, ...]:
        """Every request the call waits for (more than one for a suspended call)."""
        return (self.request, *self.more)


CallStage: TypeAlias = "Prepared | Immediate | Waiting"
"""What preparing a call returns (`ToolBatch.prepare`): the one place a call's next step is
decided."""

Executed: TypeAlias = "AgentToolResult | Waiting"
"""What executing a prepared call returns (`ToolBatch.execute`): its result, or `Waiting` when
the tool asked for input while it ran (`input_wait`)."""


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
    parent: str | None = None  # the id of the call whose code made this one (code mode)
