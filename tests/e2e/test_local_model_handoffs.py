"""A handoff against the local model (issue 34): a triage agent hands a refund question to the
refunds specialist, which answers and (`returns=True`) hands the conversation back to triage,
which answers last. Temperature 0, short answers, descriptions that leave one choice."""

from __future__ import annotations

from typing import Any

import pytest

from agentcore import (
    AgentContext,
    AgentLoopConfig,
    AgentSpec,
    AssistantMessage,
    UserMessage,
    agent_loop,
    handoff,
)
from agentcore.testing import check_well_formed

from .local_server import LocalModel

pytestmark = [pytest.mark.local_llm, pytest.mark.anyio]

REQUEST_TIMEOUT = 120

TRIAGE = (
    "You are the triage agent of a shop. Call the tool transfer_to_refunds for every refund "
    "question. When a message starting with [refunds] gives the answer, repeat that answer to "
    "the customer and call no tool."
)
REFUNDS = AgentSpec(
    name="refunds",
    description="Answers every question about refunds and the refund policy.",
    system_prompt=(
        "You are the refunds agent. The policy: refunds are accepted within 30 days of "
        "delivery. Answer in one short sentence."
    ),
)


@pytest.mark.timeout(4 * REQUEST_TIMEOUT + 30)
async def test_triage_hands_a_refund_question_to_the_specialist_and_gets_it_back(
    local_model: LocalModel,
) -> None:
    config = AgentLoopConfig(
        model=local_model.model,
        agent_name="triage",
        temperature=0,
        max_tokens=96,
        max_turns=4,
        request_timeout=REQUEST_TIMEOUT,
        idle_timeout=REQUEST_TIMEOUT,
    )
    used: list[object] = []  # one consultation: the handoff is offered until it has run
    refunds = handoff(
        REFUNDS, returns=True, on_handoff=lambda _: used.append(1), enabled=lambda: not used
    )
    context = AgentContext(system_prompt=TRIAGE, tools=[refunds])
    prompt = UserMessage(content="How many days do I have to ask for a refund?")
    events: list[Any] = []
    async with agent_loop([prompt], context, config) as stream:
        async for event in stream:
            events.append(event)
    check_well_formed(events)
    switches = [(e.from_agent, e.to_agent, e.returns) for e in events if e.type == "agent_switch"]
    assert switches == [("triage", "refunds", True), ("refunds", "triage", True)], switches
    answers = [e.message for e in events if e.type == "message_end"]
    answers = [m for m in answers if isinstance(m, AssistantMessage)]
    assert [m.agent for m in answers] == ["triage", "refunds", "triage"]
    assert "30" in "".join(b.text for b in answers[1].content if b.type == "text")
    assert answers[-1].stop_reason == "stop" and not answers[-1].tool_calls
    assert events[-1].last_agent == "triage" and events[-1].limit is None
