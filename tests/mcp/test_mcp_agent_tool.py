"""Agents as tools (`agent_tool`), driven by the faux model: the inner run's events nest in the
outer run, an outer abort aborts the inner run, inner usage lands in the result."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp_support import results, text

from agentcore import (
    AbortController,
    AbortSignal,
    Agent,
    AgentContext,
    AgentEndEvent,
    AgentLoopConfig,
    AssistantMessage,
    ToolCall,
    agent_loop,
    agent_tool,
    tool,
)
from agentcore.testing import (
    FauxProvider,
    check_well_formed,
    faux_error,
    faux_message,
    faux_text,
    faux_tool_call,
)
from support import BACKENDS, collect, user

pytestmark = pytest.mark.anyio


@tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"notes on {topic}"


def inner_updates(run: Any, call_id: str) -> list[Any]:
    """The inner events, as the outer run received them."""
    return [
        e.partial_result
        for e in run.events
        if e.type == "tool_execution_update" and e.tool_call_id == call_id
    ]


async def test_a_loop_configuration_as_a_tool() -> None:
    inner = FauxProvider(
        [faux_tool_call("lookup", {"topic": "tides"}), faux_text("The tides follow the moon.")]
    )
    research = agent_tool(
        AgentLoopConfig(model=inner.model),
        name="research",
        description="Research a question.",
        context=AgentContext(system_prompt="You research.", tools=[lookup]),
    )
    assert research.llm_tool.parameters["required"] == ["task"]
    outer = FauxProvider(
        [faux_tool_call("research", {"task": "Why are there tides?"}, id="r"), faux_text("ok")]
    )
    run = await collect(
        agent_loop(
            [user("explain")], AgentContext(tools=[research]), AgentLoopConfig(model=outer.model)
        )
    )
    [result] = results(run.result)
    assert text(result) == "The tides follow the moon." and not result.is_error

    updates = inner_updates(run, "r")
    events = [u.details for u in updates]
    check_well_formed(events)  # the inner run, complete and well nested
    assert events[0].type == "agent_start" and isinstance(events[-1], AgentEndEvent)
    assert {"tool_execution_start", "tool_execution_end", "message_update"} <= {
        e.type for e in events
    }
    streamed = [u.content[0].text for u in updates if u.content]
    assert streamed[-1] == "The tides follow the moon."
    assert any(len(t) < len(streamed[-1]) for t in streamed)  # it grew as it streamed
    assert inner.calls[0].context.system_prompt == "You research."
    assert inner.calls[0].context.messages[0].content == "Why are there tides?"  # type: ignore[union-attr]

    answers = [m for m in events[-1].messages if isinstance(m, AssistantMessage)]
    total = sum(m.usage.total_tokens for m in answers)
    assert total > 0
    assert result.usage is not None and result.usage.total_tokens == total
    assert result.details["turns"] == 2 and result.details["stop_reason"] == "stop"
    assert result.details["usage"]["total_tokens"] == total
    assert result.details["usage"]["cost"]["total"] == pytest.approx(
        sum(m.usage.cost.total for m in answers)
    )


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_an_outer_abort_aborts_the_inner_run() -> None:
    inner_aborted: list[bool] = []

    @tool
    async def dig(signal: AbortSignal) -> str:
        """Dig until aborted."""
        try:
            await anyio.sleep(30)
        finally:
            inner_aborted.append(signal.aborted)
        return "dug"

    inner = FauxProvider([faux_tool_call("dig"), faux_text("never")])
    worker = agent_tool(
        AgentLoopConfig(model=inner.model),
        name="worker",
        description="Works.",
        context=AgentContext(tools=[dig]),
    )
    outer = FauxProvider([faux_tool_call("worker", {"task": "dig"}, id="w"), faux_text("never")])
    controller = AbortController()
    events: list[Any] = []
    stream = agent_loop(
        [user("go")],
        AgentContext(tools=[worker]),
        AgentLoopConfig(model=outer.model),
        signal=controller.signal,
    )
    async with stream:
        async for event in stream:
            events.append(event)
            if (
                event.type == "tool_execution_update"
                and event.partial_result.details.type == "tool_execution_start"
            ):
                controller.abort()  # the inner tool is running now
        messages = await stream.result()
    check_well_formed(events)
    [result] = results(messages)
    assert result.is_error and text(result) == "Tool execution was aborted."
    inner_events = [e.partial_result.details for e in events if e.type == "tool_execution_update"]
    check_well_formed(inner_events)  # the inner run ended before the tool returned
    assert inner_events[-1].type == "agent_end"
    assert text(inner_events[-1].messages[-1]) == "Tool execution was aborted."
    assert inner_aborted == [True]
    assert len(inner.calls) == 1 and len(outer.calls) == 1


async def test_an_inner_failure_is_an_error_result() -> None:
    inner = FauxProvider([faux_error("the model exploded")])
    helper = agent_tool(AgentLoopConfig(model=inner.model), name="helper", description="Helps.")
    outer = FauxProvider([faux_tool_call("helper", {"task": "help"}), faux_text("sorry")])
    run = await collect(
        agent_loop([user("go")], AgentContext(tools=[helper]), AgentLoopConfig(model=outer.model))
    )
    [result] = results(run.result)
    assert result.is_error
    assert text(result) == "The agent 'helper' failed: the model exploded"
    assert result.details["stop_reason"] == "error"


async def test_a_bound_of_the_inner_run_is_reported() -> None:
    inner = FauxProvider([faux_tool_call("lookup", {"topic": "x"}, text="Looking."), faux_text("")])
    capped = agent_tool(
        AgentLoopConfig(model=inner.model, max_turns=1),
        name="capped",
        description="Stops after one turn.",
        context=AgentContext(tools=[lookup]),
    )
    outer = FauxProvider([faux_tool_call("capped", {"task": "go"}), faux_text("ok")])
    run = await collect(
        agent_loop([user("go")], AgentContext(tools=[capped]), AgentLoopConfig(model=outer.model))
    )
    [result] = results(run.result)
    assert not result.is_error
    assert text(result) == (
        "Looking.\n\n[The agent 'capped' stopped early: its max_turns limit of 1 was reached.]"
    )
    assert result.details["limit"] == {"kind": "max_turns", "limit": 1, "used": 1}
    assert len(inner.calls) == 1


async def test_an_agent_as_a_tool_remembers_and_takes_turns() -> None:
    inner = FauxProvider([faux_text("first answer"), faux_text("second answer")])
    assistant = Agent(initial_state={"model": inner.model, "system_prompt": "Be brief."})
    ask = agent_tool(assistant, name="ask", description="Ask the assistant.")
    calls = [
        ToolCall(id="a", name="ask", arguments={"task": "one"}),
        ToolCall(id="b", name="ask", arguments={"task": "two"}),
    ]
    outer = FauxProvider([faux_message(*calls), faux_text("done")])
    run = await collect(
        agent_loop([user("go")], AgentContext(tools=[ask]), AgentLoopConfig(model=outer.model))
    )
    assert [text(r) for r in results(run.result)] == ["first answer", "second answer"]
    assert [m.role for m in assistant.state.messages] == ["user", "assistant"] * 2
    assert len(inner.calls[1].context.messages) == 3  # the second call saw the first
    assert not assistant.state.is_streaming


async def test_an_agent_cannot_call_itself() -> None:
    faux = FauxProvider([faux_tool_call("me", {"task": "recurse"}), faux_text("done")])
    agent = Agent(initial_state={"model": faux.model})
    agent.state.tools = [agent_tool(agent, name="me", description="Myself.")]
    await agent.prompt("go")
    [result] = [m for m in agent.state.messages if m.role == "tool_result"]
    assert result.is_error  # type: ignore[union-attr]
    assert "cannot call itself" in text(result)  # type: ignore[arg-type]


def test_wrong_arguments_are_refused() -> None:
    faux = FauxProvider()
    with pytest.raises(ValueError, match="wraps an Agent or an AgentLoopConfig"):
        agent_tool(faux.model, name="x", description="x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="an Agent has its own"):
        agent_tool(Agent(), name="x", description="x", context=AgentContext())
