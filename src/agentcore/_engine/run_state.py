"""A run's state (`RunState`): what its turns change, apart from its read-only inputs, and the
events that go with a change (a turn's start and end, a message joining the transcript).

`loop.LoopRun` is this state with the request of a turn (`turn_request.TurnRequests`) and the
turns themselves on top; the stages a run goes through see it only through the protocols of
`run_types` and return values the loop keeps. The failure path reads `phase` to know which
events it must close.
"""

from __future__ import annotations

import enum
from typing import Any

from anyio.abc import TaskGroup

from ..abort import AbortSignal
from ..abort._no_signal import NEVER_ABORTED
from ..config import AgentContext, AgentLoopConfig, NextTurn, default_convert_to_llm
from ..errors import ConfigError
from ..events import (
    AgentEventSink,
    MessageEndEvent,
    MessageStartEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from ..llm.events import AssistantMessageEvent
from ..llm.registry import StreamFn
from ..llm.types import THINKING_LEVELS, SimpleStreamOptions
from ..messages import AgentMessage, AssistantMessage, ToolResultMessage
from .bounds import Bounds
from .emit import Emitter
from .event_stream import RunEnding
from .guardrail_checks import RunGuards
from .hooks import config_hooks
from .outcome import Done, Stopped
from .request import LlmTranscript, run_stream_fn
from .run_types import RunInputs
from .typed_answer import TypedRun

__all__ = ["Phase", "RunState"]


class Phase(enum.Enum):
    """Where the run is, for its failure path: which events it must close."""

    BETWEEN_TURNS = "between_turns"  # no turn is open
    IN_TURN = "in_turn"  # a turn is open, no answer is streaming
    STREAMING = "streaming"  # an answer is streaming (failed: `partial_event` is its latest)


class RunState:
    """The inputs and state of one run, and the events that change the state."""

    def __init__(
        self,
        context: AgentContext,
        config: AgentLoopConfig,
        emit: AgentEventSink,
        signal: AbortSignal | None,
        stream_fn: StreamFn | None,
        *,
        sync_sink: bool | None = None,
    ) -> None:
        hooks = config_hooks(config)  # normalised when the config was built
        guards = RunGuards.of(config, signal)  # None: no guardrails, nothing of them runs
        run_fn = run_stream_fn(config, stream_fn)
        if guards is not None and guards.output_alongside:
            run_fn = guards.watched(run_fn)  # streamed text shown to the output guardrails
        self.inputs = RunInputs(
            config=config,
            hooks=hooks,
            stream_fn=run_fn,
            signal=signal if signal is not None else NEVER_ABORTED,  # (shared: never fires)
            abort_signal=signal,
            emitter=Emitter(emit, sync=sync_sink),
            plain_transcript=(
                config.compaction is None
                and hooks.transform_context is None
                and config.convert_to_llm is default_convert_to_llm
            ),
            guards=guards,
        )
        # -- the run's state: what its turns change
        self.system_prompt = context.system_prompt
        self.messages: list[AgentMessage] = list(context.messages)
        self.tools = list(context.tools)
        self.tools_by_name = {t.name: t for t in self.tools}
        self.llm_tools = [t.llm_tool for t in self.tools]
        self.transcript = LlmTranscript()  # the default conversion, kept as the run goes
        self.model = config.model
        self.reasoning = config.reasoning
        self.new_messages: list[AgentMessage] = []
        self.phase = Phase.BETWEEN_TURNS
        # the latest event of an answer whose request failed while it streamed (`fail` keeps it)
        self.partial_event: AssistantMessageEvent | None = None
        self.group: TaskGroup = None  # type: ignore[assignment]  # set by run()
        self._options: SimpleStreamOptions | None = None
        self.bounds = Bounds.of(config)  # None: no bound set, nothing to count
        self.typed = TypedRun.of(config)  # None: a plain-text run (see `typed_answer`)
        self.compaction_failed = False  # then only an overflow compacts again (see `compaction`)
        self.end: Done | Stopped | None = None  # how the run ended (set once, at its end)
        self.ending: RunEnding | None = None  # agent_loop's: what its stream reports at the end

    # -- emitting --------------------------------------------------------------------------

    async def turn_start(self) -> None:
        self.phase = Phase.IN_TURN
        if (pending := self.inputs.emitter.send(TurnStartEvent())) is not None:
            await pending

    async def turn_end(self, message: AssistantMessage, results: list[ToolResultMessage]) -> None:
        self.phase = Phase.BETWEEN_TURNS
        if (
            pending := self.inputs.emitter.send(TurnEndEvent(message=message, tool_results=results))
        ) is not None:
            await pending

    async def add_message(self, message: AgentMessage) -> None:
        """A complete message joins the transcript, with its start and end events."""
        if (pending := self.inputs.emitter.send(MessageStartEvent(message=message))) is not None:
            await pending
        self.messages.append(message)
        self.new_messages.append(message)
        if (pending := self.inputs.emitter.send(MessageEndEvent(message=message))) is not None:
            await pending

    def context(self) -> AgentContext:
        return AgentContext(
            system_prompt=self.system_prompt, messages=list(self.messages), tools=self.tools
        )

    # -- a turn's changes ------------------------------------------------------------------

    def apply(self, turn: Any) -> None:
        if turn is None:
            return
        if not isinstance(turn, NextTurn):
            raise ConfigError(
                f"prepare_next_turn returned {type(turn).__name__}; expected NextTurn or None"
            )
        if turn.context is not None:
            self.system_prompt = turn.context.system_prompt
            self.messages = list(turn.context.messages)
            self.tools = list(turn.context.tools)
            self.tools_by_name = {t.name: t for t in self.tools}
            self.llm_tools = [t.llm_tool for t in self.tools]
        if turn.model is not None:
            self.model = turn.model
            self._options = None
        if turn.thinking_level is not None:
            if turn.thinking_level not in THINKING_LEVELS:
                raise ConfigError(
                    f"prepare_next_turn returned thinking_level={turn.thinking_level!r}; "
                    f"expected one of {THINKING_LEVELS}"
                )
            self.reasoning = turn.thinking_level
            self._options = None
