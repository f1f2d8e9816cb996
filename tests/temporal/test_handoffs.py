"""Handoffs in a durable run: a run started as a registered agent (`start_run(agent=...)`)
hands the conversation to another agent the workers serve; after a kill of the worker running
the target's tool, and across a restart of every worker while a call of the target waits for
approval, the run goes on in the target, with its system prompt, tools and model."""

from __future__ import annotations

from typing import Any

import pytest
from temporalio.client import Client

from agentcore import (
    AgentContext,
    AgentLoopConfig,
    ApprovalDecision,
    AssistantMessage,
    UserMessage,
    run_agent_loop,
    run_agent_loop_continue,
)
from agentcore.approvals import pending_approvals
from agentcore.events import AgentEndEvent, AgentSwitchEvent, ToolExecutionEndEvent
from agentcore.temporal import RunOptions, start_run
from agentcore.testing import check_well_formed
from support.temporal import TASK_QUEUE, Workers, lines, wait_for_line

from .test_approvals import waiting
from .test_durable_run import replay, text_of, timeless
from .worker_app import triage

pytestmark = pytest.mark.anyio

FAST = RunOptions(heartbeat_timeout=2.0)
BILLING_DONE = "[You are billing.] done with ['pay', 'slow', 'transfer_to_triage']"
"""billing's last answer: the system prompt and tools of its request, as its model saw them."""


def check_in_billing(events: list[Any], messages: list[Any]) -> None:
    """One switch, triage to billing by h1; billing's calls, answers and end named so; the
    last answer from billing's own model, with its system prompt and tools."""
    switches = [e for e in events if isinstance(e, AgentSwitchEvent)]
    assert [(s.from_agent, s.to_agent, s.tool_call_id, s.returns) for s in switches] == [
        ("triage", "billing", "h1", False)
    ]
    ends = {e.tool_call_id: e.agent for e in events if isinstance(e, ToolExecutionEndEvent)}
    assert ends == {"h1": "triage", "b1": "billing"}
    agent_end = events[-1]
    assert isinstance(agent_end, AgentEndEvent) and agent_end.last_agent == "billing"
    answers = [m for m in messages if isinstance(m, AssistantMessage)]
    assert [m.agent for m in answers] == ["triage", "billing", "billing"]
    assert [m.provider for m in answers] == ["faux-triage", "faux-billing", "faux-billing"]
    assert text_of(answers[-1]) == BILLING_DONE
    check_well_formed(events)


async def test_a_handoff_continues_in_the_target_after_a_kill(
    client: Client, workers: Workers, run_id: str
) -> None:
    workers.ensure(2)
    run = await start_run(
        client,
        "refund",
        id=run_id,
        task_queue=TASK_QUEUE,
        model="chat",  # (every agent names its own)
        agent="triage",
        options=FAST,
    )
    started = await wait_for_line(workers.effects / "started", run_id)
    assert started[1] == "b1"  # billing's tool runs: the run has switched
    workers.kill(int(started[2]))
    events = [e async for e in run.events()]
    messages = await run.result()
    workers.ensure(2)
    check_in_billing(events, messages)
    assert [line[1:] for line in lines(workers.effects / "effects", run_id)] == [["b1", "refund"]]
    assert len(lines(workers.effects / "started", run_id)) == 2  # run again on the other one
    await replay(client, run_id)


async def in_process(prompt: UserMessage) -> list[Any]:
    """The same agents in-process: stop for the approval, approve, continue."""
    config = AgentLoopConfig(model=triage.model, agent_name="triage")  # type: ignore[arg-type]
    context = AgentContext(system_prompt=triage.system_prompt, tools=triage.handoff_tools())
    first = await run_agent_loop([prompt], context, config, lambda e: None)
    (request,) = pending_approvals(first)
    decided = [*first, ApprovalDecision.approve(request)]
    context = AgentContext(
        system_prompt=triage.system_prompt, messages=decided, tools=triage.handoff_tools()
    )
    rest = await run_agent_loop_continue(context, config, lambda e: None)
    return [*decided, *rest]


async def test_an_approval_in_the_target_after_every_worker_restarted(
    client: Client, workers: Workers, run_id: str
) -> None:
    prompt = UserMessage(content="pay")
    run = await start_run(
        client, prompt, id=run_id, task_queue=TASK_QUEUE, model="chat", agent="triage"
    )
    assert await waiting(run, 1) == ["b1"]  # billing's call of pay
    for process in workers.alive():  # every worker dies; new ones come up
        workers.kill(process.pid)
    workers.ensure(2)
    await run.approve("b1")
    events = [e async for e in run.events()]
    messages = await run.result()
    check_in_billing(events, messages)
    assert [line[1:] for line in lines(workers.effects / "effects", run_id)] == [
        ["b1", "paid", "7"]
    ]
    assert timeless(messages) == timeless(await in_process(prompt))
    await replay(client, run_id)
