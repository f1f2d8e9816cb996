"""Handoffs: another agent takes the conversation inside the same run.

An `AgentSpec` describes an agent a run can hand the conversation to (its name, description,
system prompt, model, thinking level, tools, its own handoffs and guardrails, and the view of the
transcript it gets). `handoff(spec)` makes the tool the model calls to hand over
(`transfer_to_<name>` by default, as in the OpenAI Agents SDK). The call passes the run's one
pipeline (validation, hooks, guardrails, approvals, events); the switch itself happens at the turn
boundary, after the whole batch has its results (`agent_switch`, then the next `turn_start`), and
is carried out by the engine (`_engine/handoffs.py`). See docs/handoffs.md.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from .errors import ConfigError
from .messages import Message, TextContent
from .tools import AgentTool, AgentToolResult

if TYPE_CHECKING:
    import pydantic

    from .abort import AbortSignal
    from .guardrails import Guardrail
    from .llm.model import Model
    from .llm.types import ThinkingLevel
    from .tools import ToolUpdateCallback

__all__ = [
    "AgentSpec",
    "HandoffTool",
    "HistoryView",
    "caller_tools",
    "handoff",
    "reachable_agents",
]

HistoryView: TypeAlias = Literal["full"] | int | Callable[[list[Message]], list[Message]]
"""What an agent sees of the run's one transcript: `"full"` (everything), a number N (the last
N messages, cut so that no tool result loses its call), or a function of the messages (already
shown as this agent's view) returning the messages to send."""

_NOT_SNAKE = re.compile(r"[^a-z0-9_]+")
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_ .-]{0,47}")


@dataclass(frozen=True, kw_only=True, eq=False)
class AgentSpec:
    """An agent the conversation can be handed to (a handoff target).

    Attributes:
        name: how events, messages and traces name it (1-48 letters, digits, ` `, `_`, `.`,
            `-`); unique among the agents of a run.
        description: what it is for, for the model deciding to hand over (the default
            description of its handoff tool).
        system_prompt: its system prompt, for every request it makes.
        model: its model; None keeps the model the run has when the handoff happens.
        thinking_level: its thinking level; None keeps the run's.
        tools: the tools it holds (the only ones it may call).
        handoffs: the agents it may hand the conversation to: an `AgentSpec` (handed to with
            `handoff(spec)`'s defaults) or a tool made by `handoff()`. A list, so that two
            agents can name each other (`billing.handoffs.append(handoff(triage))`).
        guardrails: its guardrails (input, tool and after-answer output ones), added to the
            run's own while it has the conversation; output guardrails running alongside the
            stream are refused (they watch the run's stream function, fixed when it starts).
        history: its view of the transcript (`HistoryView`): `"full"` by default.

    Raises:
        ConfigError: a name, tool, handoff, guardrail or history value that is not one of those.
    """

    name: str
    description: str = ""
    system_prompt: str = ""
    model: Model | None = None
    thinking_level: ThinkingLevel | None = None
    tools: Sequence[AgentTool] = ()
    handoffs: list[AgentSpec | AgentTool] = field(default_factory=list)
    guardrails: Sequence[Guardrail] = ()
    history: HistoryView = "full"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise ConfigError(
                f"AgentSpec.name must be 1-48 letters, digits, ' ', '_', '.' or '-' starting "
                f"with a letter, digit or '_', got {self.name!r}"
            )
        for t in self.tools:
            if not isinstance(t, AgentTool):
                raise ConfigError(
                    f"AgentSpec {self.name!r}: tools must be AgentTool values, got "
                    f"{type(t).__name__}"
                )
        if not isinstance(self.handoffs, list):
            raise ConfigError(
                f"AgentSpec {self.name!r}: handoffs must be a list of AgentSpec or handoff() "
                f"tools, got {type(self.handoffs).__name__}"
            )
        for g in self.guardrails:
            if getattr(g, "kind", None) == "output" and getattr(g, "mode", None) == "alongside":
                raise ConfigError(
                    f"AgentSpec {self.name!r}: an output guardrail in mode 'alongside' cannot "
                    "join at a handoff; use mode 'before' or put it in the run's guardrails"
                )
        history = self.history
        if not (
            history == "full"
            or callable(history)
            or (isinstance(history, int) and not isinstance(history, bool) and history > 0)
        ):
            raise ConfigError(
                f"AgentSpec {self.name!r}: history must be 'full', a positive number of "
                f"messages or a function of the messages, got {history!r}"
            )

    def handoff_tools(self) -> list[HandoffTool]:
        """Its handoffs as tools (an `AgentSpec` with `handoff()`'s defaults), made once and
        made again only when the `handoffs` list changed."""
        entries = tuple(self.handoffs)
        cached = self.__dict__.get("_handoff_tools")
        if (
            cached is not None
            and len(cached[0]) == len(entries)
            and all(a is b for a, b in zip(cached[0], entries, strict=True))
        ):
            tools: list[HandoffTool] = cached[1]
            return tools
        out: list[HandoffTool] = []
        for h in self.handoffs:
            if isinstance(h, AgentSpec):
                out.append(handoff(h))
            elif isinstance(h, HandoffTool):
                out.append(h)
            else:
                raise ConfigError(
                    f"AgentSpec {self.name!r}: a handoff must be an AgentSpec or a tool made by "
                    f"handoff(), got {type(h).__name__}"
                )
        object.__setattr__(self, "_handoff_tools", (entries, out))  # (frozen: the cache only)
        return out


