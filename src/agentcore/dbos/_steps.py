"""The worker side: one model request and one tool call, each a DBOS step.

Models and tools are registered on the worker by name (`Registry`); the workflow sends names, the
transcript and the arguments, never a model object, a function or an API key. A provider reads
its key on the worker (from the environment, or the `get_api_key` the worker was given).

DBOS checkpoints a step's result when it returns; a step cut off by the end of its process runs
again when the workflow is recovered. For a tool call that is not good enough: before a tool runs,
a `started` step is checkpointed, holding a token of the process that records it. When the tool's
own step then finds a token another process recorded (the call started before a crash and never
finished), a tool registered with `retry=False` is not run again: its call gets an error result
saying so. A tool with `retry=True` (the default) runs again, so it should be idempotent.

Skills are registered on the worker too (`Registry(skills=...)`): the model step puts the
catalogue of the skills a run names after its system prompt, and `activate_skill` and
`read_skill_file` run as tool steps over the worker's files, through the in-process code
(`agentcore.skills.skill_tools`, `skill_catalogue`). The workflow sends names, and which skills
its transcript has activated; it never reads a file.

Agents are registered too (`Registry(agents=[AgentSpec, ...])`): the `agentcore.agents` step
describes a run's agents once, when it starts, and every model request and tool call of such a
run names its agent, whose own tools answer (`agentcore.durable_handoffs`).
"""

from __future__ import annotations

import inspect
import time
import uuid
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
from ._names import ABORT_ATTRIBUTE, SKILL_TOOLS
from ._sdk import dbos

__all__ = [
    "ABORTED_BEFORE_START",
    "ABORTED_WHILE_RUNNING",
    "NOT_RETRIED",
    "DurableTool",
    "Registry",
    "agents_step",
    "model_step",
    "registry",
    "started_step",
    "tool_step",
    "use",
]

NOT_RETRIED = (
    "Tool {name!r} was interrupted (the worker running it stopped) and is not run again: it is "
    "registered with retry=False, so it runs at most once."
)

ABORTED_BEFORE_START = "Tool call was not executed: the run was aborted."
"""The result of a call whose run the caller aborted before it started (the in-process words)."""

ABORTED_WHILE_RUNNING = "Tool execution was aborted."
"""The result of a call the caller's abort cut off (the in-process loop's words)."""

ABORT_POLL_SECONDS = 0.1
"""How often a running step looks for the caller's abort (a step shorter than this never does)."""

_FRESH: set[str] = set()
"""The `started` tokens this process recorded (a token not in it was recorded before a crash)."""


@dataclass(frozen=True, slots=True)
class DurableTool:
    """A tool as a worker registers it, with whether its call may run again after a crash.

    Attributes:
        tool: the tool.
        retry: False for a tool that must run at most once (a payment, an email): if its worker
            dies while it runs, the call gets an error result saying so instead of running
            again. True (the default) runs it again when the run is recovered, so such a tool
            should be idempotent. A call that finished is never run again either way: its
            result is checkpointed in the system database.
    """

    tool: AgentTool
    retry: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.tool, AgentTool):
            raise ConfigError(
                f"DurableTool.tool must be an AgentTool (use @tool), got {type(self.tool).__name__}"
            )


class Registry:
    """The models and tools a worker serves, by name.

    Args:
        models: the models, by the name runs use.
        tools: the tools (`AgentTool`, or `DurableTool` to say whether a call may run again).
        get_api_key: resolves a provider's key on the worker, `(provider) -> str | None`.
        skills: the Agent Skills (`load_skills(...)`), by the names runs use.
        agents: the agents (and every agent their handoffs reach), by the names runs use
            (`start_run(agent=...)`).
    """

    def __init__(
        self,
        models: Mapping[str, Model] | None = None,
        tools: Sequence[AgentTool | DurableTool] = (),
        get_api_key: Callable[[str], str | Awaitable[str | None] | None] | None = None,
        skills: Iterable[Skill] = (),
        agents: Iterable[AgentSpec] = (),
    ) -> None:
        self.models: dict[str, Model] = {}
        for name, model in (models or {}).items():
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
            for tool_name in SKILL_TOOLS:
                if tool_name in self.tools:
                    raise ConfigError(
                        f"the tool name {tool_name!r} is the skills' own: a worker that serves "
                        "skills cannot register a tool of that name"
                    )
        self.agents = serve_agents(agents, self.models)

    def tool(self, name: str, agent: str | None) -> DurableTool | str | None:
        """The tool `name` a run's call means: the registered one, or in a run started as an
        agent the tool of that agent (the entry registered for that very tool, for its retry
        policy); None when there is none of that name, the error text for an unknown agent."""
        if agent is None:
            return self.tools.get(name)
        found = agent_tool(self.agents, agent, name)
        if found is None or isinstance(found, str):
            return found
        entry = self.tools.get(name)
        return entry if entry is not None and entry.tool is found else DurableTool(found)

    def run_skills(self, names: Sequence[str]) -> list[Skill] | str:
        """The registered skills a run named, in its order, or the error text naming those
        that are not."""
        missing = [n for n in names if n not in self.skills]
        if missing:
            return (
                f"no skill named {', '.join(map(repr, missing))} is registered on this worker "
                f"(registered: {sorted(self.skills) or 'none'})"
            )
        return [self.skills[n] for n in names]


