"""The agent run as a Temporal workflow: agentcore's own loop, with every step an activity.

The workflow runs the real loop (`run_agent_loop`) on Temporal's deterministic event loop, so the
loop's decisions (turns, tool batches, queues, bounds, abort) are made in the workflow and replay
identically, and the transcript is the one an in-process run builds by construction. What the
loop cannot decide by itself runs as an activity on a worker: the stream function sends each
model request as a `agentcore.model` activity (the final message comes back; text deltas are not
put in the history), and each tool is a stand-in whose `execute` runs the `agentcore.tool`
activity of the tool registered under that name. The activity's result is in the history, so a
finished call is never run again, and a lost worker's activity is retried on another one.

Messages made in the workflow take their timestamps from the workflow's clock
(`message_clock`), so a replay rebuilds them exactly.

Cancelling the workflow aborts the run: the loop's `AbortSignal` fires, the running activities
are cancelled, every tool call still gets its one result, and the workflow completes with the
messages so far (a transcript that can be continued). Steering and follow-up messages arrive as
signals into the queues the loop polls. Past the history limit the run stops at the end of a
turn whose tool results need an answer, and continues as new with the transcript; the events
of one run form one well-nested sequence across these segments. A run that stops for approvals
waits in the workflow for the decisions (the `decide` update), then goes on the same way.

This module uses asyncio directly, unlike the rest of the library: a workflow runs on Temporal's
own asyncio loop, and the cancellation of its activity handles follows asyncio's rules.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

# The loop's anyio backend, imported here (outside the workflow sandbox, which takes it from the
# worker as it is): anyio imports it lazily, and inside the sandbox that import would fail.
import anyio._backends._asyncio  # noqa: F401

from .. import run_agent_loop, run_agent_loop_continue
from ..abort import AbortController, AbortSignal
from ..approvals import (
    ApprovalDecision,
    ApprovalRequest,
    InputRequired,
    input_answers,
    pending_approvals,
)
from ..config import AgentContext, PrepareNextTurnContext
from ..durable import (
    RunOptions,
    event_to_json,
    messages_from_json,
    messages_to_json,
    result_from_json,
)
from ..durable_handoffs import RunAgents, approval_key
from ..events import AgentEndEvent, AgentEvent, MessageEndEvent, MessageStartEvent
from ..limits import LimitReached
from ..llm import (
    AssistantMessageEventStream,
    Context,
    DoneEvent,
    ErrorEvent,
    Model,
    SimpleStreamOptions,
    StartEvent,
)
from ..messages import AgentMessage, AssistantMessage, from_json, message_clock, to_json
from ..skills import active_skills
from ..tools import AgentTool, AgentToolResult, ToolUpdateCallback
from ._activities import MODEL_ACTIVITY, SKILL_TOOLS, TOOL_ACTIVITY
from ._handoffs import describe_run_agents
from ._sdk import common, exceptions, workflow

__all__ = ["AgentWorkflow", "WORKFLOW_NAME"]

WORKFLOW_NAME = "agentcore.AgentWorkflow"
ABORTED = "request was aborted"
ABORTED_WHILE_WAITING = "the run was aborted while the call waited for approval"
EVENTS_PER_QUERY = 500


def _now_ms() -> int:
    return int(workflow.now().timestamp() * 1000)


def _cause(exc: BaseException) -> str:
    """The innermost cause of an activity's failure, as text."""
    cause: BaseException = exc
    while True:
        inner = getattr(cause, "cause", None) or cause.__cause__
        if not isinstance(inner, BaseException):
            break
        cause = inner
    return str(cause) or type(cause).__name__


