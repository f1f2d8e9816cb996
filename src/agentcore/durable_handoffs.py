"""Handoffs in a durable run, shared by the durable engines (`agentcore.temporal`,
`agentcore.dbos`).

A worker is given the agents it serves (`AgentSpec`s, by name, like its tools and skills); a run
names the agent it starts as (`start_run(agent=...)`). The workflow never holds an agent's
functions: once, when the run starts, a step on a worker describes the first agent and every
agent reachable through its handoffs (`describe_agents`: system prompt, model name, thinking
level, tool names, handoffs, view), the description is recorded with the run (Temporal's
history, DBOS's checkpoints; carried across continue-as-new), and the workflow builds stand-ins
from it (`stand_in_agents`) that the real loop switches between exactly as in-process.

Who has the conversation is read back from the transcript by the loop itself (the handoff
results and the answers that returned), so a replay after a worker was killed, a run that waited
days for an approval and a run continued as new all go on in the right agent. Each model request
carries the current agent's system prompt, tool names and model name, and names the agent
(`agent`), so the worker resolves the tools that agent holds (`agent_tool`); a tool call runs the
tool of the agent that made it, and a handoff tool's own `execute` (its `on_handoff`) runs on
the worker.

What cannot cross is refused when the worker starts (`serve_agents`): a history function (the
view is computed in the workflow), an agent's own guardrails (durable runs have none), a model
the worker does not serve by name. A handoff's `enabled` is checked on the worker when the run
starts, not at each switch.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .errors import ConfigError
from .handoffs import AgentSpec, HandoffTool, reachable_agents
from .llm import Model, Tool
from .tools import AgentTool

__all__ = [
    "AGENTS_STEP",
    "DurableHandoff",
    "RunAgents",
    "agent_tool",
    "approval_key",
    "check_run_agent",
    "describe_agents",
    "serve_agents",
    "stand_in_agents",
]

AGENTS_STEP = "agentcore.agents"
"""The name of the activity (Temporal) or step (DBOS) that describes a run's agents."""


def _model_name(model: Model, models: Mapping[str, Model]) -> str | None:
    return next((name for name, m in models.items() if m is model), None)


def serve_agents(agents: Iterable[AgentSpec], models: Mapping[str, Model]) -> dict[str, AgentSpec]:
    """Every agent a worker serves: `agents` and every agent reachable through their handoffs,
    by name.

    Raises:
        ConfigError: not an `AgentSpec`; two different agents of one name; an agent with a
            history function, guardrails of its own, or a model not among `models` (the
            worker's models, by the names runs use).
    """
    found: dict[str, AgentSpec] = {}
    todo = list(agents)
    while todo:
        spec = todo.pop()
        if not isinstance(spec, AgentSpec):
            raise ConfigError(f"agents must be AgentSpec values, got {type(spec).__name__}")
        known = found.get(spec.name)
        if known is spec:
            continue
        if known is not None:
            raise ConfigError(
                f"two different agents are named {spec.name!r}: every agent a worker serves "
                "needs a name of its own"
            )
        if callable(spec.history):
            raise ConfigError(
                f"AgentSpec {spec.name!r}: a durable run computes each agent's view in the "
                "workflow, where a history function cannot run; use 'full' or a number"
            )
        if spec.guardrails:
            raise ConfigError(
                f"AgentSpec {spec.name!r}: durable runs do not run guardrails; serve an agent "
                "without guardrails of its own"
            )
        if spec.model is not None and _model_name(spec.model, models) is None:
            raise ConfigError(
                f"AgentSpec {spec.name!r}: its model {spec.model.id!r} is not one this worker "
                f"serves; register it in models under a name (registered: {sorted(models)})"
            )
        found[spec.name] = spec
        todo.extend(h.target for h in spec.handoff_tools())
    return found


def describe_agents(
    agents: Mapping[str, AgentSpec], first: str, models: Mapping[str, Model]
) -> dict[str, Any]:
    """The JSON description of agent `first` and every agent reachable from it through its
    enabled handoffs (checked now), for the workflow (`stand_in_agents`).

    Raises:
        ConfigError: no agent named `first` among `agents`.
    """
    if first not in agents:
        raise ConfigError(
            f"no agent named {first!r} is registered on this worker "
            f"(registered: {sorted(agents) or 'none'})"
        )
    out: dict[str, Any] = {}
    todo = [first]
    while todo:
        name = todo.pop()
        if name in out:
            continue
        spec = agents[name]
        handoffs = [h for h in spec.handoff_tools() if h.is_enabled()]
        out[name] = {
            "system_prompt": spec.system_prompt,
            "model": None if spec.model is None else _model_name(spec.model, models),
            "thinking_level": spec.thinking_level,
            "tools": [t.name for t in spec.tools],
            "handoffs": [
                {
                    "tool": h.name,
                    "description": h.description,
                    "to": h.target.name,
                    "returns": h.returns,
                }
                for h in handoffs
            ],
            "history": spec.history,
        }
        todo.extend(h.target.name for h in handoffs)
    return {"first": first, "agents": out}


def agent_tool(agents: Mapping[str, AgentSpec], agent: str, name: str) -> AgentTool | str | None:
    """The tool `name` the agent `agent` holds (its own tools and handoffs), None when it holds
    none of that name, or the error text when no agent of that name is served here."""
    spec = agents.get(agent)
    if spec is None:
        return (
            f"no agent named {agent!r} is registered on this worker "
            f"(registered: {sorted(agents) or 'none'})"
        )
    for t in (*spec.tools, *spec.handoff_tools()):
        if t.name == name:
            return t
    return None


