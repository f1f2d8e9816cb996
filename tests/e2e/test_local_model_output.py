"""Typed outputs against the local model (llama.cpp constrains the answer to the JSON schema sent
as `response_format`): the value validates, and the partial answer grows while it streams."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from pydantic import BaseModel

from agentcore import (
    Agent,
    AgentContext,
    AgentLoopConfig,
    MessageUpdateEvent,
    OutputSpec,
    UserMessage,
    agent_loop,
)
from agentcore.testing import check_well_formed

from .local_server import LocalModel

pytestmark = [pytest.mark.local_llm, pytest.mark.anyio]

REQUEST_TIMEOUT = 120


class Country(BaseModel):
    name: str
    capital: str
    continent: Literal["Africa", "Americas", "Asia", "Europe", "Oceania"]


@pytest.mark.timeout(2 * REQUEST_TIMEOUT + 30)
async def test_native_answer_validates(local_model: LocalModel) -> None:
    spec = OutputSpec(Country, mode="native")
    config = AgentLoopConfig(
        model=local_model.model,
        output_type=spec,
        temperature=0,
        max_tokens=128,
        request_timeout=REQUEST_TIMEOUT,
        idle_timeout=REQUEST_TIMEOUT,
    )
    prompt = UserMessage(content="Describe France: its name, its capital and its continent.")
    events: list[Any] = []
    partials: list[Any] = []
    async with agent_loop([prompt], AgentContext(), config) as stream:
        async for event in stream:
            events.append(event)
            if isinstance(event, MessageUpdateEvent):
                value = spec.partial(event.message)
                if value is not None and (not partials or value != partials[-1]):
                    partials.append(value)
    check_well_formed(events)
    end = events[-1]
    assert end.limit is None, str(end.limit)
    output = end.output
    assert isinstance(output, Country)
    assert output.capital.strip().lower() == "paris"
    assert output.continent == "Europe"
    assert len(partials) > 2 and partials[-1]["capital"] == output.capital
    assert stream.output == output


@pytest.mark.timeout(2 * REQUEST_TIMEOUT + 30)
async def test_native_list_answer_with_the_agent(local_model: LocalModel) -> None:
    agent = Agent(
        initial_state={"model": local_model.model},
        output_type=OutputSpec(list[str], mode="native"),
        temperature=0,
        max_tokens=96,
        request_timeout=REQUEST_TIMEOUT,
        idle_timeout=REQUEST_TIMEOUT,
    )
    await agent.prompt("List the three primary colours of light, in lower case.")
    assert agent.state.limit is None, str(agent.state.limit)
    output = agent.state.output
    assert isinstance(output, list) and all(isinstance(x, str) for x in output)
    assert {"red", "green", "blue"} <= {x.strip().lower() for x in output}


@pytest.mark.timeout(4 * REQUEST_TIMEOUT + 30)
async def test_tool_mode_answer_validates(local_model: LocalModel) -> None:
    config = AgentLoopConfig(
        model=local_model.model,
        output_type=OutputSpec(Country, mode="tool"),
        output_retries=3,
        temperature=0,
        max_tokens=128,
        request_timeout=REQUEST_TIMEOUT,
        idle_timeout=REQUEST_TIMEOUT,
    )
    prompt = UserMessage(
        content="Describe France: its name, its capital and its continent. "
        "Give the answer by calling the final_answer tool."
    )
    events: list[Any] = []
    async with agent_loop([prompt], AgentContext(), config) as stream:
        async for event in stream:
            events.append(event)
    check_well_formed(events)
    end = events[-1]
    # a small model may need a correction or two; either way the run ends cleanly
    assert end.limit is None, str(end.limit)
    assert isinstance(end.output, Country) and end.output.capital.strip().lower() == "paris"
    calls = [e for e in events if e.type == "tool_execution_end" and not e.is_error]
    assert calls and calls[-1].tool_name == "final_answer"
