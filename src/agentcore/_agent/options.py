"""The options of an `Agent`: `AgentLoopConfig`'s fields, held as one frozen value.

`AgentLoopConfig` is the one definition of the options (names, types, defaults, checks).
`AgentOptions` spells their names and types for `Agent(**options)`, for editors and type checkers
(Python cannot derive a `TypedDict` from a dataclass); `tests/test_agent_options.py` keeps it equal
to the config's fields. An Agent keeps what it was given, over the defaults, in one read-only
mapping (`agent_options`); an option's attribute (`agent.max_turns = 3`) reads it and replaces it
(`option_property`). Each run builds its `AgentLoopConfig` from it, which checks the values.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal, Protocol, TypedDict

from .._compaction.policy import Compaction
from .._skills.loader import Skill
from ..config import AfterToolCallResult, AgentLoopConfig, BeforeToolCallResult, NextTurn
from ..guardrails import Guardrail
from ..limits import (
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_TURNS,
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_TOOL_TIMEOUT,
    UsageLimits,
)
from ..llm.model import Model
from ..llm.types import CacheRetention, OnPayload, OnResponse, ThinkingBudgets, Transport
from ..memory.inject import Memory
from ..messages import Message
from ..tools import ToolExecutionMode

__all__ = [
    "AGENT_DEFAULTS",
    "DEFAULTS",
    "OPTIONS",
    "RUN_OWN",
    "AgentOptions",
    "agent_options",
    "option_property",
]

RUN_OWN = ("model", "reasoning", "get_steering_messages", "get_follow_up_messages")
"""The `AgentLoopConfig` fields an Agent fills in itself for each run (from its state and its
queues) instead of taking them as options."""

OPTIONS = tuple(f.name for f in dataclasses.fields(AgentLoopConfig) if f.name not in RUN_OWN)
"""The options an Agent takes and forwards to every run: every other `AgentLoopConfig` field, in
its order."""

DEFAULT_MAX_HANDOFFS = 10
"""An Agent's `max_handoffs` unless given (a run without handoffs never reads it)."""

AGENT_DEFAULTS: dict[str, Any] = {
    "max_turns": DEFAULT_MAX_TURNS,
    "tool_timeout": DEFAULT_TOOL_TIMEOUT,
    "request_timeout": DEFAULT_REQUEST_TIMEOUT,
    "idle_timeout": DEFAULT_IDLE_TIMEOUT,
    "max_handoffs": DEFAULT_MAX_HANDOFFS,
}
"""The options whose default differs in an Agent: its bounds are on by default (docs/limits.md),
where `AgentLoopConfig` has none."""


def _default(field: dataclasses.Field[Any]) -> Any:
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return field.default


DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {
        f.name: AGENT_DEFAULTS.get(f.name, _default(f))
        for f in dataclasses.fields(AgentLoopConfig)
        if f.name not in RUN_OWN
    }
)
"""Every option's default in an Agent: the config's, but for `AGENT_DEFAULTS`."""


class AgentOptions(TypedDict, total=False):
    """The keyword options of `Agent(...)`: `AgentLoopConfig`'s fields but `RUN_OWN`, with their
    types (see `AgentLoopConfig` for what each does; `DEFAULTS` for an Agent's defaults)."""

    session_id: str | None
    on_payload: OnPayload | None
    on_response: OnResponse | None
    transport: Transport
    thinking_budgets: ThinkingBudgets | None
    max_retry_delay_ms: int
    tool_execution: ToolExecutionMode
    max_parallel_tools: int | None
    before_tool_call: Callable[..., BeforeToolCallResult | Awaitable[Any] | None] | None
    after_tool_call: Callable[..., AfterToolCallResult | Awaitable[Any] | None] | None
    prepare_next_turn: Callable[..., NextTurn | Awaitable[Any] | None] | None
    should_stop_after_turn: Callable[..., bool | Awaitable[bool]] | None
    convert_to_llm: Callable[..., list[Message] | Awaitable[list[Message]]]
    transform_context: Callable[..., Any] | None
    get_api_key: Callable[[str], str | Awaitable[str | None] | None] | None
    temperature: float | None
    max_tokens: int | None
    api_key: str | None
    headers: Mapping[str, str] | None
    cache_retention: CacheRetention
    metadata: Mapping[str, Any] | None
    max_turns: int | None
    usage_limits: UsageLimits | None
    tool_timeout: float | None
    request_timeout: float | None
    idle_timeout: float | None
    max_retries: int
    output_type: Any
    output_retries: int
    compaction: Compaction | None
    fallback_models: Sequence[Model]
    guardrails: Sequence[Guardrail]
    skills: Sequence[Skill]
    agent_name: str | None
    max_handoffs: int | None
    next_agent: Literal["last", "first"]
    memory: Memory | None


def agent_options(given: Mapping[str, Any]) -> Mapping[str, Any]:
    """Every option, as given or by default, as one read-only mapping (values are checked when a
    run's `AgentLoopConfig` is built from it).

    Raises:
        TypeError: a keyword that is not an option (as for any unknown keyword argument).
    """
    for name in given:
        if name not in DEFAULTS:
            where = (
                " (an Agent takes it from its state and queues: set it with initial_state= "
                "or on agent.state)"
                if name in RUN_OWN
                else f"; expected one of initial_state, stream_fn, session, steering_mode, "
                f"follow_up_mode, {', '.join(OPTIONS)}"
            )
            raise TypeError(f"Agent() got an unexpected keyword argument {name!r}{where}")
    return MappingProxyType({**DEFAULTS, **given})


class _HasOptions(Protocol):
    _options: Mapping[str, Any]


def option_property(name: str) -> property:
    """The attribute of option `name`: reads the Agent's options, and an assignment replaces
    them with a copy holding the new value (applied from the next run)."""

    def get(agent: _HasOptions) -> Any:
        return agent._options[name]

    def set_(agent: _HasOptions, value: Any) -> None:
        agent._options = MappingProxyType({**agent._options, name: value})

    return property(get, set_, doc=f"The `{name}` option of the next run (`AgentLoopConfig`).")
