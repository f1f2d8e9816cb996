"""The option list has one definition, `AgentLoopConfig`'s fields: the Agent's keyword options
(`AgentOptions`) and attributes, the options it forwards and the options of every request follow
it exactly."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from pathlib import Path
from typing import Any

import pytest

from agentcore import Agent, AgentLoopConfig, ToolExecutionMode, UsageLimits
from agentcore._agent.options import (
    AGENT_DEFAULTS,
    DEFAULT_MAX_HANDOFFS,
    DEFAULTS,
    OPTIONS,
    RUN_OWN,
    AgentOptions,
)
from agentcore._engine.request import stream_options
from agentcore.abort import AbortController
from agentcore.guardrails import input_guardrail
from agentcore.limits import (
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_TURNS,
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_TOOL_TIMEOUT,
)
from agentcore.llm import SimpleStreamOptions
from agentcore.memory import InMemoryMemoryStore, Memory, MemoryScope
from agentcore.skills import Skill
from agentcore.testing import FauxProvider

AGENT_OWN = ("initial_state", "stream_fn", "session", "steering_mode", "follow_up_mode")


def _field_default(field: dataclasses.Field[Any]) -> Any:
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return field.default


def test_forwarded_options_are_the_config_fields_but_the_run_s_own() -> None:
    names = [f.name for f in dataclasses.fields(AgentLoopConfig)]
    assert list(OPTIONS) == [n for n in names if n not in RUN_OWN]
    assert set(RUN_OWN) <= set(names)


def test_agent_parameters_match_the_config_fields_exactly() -> None:
    """Names and order, types and defaults: only the bounds default differently (documented in
    the Agent's docstring and docs/limits.md)."""
    parameters = inspect.signature(Agent.__init__).parameters
    assert list(parameters) == ["self", *AGENT_OWN, "options"]
    assert parameters["options"].kind is inspect.Parameter.VAR_KEYWORD
    assert parameters["options"].annotation == "Unpack[AgentOptions]"
    assert AgentOptions.__total__ is False
    annotations = AgentOptions.__annotations__
    assert list(annotations) == list(OPTIONS)
    fields = {f.name: f for f in dataclasses.fields(AgentLoopConfig)}
    for name in OPTIONS:
        field = fields[name]
        assert annotations[name].__forward_arg__ == field.type, name
    assert typing.get_type_hints(AgentOptions) == {
        name: hint
        for name, hint in typing.get_type_hints(AgentLoopConfig).items()
        if name in OPTIONS
    }
    agent = Agent()
    for name in OPTIONS:
        expected = AGENT_DEFAULTS.get(name, _field_default(fields[name]))
        assert DEFAULTS[name] == expected, name
        assert getattr(agent, name) == expected, name
    assert AGENT_DEFAULTS == {
        "max_turns": DEFAULT_MAX_TURNS,
        "tool_timeout": DEFAULT_TOOL_TIMEOUT,
        "request_timeout": DEFAULT_REQUEST_TIMEOUT,
        "idle_timeout": DEFAULT_IDLE_TIMEOUT,
        "max_handoffs": DEFAULT_MAX_HANDOFFS,
    }
    for name in AGENT_DEFAULTS:
        assert _field_default(fields[name]) is None, f"agent_loop has no {name} unless given"


def test_an_unknown_keyword_is_a_type_error_naming_it() -> None:
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'max_turn'.*max_turns"):
        Agent(max_turn=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"'model'.*initial_state"):
        Agent(model=FauxProvider().model)  # type: ignore[call-arg]


def test_an_option_set_as_an_attribute_reaches_the_next_run_only() -> None:
    agent = Agent(max_turns=5)
    before = agent._loop_config()
    agent.max_turns = 3
    agent.temperature = 0.25
    assert (agent.max_turns, agent.temperature) == (3, 0.25)
    config = agent._loop_config()
    assert (config.max_turns, config.temperature) == (3, 0.25)
    assert (before.max_turns, before.temperature) == (5, None)
    assert Agent().max_turns == DEFAULT_MAX_TURNS  # another agent's options are its own


def _distinct_values() -> dict[str, Any]:
    """A value for every forwarded option that differs from its default and passes the checks."""
    values: dict[str, Any] = {
        "session_id": "s-1",
        "on_payload": lambda payload, model: None,
        "on_response": lambda response, model: None,
        "transport": "sse",
        "thinking_budgets": {"low": 10},
        "max_retry_delay_ms": 1234,
        "tool_execution": ToolExecutionMode.SEQUENTIAL,
        "max_parallel_tools": 2,
        "before_tool_call": lambda ctx: None,
        "after_tool_call": lambda ctx: None,
        "prepare_next_turn": lambda ctx: None,
        "should_stop_after_turn": lambda ctx: False,
        "convert_to_llm": lambda messages: list(messages),
        "transform_context": lambda messages: messages,
        "get_api_key": lambda provider: "k",
        "temperature": 0.5,
        "max_tokens": 99,
        "api_key": "key",
        "headers": {"x-h": "1"},
        "cache_retention": "long",
        "metadata": {"user_id": "u"},
        "max_turns": 7,
        "usage_limits": UsageLimits(output_tokens=5),
        "tool_timeout": 1.5,
        "request_timeout": 2.5,
        "idle_timeout": 3.5,
        "max_retries": 1,
        "output_type": int,
        "output_retries": 4,
        "compaction": None,
        "fallback_models": (FauxProvider().model,),
        "guardrails": (input_guardrail(lambda ctx: None),),
        "skills": (
            Skill(name="s", description="d", folder=Path("/s"), file=Path("/s/SKILL.md"), body=""),
        ),
        "agent_name": "triage",
        "max_handoffs": 3,
        "next_agent": "first",
        "memory": Memory(InMemoryMemoryStore(), MemoryScope(user="u")),
    }
    assert list(values) == list(OPTIONS), "a new option needs a value here"
    return values


def test_every_option_given_to_an_agent_reaches_its_runs() -> None:
    values = _distinct_values()
    agent = Agent(**values)
    config = agent._loop_config()
    for name, value in values.items():
        assert getattr(agent, name) is value, name
        if name != "output_type":  # normalised to an OutputSpec by the config
            assert getattr(config, name) is value, name
    assert config.output_type is not None and config.output_type.schema is not None


@pytest.mark.parametrize("reasoning", ["off", "high"])
def test_requests_get_every_option_the_config_shares_with_them(reasoning: Any) -> None:
    values = _distinct_values()
    config = AgentLoopConfig(model=FauxProvider().model, **values)
    signal = AbortController().signal
    options = stream_options(config, signal, reasoning)
    shared = {f.name for f in dataclasses.fields(SimpleStreamOptions)} & set(values)
    assert shared >= {"temperature", "api_key", "session_id", "request_timeout", "max_retries"}
    for name in shared:
        assert getattr(options, name) is values[name], name
    assert options.signal is signal
    assert options.reasoning == (None if reasoning == "off" else reasoning)