class DurableHandoff(HandoffTool):
    """The workflow's side of a handoff tool served by the workers: a `HandoffTool` (so the
    loop switches on its result) whose call runs the real tool on a worker through `stand_in`
    (its arguments are validated there, and its `on_handoff` runs there)."""

    def __init__(
        self, target: AgentSpec, *, description: str, returns: bool, stand_in: AgentTool
    ) -> None:
        AgentTool.__init__(
            self,
            name=stand_in.name,
            description=description,
            parameters={"type": "object"},
            requires_approval=stand_in.requires_approval,
        )
        self.target = target
        self.input_type = None
        self.on_handoff = None
        self.enabled = True
        self.returns = returns
        self._stand_in = stand_in

    async def execute(self, tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        """Run the handoff tool on a worker."""
        value = self._stand_in.execute(tool_call_id, args, signal, on_update)
        return await value if inspect.isawaitable(value) else value


def stand_in_agents(
    description: Mapping[str, Any],
    stand_in: Callable[[str, str], AgentTool],
    model: Callable[[str], Model],
) -> AgentSpec:
    """The agents `describe_agents` described, as the workflow's stand-ins; returns the first.

    Args:
        description: what `describe_agents` returned (recorded with the run).
        stand_in: `(agent, tool name) -> AgentTool`: the engine's stand-in for a tool of that
            agent, which runs it on a worker.
        model: `(model name) -> Model`: the engine's stand-in for a model served by name.
    """
    agents: Mapping[str, Any] = description["agents"]
    specs = {
        name: AgentSpec(
            name=name,
            system_prompt=a["system_prompt"],
            model=None if a["model"] is None else model(a["model"]),
            thinking_level=a["thinking_level"],
            tools=[stand_in(name, t) for t in a["tools"]],
            history=a["history"],
        )
        for name, a in agents.items()
    }
    for name, a in agents.items():
        specs[name].handoffs.extend(
            DurableHandoff(
                specs[h["to"]],
                description=h["description"],
                returns=h["returns"],
                stand_in=stand_in(name, h["tool"]),
            )
            for h in a["handoffs"]
        )
    return specs[description["first"]]


class RunAgents:
    """The agents of one durable run, on the workflow's side: built from the recorded
    description (`describe_agents`), they tell the loop how to start (`first`, `config`) and
    each model request which agent it belongs to (`agent_of`).

    Args:
        description: what `describe_agents` returned (recorded with the run).
        stand_in: `(agent, tool name) -> AgentTool`: the engine's stand-in for a tool of that
            agent, which runs it on a worker.
        model: `(model name) -> Model`: the engine's stand-in for a model served by name.
    """

    def __init__(
        self,
        description: Mapping[str, Any],
        stand_in: Callable[[str, str], AgentTool],
        model: Callable[[str], Model],
    ) -> None:
        self.description = description
        self._tool_agent: dict[int, str] = {}  # the agent of each stand-in, by its `llm_tool`

        def tagged(agent: str, name: str) -> AgentTool:
            tool = stand_in(agent, name)
            self._tool_agent[id(tool.llm_tool)] = agent
            return tool

        self.first = stand_in_agents(description, tagged, model)
        for spec in (self.first, *reachable_agents(self.first.handoff_tools()).values()):
            self._tool_agent.update((id(h.llm_tool), spec.name) for h in spec.handoff_tools())

    @property
    def tools(self) -> list[AgentTool]:
        """The first agent's tools and handoffs: the run's tools when it starts."""
        return [*self.first.tools, *self.first.handoff_tools()]

    def config(self) -> dict[str, Any]:
        """The first agent's `AgentLoopConfig` fields (its name, and its thinking level if
        it sets one); its model is `first.model` (None: the run's)."""
        fields: dict[str, Any] = {"agent_name": self.first.name}
        if self.first.thinking_level is not None:
            fields["reasoning"] = self.first.thinking_level
        return fields

    def agent_of(self, tools: Iterable[Tool]) -> str | None:
        """The agent a model request with these tools belongs to (the loop offers the
        current agent's tools only), None when it offers none of an agent's."""
        return next((a for t in tools if (a := self._tool_agent.get(id(t))) is not None), None)


def approval_key(agent: str | None, tool: str) -> str:
    """The key of tool `tool` of agent `agent` in a workflow's record of which tools need
    approval (agent names hold no ':')."""
    return tool if agent is None else f"{agent}:{tool}"


def check_run_agent(
    agent: str | None, system_prompt: str, tools: Iterable[str], skills: Iterable[str]
) -> None:
    """A `start_run(agent=...)`'s arguments checked: an agent name, and then neither a system
    prompt nor tools nor skills of the run's own (the agent's are used).

    Raises:
        ConfigError: what was wrong, named.
    """
    if agent is None:
        return
    if not isinstance(agent, str) or not agent:
        raise ConfigError(
            f"agent must be the name a worker registered an agent under, got {agent!r}"
        )
    given = [
        name
        for name, value in (
            ("system_prompt", system_prompt),
            ("tools", list(tools)),
            ("skills", list(skills)),
        )
        if value
    ]
    if given:
        raise ConfigError(
            f"a run started as agent {agent!r} uses that agent's system prompt and tools (from "
            f"the workers): leave {', '.join(given)} empty"
        )
