"""The agent run as a DBOS workflow: agentcore's own loop, with every step checkpointed.

The workflow runs the real loop (`run_agent_loop`) in the worker's process. The stream function
sends each model request as the `agentcore.model` step, and each tool is a stand-in whose
`execute` runs the `agentcore.tool_started` and `agentcore.tool` steps of the tool registered
under that name. When a worker dies, DBOS recovers the workflow by running it again from the
start: every checkpointed step returns its recorded result instead of running, so the loop makes
the same decisions and goes on from the first step without one.

DBOS identifies a checkpoint by its position in the workflow, so the workflow's steps must be
taken in the same order on every execution: a run's tool calls run one after another (the
model's order), never at once. Messages made in the workflow take their timestamps from the
last checkpointed step (`message_clock`), so a recovery rebuilds the same transcript.

Events go to watchers through a DBOS stream (`agentcore.events`): the events between two steps
are written as one entry, just before the next step (a write is a checkpoint, so a recovery does
not write them again). A run that stops for approvals publishes the waiting calls as the
`agentcore.pending_approvals` event and waits, for days if need be, for decisions sent to it.

The caller's abort (`DurableRun.abort`) is a workflow attribute the steps look for: a step that
finds it returns its result cut off and marked, and the workflow aborts its loop on that mark, so
every tool call still gets its one result and the run completes. The workflow learns of an abort
only from checkpointed step results (and the decision wait's messages), never from a read of its
own, so a recovery makes the same decisions.

A run started as an agent (`start_run(agent=...)`) describes its agents in its first step
(`agentcore.agents`); a recovery gets the checkpointed description back, and the loop reads who
has the conversation from the transcript, so the run goes on in the right agent
(`agentcore.durable_handoffs`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .. import run_agent_loop, run_agent_loop_continue
from ..abort import AbortController, AbortSignal
from ..approvals import ApprovalDecision, InputRequired, input_answers, pending_approvals
from ..config import AgentContext
from ..durable import (
    RunOptions,
    event_to_json,
    messages_from_json,
    messages_to_json,
    result_from_json,
)
from ..durable_handoffs import RunAgents, approval_key
from ..errors import ConfigError
from ..events import AgentEndEvent, AgentEvent, MessageEndEvent, MessageStartEvent
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
from ..tools import AgentTool, AgentToolResult, ToolExecutionMode, ToolUpdateCallback
from ._names import (
    ABORTED_WHILE_WAITING,
    DECIDE_TOPIC,
    EVENTS_STREAM,
    PENDING_EVENT,
    SKILL_TOOLS,
    WORKFLOW_NAME,
)
from ._sdk import dbos
from ._steps import agents_step, model_step, started_step, tool_step

__all__ = ["agent_run"]

DBOS = dbos.DBOS
WAIT_SECONDS = 24 * 3600.0  # one wait for a decision (then it waits again)


class _Run:
    """The state of one execution of the workflow."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.options = RunOptions.from_json(data["options"])
        self.transcript: list[AgentMessage] = messages_from_json(data["messages"])
        self.new_from = len(self.transcript)
        self.clock: int = data["started_at"]
        self.buffer: list[dict[str, Any]] = []
        self.approval: dict[str, bool] = {}
        self.skills: list[str] = list(data.get("skills") or ())
        self.allows: dict[str, list[str]] = {}  # each skill's allowed-tools (from the workers)
        self.unannounced: list[AgentMessage] = []
        self.started = False
        self.waiting = False
        self.limit: dict[str, Any] | None = None
        self.controller = AbortController()
        self.agents: RunAgents | None = None  # a run started as an agent: its agents

    def now(self) -> int:
        return self.clock

    def saw(self, at: int) -> None:
        self.clock = max(self.clock, at)

    async def flush(self) -> None:
        if self.buffer:
            entry, self.buffer = self.buffer, []
            await DBOS.write_stream_async(EVENTS_STREAM, entry)

    def emit(self, event: AgentEvent) -> None:
        if event.type == "agent_start":
            if self.started:
                return
            self.started = True
        elif event.type == "turn_start" and self.unannounced:
            self.buffer.append(event_to_json(event))
            for message in self.unannounced:
                self.buffer.append(event_to_json(MessageStartEvent(message=message)))
                self.buffer.append(event_to_json(MessageEndEvent(message=message)))
            self.unannounced = []
            return
        elif event.type == "message_end":
            self.transcript.append(event.message)
        elif event.type == "agent_end":
            assert isinstance(event, AgentEndEvent)
            if event.pending_approvals:
                self.waiting = True
                return
            event = AgentEndEvent(
                messages=list(self.transcript[self.new_from :]),
                limit=event.limit,
                pending_approvals=(),
                guardrail=event.guardrail,
                last_agent=event.last_agent,
            )
            self.limit = event_to_json(event)["limit"]
        self.buffer.append(event_to_json(event))

    async def wait_for_decisions(self) -> None:
        """Publish the waiting calls, and take decisions until none waits."""
        await self.flush()
        while pending := pending_approvals(self.transcript):
            await DBOS.set_event_async(PENDING_EVENT, messages_to_json(list(pending)))
            decision = await DBOS.recv_async(DECIDE_TOPIC, timeout_seconds=WAIT_SECONDS)
            if not isinstance(decision, dict):
                continue  # the wait timed out: wait again
            if decision.get("abort"):  # the calls still waiting are denied, the loop aborted
                with message_clock(self.now):
                    for waiting in pending:
                        denial = ApprovalDecision.deny(waiting, ABORTED_WHILE_WAITING)
                        self.transcript.append(denial)
                        self.unannounced.append(denial)
                self.controller.abort(str(decision.get("reason") or "aborted"))
                break
            request = next(
                (r for r in pending if r.tool_call_id == decision.get("tool_call_id")), None
            )
            if request is None:
                continue  # checked by the sender; a stale one is dropped
            with message_clock(self.now):
                if decision.get("approved"):
                    arguments = decision.get("arguments")
                    message = ApprovalDecision.approve(
                        request, arguments if isinstance(arguments, dict) else None
                    )
                else:
                    message = ApprovalDecision.deny(request, decision.get("reason"))
            self.transcript.append(message)
            self.unannounced.append(message)
        await DBOS.set_event_async(PENDING_EVENT, [])
        self.waiting = False

    # -- the steps ---------------------------------------------------------------------

    def stream_fn(self) -> Any:
        def stream_fn(
            model: Model, context: Context, options: SimpleStreamOptions
        ) -> AssistantMessageEventStream:
            return AssistantMessageEventStream(self.answer(model, context, options.signal))

        return stream_fn

    async def answer(self, model: Model, context: Context, signal: AbortSignal | None) -> Any:
        """One model request as a step; the model is a stand-in whose id is the name the
        workers serve it under (the current agent's, in a run started as an agent)."""
        options = self.options
        partial = AssistantMessage(api=model.api, provider=model.provider, model=model.id)
        yield StartEvent(partial=partial)
        await self.flush()
        agent = None if self.agents is None else self.agents.agent_of(context.tools)
        payload = {
            "model": model.id,
            "agent": agent,
            "system_prompt": context.system_prompt,
            "messages": [to_json(m) for m in context.messages],
            "tools": [t.name for t in context.tools],
            "skills": self.skills,
            "options": {
                "reasoning": options.reasoning,
                "temperature": options.temperature,
                "max_tokens": options.max_tokens,
                "session_id": options.session_id,
                "request_timeout": options.request_timeout,
                "idle_timeout": options.idle_timeout,
                "max_retries": options.max_retries,
            },
        }
        data = await model_step(payload)
        if "aborted" in data:
            self.controller.abort(data["aborted"])
            self.saw(data["at"])
        if "error" in data:
            message = replace(
                partial,
                stop_reason="error",
                error_message=f"the model request failed: {data['error']}",
            )
        else:
            answer = from_json(data["message"])
            assert isinstance(answer, AssistantMessage)
            message = answer
            self.approval.update(
                {approval_key(agent, k): v for k, v in data["requires_approval"].items()}
            )
            self.allows.update(data.get("skills_allow", {}))
            self.saw(data["at"])
        if message.stop_reason == "error" or message.stop_reason == "aborted":
            yield ErrorEvent(reason=message.stop_reason, error=message)
        else:
            yield DoneEvent(reason=message.stop_reason, message=message)

    def stand_in(self, name: str, agent: str | None = None) -> AgentTool:
        """The workflow's side of tool `name` (of agent `agent`, in a run started as one)."""
        key = approval_key(agent, name)

        async def execute(
            call_id: str, args: Any, signal: AbortSignal, on_update: ToolUpdateCallback
        ) -> AgentToolResult:
            payload: dict[str, Any] = {
                "tool": name,
                "call_id": call_id,
                "arguments": args,
                "timeout": self.options.tool_timeout,
            }
            if agent is not None:
                payload["agent"] = agent
            if name in SKILL_TOOLS and self.skills:
                # the worker reads the skill's files; the workflow says which are active
                payload["skills"] = self.skills
                payload["active"] = active_skills(self.transcript)
            answers = input_answers(call_id)
            if answers:
                payload["answers"] = {
                    key: {"action": a.action, "content": a.content} for key, a in answers.items()
                }
            await self.flush()
            token = await started_step(call_id)
            data = await tool_step(payload, token)
            self.saw(data["at"])
            if "aborted" in data:  # (no await after this: the result is the call's)
                self.controller.abort(data["aborted"])
            for update in data.get("updates", ()):
                on_update(result_from_json(update))
            asked = data.get("input_required")
            if asked is not None:
                raise InputRequired(asked["key"], asked["message"], asked["schema"])
            return result_from_json(data)

        return AgentTool(
            name=name,
            description=f"{name} (runs on a worker)",
            parameters={"type": "object"},
            execute=execute,
            requires_approval=lambda _args: (
                self.approval.get(key, False) and not self.preapproved(name)
            ),
        )

    def preapproved(self, tool_name: str) -> bool:
        """Whether a skill active in the transcript lists `tool_name` in its `allowed-tools`
        (as in-process: pre-approval for a tool the run has, never a tool added)."""
        if not self.allows:
            return False
        active = active_skills(self.transcript)
        return any(tool_name in self.allows.get(skill, ()) for skill in active)


