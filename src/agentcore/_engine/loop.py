"""The agent loop: ask the model, run the tools it calls, feed the results back, repeat.

Data flows one way: model events come in through the stream function, agent events go out through
`emit`, which the loop awaits (so a slow consumer slows the run instead of piling up events).

A run is a sequence of turns. A turn is one model answer plus the tool calls it requested. The run
goes on while tool results need an answer or steering/follow-up messages are queued, and ends with
`agent_end` whatever happens:

- A hook, `convert_to_llm` or the stream function raising, or `emit` raising, ends the run with an
  assistant message of `stop_reason="error"` carrying the exception text (`"aborted"` if the run's
  signal fired), inside a turn of its own if the failure came between turns.
- An abort during streaming keeps the partial message (`stop_reason="aborted"`); during tools,
  every call still gets one result and the run ends after that turn's `turn_end`; queued steering
  and follow-up messages are not polled after an abort, so they are never lost. An abort seen
  before a request is sent answers it with an aborted message: no hook of the request
  (`transform_context`, `convert_to_llm`, `get_api_key`) nor the stream function is called after it.
- Bounds (`max_turns`, `usage_limits`; see `bounds`) are checked after each turn, once
  `turn_end`, `prepare_next_turn` and `should_stop_after_turn` are done and before the queues are
  polled: a run that has reached one ends there, with `agent_end.limit` naming it, also when the
  turn's tool results still wanted an answer (every call has its result, so the transcript stays
  valid) and without taking queued messages.
- A typed run (`output_type`) ends after the turn with its validated answer, or at the
  `output_retries` limit (`typed_output`). A batch with calls waiting for approval ends the run
  after its turn; a run on a transcript ending in decisions carries them out first.

A run keeps its read-only inputs (`run_types.RunInputs`: config, hooks, stream function, signal)
apart from its services (`RunServices`: emitter, guardrails, observer) and its transcript. Each
stage returns a value the loop keeps: a turn `NEXT | DONE` or a stop variant (`outcome`, the one
list of stop reasons, each with its typed data), a tool call `Prepared | Immediate | Waiting`
(`run_types`), a compaction `Compacted`, a guarded request `Settled`; `agent_end` is built from
the run's end by `outcome.agent_end`. Adding a loop option or a stop reason:
docs/contributing-engine.md.

`LoopRun` is the driver: it owns the run's frozen inputs (`RunInputs`), its per-run services
(`RunServices`: emitter, guardrails, observer), its transcript (`transcript.Transcript`, the one
writer of the messages, the phase and the message and turn events) and the settings of the next
request (model, thinking level, options), and takes each turn through the stages, keeping what
they return. A turn's request is `turn_request` (plain functions of the run).

Elsewhere (modules of this package): event delivery in `emit`; what goes around a request in
`request`; tool batches in `tool_execution`; approval decisions carried out in `decided_calls`;
compaction (built from the compacted transcript, compacted near the context window and once after
an overflow) in `compaction`; fallback models in `llm.fallback`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import anyio
from anyio.abc import TaskGroup

from .._tools import pipeline
from ..abort import AbortSignal
from ..abort._no_signal import NEVER_ABORTED
from ..config import (
    AgentContext,
    AgentLoopConfig,
    NextTurn,
    PrepareNextTurnContext,
    default_convert_to_llm,
)
from ..errors import ConfigError
from ..events import AgentEndEvent, AgentEventSink, AgentStartEvent, AgentSwitchEvent
from ..handoffs import HandoffTool
from ..llm.events import DoneEvent, ErrorEvent
from ..llm.registry import StreamFn
from ..llm.types import THINKING_LEVELS, Context, SimpleStreamOptions
from ..messages import AgentMessage, AssistantMessage, StopReason, ToolResultMessage
from . import decided_calls, instrumentation, tool_execution, turn_request
from .bounds import Bounds
from .checks import check_prompts
from .compaction import retry_after_overflow
from .emit import Emitter, SinkError, call_hook, error_text
from .guardrail_checks import RunGuards
from .handoffs import RunHandoffs, Setup
from .hooks import config_hooks
from .instrumentation import RunInfo, end_observing, start_observing
from .nested_calls import NestedCalls, pipeline_of
from .outcome import (
    DONE,
    NEXT,
    Aborted,
    AwaitingApprovals,
    Done,
    Failed,
    HookStopped,
    LimitHit,
    Next,
    RunEnd,
    Stopped,
    Tripped,
    TurnOutcome,
    agent_end,
)
from .request import run_stream_fn, stream_options
from .run_types import RunInputs, RunServices
from .skills import run_skill_tools
from .tool_batch import ToolBatch
from .transcript import Phase, Transcript
from .typed_output import TypedRun

__all__ = ["LoopRun"]

_GOES_ON = (Next, Done)
"""The outcomes of a turn after which the run goes on (any other is a stop)."""


class _FailedAfterStop(Exception):
    """The sink failed after a turn that decided the run stops (waiting for approvals): the run
    fails through its ordinary path, and `agent_end` still reports that stop's data."""

    def __init__(self, cause: BaseException, stopped: AwaitingApprovals) -> None:
        super().__init__(error_text(cause))
        self.cause = cause
        self.stopped = stopped


