"""The worker side: one model request and one tool call, each as a Temporal activity.

Models and tools are registered on the worker by name; the workflow sends names, the transcript
and the arguments, never a model object, a function or an API key. A provider reads its key on the
worker (from the environment, or the `get_api_key` the worker was given).

While an activity runs it heartbeats, per streamed event and every third of the heartbeat timeout
in between, so a worker that dies is noticed within that timeout and the activity is retried on
another worker. When the workflow cancels an activity (an abort), the next heartbeat brings the
cancellation: the run's `AbortSignal` fires, a model stream ends aborted, a tool is cancelled.

Skills are registered on the worker too (`skills=load_skills(...)`): a run names the ones it may
use, the model activity puts their catalogue in the request's system prompt, and `activate_skill`
and `read_skill_file` run as tool activities over the worker's files, through the same code as an
in-process run (`agentcore.skills.skill_tools`, `skill_catalogue`). The
workflow sends names, and which skills its transcript has activated; it never reads a file.

Agents are registered too (`agents=[AgentSpec, ...]`): the `agentcore.agents` activity describes
a run's agents once, when it starts, and every model request and tool call of such a run names
its agent, whose own tools answer (`agentcore.durable_handoffs`).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread

from ..abort import AbortController
from ..approvals import InputAnswer, InputRequired, answering_inputs
from ..durable import result_to_json
from ..durable_handoffs import AGENTS_STEP, agent_tool, describe_agents, serve_agents
from ..errors import ConfigError
from ..handoffs import AgentSpec
from ..llm import Context, Model, SimpleStreamOptions, stream_simple
from ..messages import AssistantMessage, Message, TextContent, from_json, to_json
from ..skills import Skill, skill_catalogue, skill_tools, skills_by_name
from ..tools import AgentTool, AgentToolResult
from ._sdk import activity, exceptions

__all__ = ["MODEL_ACTIVITY", "SKILL_TOOLS", "TOOL_ACTIVITY", "Activities", "DurableTool"]

MODEL_ACTIVITY = "agentcore.model"
TOOL_ACTIVITY = "agentcore.tool"
SKILL_TOOLS = ("activate_skill", "read_skill_file")
"""The tools a run with skills has besides its own, served by the worker's skills."""

NOT_RETRIED = (
    "Tool {name!r} was interrupted (the worker running it stopped) and is not run again: it is "
    "registered with retry=False, so it runs at most once."
)


@dataclass(frozen=True, slots=True)
class DurableTool:
    """A tool as a worker registers it, with how its activity may be retried.

    Attributes:
        tool: the tool.
        retry: False for a tool that must run at most once (a payment, an email): if its worker
            dies while it runs, the call gets an error result saying so instead of running
            again. True (the default) runs it again on another worker, so such a tool should be
            idempotent. A call that finished is never run again either way: its result is in the
            workflow's history.
    """

    tool: AgentTool
    retry: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.tool, AgentTool):
            raise ConfigError(
                f"DurableTool.tool must be an AgentTool (use @tool), got {type(self.tool).__name__}"
            )


def _error(text: str) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text=text)], is_error=True)