@DBOS.workflow(name=WORKFLOW_NAME)
async def agent_run(data: dict[str, Any]) -> dict[str, Any]:
    """One durable agent run (start it with `agentcore.dbos.start_run`); returns
    `{"messages", "limit"}` as JSON."""
    run = _Run(data)
    with message_clock(run.now):
        model = _model(data["model"])
        names = list(data["tools"]) + (list(SKILL_TOOLS) if run.skills else [])
        tools = [run.stand_in(tool_name) for tool_name in names]
        system_prompt: str = data["system_prompt"]
        first: dict[str, Any] = {}  # the first agent's config fields (a run started as one)
        if data.get("agent") is not None:  # (durable_handoffs: the loop switches between them)
            described = await agents_step(data["agent"])
            if "error" in described:
                raise ConfigError(f"the run's agents could not be described: {described['error']}")
            run.agents = RunAgents(described, lambda a, t: run.stand_in(t, a), _model)
            system_prompt, tools = run.agents.first.system_prompt, run.agents.tools
            first = run.agents.config()
            model = run.agents.first.model or model
        prompts = messages_from_json(data["prompts"])
        if pending_approvals(run.transcript):
            await run.wait_for_decisions()
        while True:
            config = run.options.loop_config(
                model,
                tool_execution=ToolExecutionMode.SEQUENTIAL,
                max_turns=_turns_left(run),
                **first,
            )
            context = AgentContext(
                system_prompt=system_prompt, messages=list(run.transcript), tools=tools
            )
            stream_fn = run.stream_fn()
            signal = run.controller.signal
            if prompts:
                await run_agent_loop(prompts, context, config, run.emit, signal, stream_fn)
            else:
                await run_agent_loop_continue(context, config, run.emit, signal, stream_fn)
            if not run.waiting:
                break
            await run.wait_for_decisions()
            prompts = []
        await run.flush()
    return {"messages": messages_to_json(run.transcript[run.new_from :]), "limit": run.limit}


def _model(name: str) -> Model:
    """The workflow's stand-in for the model the workers serve under `name`."""
    return Model(id=name, name=name, api="dbos", provider="dbos")


def _turns_left(run: _Run) -> int | None:
    limit = run.options.max_turns
    done = sum(1 for m in run.transcript[run.new_from :] if m.role == "assistant")
    return None if limit is None else max(limit - done, 1)