class LoopRun:
    """One run: its inputs, services and transcript, and its turns. `run()` never raises (outer
    cancellation aside)."""

    def __init__(
        self,
        context: AgentContext,
        config: AgentLoopConfig,
        emit: AgentEventSink,
        signal: AbortSignal | None,
        stream_fn: StreamFn | None,
        *,
        sync_sink: bool | None = None,
        on_end: Callable[[AgentEndEvent], None] | None = None,
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
            plain_transcript=(
                config.compaction is None
                and hooks.transform_context is None
                and config.convert_to_llm is default_convert_to_llm
            ),
        )
        emitter = Emitter(emit, sync=sync_sink)
        self.services = RunServices(emitter=emitter, guards=guards, on_end=on_end)
        self.guards = guards  # the config's (an agent's own join them while it has the floor)
        self.transcript = Transcript(context, emitter)
        if config.skills or config.memory is not None:
            run_tools = run_skill_tools(config, self.transcript)  # (none without skills)
            if config.memory is not None:  # recall_memory and remember
                run_tools += config.memory.run_tools(config.session_id)
            self.transcript.add_run_tools(run_tools)
        if any(isinstance(t, HandoffTool) for t in context.tools):  # else none of it runs
            self.services.handoffs = RunHandoffs.of(config, context.system_prompt, context.tools)
        # -- the settings of the next request (`prepare_next_turn` may change them)
        self.model = config.model
        self.reasoning = config.reasoning
        self.options: SimpleStreamOptions = stream_options(
            config, self.inputs.signal, self.reasoning
        )
        # -- the stages that count as the run goes
        self.bounds = Bounds.of(config)  # None: no bound set, nothing to count
        self.typed = TypedRun.of(config)  # None: a plain-text run (see `typed_output`)
        self.group: TaskGroup = None  # type: ignore[assignment]  # set by run()
        self.ended: AgentEndEvent | None = None  # how the run ended (its `agent_end`)
        self.batch: ToolBatch | None = None  # the tool batch running now (`run_calls` sets it)

    @property
    def new_messages(self) -> list[AgentMessage]:
        """The messages the run added."""
        return self.transcript.new_messages

    def tool_pipeline(self) -> NestedCalls | None:
        """The running batch's pipeline, made on first use (`agentcore.tools.tool_pipeline`
        reaches it: the run is registered once, in `run_events`); None between batches."""
        batch = self.batch
        return pipeline_of(batch) if batch is not None else None

    # -- the run ---------------------------------------------------------------------------

    def run(self, prompts: list[AgentMessage] | None) -> Awaitable[list[AgentMessage]]:
        """The run, to be awaited: its events, then the messages it added. (A plain function
        returning the coroutine, so that a run is one frame shallower while it waits.)"""
        if instrumentation.installed is None:
            return self.run_events(prompts)
        return self.run_observed(prompts)

    async def first_request(
        self, prompts: list[AgentMessage]
    ) -> tuple[Context, SimpleStreamOptions] | None:
        """Join `prompts` and build the run's first request as a turn builds it
        (`turn_request.prepare`), without sending it or starting the run (`entry.first_request`:
        a provider batch sends it elsewhere). Needs `group` set."""
        for prompt in prompts:
            await self.transcript.join(prompt)
        return await turn_request.prepare(self)

    async def run_observed(self, prompts: list[AgentMessage] | None) -> list[AgentMessage]:
        """The run, seen by the installed instrumentation."""
        installed = instrumentation.installed
        assert installed is not None
        transcript = self.transcript
        observer = start_observing(
            installed,
            RunInfo(
                model=self.model,
                system_prompt=transcript.system_prompt,
                messages=list(transcript.messages),
                prompts=list(prompts or ()),
                tools=list(transcript.tools),
                signal=self.inputs.signal,
            ),
        )
        if observer is None:
            return await self.run_events(prompts)
        self.services.observer = observer  # before any event
        error: BaseException | None = None
        try:
            return await self.run_events(prompts)
        except BaseException as exc:
            error = exc
            raise
        finally:
            ended = self.ended
            end_observing(
                observer,
                transcript.new_messages,
                ended.limit if ended is not None else None,
                error,
                ended.guardrail if ended is not None else None,
            )

    async def run_events(self, prompts: list[AgentMessage] | None) -> list[AgentMessage]:
        # One task group for the whole run: parallel tools and the update pump are its tasks.
        transcript = self.transcript
        emitter = self.services.emitter
        # Registered once per run, for a tool that calls tools (`tool_pipeline`, code mode):
        # a batch whose tools never ask pays nothing.
        token = pipeline.current.set(self)
        try:
            async with anyio.create_task_group() as self.group:
                try:
                    if (handoffs := self.services.handoffs) is not None:
                        self.start_handoffs(handoffs, prompts)
                    await emitter.emit(AgentStartEvent())
                    await transcript.turn_start()
                    decided = decided_calls.decided(transcript.messages)  # approvals to carry out
                    if decided is None:  # (else the prompts follow their results, next turn)
                        for prompt in prompts or ():
                            await transcript.join(prompt)
                    emitter.check()
                    end = await self.loop(decided, prompts if decided is not None else None)
                except Exception as exc:
                    end = await self.fail(exc)
                ended = agent_end(end, transcript.new_messages)
                if self.services.handoffs is not None:
                    ended = replace(ended, last_agent=self.services.handoffs.current)
                self.ended = ended
                on_end = self.services.on_end
                if on_end is not None:  # the stream's end: readable as soon as agent_end is
                    on_end(ended)
                await emitter.emit(ended)
        except BaseExceptionGroup as group:
            # Only what is not an Exception gets here (KeyboardInterrupt, ...): let it out as
            # itself, so that `except KeyboardInterrupt` still works, not wrapped in a group.
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise
        finally:
            # (a run closed by the garbage collector, as a durable workflow evicted from a
            # worker's cache is, ends in another context: nothing to restore there)
            with contextlib.suppress(ValueError):
                pipeline.current.reset(token)
        return transcript.new_messages

    async def poll(self, hook: Callable[[], Any] | None, name: str) -> list[AgentMessage]:
        """Poll `get_steering_messages` or `get_follow_up_messages` (not after an abort)."""
        if hook is None or self.inputs.signal.aborted:
            return []
        messages = await call_hook(hook)
        return check_prompts(messages or [], f"{name}()")

    async def loop(self, decided: Any = None, deferred: list[AgentMessage] | None = None) -> RunEnd:
        """Turns until one ends the run (a `Stopped` variant), or the model is done and no
        message is queued (`DONE`)."""
        first = True  # the first turn's `turn_start` and prompts are out already
        if decided is not None:  # a batch's approval decisions: carried out first (decided_calls)
            outcome = await self.decided_turn(decided)
            if not isinstance(outcome, Next) and not deferred:
                return outcome
            first = False
        steering = self.inputs.config.get_steering_messages
        pending = (deferred or []) + await self.poll(steering, "get_steering_messages")
        while True:
            outcome = await self.turn(pending, first)
            first = False
            if not isinstance(outcome, _GOES_ON):  # a stop
                return outcome
            pending = await self.poll(steering, "get_steering_messages")
            if self.typed is not None:  # a correction for an invalid answer goes first
                pending = self.typed.take_fixes() + pending
            if outcome is DONE and not pending:
                pending = await self.poll(
                    self.inputs.config.get_follow_up_messages, "get_follow_up_messages"
                )
                if not pending:
                    return DONE

    async def decided_turn(self, decided: Any) -> TurnOutcome:
        """The open first turn of a run whose transcript ends in approval decisions: they are
        carried out (`decided_calls`), then the turn closes as after any batch."""
        transcript = self.transcript
        message = decided.message
        results, terminate, waiting = await decided_calls.resolve(self, decided)
        if waiting:  # a call run again asked for more input: the run stops again
            for request in waiting:
                await transcript.join(request)
            await transcript.turn_end(message, results)
            return AwaitingApprovals(waiting)
        await transcript.turn_end(message, results)
        self.services.emitter.check()
        outcome: Next | Done | LimitHit = DONE if terminate else NEXT
        if (handoffs := self.services.handoffs) is not None:
            outcome = await self.hand_over(handoffs, message, results, DONE if terminate else NEXT)
            if isinstance(outcome, LimitHit):
                return outcome
        if self.inputs.signal.aborted:
            return Aborted()
        stopped = await self.turn_hooks(message, results)
        if stopped is not None:
            return stopped
        return outcome

    async def turn(self, pending: list[AgentMessage], first: bool) -> TurnOutcome:
        """One turn, top to bottom: the queued messages, the request and its answer, the tool
        calls, `turn_end`, then the typed output, the after-turn hooks and the bounds. The
        sink's failure is raised between these stages."""
        inputs = self.inputs
        transcript = self.transcript
        emitter = self.services.emitter
        guards = self.services.guards
        if not first:
            await transcript.turn_start()
        for message in pending:
            await transcript.join(message)
        emitter.check()
        # the request and its answer (joined to the transcript as it streamed)
        if guards is None:
            message = await turn_request.send(self, await turn_request.prepare(self))
            if inputs.config.compaction is not None:
                compacted = await retry_after_overflow(inputs, self, message)
                if compacted is not None and await transcript.keep(compacted):
                    message = await turn_request.send(self, await turn_request.prepare(self))
        else:  # under the input and output guardrails
            settled = await turn_request.guarded(self, guards)
            message = settled.message
            if settled.trip is not None:
                if self.bounds is not None:
                    self.bounds.count(message)
                await transcript.turn_end(message, [])
                return Tripped(settled.trip)
        if self.bounds is not None:
            self.bounds.count(message)
        if message.stop_reason in ("error", "aborted"):
            await transcript.turn_end(message, [])
            if message.stop_reason == "error":
                return Failed(answer=message)
            return Aborted(message)
        emitter.check()  # a broken sink fails the run before any tool runs
        # the tool calls, each with one result
        results, outcome = await self.run_tools(message)
        if self.bounds is not None:
            self.bounds.count_results(results)
        await transcript.turn_end(message, results)
        if isinstance(outcome, AwaitingApprovals):  # waiting for approvals: the run stops
            if emitter.error is not None and not emitter.failing:  # (as `emitter.check()`)
                raise _FailedAfterStop(emitter.error, outcome)
            return outcome
        emitter.check()
        if (handoffs := self.services.handoffs) is not None:  # a switch at the boundary
            handed = await self.hand_over(handoffs, message, results, outcome)
            if isinstance(handed, LimitHit):
                return handed
            outcome = handed
        if inputs.signal.aborted:
            return Aborted()
        # after the turn: the typed output, the hooks, the bounds
        if self.typed is not None:
            typed_end = self.typed.after_turn(self.model, message, results)
            if typed_end is not None:
                return typed_end  # answered, or out of output retries
        stopped = await self.turn_hooks(message, results)
        if stopped is not None:
            return stopped
        if self.bounds is not None:
            # Checked before the queues are polled, so that a run ending here leaves queued
            # messages where they are.
            limit = self.bounds.reached()
            if limit is not None:
                return LimitHit(limit)
        return outcome

    async def run_tools(
        self, message: AssistantMessage
    ) -> tuple[list[ToolResultMessage], Next | Done | AwaitingApprovals]:
        """The answer's tool calls, each with one result; the outcome of the turn so far
        (`AwaitingApprovals` with the requests of the calls waiting for approval, if any)."""
        calls = message.tool_calls
        if not calls:
            return [], DONE
        if message.stop_reason == "length":  # arguments may be cut off: none is run
            return await tool_execution.fail_truncated(self, message, calls), NEXT
        results, terminate, waiting = await tool_execution.execute_batch(self, message, calls)
        if waiting:  # one request message per waiting call, in call order, after the results
            for request in waiting:
                await self.transcript.join(request)
            return results, AwaitingApprovals(waiting)
        return results, DONE if terminate else NEXT

    async def turn_hooks(
        self, message: AssistantMessage, results: list[ToolResultMessage]
    ) -> HookStopped | Aborted | None:
        """Run `prepare_next_turn` and `should_stop_after_turn` after a turn; a stop when
        the run ends here (the hook said so, or it aborted the run: no new request)."""
        hooks = self.inputs.hooks
        if hooks.prepare_next_turn is None and hooks.should_stop_after_turn is None:
            return None
        transcript = self.transcript
        turn = PrepareNextTurnContext(
            message=message,
            tool_results=results,
            context=transcript.context(),
            new_messages=list(transcript.new_messages),
        )
        if hooks.prepare_next_turn is not None:
            self.apply(await call_hook(hooks.prepare_next_turn, turn, self.inputs.signal))
        stop = hooks.should_stop_after_turn
        if stop is not None and await call_hook(stop, turn, self.inputs.signal):
            return HookStopped()
        return Aborted() if self.inputs.signal.aborted else None

    # -- handoffs (see `handoffs`) ---------------------------------------------------------

    def start_handoffs(self, handoffs: RunHandoffs, prompts: list[AgentMessage] | None) -> None:
        """The agent that has the conversation as the run starts, read from the transcript
        (the first agent, for new prompts under `next_agent="first"`)."""
        messages = self.transcript.messages
        first = (
            bool(prompts)
            and self.inputs.config.next_agent == "first"
            and decided_calls.decided(messages) is None
        )
        self.enter(handoffs.setup(handoffs.resumed(messages, first=first)))

    def enter(self, setup: Setup) -> None:
        """An agent takes the conversation: its system prompt, tools, model, thinking level
        and guardrails for the next request (as `prepare_next_turn` could set them)."""
        self.transcript.switch(setup.name, setup.system_prompt, setup.tools)
        model = setup.model if setup.model is not None else self.model
        reasoning = setup.thinking_level if setup.thinking_level is not None else self.reasoning
        if model is not self.model or reasoning != self.reasoning:
            self.model, self.reasoning = model, reasoning
            self.options = stream_options(self.inputs.config, self.inputs.signal, reasoning)
        config = self.inputs.config
        if setup.guardrails:
            self.services.guards = RunGuards.of_guardrails(
                (*config.guardrails, *setup.guardrails), self.inputs.abort_signal
            )
        elif self.services.guards is not self.guards:
            self.services.guards = self.guards

    async def hand_over(
        self,
        handoffs: RunHandoffs,
        message: AssistantMessage,
        results: list[ToolResultMessage],
        outcome: Next | Done,
    ) -> Next | Done | LimitHit:
        """After a turn's `turn_end`: its switch, if any (`agent_switch`, then the new agent's
        setup); a return to the caller makes the caller answer; a refused handoff that ended
        the run (a bound) is its `LimitHit`."""
        switch = handoffs.after_turn(message, results, self.transcript.tools_by_name)
        if switch is not None:
            await self.services.emitter.emit(
                AgentSwitchEvent(
                    from_agent=switch.from_agent,
                    to_agent=switch.to.name,
                    tool_call_id=switch.tool_call_id,
                    returns=switch.returns,
                )
            )
            observer = self.services.observer
            if observer is not None:  # (optional) a span per agent segment, say
                switched = getattr(observer, "agent_switched", None)
                if switched is not None:
                    switched(switch.from_agent, switch.to.name, switch.tool_call_id, switch.returns)
            self.enter(switch.to)
            if switch.returns and outcome is DONE and not message.tool_calls:
                outcome = NEXT  # back to the caller: it answers, seeing the target's answer
        limit = handoffs.limit
        if limit is not None:
            handoffs.limit = None
            return LimitHit(limit)
        return outcome

    def apply(self, turn: Any) -> None:
        """What `prepare_next_turn` returned: a new conversation, model or thinking level."""
        if turn is None:
            return
        if not isinstance(turn, NextTurn):
            raise ConfigError(
                f"prepare_next_turn returned {type(turn).__name__}; expected NextTurn or None"
            )
        if turn.context is not None:
            self.transcript.replace(turn.context)
        if turn.model is not None:
            self.model = turn.model
        if turn.thinking_level is not None:
            if turn.thinking_level not in THINKING_LEVELS:
                raise ConfigError(
                    f"prepare_next_turn returned thinking_level={turn.thinking_level!r}; "
                    f"expected one of {THINKING_LEVELS}"
                )
            self.reasoning = turn.thinking_level
        if turn.model is not None or turn.thinking_level is not None:
            self.options = stream_options(self.inputs.config, self.inputs.signal, self.reasoning)

    # -- failure ---------------------------------------------------------------------------

    async def fail(self, exc: BaseException) -> Stopped:
        """End the run with an error (or aborted) assistant message, keeping events well nested;
        how the run ended."""
        stopped: Stopped | None = None
        if isinstance(exc, _FailedAfterStop):  # the stop's data still goes into `agent_end`
            stopped = exc.stopped
            exc = exc.cause
        elif isinstance(exc, SinkError):
            exc = exc.cause
        self.services.emitter.failing = True
        text = error_text(exc)
        reason: StopReason = "aborted" if self.inputs.signal.aborted else "error"
        transcript = self.transcript
        if transcript.phase is Phase.BETWEEN_TURNS:
            await transcript.turn_start()
        # `emit` never raises, so the only message that can be open here is a streaming answer:
        # the error message ends it, keeping what arrived.
        event = transcript.partial_event if transcript.phase is Phase.STREAMING else None
        base: AssistantMessage | None = None
        if event is not None and not isinstance(event, DoneEvent | ErrorEvent):
            base = event.partial
        model = self.model
        message = AssistantMessage(
            content=list(base.content) if base is not None else [],
            api=base.api if base is not None else model.api,
            provider=base.provider if base is not None else model.provider,
            model=base.model if base is not None else model.id,
            usage=base.usage if base is not None else AssistantMessage().usage,
            stop_reason=reason,
            error_message=text,
        )
        message = await transcript.join(message, started=base is not None)
        await transcript.turn_end(message, [])
        if stopped is not None:
            return stopped
        return Aborted(message) if reason == "aborted" else Failed(message, exc)
