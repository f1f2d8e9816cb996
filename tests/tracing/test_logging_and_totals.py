"""Logging through `logging.getLogger("agentcore…")` (requests, tools, resumed sessions; no
content below DEBUG, no secret), and run totals: `run_usage`, `EventStream.usage`,
`AgentState.usage`. None of this needs OpenTelemetry."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from agentcore import (
    Agent,
    AgentContext,
    AgentLoopConfig,
    AgentToolResult,
    Cost,
    JsonlSessionStore,
    ToolResultMessage,
    Usage,
    UserMessage,
    agent_loop,
    run_usage,
)
from agentcore.testing import FauxProvider, faux_error, faux_text, faux_tool_call
from support import make_tool, run

pytestmark = pytest.mark.anyio


async def _paid_tool(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
    usage = Usage(input=100, output=10, cost=Cost(input=0.5, output=0.25))
    return AgentToolResult(content=[], usage=usage)


def _records(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [f"{r.levelname} {r.getMessage()}" for r in caplog.records if r.name == "agentcore"]


async def test_requests_and_tools_are_logged_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="agentcore")
    faux = FauxProvider(
        [faux_tool_call("echo", {"secret_arg": "Oslo"}, id="c1"), faux_text("sunny in Oslo")]
    )
    config = AgentLoopConfig(model=faux.model, api_key="sk-LOGGED-KEY-1234567")

    async def echo(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult.text("ok")

    await run("weather in Oslo?", AgentContext(tools=[make_tool("echo", echo)]), config)
    records = _records(caplog)
    requests = [r for r in records if "request to" in r]
    model = f"{faux.model.provider}/{faux.model.id}"
    assert len(requests) == 2
    assert all(r.startswith(f"DEBUG request to {model}: ") for r in requests)
    assert "tool_use after" in requests[0] and "(0 retries)" in requests[0]
    assert "input +" in requests[0] and "output tokens" in requests[0]
    assert "stop after" in requests[1]
    tools = [r for r in records if r.startswith("DEBUG tool 'echo'")]
    assert tools[0] == "DEBUG tool 'echo' (call c1) started"
    assert tools[1].startswith("DEBUG tool 'echo' (call c1) finished in ")
    text = "\n".join(records)
    assert "Oslo" not in text and "sunny" not in text and "LOGGED-KEY" not in text


async def test_a_failed_request_is_logged_at_info(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="agentcore")
    await run("hi", faux=FauxProvider([faux_error("the model is down")]))
    (record,) = [r for r in _records(caplog) if "request to" in r]
    assert record.startswith("INFO request to ") and record.endswith(": the model is down")


async def test_nothing_is_logged_below_the_level(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="agentcore")
    faux = FauxProvider([faux_tool_call("echo", {}), faux_text("done")])
    await run("hi", AgentContext(tools=[make_tool("echo", _paid_tool)]), faux=faux)
    assert _records(caplog) == []


async def test_a_resumed_session_is_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = JsonlSessionStore(tmp_path)
    faux = FauxProvider([faux_text("hello")])
    session = store.create()
    await Agent(initial_state={"model": faux.model}, session=session).prompt("hi")
    caplog.set_level(logging.INFO, logger="agentcore")
    Agent(session=store.open(session.id))
    assert (
        f"INFO resumed session {session.id!r}: 2 messages, 0 steering and 0 follow-up "
        "messages queued" in _records(caplog)
    )


def test_run_usage_sums_answers_and_tool_reported_usage() -> None:
    a = faux_text("x")
    a = type(a)(
        content=a.content,
        usage=Usage(input=10, output=5, cache_read=2, cache_write=1, cost=Cost(input=1.0)),
    )
    b = type(a)(content=[], usage=Usage(input=3, output=4, cost=Cost(output=2.0)))
    tool = ToolResultMessage(
        tool_call_id="c",
        tool_name="t",
        content=[],
        usage=Usage(input=100, output=10, cost=Cost(input=0.5)),
    )
    total = run_usage([UserMessage(content="hi"), a, tool, b])
    assert (total.input, total.output, total.cache_read, total.cache_write) == (113, 19, 2, 1)
    assert total.total_tokens == 135
    assert total.cost.total == pytest.approx(3.5)
    answers_only = run_usage([a, tool, b], include_tools=False)
    assert (answers_only.input, answers_only.output) == (13, 9)
    assert run_usage([]) == Usage()


async def test_the_event_stream_gives_the_runs_total_after_the_run() -> None:
    faux = FauxProvider([faux_tool_call("paid", {}), faux_text("done")])
    config = AgentLoopConfig(model=faux.model)
    context = AgentContext(tools=[make_tool("paid", _paid_tool)])
    async with agent_loop([UserMessage(content="hi")], context, config) as stream:
        seen: list[Usage | None] = []
        async for event in stream:
            if event.type in ("agent_start", "agent_end"):
                seen.append(stream.usage)
        messages = await stream.result()
    total = run_usage(messages)
    assert seen == [None, total] and stream.usage == total
    assert total.input >= 100 and total.cost.total >= 0.75


def test_the_event_stream_total_in_sync_use() -> None:
    faux = FauxProvider([faux_text("done")])
    stream = agent_loop(
        [UserMessage(content="hi")], AgentContext(), AgentLoopConfig(model=faux.model)
    )
    messages = stream.result_sync()
    assert stream.usage == run_usage(messages) and stream.usage.output > 0  # type: ignore[union-attr]


async def test_the_agent_totals_its_runs_over_its_life() -> None:
    faux = FauxProvider([faux_tool_call("paid", {}), faux_text("one"), faux_text("two")])
    agent = Agent(initial_state={"model": faux.model, "tools": [make_tool("paid", _paid_tool)]})
    assert agent.state.usage == Usage()
    first = await agent.prompt("first")
    assert agent.state.usage == run_usage(first)
    second = await agent.prompt("second")
    assert agent.state.usage == run_usage([*first, *second])
    agent.reset()  # the transcript goes, what was spent stays
    assert agent.state.usage == run_usage([*first, *second])