def _snake(name: str) -> str:
    return _NOT_SNAKE.sub("_", name.lower()).strip("_") or "agent"


class HandoffTool(AgentTool):
    """The tool `handoff()` makes: calling it hands the conversation to `target` at the end of
    the turn. Its result says which agent takes over (`{"assistant": name}`)."""

    def __init__(
        self,
        target: AgentSpec,
        *,
        name: str,
        description: str,
        input_type: type[pydantic.BaseModel] | None,
        on_handoff: Callable[..., Awaitable[None] | None] | None,
        enabled: bool | Callable[[], bool],
        returns: bool,
    ) -> None:
        super().__init__(
            name=name,
            description=description,
            parameters=(
                input_type
                if input_type is not None
                else {"type": "object", "properties": {}, "additionalProperties": False}
            ),
        )
        self.target = target
        self.input_type = input_type
        self.on_handoff = on_handoff
        self.enabled = enabled
        self.returns = returns

    def is_enabled(self) -> bool:
        """Whether the model is offered this handoff (checked when an agent's tools are set:
        at the start of a run and at each switch)."""
        enabled = self.enabled
        return bool(enabled() if callable(enabled) else enabled)

    async def execute(
        self,
        tool_call_id: str,
        args: Any,
        signal: AbortSignal,
        on_update: ToolUpdateCallback,
    ) -> AgentToolResult:
        """Run `on_handoff` (with the validated input, or None) and say who takes over."""
        data = args if self.input_type is not None else None
        if self.on_handoff is not None:
            done = self.on_handoff(data)
            if inspect.isawaitable(done):
                await done
        details: dict[str, Any] = {"to": self.target.name, "returns": self.returns}
        if data is not None:
            details["input"] = data.model_dump(mode="json")
        return AgentToolResult(
            content=[TextContent(text='{"assistant": ' + json.dumps(self.target.name) + "}")],
            details={"handoff": details},
        )


def reachable_agents(tools: Sequence[AgentTool]) -> dict[str, AgentSpec]:
    """Every agent reachable through the handoffs among `tools` (and theirs), by name."""
    found: dict[str, AgentSpec] = {}
    todo = [t.target for t in tools if isinstance(t, HandoffTool)]
    while todo:
        spec = todo.pop()
        if spec.name in found:
            continue
        found[spec.name] = spec
        todo.extend(h.target for h in spec.handoff_tools())
    return found


def caller_tools(
    tools: Sequence[AgentTool], messages: Sequence[Any], tool_call_id: str
) -> Sequence[AgentTool]:
    """The tools of the agent that made the call `tool_call_id`: `tools` (the first agent's)
    unless an answer of a handoff target made it, then that target's. For an Agent deciding on a
    call a target's tool waits for."""
    if not any(isinstance(t, HandoffTool) for t in tools):
        return tools
    for m in reversed(messages):
        if getattr(m, "role", None) == "assistant" and any(
            c.id == tool_call_id for c in m.tool_calls
        ):
            spec = reachable_agents(tools).get(m.agent) if m.agent is not None else None
            return [*spec.tools, *spec.handoff_tools()] if spec is not None else tools
    return tools


def _is_model(value: Any) -> bool:
    import pydantic

    return isinstance(value, type) and issubclass(value, pydantic.BaseModel)


def handoff(
    target: AgentSpec,
    *,
    tool_name: str | None = None,
    tool_description: str | None = None,
    input_type: type[pydantic.BaseModel] | None = None,
    on_handoff: Callable[..., Awaitable[None] | None] | None = None,
    enabled: bool | Callable[[], bool] = True,
    returns: bool = False,
) -> HandoffTool:
    """The tool that hands the conversation to `target`.

    Args:
        target: the agent that takes over.
        tool_name: default `transfer_to_<name>` (the name in snake case), as in the OpenAI
            Agents SDK.
        tool_description: default "Handoff to the <name> agent to handle the request." with
            the target's description.
        input_type: a Pydantic model the model fills when it hands over (a reason, say); its
            value reaches `on_handoff` and the result's details.
        on_handoff: called with the input (or None) when the call runs, before the switch.
        enabled: whether the model is offered the handoff: a bool or a function `() -> bool`,
            checked at the start of a run and at each switch.
        returns: True to hand the conversation back to the agent that handed off once the
            target has answered (a turn with no tool calls); False: the target keeps it.

    Raises:
        ConfigError: `target` is not an `AgentSpec`, or `input_type` is not a Pydantic model.
    """
    if not isinstance(target, AgentSpec):
        raise ConfigError(f"handoff() target must be an AgentSpec, got {type(target).__name__}")
    if input_type is not None and not _is_model(input_type):
        raise ConfigError(
            f"handoff() input_type must be a Pydantic model class, got {input_type!r}"
        )
    description = f"Handoff to the {target.name} agent to handle the request."
    if target.description:
        description += " " + target.description
    return HandoffTool(
        target,
        name=tool_name or f"transfer_to_{_snake(target.name)}",
        description=tool_description or description,
        input_type=input_type,
        on_handoff=on_handoff,
        enabled=enabled,
        returns=returns,
    )
