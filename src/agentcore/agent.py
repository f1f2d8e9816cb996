"""`Agent`: the stateful agent — a transcript, queues, listeners, and one run at a time.

An Agent keeps an `AgentState` (system prompt, model, thinking level, tools, transcript) and runs
the loop on it: `prompt` adds messages and runs, `continue_` runs from the transcript as it is.
Every event of a run first updates the state, then goes to the listeners (`subscribe`), which
are awaited one after another; the loop awaits the whole delivery, so a listener of
`message_end` sees the transcript with that message, before any tool runs.

The transcript grows only at `message_end`. While a run is going, `steer` and `follow_up` queue
messages (safe from any thread): steering messages are injected at the next turn, follow-ups
when the agent would otherwise stop. A queued message the run never took, or took but could not
deliver (an abort, a failure), stays queued for the next run: aborts never lose messages.

With `session=`, every message is written to a `agentcore.sessions` store at its `message_end`,
so a process killed at any moment loses at most the message being streamed, and
`Agent(session=store.open(id))` resumes where it stopped.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Unpack

import anyio

from ._agent import approvals
from ._agent.extraction import Extractions
from ._agent.options import OPTIONS, AgentOptions, agent_options, option_property
from ._agent.queue_writes import QueueWrites
from ._agent.queues import poll_follow_up, poll_steering, take_queued
from ._agent.run import (
    BUSY_CONTINUE,
    BUSY_PROMPT,
    ActiveRun,
    Listener,
    Subscription,
    deliver,
    prompt_messages,
    queued_message,
    run_blocking,
)
from ._agent.session import SessionBinding, resume
from ._agent.state import (
    RESET,
    AgentState,
    Decided,
    QueueKind,
    QueueMode,
    Queues,
    check_queue_mode,
    run_context,
    state_fields,
)
from ._engine.entry import run_agent_loop, run_agent_loop_continue
from .abort import AbortSignal
from .approvals import NEW_MESSAGE_REASON, ApprovalDecision, ApprovalRequest
from .config import AgentLoopConfig
from .errors import AgentBusyError, ConfigError, MessageFormatError
from .events import AgentEvent, MessageEndEvent
from .llm.registry import StreamFn
from .messages import AgentMessage, ImageContent
from .sessions import Session

__all__ = ["Agent", "AgentState", "Listener", "QueueMode"]

_log = logging.getLogger("agentcore")


class Agent:
    """A stateful agent: one transcript, one run at a time, listeners, queues, sessions.

    ```python
    agent = Agent(initial_state={"model": get_model("openai", "gpt-4o-mini"), "tools": [add]})
    agent.subscribe(lambda event: print(event.type))
    await agent.prompt("What is 2 + 3?")
    print(agent.state.messages[-1].text)
    ```

    Args:
        initial_state: an `AgentState` or a dict of its settable fields (`system_prompt`,
            `model`, `thinking_level`, `tools`, `messages`). With a session, the fields given
            here win over the session's saved ones.
        stream_fn: the stream function (default: `agentcore.llm.stream_simple`).
        session: an open `agentcore.sessions.Session` to write the transcript to, and resume
            from (its messages, repaired; its system prompt, model, thinking level and queues).
        steering_mode: how `steer` messages are delivered: `"one-at-a-time"` (default) or
            `"all"`.
        follow_up_mode: the same for `follow_up` messages.

    The other keyword arguments (`**options`, typed by `AgentOptions`) are the options of
    `AgentLoopConfig` but `model` and `reasoning` (the state's), forwarded to every run. Each is
    also an attribute (`agent.max_turns = 3`); a change applies from the next run. With a
    session and no `session_id`, the session's id is sent as the prompt-cache key. Unlike
    `agent_loop`, an Agent bounds its runs by default: `max_turns=100`, `tool_timeout=600`,
    `request_timeout=300`, `idle_timeout=300` seconds (None turns one off; see docs/limits.md).
    `state.limit` tells which bound ended the last run, `state.guardrail` which guardrail (see
    docs/guardrails.md), and `state.output` holds the last run's answer when it had an
    `output_type` (see docs/typed-outputs.md).

    Raises:
        ConfigError: an option or initial state of the wrong shape.
    """

    def __init__(
        self,
        initial_state: AgentState | Mapping[str, Any] | None = None,
        *,
        stream_fn: StreamFn | None = None,
        session: Session | None = None,
        steering_mode: QueueMode = "one-at-a-time",
        follow_up_mode: QueueMode = "one-at-a-time",
        **options: Unpack[AgentOptions],
    ) -> None:
        self._options = agent_options(options)  # an unknown keyword: a TypeError, before anything
        given = state_fields(initial_state)
        self.stream_fn = stream_fn
        self._queues = Queues(steering_mode, follow_up_mode)
        self._listeners: list[Subscription] = []
        self._active: ActiveRun | None = None
        self._run_lock = threading.Lock()
        self._extractions = Extractions()
        self._binding: SessionBinding | None = None
        self._state = AgentState()
        self._writes = QueueWrites(self._state, self._queues)
        if session is not None:
            if not isinstance(session, Session):
                raise ConfigError(
                    "session must be an open agentcore.sessions.Session "
                    f"(store.create() or store.open(id)), got {type(session).__name__}"
                )
            writes = self._writes
            binding = SessionBinding(session, writes.snapshot, writes.fingerprint)
            self._binding = writes.binding = resume(binding, given, self._state, self._queues)
        for name, value in given.items():  # only settable fields: state_fields checked them
            setattr(self._state, name, value)
        self._loop_config()  # fail now, not at the first prompt, on an option of the wrong shape

    # -- state and options -----------------------------------------------------------------

    @property
    def state(self) -> AgentState:
        """The state: settable fields and what the current run reports."""
        return self._state

    @property
    def session(self) -> Session | None:
        """The session the transcript is written to, if any."""
        return self._binding.session if self._binding is not None else None

    @property
    def steering_mode(self) -> QueueMode:
        """How steering messages are drained: `"one-at-a-time"` (one per turn) or `"all"`."""
        return self._queues.modes["steering"]

    @steering_mode.setter
    def steering_mode(self, mode: QueueMode) -> None:
        self._queues.modes["steering"] = check_queue_mode(mode)

    @property
    def follow_up_mode(self) -> QueueMode:
        """How follow-up messages are drained: `"one-at-a-time"` or `"all"`."""
        return self._queues.modes["follow_up"]

    @follow_up_mode.setter
    def follow_up_mode(self, mode: QueueMode) -> None:
        self._queues.modes["follow_up"] = check_queue_mode(mode)

    @property
    def signal(self) -> AbortSignal | None:
        """The abort signal of the active run, or None when idle."""
        run = self._active
        return run.controller.signal if run is not None else None

    def _loop_config(self) -> AgentLoopConfig:
        options = self._options
        if options["session_id"] is None and self._binding is not None:
            options = {**options, "session_id": self._binding.session.id}
        return AgentLoopConfig(
            model=self._state.model,
            reasoning=self._state.thinking_level,
            get_steering_messages=self._poll_steering,
            get_follow_up_messages=self._poll_follow_up,
            **options,
        )

    def _poll_steering(self) -> list[AgentMessage]:  # bound methods: their arity is cached
        return poll_steering(self._queues, self._active)

    def _poll_follow_up(self) -> list[AgentMessage]:
        return poll_follow_up(self._queues, self._active)

    if TYPE_CHECKING:  # the options' attributes (`option_property`), for type checkers

        def __getattr__(self, name: str) -> Any: ...

        def __setattr__(self, name: str, value: Any) -> None: ...

    # -- listeners ---------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(event)` or `listener(event, signal)` for every event of every run.

        Listeners are awaited one after another in subscription order, after the state has
        been updated for the event; `signal` is the run's abort signal. A raising listener
        ends the run with an error message (the other listeners still get the event).
        Subscribing emits nothing. Returns a function that unsubscribes.
        """
        subscription = Subscription(listener)
        self._listeners.append(subscription)

        def unsubscribe() -> None:
            for i, s in enumerate(self._listeners):
                if s is subscription:
                    del self._listeners[i]
                    return

        return unsubscribe

    # -- queues ------------------------------------------------------------------------------

    def steer(self, message: str | AgentMessage) -> None:
        """Queue a message to inject at the next turn of the current (or next) run.

        Safe from any thread. A string becomes a user message."""
        self._queues.push("steering", queued_message(message))
        self._writes.changed(self._active)

    def follow_up(self, message: str | AgentMessage) -> None:
        """Queue a message to send when the agent would otherwise stop. Safe from any thread."""
        self._queues.push("follow_up", queued_message(message))
        self._writes.changed(self._active)

    def clear_steering_queue(self) -> None:
        """Drop the queued steering messages."""
        self._clear("steering")

    def clear_follow_up_queue(self) -> None:
        """Drop the queued follow-up messages."""
        self._clear("follow_up")

    def clear_all_queues(self) -> None:
        """Drop every queued message."""
        self._clear("steering", "follow_up")

    def _clear(self, *kinds: QueueKind) -> None:
        self._queues.clear(*kinds)
        self._writes.changed(self._active)

    def has_queued_messages(self) -> bool:
        """Whether a steering or follow-up message is queued."""
        return bool(self._queues)

    async def _queues_stored(self) -> None:
        """Return once the queues as they are now are in the session's store (awaited by a
        surface before it answers that a message was queued; see `_agent/queue_writes.py`)."""
        await self._writes.stored()

    @property
    def steering_queue(self) -> tuple[AgentMessage, ...]:
        """The queued steering messages, oldest first (a snapshot)."""
        return self._queues.queued("steering")

    @property
    def follow_up_queue(self) -> tuple[AgentMessage, ...]:
        """The queued follow-up messages, oldest first (a snapshot)."""
        return self._queues.queued("follow_up")

    # -- approvals (docs/approvals.md; the checks are `_agent/approvals.py`) -------------------

    def approve(
        self,
        tool_call_id: str,
        *,
        arguments: Mapping[str, Any] | None = None,
        decided_by: str | None = None,
    ) -> None:
        """Approve a waiting tool call: the next run (`continue_()`) executes it, on `arguments`
        instead of the requested ones if given (validated now, and again before it runs). The
        decision joins the transcript and, with a session, is stored before this returns.

        For an input request (`request.input_schema` set: the tool asked for input as it ran),
        `arguments` is the answer, required and checked against that schema; the call runs
        again with it. `deny` declines it (reason `"cancel"`: cancels it).

        Args:
            tool_call_id: the waiting call.
            arguments: edited arguments (None: as requested).
            decided_by: who decides (a surface's name, e.g. `"cli"`), recorded in the decision.

        Raises:
            ConfigError: no call with this id waits for a decision, the call's tool is not
                among `state.tools` (an agent decides only for tools it holds), or `arguments`
                are invalid.
            AgentBusyError: a run is active.
        """
        self._check_idle(approvals.BUSY)
        self._decide(approvals.approval(self._state, tool_call_id, arguments, decided_by))

    def deny(
        self, tool_call_id: str, reason: str | None = None, *, decided_by: str | None = None
    ) -> None:
        """Deny a waiting tool call: the next run gives it an error result with `reason`. The
        decision joins the transcript (with a session: stored before this returns).

        Args:
            tool_call_id: the waiting call.
            reason: why (the model is told).
            decided_by: who decides (a surface's name, e.g. `"cli"`), recorded in the decision.

        Raises:
            ConfigError: no call with this id waits for a decision, or the call's tool is not
                among `state.tools` (an agent decides only for tools it holds).
            AgentBusyError: a run is active.
        """
        if reason is not None and not isinstance(reason, str):
            raise ConfigError(f"deny(): reason must be a string, got {type(reason).__name__}")
        self._check_idle(approvals.BUSY)
        self._decide(approvals.denial(self._state, tool_call_id, reason, decided_by))

    def reopen(self, tool_call_id: str) -> ApprovalRequest:
        """Make a call decided but not started wait again: a new `ApprovalRequest` for it (the
        model's arguments) joins the transcript, stored with a session before this returns; a
        surface about to run calls it did not decide (`decided_approvals`, `decided_by`) uses
        it to ask its user. Returns the new request.

        Raises:
            ConfigError: no decided call with this id is waiting to run (undecided, already
                started or answered, or unknown).
            AgentBusyError: a run is active.
        """
        self._check_idle(approvals.BUSY)
        request = approvals.reopened(self._state, tool_call_id)
        self._decide(request)
        return request

    def _decide(self, decision: ApprovalDecision | ApprovalRequest) -> None:
        with self._run_lock:  # the decision joins and is stored, all or nothing, if still idle
            self._check_idle(approvals.BUSY)
            approvals.record(self._state, self._binding, decision)

    # -- runs --------------------------------------------------------------------------------

    async def prompt(
        self,
        input: str | AgentMessage | Sequence[AgentMessage],
        images: Sequence[ImageContent] | None = None,
    ) -> list[AgentMessage]:
        """Add messages to the transcript and run until the agent is done.

        Args:
            input: a text (one user message, followed by `images` if given), a message, or a
                list of messages.
            images: image blocks to attach to a text prompt.

        Returns the messages the run added (as in `agent_end`), once the run has settled and
        every listener has returned. Tool calls still waiting for approval are denied first
        (see docs/approvals.md).

        Raises:
            AgentBusyError: a run is active (queue with `steer` or `follow_up` instead).
            MessageFormatError: `input` is not a text, message or list of messages.
        """
        messages = prompt_messages(input, images)
        self._check_idle(BUSY_PROMPT)
        for denial in approvals.denials(self._state, NEW_MESSAGE_REASON):
            self._state._reduce(Decided(denial))  # waiting calls denied first; stored at the start
        return await self._run(messages)

    async def continue_(self) -> list[AgentMessage]:
        """Run from the transcript as it is (after a tool result, an error, a resumed session).

        On an assistant tail, queued messages are run instead: the steering queue first (per
        its mode), else the follow-up queue.

        Raises:
            AgentBusyError: a run is active.
            ConfigError: the transcript is empty, or ends with an assistant message and nothing
                is queued, or a tool call waits for approval (`approve` or `deny` it first).
        """
        self._check_idle(BUSY_CONTINUE)
        approvals.check_decided(self._state)
        messages = self._state.messages
        if not messages:
            raise ConfigError("cannot continue: the transcript has no messages")
        if getattr(messages[-1], "role", None) != "assistant":
            return await self._run(None)
        return await self._run(None, from_queues=True)

    def abort(self, reason: Any = None) -> None:
        """Abort the active run (safe from any thread; does nothing when idle)."""
        run = self._active
        if run is not None:
            run.controller.abort(reason)

    async def wait_for_idle(self) -> None:
        """Wait until the active run (and its listeners) has finished, and the memory
        extractions after runs (`Memory(extract=...)`); returns at once if idle."""
        run = self._active
        if run is not None:
            await run.done.wait()
        await self._extractions.wait()

    def reset(self) -> None:
        """Clear the transcript, streaming state, error, limit and both queues (the system prompt,
        model, thinking level and tools stay). With a session, it is cut to empty too.

        Raises:
            AgentBusyError: a run is active (nothing is changed).
        """
        self._check_idle("the agent is already running: reset() needs an idle agent")
        self._state._reduce(RESET)
        self._queues.clear("steering", "follow_up")
        if self._binding is not None:
            self._binding.sync([])

    def _check_idle(self, message: str) -> None:
        if self._active is not None:
            raise AgentBusyError(message)

    async def _run(
        self, prompts: list[AgentMessage] | None, *, from_queues: bool = False
    ) -> list[AgentMessage]:
        """One run. With `from_queues` (a continue on an assistant tail), the prompts are the
        queued messages, taken only once this run is the active one."""
        state = self._state
        context = run_context(state)
        config = self._loop_config()
        run = ActiveRun()
        with self._run_lock:
            if self._active is not None:
                raise AgentBusyError(BUSY_CONTINUE if prompts is None else BUSY_PROMPT)
            self._active = run
        if from_queues:
            prompts = take_queued(self._queues, run)
            if not prompts:
                with self._run_lock:
                    self._active = None
                run.done.set()
                raise ConfigError(
                    "cannot continue from an assistant message: prompt(), or queue a message "
                    "with steer() or follow_up() first"
                )
        state._begin_run()
        try:
            while True:
                binding = self._binding
                if binding is not None and not binding.in_step(context.messages):
                    await binding.run(binding.sync, context.messages)
                # The loop closes a failed run itself (an error message, well-nested events,
                # `agent_end`): there is one failure path, the loop's, and it does not raise.
                signal = run.controller.signal
                run.closing = False
                if prompts is not None:
                    await run_agent_loop(
                        prompts, context, config, self._emit, signal, self.stream_fn
                    )
                else:
                    await run_agent_loop_continue(
                        context, config, self._emit, signal, self.stream_fn
                    )
                if await self._settle(run, failed=False):
                    break
                # Queued after the loop's last poll (while `agent_end` was delivered, say): the
                # next loop runs it now, in order, instead of leaving it for the next prompt.
                prompts = take_queued(self._queues, run)
                context = run_context(state)
                config = self._loop_config()
        except BaseException:
            if not run.done.is_set():  # not settled yet (a settle that raised has settled)
                await self._settle(run, failed=True)
            raise
        added = list(run.added)
        if not run.controller.signal.aborted:  # `Memory(extract=...)`: see _agent/extraction.py
            await self._extractions.after_run(
                config, self.stream_fn, state.messages, added, self._listeners
            )
        return added

    async def _settle(self, run: ActiveRun, failed: bool) -> bool:
        """End a run: queues restored, session in step, state idle (also when cancelled).

        A run whose loop ended because the model was done (`run.closing`), not aborted, stays
        active instead when a message was queued meanwhile: returns False, and `_run` runs it.
        The check and going idle are one step under the queues' lock, so a message queued from
        any thread is either run now or queued for the next run of an idle agent."""
        state = self._state
        error: Exception | None = None
        with anyio.CancelScope(shield=True):
            self._queues.restore()
            binding = self._binding
            if binding is not None and not binding.in_step(state.messages):
                try:
                    await binding.run(binding.sync, list(state.messages))
                except Exception as exc:
                    _log.exception("could not write the session at the end of the run")
                    error = exc
        go_on = (
            not failed
            and error is None
            and run.closing
            and not run.controller.signal.aborted
            and not state.pending_approvals
        )

        def end() -> None:
            state._end_run()
            with self._run_lock:
                self._active = None

        if go_on:
            if not self._queues.end_unless_queued(end):
                return False
        else:
            end()
        run.done.set()
        if error is not None and not failed:
            raise error
        return True

    async def _emit(self, event: AgentEvent) -> None:
        """The loop's sink: update the state, store the message, then await the listeners."""
        run = self._active
        if run is None:
            raise RuntimeError("agentcore internal error: an event outside of a run")
        failure: Exception | None = None
        binding = self._binding
        keep = True
        if binding is not None and isinstance(event, MessageEndEvent):
            try:  # keep the form the session holds, so memory and disk stay equal
                kept = binding.prepare(event.message)
            except MessageFormatError as exc:  # cannot be stored in any form: not kept
                keep, failure = False, exc
            else:
                if kept is not event.message:
                    event = MessageEndEvent(message=kept)
        stored = self._state._reduce(event, keep=keep)
        if isinstance(event, MessageEndEvent):
            self._queues.landed(event.message)  # no longer in flight, kept or not
            if stored is not None:
                run.added.append(stored)
        if stored is not None and binding is not None:
            try:
                await binding.run(binding.append, stored)
            except Exception as exc:
                failure = exc
        failed = await deliver(self._listeners, event, run.controller.signal)
        failure = failure or failed
        if failure is not None:
            raise failure

    async def __aenter__(self) -> Agent:
        """`async with agent:` gives the Agent a task group for the work after its runs (memory
        extractions, docs/memory.md): `prompt()` then returns without waiting for them. Leaving
        the block waits for them. Raises `UsageError` when the Agent is open already."""
        await self._extractions.open()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self._extractions.close(*exc_info)

    # -- the synchronous facade ----------------------------------------------------------------

    def prompt_sync(
        self,
        input: str | AgentMessage | Sequence[AgentMessage],
        images: Sequence[ImageContent] | None = None,
    ) -> list[AgentMessage]:
        """`prompt` for synchronous code (scripts, notebooks without an event loop): runs on a
        background event loop and blocks until the run has settled. Ctrl-C aborts the run.

        Raises:
            UsageError: called from async code (use `await agent.prompt(...)`).
        """
        return run_blocking(self, "prompt", self.prompt, input, images)

    def continue_sync(self) -> list[AgentMessage]:
        """`continue_` for synchronous code; see `prompt_sync`."""
        return run_blocking(self, "continue_", self.continue_)

    def __repr__(self) -> str:
        return f"Agent({self._state!r})"


for _name in OPTIONS:  # `agent.<option>`: reads and replaces the Agent's options (see `Agent`)
    setattr(Agent, _name, option_property(_name))
del _name