registry = Registry()
"""What this process's worker serves (set by `launch_worker`)."""


def use(new: Registry) -> None:
    """Serve `new` in this process."""
    global registry
    registry = new


def _error(text: str) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text=text)], is_error=True)


def _text(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _now_ms() -> int:
    return int(time.time() * 1000)


async def _abort_reason() -> str | None:
    """The reason `DurableRun.abort` gave for this step's run, or None if it was not aborted
    (the run's workflow attribute, read from the system database)."""
    status = await dbos.DBOS.get_workflow_status_async(dbos.DBOS.workflow_id or "")
    attributes = getattr(status, "attributes", None)
    if not isinstance(attributes, dict) or ABORT_ATTRIBUTE not in attributes:
        return None
    return str(attributes[ABORT_ATTRIBUTE])


@asynccontextmanager
async def _abort_watch(
    on_abort: Callable[[str], None], *, first_after: float = 0.0
) -> AsyncIterator[None]:
    """Call `on_abort(reason)` when the caller aborted the run before the step started or
    aborts it while the step runs: the system database is read after `first_after` seconds
    and then every `ABORT_POLL_SECONDS`, beside the step's work, never before it (a step that
    ends first is not delayed; the read is dropped)."""

    async def watch() -> None:
        await anyio.sleep(first_after)
        while True:
            reason = await _abort_reason()
            if reason is not None:
                on_abort(reason)
                return
            await anyio.sleep(ABORT_POLL_SECONDS)

    async with anyio.create_task_group() as group:
        group.start_soon(watch)
        try:
            yield
        finally:
            group.cancel_scope.cancel()


@dbos.DBOS.step(name="agentcore.model", retries_allowed=False, preemptible=True)
async def model_step(payload: dict[str, Any]) -> dict[str, Any]:
    """Send one request with the registered model; returns its final message and which of the
    run's tools need approval (a `requires_approval` that is a function counts as True).

    A request of a run the caller aborted (before or while it streams) is cut off: the step
    returns the answer so far (`stop_reason` "aborted") with `"aborted"` set, and the workflow
    aborts its loop on that checkpointed result."""
    name = payload["model"]
    model = registry.models.get(name)
    if model is None:
        return {
            "error": f"no model named {name!r} is registered on this worker "
            f"(registered: {sorted(registry.models) or 'none'})"
        }
    tools = []
    approval: dict[str, bool] = {}
    skills = registry.run_skills(payload.get("skills") or ())
    if isinstance(skills, str):
        return {"error": skills}
    own = {t.name: t for t in skill_tools(skills)} if skills else {}
    for tool_name in payload["tools"]:
        skill_tool = own.get(tool_name)
        if skill_tool is not None:
            tools.append(skill_tool.llm_tool)
            approval[tool_name] = False
            continue
        entry = registry.tool(tool_name, payload.get("agent"))
        if isinstance(entry, str):
            return {"error": entry}
        if entry is None:
            return {
                "error": f"no tool named {tool_name!r} is registered on this worker "
                f"(registered: {sorted(registry.tools) or 'none'})"
            }
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
    if registry.get_api_key is not None:
        key = registry.get_api_key(model.provider)
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
        async with _abort_watch(controller.abort):
            final: AssistantMessage = await stream_simple(model, context, options).result()
    except BaseException:
        controller.abort("the step was cancelled")
        raise
    data = {
        "message": to_json(final),
        "requires_approval": approval,
        "at": _now_ms(),
        # each skill's `allowed-tools`: pre-approval while it is active
        "skills_allow": {s.name: list(s.allowed_tools) for s in skills},
    }
    if final.stop_reason == "aborted":
        data["aborted"] = str(controller.signal.reason)
    return data


@dbos.DBOS.step(name=AGENTS_STEP, retries_allowed=False)
async def agents_step(agent: str) -> dict[str, Any]:
    """Describe a run's first agent and every agent it can reach, for the workflow
    (`agentcore.durable_handoffs.describe_agents`), or `{"error": ...}` naming what is wrong."""
    try:
        return describe_agents(registry.agents, agent, registry.models)
    except ConfigError as exc:
        return {"error": str(exc)}


@dbos.DBOS.step(name="agentcore.tool_started", retries_allowed=False)
async def started_step(call_id: str) -> str:
    """Checkpoint that tool call `call_id` is about to run; a token of this process."""
    token = f"{call_id}:{uuid.uuid4().hex}"
    _FRESH.add(token)
    return token


@dbos.DBOS.step(name="agentcore.tool", retries_allowed=False, preemptible=True)
async def tool_step(payload: dict[str, Any], token: str) -> dict[str, Any]:
    """Run one tool call: prepare and validate the arguments, execute, check the value. Every
    failure is an error result for the model, worded as in an in-process run. The caller's
    abort is looked for before the tool starts (then it does not) and while it runs (then its
    `AbortSignal` fires and it is cancelled); either way the call ends with the in-process
    loop's aborted result and `"aborted"` set."""
    name = payload["tool"]
    found = registry.tool(name, payload.get("agent"))
    if isinstance(found, str):
        return {**result_to_json(_error(found)), "at": _now_ms()}
    entry = found
    names = payload.get("skills") or ()
    if name in SKILL_TOOLS and names:
        skills = registry.run_skills(names)
        if isinstance(skills, str):
            return {**result_to_json(_error(skills)), "at": _now_ms()}
        active = frozenset(payload.get("active") or ())
        entry = DurableTool(skill_tools(skills, active=lambda: active)[SKILL_TOOLS.index(name)])
    updates: list[AgentToolResult] = []
    result: AgentToolResult | InputRequired
    fresh = token in _FRESH
    _FRESH.discard(token)
    aborted: str | None = None
    if entry is None:
        result = _error(f"Tool {name} not found")
    elif not fresh and not entry.retry:
        result = _error(NOT_RETRIED.format(name=name))
    elif (aborted := await _abort_reason()) is not None:  # a tool never starts after an abort
        result = _error(ABORTED_BEFORE_START)
    else:
        controller = AbortController()
        with anyio.CancelScope() as cut:

            def on_abort(reason: str) -> None:
                nonlocal aborted
                aborted = reason
                controller.abort(reason)  # the tool's signal first, as in-process
                cut.cancel()

            async with _abort_watch(on_abort, first_after=ABORT_POLL_SECONDS):
                result = await _call(entry.tool, payload, updates, controller)
        if aborted is not None:
            result = _error(ABORTED_WHILE_RUNNING)
    asked = None
    if isinstance(result, InputRequired):  # the workflow makes the call wait
        asked = {"key": result.key, "message": result.message, "schema": result.schema}
        result = AgentToolResult.text(result.message)
    try:
        data = result_to_json(result)
    except Exception as exc:
        data = result_to_json(_error(f"tool {name!r} returned details that are not JSON: {exc}"))
    data["updates"] = [result_to_json(u) for u in updates]
    data["at"] = _now_ms()
    if asked is not None:
        data["input_required"] = asked
    if aborted is not None:
        data["aborted"] = aborted
    return data


async def _call(
    tool: AgentTool,
    payload: dict[str, Any],
    updates: list[AgentToolResult],
    controller: AbortController,
) -> AgentToolResult | InputRequired:
    raw = payload["arguments"]
    try:
        prepared = tool.prepare_arguments(raw)
        args = tool.validator.validate(raw if prepared is None else prepared)
    except Exception as exc:
        return _error(_text(exc))
    timeout = tool.timeout if tool.timeout is not None else payload.get("timeout")
    call_id = payload["call_id"]

    async def run() -> Any:
        if tool.is_async():
            value = tool.execute(call_id, args, controller.signal, updates.append)
        else:
            value = await anyio.to_thread.run_sync(
                tool.execute, call_id, args, controller.signal, updates.append
            )
        if inspect.isawaitable(value):
            value = await value
        return value

    answers = {
        key: InputAnswer(a["action"], a.get("content"))
        for key, a in (payload.get("answers") or {}).items()
    }
    value: Any = None
    try:
        with anyio.move_on_after(timeout) as deadline, answering_inputs(call_id, answers):
            value = await run()
    except InputRequired as exc:  # the tool asks the user (see agentcore.approvals)
        return exc
    except Exception as exc:
        return _error(_text(exc))
    except BaseException:
        controller.abort("the step was cancelled")
        raise
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