def _text(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


@asynccontextmanager
async def _heartbeating(interval: float) -> AsyncIterator[None]:
    """Heartbeat every `interval` seconds while the block runs.

    An exception the block raises leaves as itself, not wrapped in the heartbeat's task group's
    `ExceptionGroup` (whose text, "unhandled errors in a TaskGroup", would otherwise become a
    tool's error result or an activity's failure message).
    """

    async def beat() -> None:
        while True:
            activity.heartbeat()
            await anyio.sleep(interval)

    raised: Exception | None = None
    async with anyio.create_task_group() as group:
        group.start_soon(beat)
        try:
            yield
        except Exception as exc:  # raised below, out of the task group
            raised = exc
        finally:
            group.cancel_scope.cancel()
    if raised is not None:
        raise raised


def _interval(payload: Mapping[str, Any]) -> float:
    return max(float(payload.get("heartbeat_timeout", 30.0)) / 3, 0.05)


class Activities:
    """The model and tool activities of one worker, over its registered models and tools.

    Args:
        models: the models this worker serves, by the name runs use.
        tools: the tools this worker serves (`AgentTool`, or `DurableTool` to say how it is
            retried), registered under their names.
        get_api_key: resolves a provider's key on the worker, `(provider) -> str | None`.
        skills: the Agent Skills this worker serves (`load_skills(...)`, or a sequence of
            `Skill`), by the names runs use (`start_run(skills=[...])`).
        agents: the agents this worker serves (and every agent their handoffs reach), by the
            names runs use (`start_run(agent=...)`).
    """

    def __init__(
        self,
        models: Mapping[str, Model],
        tools: Sequence[AgentTool | DurableTool],
        get_api_key: Callable[[str], str | Awaitable[str | None] | None] | None = None,
        skills: Iterable[Skill] = (),
        agents: Iterable[AgentSpec] = (),
    ) -> None:
        self.models: dict[str, Model] = {}
        for name, model in models.items():
            if not isinstance(model, Model):
                raise ConfigError(
                    f"models[{name!r}] must be an agentcore.llm.Model, got {type(model).__name__}"
                )
            self.models[name] = model
        self.tools: dict[str, DurableTool] = {}
        for entry in tools:
            entry = entry if isinstance(entry, DurableTool) else DurableTool(entry)
            if entry.tool.name in self.tools:
                raise ConfigError(f"the tool name {entry.tool.name!r} is registered twice")
            self.tools[entry.tool.name] = entry
        self.get_api_key = get_api_key
        self.skills = skills_by_name(skills)
        if self.skills:
            for name in SKILL_TOOLS:
                if name in self.tools:
                    raise ConfigError(
                        f"the tool name {name!r} is the skills' own: a worker that serves "
                        "skills cannot register a tool of that name"
                    )
        self.agents = serve_agents(agents, self.models)

    def _agent_tool(self, agent: str, name: str) -> DurableTool | None:
        """The tool `name` of the agent `agent` (the entry registered for that very tool, for
        its retry policy), or None when the agent holds no tool of that name. An agent not
        served here fails the activity for good."""
        found = agent_tool(self.agents, agent, name)
        if isinstance(found, str):
            raise exceptions.ApplicationError(found, type="UnknownAgent", non_retryable=True)
        if found is None:
            return None
        entry = self.tools.get(name)
        return entry if entry is not None and entry.tool is found else DurableTool(found)

    def _run_skills(self, names: Sequence[str]) -> list[Skill]:
        """The registered skills a run named, in its order (an unknown name fails the
        activity for good: retrying on this worker cannot help)."""
        missing = [n for n in names if n not in self.skills]
        if missing:
            raise exceptions.ApplicationError(
                f"no skill named {', '.join(map(repr, missing))} is registered on this worker "
                f"(registered: {sorted(self.skills) or 'none'})",
                type="UnknownSkill",
                non_retryable=True,
            )
        return [self.skills[n] for n in names]

    def _skill_tool(self, name: str, payload: Mapping[str, Any]) -> AgentTool | None:
        """The skill tool `name` of a run over the skills its payload names (None when the run
        has no skills or `name` is not a skill tool). `activate_skill` answers from the
        `active` names the workflow read from its transcript."""
        names = payload.get("skills") or ()
        if name not in SKILL_TOOLS or not names:
            return None
        active = frozenset(payload.get("active") or ())
        tools = skill_tools(self._run_skills(names), active=lambda: active)
        assert tuple(t.name for t in tools) == SKILL_TOOLS
        return tools[SKILL_TOOLS.index(name)]

    def all(self) -> list[Callable[..., Any]]:
        """The activity functions, for `temporalio.worker.Worker(activities=...)`."""
        return [self.model, self.tool, self.describe_agents]

    # -- the agents of a run -------------------------------------------------------------

    @activity.defn(name=AGENTS_STEP)
    async def describe_agents(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The run's first agent and every agent it can reach, described for the workflow
        (`agentcore.durable_handoffs.describe_agents`; an unknown agent fails it for good)."""
        try:
            return describe_agents(self.agents, payload["agent"], self.models)
        except ConfigError as exc:
            raise exceptions.ApplicationError(
                str(exc), type="UnknownAgent", non_retryable=True
            ) from None

    # -- the model request ---------------------------------------------------------------

    @activity.defn(name=MODEL_ACTIVITY)
    async def model(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Send one request with the registered model; returns its final message, and which of
        the run's tools need approval (the workflow learns it from the first answer, before any
        call can run; a `requires_approval` that is a function counts as True: the workflow
        cannot call it)."""
        name = payload["model"]
        model = self.models.get(name)
        if model is None:
            raise exceptions.ApplicationError(
                f"no model named {name!r} is registered on this worker "
                f"(registered: {sorted(self.models) or 'none'})",
                type="UnknownModel",
                non_retryable=True,
            )
        tools = []
        approval: dict[str, bool] = {}
        skills = self._run_skills(payload.get("skills") or ())
        own = {t.name: t for t in skill_tools(skills)} if skills else {}
        agent = payload.get("agent")
        for tool_name in payload["tools"]:
            skill_tool = own.get(tool_name)
            if skill_tool is not None:
                tools.append(skill_tool.llm_tool)
                approval[tool_name] = False
                continue
            if agent is not None:  # (a run with handoffs) a tool the current agent holds
                entry = self._agent_tool(agent, tool_name)
            else:
                entry = self.tools.get(tool_name)
            if entry is None:
                raise exceptions.ApplicationError(
                    f"no tool named {tool_name!r} is registered on this worker "
                    f"(registered: {sorted(self.tools) or 'none'})",
                    type="UnknownTool",
                    non_retryable=True,
                )
            tools.append(entry.tool.llm_tool)
            approval[tool_name] = entry.tool.requires_approval is not False
        messages: list[Message] = [from_json(m) for m in payload["messages"]]
        system_prompt = payload["system_prompt"]
        if skills:  # as in-process: the run's system prompt, then the catalogue
            system_prompt = "\n\n".join(p for p in (system_prompt, skill_catalogue(skills)) if p)
        context = Context(system_prompt=system_prompt, messages=messages, tools=tools)
        opts = payload["options"]
        controller = AbortController()
        api_key = None
        if self.get_api_key is not None:
            key = self.get_api_key(model.provider)
            api_key = await key if inspect.isawaitable(key) else key
        options = SimpleStreamOptions(
            signal=controller.signal,
            api_key=api_key,
            reasoning=None if opts["reasoning"] == "off" else opts["reasoning"],
            temperature=opts["temperature"],
            max_tokens=opts["max_tokens"],
            session_id=opts["session_id"],
            request_timeout=opts["request_timeout"],
            idle_timeout=opts["idle_timeout"],
            max_retries=opts["max_retries"],
        )
        try:
            async with _heartbeating(_interval(opts)):
                stream = stream_simple(model, context, options)
                async for _event in stream:
                    activity.heartbeat()
                final: AssistantMessage = await stream.result()
        except BaseException:
            controller.abort("the activity was cancelled")
            raise
        return {
            "message": to_json(final),
            "requires_approval": approval,
            # each skill's `allowed-tools`: pre-approval while it is active (the workflow
            # knows which are active; it learns what they allow from here)
            "skills_allow": {s.name: list(s.allowed_tools) for s in skills},
        }

    # -- the tool call -------------------------------------------------------------------

    @activity.defn(name=TOOL_ACTIVITY)
    async def tool(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Run one tool call: prepare and validate the arguments, execute, check the value.

        Every failure is an error result for the model, worded as in an in-process run.
        """
        name = payload["tool"]
        try:
            skill_tool = self._skill_tool(name, payload)
        except exceptions.ApplicationError as exc:
            return result_to_json(_error(str(exc.message)))
        agent = payload.get("agent")
        entry: DurableTool | None
        if skill_tool is not None:
            entry = DurableTool(skill_tool)
        elif agent is not None:  # (a run with handoffs) the tool of the agent that called it
            try:
                entry = self._agent_tool(agent, name)
            except exceptions.ApplicationError as exc:
                return result_to_json(_error(str(exc.message)))
        else:
            entry = self.tools.get(name)
        updates: list[AgentToolResult] = []
        result: AgentToolResult | InputRequired
        if entry is None:
            result = _error(f"Tool {name} not found")
        elif activity.info().attempt > 1 and not entry.retry:
            result = _error(NOT_RETRIED.format(name=name))
        else:
            result = await self._call(entry.tool, payload, updates)
        asked = None
        if isinstance(result, InputRequired):  # the workflow makes the call wait
            asked = {"key": result.key, "message": result.message, "schema": result.schema}
            result = AgentToolResult.text(result.message)
        try:
            data = result_to_json(result)
        except Exception as exc:
            data = result_to_json(
                _error(f"tool {name!r} returned details that are not JSON: {exc}")
            )
        data["updates"] = [result_to_json(u) for u in updates]
        if asked is not None:
            data["input_required"] = asked
        return data

    async def _call(
        self, tool: AgentTool, payload: dict[str, Any], updates: list[AgentToolResult]
    ) -> AgentToolResult | InputRequired:
        raw = payload["arguments"]
        try:
            prepared = tool.prepare_arguments(raw)
            args = tool.validator.validate(raw if prepared is None else prepared)
        except Exception as exc:
            return _error(_text(exc))
        timeout = tool.timeout if tool.timeout is not None else payload.get("timeout")
        controller = AbortController()
        call_id = payload["call_id"]

        async def execute() -> Any:
            try:
                return await run()
            except InputRequired as exc:  # a value, out of the heartbeat's task group
                return exc

        async def run() -> Any:
            if tool.is_async():
                value = tool.execute(call_id, args, controller.signal, updates.append)
            else:
                value = await anyio.to_thread.run_sync(
                    tool.execute,
                    call_id,
                    args,
                    controller.signal,
                    updates.append,
                    abandon_on_cancel=True,
                )
            if inspect.isawaitable(value):
                value = await value
            return value

        value: Any = None
        answers = {
            key: InputAnswer(a["action"], a.get("content"))
            for key, a in (payload.get("answers") or {}).items()
        }
        try:
            async with _heartbeating(_interval(payload)):
                with anyio.move_on_after(timeout) as deadline, answering_inputs(call_id, answers):
                    value = await execute()
        except Exception as exc:
            return _error(_text(exc))
        except BaseException:
            controller.abort("the activity was cancelled")
            raise
        if isinstance(value, InputRequired):  # the tool asks the user (see agentcore.approvals)
            return value
        if deadline.cancelled_caught:
            controller.abort("timed out")
            assert timeout is not None
            return _error(f"Tool {tool.name!r} timed out after {timeout:g} s.")
        if not isinstance(value, AgentToolResult):
            return _error(
                f"tool {tool.name!r} returned {type(value).__name__}; expected AgentToolResult "
                "(use @tool to return plain values)"
            )
        return value
