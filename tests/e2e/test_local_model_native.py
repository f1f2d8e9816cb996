"""What the local model's catalogue entry declares, against the real server: a typed output of a
run without tools is asked for natively (`response_format`, the server's grammar) in the default
`auto` mode, and a request with tools asks for several calls per answer (`parallel_tool_calls`),
which the server accepts and answers with well-formed calls.

The tests assert on the protocol (what was sent, what came back and validated), never on how many
calls the model chose to make.
"""

from __future__ import annotations

from typing import Any, Literal

import pytest
from pydantic import BaseModel

from agentcore import AgentContext, AgentLoopConfig, UserMessage, run_agent_loop, tool
from agentcore.messages import AssistantMessage, ToolResultMessage
from agentcore.testing import check_well_formed

from .local_server import LocalModel

pytestmark = [pytest.mark.local_llm, pytest.mark.anyio]

REQUEST_TIMEOUT = 120


class Country(BaseModel):
    name: str
    capital: str
    continent: Literal["Africa", "Americas", "Asia", "Europe", "Oceania"]


def _recording(sent: list[dict[str, Any]]) -> Any:
    def on_payload(payload: Any, model: Any) -> Any:
        sent.append(payload)
        return payload

    return on_payload


@pytest.mark.timeout(3 * REQUEST_TIMEOUT + 30)
async def test_auto_mode_asks_the_local_model_natively(local_model: LocalModel) -> None:
    sent: list[dict[str, Any]] = []
    events: list[Any] = []
    config = AgentLoopConfig(
        model=local_model.model,
        output_type=Country,  # mode "auto"
        temperature=0,
        max_tokens=128,
        request_timeout=REQUEST_TIMEOUT,
        idle_timeout=REQUEST_TIMEOUT,
        on_payload=_recording(sent),
    )
    prompt = UserMessage(content="Describe France: its name, its capital and its continent.")
    await run_agent_loop([prompt], AgentContext(), config, events.append)
    check_well_formed(events)
    end = events[-1]
    assert end.limit is None, str(end.limit)
    assert isinstance(end.output, Country) and end.output.continent == "Europe"
    assert sent and all("tools" not in body for body in sent)  # no final-answer tool
    assert sent[0]["response_format"]["type"] == "json_schema"
    assert not [e for e in events if e.type == "tool_execution_start"]


@pytest.mark.timeout(4 * REQUEST_TIMEOUT + 30)
async def test_a_request_with_tools_asks_for_parallel_calls(local_model: LocalModel) -> None:
    cities: list[str] = []

    @tool
    def get_weather(city: str) -> str:
        """The current weather in one city."""
        cities.append(city)
        return f"{city}: 18 C, light rain"

    sent: list[dict[str, Any]] = []
    events: list[Any] = []
    config = AgentLoopConfig(
        model=local_model.model,
        temperature=0,
        max_tokens=256,
        max_turns=4,
        request_timeout=REQUEST_TIMEOUT,
        idle_timeout=REQUEST_TIMEOUT,
        on_payload=_recording(sent),
    )
    messages = await run_agent_loop(
        [UserMessage(content="What is the weather in Paris and in Tokyo right now?")],
        AgentContext(system_prompt="Use the tools to answer.", tools=[get_weather]),
        config,
        events.append,
    )
    check_well_formed(events)
    assert sent and all(body["parallel_tool_calls"] is True for body in sent)
    answers = [m for m in messages if isinstance(m, AssistantMessage)]
    calls = [c for a in answers for c in a.tool_calls]
    assert calls, "the server returned no tool call"
    # every call the server parsed (however many per answer) ran once and was answered
    results = [m for m in messages if isinstance(m, ToolResultMessage)]
    assert sorted(r.tool_call_id for r in results) == sorted(c.id for c in calls)
    assert len(cities) == len(calls) and all(isinstance(c.arguments["city"], str) for c in calls)
    assert answers[-1].stop_reason in ("stop", "length") or len(answers) == 4
