"""Handoffs in traces (issue 34): the run's `invoke_agent` span is the first agent's segment,
each later segment its own `invoke_agent {agent}` span inside it, holding that agent's requests
and tool calls; the transfer itself is the `execute_tool transfer_to_...` span of its call."""

from __future__ import annotations

from typing import Any

import pytest

from agentcore import AgentContext, AgentLoopConfig, AgentSpec, UserMessage, agent_loop, handoff
from agentcore import tool as make_tool
from agentcore.testing import FauxProvider, faux_text, faux_tool_call
from support.tracing import Traces, tree

pytestmark = pytest.mark.anyio


@make_tool
def refund(order: str) -> str:
    """Refund an order."""
    return "refunded"


async def test_one_invoke_agent_span_per_agent_segment(traces: Traces) -> None:
    billing = AgentSpec(name="billing", system_prompt="You are billing.", tools=[refund])
    faux = FauxProvider(
        [
            faux_tool_call("transfer_to_billing", {}, id="h1"),
            faux_tool_call("refund", {"order": "7"}),
            faux_text("done"),
        ]
    )
    stream = agent_loop(
        [UserMessage(content="refund 7")],
        AgentContext(tools=[handoff(billing, returns=False)]),
        AgentLoopConfig(model=faux.model, agent_name="triage"),
        stream_fn=faux.stream_fn,
    )
    async for _ in stream:
        pass
    chat = f"chat {faux.model.id}"
    assert tree(traces) == [
        "invoke_agent",
        f"  {chat}",
        "  execute_tool transfer_to_billing",
        "  invoke_agent billing",
        f"    {chat}",
        "    execute_tool refund",
        f"    {chat}",
    ]
    segment: Any = traces.one("invoke_agent billing")
    attributes = dict(segment.attributes or {})
    assert attributes == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "billing",
        "agentcore.handoff.from_agent": "triage",
        "agentcore.handoff.tool_call_id": "h1",
        "agentcore.handoff.returns": False,
    }
    run_span: Any = next(s for s in traces.named("invoke_agent") if s.name == "invoke_agent")
    assert run_span.start_time <= segment.start_time <= segment.end_time <= run_span.end_time
