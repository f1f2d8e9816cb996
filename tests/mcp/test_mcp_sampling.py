"""MCP sampling and roots: a server written with the official SDK (`interactive_server.py`, over
stdio) asks the client's model to answer during a tool call, driven through an `Agent` on the
faux model. Sampling is refused unless the client allows it; allowed, the answer comes from the
configured model, its usage is carried by the tool's result (and counted by `run_usage`), and the
client's caps (tokens, cost, requests, approval) hold.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import IO, Any

import anyio
import pytest
from mcp_support import errlog, results, text

from agentcore import (
    Agent,
    ConfigError,
    ToolResultMessage,
    UsageLimits,
    run_usage,
    set_instrumentation,
)
from agentcore.llm import ModelCost
from agentcore.mcp import MCPClient, MCPSampling, MCPSamplingRequest
from agentcore.testing import FauxProvider, faux_text, faux_tool_call
from support.tracing import make_traces, tree

pytestmark = pytest.mark.anyio

__all__ = ["errlog"]  # the fixture, imported for pytest

SERVER = str(Path(__file__).resolve().parent / "interactive_server.py")


def client(errlog: IO[str], **options: Any) -> MCPClient:
    return MCPClient.stdio(sys.executable, [SERVER], errlog=errlog, name="inter", **options)


async def run_tool(
    mcp: MCPClient, name: str, arguments: dict[str, Any]
) -> tuple[Agent, ToolResultMessage]:
    """One agent turn on the faux model calling `name` on the server, then a final answer."""
    main = FauxProvider([faux_tool_call(name, arguments), faux_text("done")])
    agent = Agent(initial_state={"model": main.model, "tools": mcp.tools})
    await agent.prompt("go")
    (result,) = results(agent.state.messages)
    return agent, result


async def test_sampling_is_refused_by_default(errlog: IO[str]) -> None:
    async with client(errlog) as mcp:
        _, result = await run_tool(
            mcp, "ask_model", {"question": "Capital of France?", "max_tokens": 20}
        )
    assert result.is_error
    assert "sampling is off" in text(result)
    assert "'inter'" in text(result)
    assert result.usage is None


async def test_sampling_answered_by_the_faux_model_with_usage_and_caps(errlog: IO[str]) -> None:
    price = ModelCost(input=1000.0, output=1000.0)  # USD per million tokens: visible costs
    sampler = FauxProvider([faux_text("Paris"), faux_text("Lyon")], model_id="sampler", cost=price)
    asked: list[MCPSamplingRequest] = []

    def approve(request: MCPSamplingRequest) -> bool:
        asked.append(request)
        return True

    sampling = MCPSampling(model=sampler.model, max_tokens=8, approve=approve)
    async with client(errlog, sampling=sampling) as mcp:
        agent, result = await run_tool(
            mcp, "ask_model", {"question": "Capital of France?", "max_tokens": 500}
        )
    assert not result.is_error, text(result)
    assert text(result) == "sampler said: Paris"
    # the server's request reached the sampling model, its max_tokens capped by the client
    (call,) = sampler.calls
    assert call.options.max_tokens == 8
    assert call.context.system_prompt == "Answer in one word."
    assert call.context.messages[0].content[0].text == "Capital of France?"  # type: ignore[union-attr]
    # the approval saw it first
    (request,) = asked
    assert (request.server, request.tool, request.max_tokens) == ("inter", "ask_model", 8)
    # the usage rides on the tool's result, and the run's total counts it
    assert result.usage is not None and result.usage.total_tokens > 0
    assert result.usage.cost.total > 0
    answers = sum(
        m.usage.cost.total for m in agent.state.messages if getattr(m, "role", "") == "assistant"
    )
    total = run_usage(agent.state.messages)
    assert total.cost.total == pytest.approx(answers + result.usage.cost.total)


async def test_sampling_caps_refuse_further_requests(errlog: IO[str]) -> None:
    price = ModelCost(input=1000.0, output=1000.0)
    sampler = FauxProvider([faux_text("one"), faux_text("two")], model_id="sampler", cost=price)
    # the first request costs more than the cap: the second is refused
    sampling = MCPSampling(model=sampler.model, max_cost=0.000001)
    async with client(errlog, sampling=sampling) as mcp:
        _, result = await run_tool(mcp, "ask_model_twice", {"question": "Hi"})
    assert result.is_error
    assert "sampling refused" in text(result) and "per call" in text(result)
    assert len(sampler.calls) == 1
    assert result.usage is not None and result.usage.cost.total > 0  # the first one counted

    sampler = FauxProvider([faux_text("one"), faux_text("two")], model_id="sampler")
    async with client(errlog, sampling=MCPSampling(model=sampler.model, max_requests=1)) as mcp:
        _, result = await run_tool(mcp, "ask_model_twice", {"question": "Hi"})
    assert result.is_error and "1 sampling requests" in text(result), text(result)

    sampler = FauxProvider([faux_text("one")], model_id="sampler")
    denied = MCPSampling(model=sampler.model, approve=lambda request: False)
    async with client(errlog, sampling=denied) as mcp:
        _, result = await run_tool(mcp, "ask_model", {"question": "Hi", "max_tokens": 5})
    assert result.is_error and "did not approve" in text(result)
    assert sampler.calls == []


async def test_roots_are_listed(errlog: IO[str], tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    async with client(errlog, roots=[tmp_path / "work"]) as mcp:
        _, result = await run_tool(mcp, "roots", {})
    assert not result.is_error, text(result)
    assert text(result) == f"work={(tmp_path / 'work').resolve().as_uri()}"


def test_bad_configuration_is_named() -> None:
    sampler = FauxProvider([])
    with pytest.raises(ConfigError, match="max_tokens must be at least 1"):
        MCPSampling(model=sampler.model, max_tokens=0)
    with pytest.raises(ConfigError, match="must be an agentcore Model"):
        MCPSampling(model="gpt")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="roots must be a list of directory paths"):
        MCPClient.stdio("python", roots="/tmp")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="sampling must be an MCPSampling"):
        MCPClient.stdio("python", sampling=sampler.model)  # type: ignore[arg-type]


async def test_sampling_usage_counts_against_the_runs_usage_limits(errlog: IO[str]) -> None:
    price = ModelCost(input=1000.0, output=1000.0)
    sampler = FauxProvider([faux_text("Paris")], model_id="sampler", cost=price)
    ends: list[Any] = []
    async with client(errlog, sampling=MCPSampling(model=sampler.model)) as mcp:
        main = FauxProvider(  # free itself: only the sampling costs
            [faux_tool_call("ask_model", {"question": "Hi", "max_tokens": 5}), faux_text("done")]
        )
        agent = Agent(
            initial_state={"model": main.model, "tools": mcp.tools},
            usage_limits=UsageLimits(cost=0.001),
        )
        agent.subscribe(lambda event, *_: ends.append(event) if event.type == "agent_end" else None)
        await agent.prompt("go")
    (end,) = ends
    assert end.limit is not None and end.limit.kind == "cost"
    assert end.limit.used > 0.001
    assert len(main.calls) == 1  # the run ended after the tool's turn: no further request


async def test_sampling_is_traced_as_a_chat_span_under_the_tools_span(errlog: IO[str]) -> None:
    sampler = FauxProvider([faux_text("Paris")], model_id="sampler")
    traces = make_traces()
    try:
        async with client(errlog, sampling=MCPSampling(model=sampler.model)) as mcp:
            _, result = await run_tool(mcp, "ask_model", {"question": "Hi", "max_tokens": 5})
    finally:
        set_instrumentation(None)
    assert not result.is_error, text(result)
    assert tree(traces) == [
        "invoke_agent",
        "  chat faux-1",
        "  execute_tool ask_model",
        "    chat sampler",
        "  chat faux-1",
    ]
    span = traces.one("chat sampler")
    assert span.attributes is not None
    assert span.attributes["gen_ai.usage.output_tokens"] == result.usage.output  # type: ignore[union-attr]


@pytest.mark.local_llm
@pytest.mark.timeout(300)
async def test_one_sampling_request_answered_by_the_local_model(errlog: IO[str]) -> None:
    from e2e.local_server import LocalModelUnavailable, ensure_local_model

    try:
        local = ensure_local_model()
    except LocalModelUnavailable as exc:
        pytest.skip(str(exc))
    sampling = MCPSampling(model=local.model, max_tokens=16)
    async with client(errlog, sampling=sampling) as mcp:
        with anyio.fail_after(240):
            _, result = await run_tool(
                mcp, "ask_model", {"question": "What is the capital of France?", "max_tokens": 64}
            )
    assert not result.is_error, text(result)
    assert text(result).startswith(f"{local.model.id} said: ")
    assert "paris" in text(result).lower()
    assert result.usage is not None and result.usage.output > 0


STANDALONE = str(Path(__file__).resolve().parent / "standalone_server.py")


async def test_stand_alone_sampling_requests_never_reach_the_model(errlog: IO[str]) -> None:
    """Issue 30: a server may send `sampling/createMessage` at any time (protocol 2025-06-18);
    with max_requests=2 and max_cost=0, 25 of 25 requests sent outside any tool call reached
    the model, counted in no run. They are refused: none reaches the model."""
    price = ModelCost(input=1000.0, output=1000.0)
    sampler = FauxProvider([faux_text("spent")] * 30, model_id="sampler", cost=price)
    sampling = MCPSampling(model=sampler.model, max_requests=2, max_cost=0)
    mcp = MCPClient.stdio(
        sys.executable, [STANDALONE, "25"], errlog=errlog, name="flooder", sampling=sampling
    )
    async with mcp:
        _, result = await run_tool(mcp, "tally", {})
    assert json.loads(text(result)) == {"answered": 0, "refused": 25}
    assert sampler.calls == []


async def test_requests_during_a_call_of_a_handshake_era_server_keep_the_calls_caps(
    errlog: IO[str],
) -> None:
    """A handshake-era server's requests during a call are that call's: its caps hold (25 sent,
    2 allowed), and what they cost is the call's usage."""
    price = ModelCost(input=1000.0, output=1000.0)
    sampler = FauxProvider([faux_text("spent")] * 30, model_id="sampler", cost=price)
    sampling = MCPSampling(model=sampler.model, max_requests=2)
    mcp = MCPClient.stdio(
        sys.executable, [STANDALONE, "25"], errlog=errlog, name="flooder", sampling=sampling
    )
    async with mcp:
        _, result = await run_tool(mcp, "flood", {})
    assert json.loads(text(result)) == {"answered": 2, "refused": 23}
    assert len(sampler.calls) == 2
    assert result.usage is not None and result.usage.cost.total > 0