async def _unless_aborted(
    handle: asyncio.Future[Any], signal: AbortSignal | None
) -> tuple[bool, Any]:
    """Await an activity unless `signal` fires first; `(True, result)`, or `(False, None)` after
    cancelling it (its failure raises `ActivityError`).

    A cancellation of the awaiting task cancels the activity too and goes on. Either way the
    activity is cancelled once, Temporal's way. (An anyio cancel scope around the await would
    not do: it cancels the task again on every turn of the loop until the task leaves the scope,
    while Temporal's handle keeps waiting for the server to confirm: the activation never ends.)
    """
    handle.add_done_callback(_retrieve)
    aborted = asyncio.Event()
    remove = signal.add_listener(lambda _reason: aborted.set()) if signal is not None else None
    waiter = asyncio.ensure_future(aborted.wait())
    try:
        await asyncio.wait([handle, waiter], return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        handle.cancel()
        raise
    finally:
        if remove is not None:
            remove()
        waiter.cancel()
    if handle.done():
        return True, handle.result()
    handle.cancel()
    return False, None


def _retrieve(handle: asyncio.Future[Any]) -> None:
    """Mark the outcome of an activity nobody awaits any more as seen."""
    if not handle.cancelled():
        handle.exception()


@workflow.defn(name=WORKFLOW_NAME)
class AgentWorkflow:
    """One durable agent run (start it with `agentcore.temporal.start_run`).

    Input and result are JSON (see `start_run` and `DurableRun.outcome`). Signals: `steer`,
    `follow_up` (lists of messages in JSON form). Queries: `events(since)` (the run's events
    from index `since`), `transcript()`.
    """

    def __init__(self) -> None:
        self._events: list[AgentEvent] = []
        self._offset = 0  # events published by earlier runs of this chain (continue-as-new)
        self._transcript: list[AgentMessage] = []
        self._new_from = 0  # where this run's new messages begin in the transcript
        self._queues: dict[str, deque[AgentMessage]] = {"steering": deque(), "follow_up": deque()}
        self._options = RunOptions()
        self._controller = AbortController()
        self._started = False  # agent_start was published (by this run or an earlier one)
        self._done = False
        self._continuing = False  # the loop stopped to continue as new
        self._next_segment = False  # the loop ended with messages queued: run them next
        self._terminate: dict[str, bool] = {}
        self._limit: LimitReached | None = None
        self._previous_run: str | None = None  # the run this one continues, if any
        self._waiting = False  # the loop stopped for approvals: decisions are taken
        self._unannounced: list[AgentMessage] = []  # decisions, published in the next turn
        self._approval: dict[str, bool] = {}  # which tools need approval (from the workers)
        self._skills: list[str] = []  # the skills the run may use (registered on the workers)
        self._allows: dict[str, list[str]] = {}  # each skill's allowed-tools (from the workers)
        self._agents: RunAgents | None = None  # the run's agents (described by a worker)
        self._models: dict[str, Model] = {}  # the stand-in of each model name

    # -- the run ---------------------------------------------------------------------------

    @workflow.run
    async def run(self, data: dict[str, Any]) -> dict[str, Any]:
        """Run the agent; returns `{"messages", "limit", "unsent"}` as JSON."""
        with message_clock(_now_ms):
            # The loop runs in its own task so that the workflow's cancellation (delivered to
            # this one) can be turned into an abort that the loop finishes cleanly.
            driver = asyncio.ensure_future(self._drive(data))
            while True:
                try:
                    return await asyncio.shield(driver)
                except asyncio.CancelledError:
                    # Only the server's cancellation request is an abort, and only once: the
                    # worker evicting the workflow from its cache cancels every task too, and
                    # that must go through.
                    if (
                        driver.done()
                        or self._controller.signal.aborted
                        or workflow.cancellation_reason() is None
                    ):
                        raise
                    self._controller.abort("the workflow was cancelled")

    async def _drive(self, data: dict[str, Any]) -> dict[str, Any]:
        options = self._options = RunOptions.from_json(data["options"])
        self._transcript = messages_from_json(data["messages"])
        state = data.get("state") or {}
        self._new_from = state.get("new_from", len(self._transcript))
        self._offset = state.get("events", 0)
        self._started = state.get("started", False)
        self._previous_run = state.get("previous_run")
        for kind in ("steering", "follow_up"):
            self._queues[kind].extendleft(reversed(messages_from_json(state.get(kind, []))))
        model = self._model(data["model"])
        self._approval = dict(state.get("requires_approval", {}))
        self._allows = dict(state.get("skills_allow", {}))
        self._skills = list(data.get("skills") or ())
        names = list(data["tools"]) + (list(SKILL_TOOLS) if self._skills else [])
        tools = [self._stand_in(tool_name) for tool_name in names]
        system_prompt: str = data["system_prompt"]
        first: dict[str, Any] = {}  # the first agent's config fields (a run started as one)
        if data.get("agent") is not None:  # (durable_handoffs: the loop switches between them)
            described = state.get("agents") or await describe_run_agents(data["agent"], options)
            agents = self._agents = RunAgents(described, self._stand_in_of, self._model)
            system_prompt, tools, first = agents.first.system_prompt, agents.tools, agents.config()
            model = agents.first.model or model
        signal = self._controller.signal
        prompts = messages_from_json(data["prompts"])
        if self._pending():  # continued as new while calls waited
            self._waiting = True
            await self._wait_for_decisions()
        while True:
            config = options.loop_config(
                model,
                max_turns=self._turns_left(),
                get_steering_messages=lambda: self._take("steering"),
                get_follow_up_messages=lambda: self._take("follow_up"),
                should_stop_after_turn=self._past_history_limit,
                **first,
            )
            context = AgentContext(
                system_prompt=system_prompt, messages=list(self._transcript), tools=tools
            )
            stream_fn = self._stream_fn()
            if prompts:
                await run_agent_loop(prompts, context, config, self._emit, signal, stream_fn)
            else:
                await run_agent_loop_continue(context, config, self._emit, signal, stream_fn)
            if self._continuing:
                workflow.continue_as_new(self._next_input(data))
            if not self._next_segment:
                break
            self._next_segment = False
            if self._waiting:
                await self._wait_for_decisions()
                prompts = []  # the next segment carries the decisions out
            else:
                prompts = self._take("steering") or self._take("follow_up")
        return {
            "messages": messages_to_json(self._transcript[self._new_from :]),
            "limit": None if self._limit is None else event_to_json(self._events[-1])["limit"],
            "unsent": {k: messages_to_json(list(q)) for k, q in self._queues.items()},
        }

    # -- approvals -------------------------------------------------------------------------

    def _pending(self) -> list[ApprovalRequest]:
        return pending_approvals(self._transcript)

    async def _wait_for_decisions(self) -> None:
        """Wait, for days if need be, until every waiting call is decided (or the run is
        aborted: the calls still waiting are then denied, and the next segment gives every
        call its result without asking the model)."""
        signal = self._controller.signal
        await workflow.wait_condition(lambda: not self._pending() or signal.aborted)
        for request in self._pending():
            self._record(ApprovalDecision.deny(request, ABORTED_WHILE_WAITING))
        self._waiting = False

    def _record(self, decision: ApprovalDecision) -> None:
        self._transcript.append(decision)
        self._unannounced.append(decision)

    @workflow.update(name="decide")
    def decide(self, decision: dict[str, Any]) -> None:
        """Record a decision on a waiting call: `{"tool_call_id", "approved", "arguments"
        (edited ones, or None), "reason"}`. The run goes on once every call is decided."""
        with message_clock(_now_ms):
            request = next(r for r in self._pending() if r.tool_call_id == decision["tool_call_id"])
            if decision["approved"]:
                message = ApprovalDecision.approve(request, decision.get("arguments"))
            else:
                message = ApprovalDecision.deny(request, decision.get("reason"))
        self._record(message)

    @decide.validator
    def _check_decision(self, decision: dict[str, Any]) -> None:
        call_id = decision.get("tool_call_id") if isinstance(decision, dict) else None
        waiting = [r.tool_call_id for r in self._pending()] if self._waiting else []
        if call_id not in waiting:
            raise ValueError(
                f"no tool call {call_id!r} waits for a decision (waiting: {waiting or 'none'})"
            )
        arguments = decision.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise ValueError(f"arguments must be a JSON object or None, got {arguments!r}")

    @workflow.query(name="pending_approvals")
    def waiting_calls(self) -> list[dict[str, Any]]:
        """The calls waiting for a decision (JSON form; empty while the run is busy)."""
        return messages_to_json(list(self._pending())) if self._waiting else []

    def _next_input(self, data: dict[str, Any]) -> dict[str, Any]:
        return {
            **data,
            "messages": messages_to_json(self._transcript),
            "prompts": [],
            "state": {
                "requires_approval": self._approval,
                "skills_allow": self._allows,
                "agents": None if self._agents is None else self._agents.description,
                "new_from": self._new_from,
                "events": self._offset + len(self._events),
                "started": self._started,
                "previous_run": workflow.info().run_id,
                "steering": messages_to_json(list(self._queues["steering"])),
                "follow_up": messages_to_json(list(self._queues["follow_up"])),
            },
        }

    def _turns(self) -> int:
        return sum(1 for m in self._transcript[self._new_from :] if m.role == "assistant")

    def _turns_left(self) -> int | None:
        limit = self._options.max_turns
        return None if limit is None else max(limit - self._turns(), 1)

    # -- events ----------------------------------------------------------------------------

    def _emit(self, event: AgentEvent) -> None:
        """Publish one event of the loop, keeping one well-nested sequence across segments."""
        if event.type == "agent_start":
            if self._started:
                return
            self._started = True
        elif event.type == "turn_start" and self._unannounced:
            # the decisions taken while the run waited open the turn that carries them out
            self._events.append(event)
            for message in self._unannounced:
                self._events.append(MessageStartEvent(message=message))
                self._events.append(MessageEndEvent(message=message))
            self._unannounced = []
            return
        elif event.type == "message_end":
            self._transcript.append(event.message)
        elif event.type == "agent_end":
            assert isinstance(event, AgentEndEvent)
            if self._continuing:
                return
            if event.pending_approvals:  # wait for the decisions, then go on: one run
                self._waiting = self._next_segment = True
                return
            if self._more_to_do(event):
                self._next_segment = True
                return
            self._limit = event.limit
            if event.limit is not None and event.limit.kind == "max_turns":
                total = self._options.max_turns
                self._limit = LimitReached(
                    kind="max_turns", limit=total or event.limit.limit, used=self._turns()
                )
            event = AgentEndEvent(
                messages=list(self._transcript[self._new_from :]),
                limit=self._limit,
                pending_approvals=event.pending_approvals,
                last_agent=event.last_agent,
            )
            self._done = True
        self._events.append(event)

    def _more_to_do(self, end: AgentEndEvent) -> bool:
        """Whether messages that arrived after the loop's last poll start another segment
        (not after an abort, a bound or a failed request: they stay queued, in `unsent`)."""
        if self._controller.signal.aborted or end.limit is not None:
            return False
        if not (self._queues["steering"] or self._queues["follow_up"]):
            return False
        last = next((m for m in reversed(self._transcript) if m.role == "assistant"), None)
        return not (isinstance(last, AssistantMessage) and last.stop_reason == "error")

    def _past_history_limit(self, ctx: PrepareNextTurnContext) -> bool:
        """`should_stop_after_turn`: stop to continue as new once the history is long, at the
        end of a turn whose tool results the model must answer."""
        results = ctx.tool_results
        if not results or all(self._terminate.get(r.tool_call_id, False) for r in results):
            return False
        info = workflow.info()
        limit = self._options.history_limit
        if limit is not None:
            over = info.get_current_history_length() >= limit
        else:
            over = info.is_continue_as_new_suggested()
        self._continuing = over
        return over

    # -- queues ----------------------------------------------------------------------------

    def _take(self, kind: str) -> list[AgentMessage]:
        queue = self._queues[kind]
        mode = self._options.steering_mode if kind == "steering" else self._options.follow_up_mode
        if not queue:
            return []
        if mode == "all":
            taken = list(queue)
            queue.clear()
            return taken
        return [queue.popleft()]

    @workflow.signal(name="steer")
    def steer(self, messages: list[dict[str, Any]]) -> None:
        """Queue steering messages (JSON form), injected at the run's next turn."""
        self._queues["steering"].extend(messages_from_json(messages))

    @workflow.signal(name="follow_up")
    def follow_up(self, messages: list[dict[str, Any]]) -> None:
        """Queue follow-up messages (JSON form), sent when the run would otherwise stop."""
        self._queues["follow_up"].extend(messages_from_json(messages))

    @workflow.query(name="events")
    def events(self, since: int) -> dict[str, Any]:
        """The run's events from index `since` (at most 500 per call), and where to go on.

        Events before `first` were published by the run this one continues (`previous_run`),
        which answers the same query.
        """
        start = max(since - self._offset, 0)
        chunk = self._events[start : start + EVENTS_PER_QUERY]
        end = start + len(chunk)
        return {
            "events": [event_to_json(e) for e in chunk],
            "first": self._offset,
            "previous_run": self._previous_run,
            "next": self._offset + end,
            "done": self._done and end >= len(self._events),
        }

    @workflow.query(name="transcript")
    def transcript(self) -> list[dict[str, Any]]:
        """The whole transcript as it stands (JSON form)."""
        return messages_to_json(self._transcript)

    # -- the steps as activities -----------------------------------------------------------

    def _model(self, name: str) -> Model:
        """The workflow's stand-in for the model the workers serve under `name`."""
        model = self._models.get(name)
        if model is None:
            model = self._models[name] = Model(
                id=name, name=name, api="temporal", provider="temporal"
            )
        return model

    def _stream_fn(self) -> Any:
        def stream_fn(
            model: Model, context: Context, options: SimpleStreamOptions
        ) -> AssistantMessageEventStream:
            return AssistantMessageEventStream(self._answer(model, context, options.signal))

        return stream_fn

    async def _answer(
        self, model: Model, context: Context, signal: AbortSignal | None
    ) -> AsyncIterator[Any]:
        """One model request as an activity: `start` now, the final message when it is done.
        The model is the stand-in of the current agent's (its id the name the workers serve it
        under); in a run with handoffs the request names the agent whose tools it offers."""
        options = self._options
        partial = AssistantMessage(api=model.api, provider=model.provider, model=model.id)
        yield StartEvent(partial=partial)
        agent = None if self._agents is None else self._agents.agent_of(context.tools)
        payload = {
            "model": model.id,
            "agent": agent,
            "system_prompt": context.system_prompt,
            "messages": [to_json(m) for m in context.messages],
            "tools": [t.name for t in context.tools],
            "skills": self._skills,
            "options": {
                "reasoning": options.reasoning,
                "temperature": options.temperature,
                "max_tokens": options.max_tokens,
                "session_id": options.session_id,
                "request_timeout": options.request_timeout,
                "idle_timeout": options.idle_timeout,
                "max_retries": options.max_retries,
                "heartbeat_timeout": options.heartbeat_timeout,
            },
        }
        handle = workflow.start_activity(
            MODEL_ACTIVITY,
            payload,
            start_to_close_timeout=timedelta(seconds=options.model_deadline),
            heartbeat_timeout=timedelta(seconds=options.heartbeat_timeout),
            retry_policy=common.RetryPolicy(maximum_attempts=options.max_retries + 1),
            cancellation_type=workflow.ActivityCancellationType.TRY_CANCEL,
        )
        message: AssistantMessage | None = None
        try:
            finished, data = await _unless_aborted(handle, signal)
            if finished:
                answer = from_json(data["message"])
                assert isinstance(answer, AssistantMessage)
                message = answer
                self._approval.update(
                    {approval_key(agent, k): v for k, v in data["requires_approval"].items()}
                )
                self._allows.update(data.get("skills_allow", {}))
        except exceptions.ActivityError as exc:
            message = replace(
                partial,
                stop_reason="error",
                error_message=f"the model request failed: {_cause(exc)}",
            )
        if message is None:  # aborted while the request ran
            yield ErrorEvent(
                reason="aborted",
                error=replace(partial, stop_reason="aborted", error_message=ABORTED),
            )
        elif message.stop_reason == "error" or message.stop_reason == "aborted":
            yield ErrorEvent(reason=message.stop_reason, error=message)
        else:
            yield DoneEvent(reason=message.stop_reason, message=message)

    def _stand_in_of(self, agent: str, name: str) -> AgentTool:
        """The stand-in of the tool `name` the agent `agent` holds (`RunAgents`)."""
        return self._stand_in(name, agent)

    def _stand_in(self, name: str, agent: str | None = None) -> AgentTool:
        """The workflow's side of a tool registered on the workers under `name` (the tool of
        `agent`, in a run started as an agent): it accepts any arguments object (the worker
        validates them against the real schema) and runs there."""

        key = approval_key(agent, name)  # in `_approval`

        async def execute(
            call_id: str, args: Any, signal: AbortSignal, on_update: ToolUpdateCallback
        ) -> AgentToolResult:
            options = self._options
            payload = {
                "tool": name,
                "call_id": call_id,
                "arguments": args,
                "timeout": options.tool_timeout,
                "heartbeat_timeout": options.heartbeat_timeout,
            }
            if agent is not None:
                payload["agent"] = agent
            if name in SKILL_TOOLS and self._skills:
                # the worker reads the skill's files; the workflow only says which skills are
                # active already (from its transcript: deterministic on replay)
                payload["skills"] = self._skills
                payload["active"] = active_skills(self._transcript)
            answers = input_answers(call_id)  # a call run again after its question was answered
            if answers:
                payload["answers"] = {
                    key: {"action": a.action, "content": a.content} for key, a in answers.items()
                }
            handle = workflow.start_activity(
                TOOL_ACTIVITY,
                payload,
                start_to_close_timeout=timedelta(seconds=options.tool_deadline),
                heartbeat_timeout=timedelta(seconds=options.heartbeat_timeout),
                retry_policy=common.RetryPolicy(maximum_attempts=options.max_retries + 1),
                cancellation_type=workflow.ActivityCancellationType.TRY_CANCEL,
            )
            try:
                # The loop delivers an abort by cancelling this task: `_unless_aborted` then
                # cancels the activity and lets the cancellation out.
                _, data = await _unless_aborted(handle, None)
            except exceptions.ActivityError as exc:
                return AgentToolResult.error(f"Tool {name!r} could not be run: {_cause(exc)}")
            for update in data.get("updates", ()):
                on_update(result_from_json(update))
            asked = data.get("input_required")
            if asked is not None:  # the tool asked the user: the call waits, as in-process
                raise InputRequired(asked["key"], asked["message"], asked["schema"])
            result = result_from_json(data)
            self._terminate[call_id] = result.terminate
            return result

        return AgentTool(
            name=name,
            description=f"{name} (runs on a worker)",
            parameters={"type": "object"},
            execute=execute,
            # read per call: the workers tell with every answer which tools need approval
            requires_approval=lambda _args: (
                self._approval.get(key, False) and not self._preapproved(name)
            ),
        )

    def _preapproved(self, tool_name: str) -> bool:
        """Whether a skill active in the transcript lists `tool_name` in its `allowed-tools`
        (as in-process: an exact name, pre-approval for a tool the run already has, never a
        tool added)."""
        if not self._allows:
            return False
        active = active_skills(self._transcript)
        return any(tool_name in self._allows.get(skill, ()) for skill in active)