OLD_STYLE = str(Path(__file__).resolve().parent / "old_style_server.py")


async def test_a_tool_that_samples_the_mcp_1x_way_works_on_a_2x_server(errlog: IO[str]) -> None:
    """Issue 30: a 2.x server's tool calling `ctx.session.create_message` failed with "no
    back-channel for server-initiated requests" (the 2026-07-28 protocol has none). The client
    connects again with the handshake, where it works, and sends the call again once; later
    calls go to the new connection at once."""
    price = ModelCost(input=1000.0, output=1000.0)
    sampler = FauxProvider([faux_text("Paris"), faux_text("Rome")], model_id="sampler", cost=price)
    sampling = MCPSampling(model=sampler.model, max_requests=1)
    mcp = MCPClient.stdio(sys.executable, [OLD_STYLE], errlog=errlog, name="old", sampling=sampling)
    async with mcp:
        _, first = await run_tool(mcp, "ask", {"question": "Capital of France?"})
        _, second = await run_tool(mcp, "ask", {"question": "Capital of Italy?"})
        _, plain = await run_tool(mcp, "plain", {"text": "hi"})
    assert not first.is_error, text(first)
    assert text(first) == "#1 sampler said: Paris"  # the first call of the new process
    assert text(second) == "#2 sampler said: Rome"
    assert text(plain) == "#3 hi"
    assert len(sampler.calls) == 2
    assert first.usage is not None and first.usage.cost.total > 0  # counted in the call


async def test_without_sampling_the_mcp_1x_way_is_explained(errlog: IO[str]) -> None:
    mcp = MCPClient.stdio(sys.executable, [OLD_STYLE], errlog=errlog, name="old")
    async with mcp:
        _, result = await run_tool(mcp, "ask", {"question": "Hi"})
    assert result.is_error
    assert text(result) == (
        "MCP server 'old': the tool 'ask' sent 'sampling/createMessage' as a request of its own "
        "(the mcp 1.x way: ctx.session.create_message, ctx.elicit), which the 2026-07-28 "
        "protocol has no channel for; this client does not answer it anyway (off)."
    )
