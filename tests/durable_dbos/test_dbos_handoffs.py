"""Handoffs in a durable run on DBOS: a run started as a registered agent (`start_run(agent=...)`)
hands the conversation to another agent the worker serves; after a SIGKILL of the worker between
the switch and the target's first answer, the recovered run goes on in the target (its system
prompt, tools and model), the watcher gets the `agent_switch`, and a run continuing the
transcript answers in the last agent or the first, as `RunOptions.next_agent` says."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from dbos import DBOSClient

from agentcore import AssistantMessage
from agentcore.dbos import RunOptions, start_run
from agentcore.events import AgentEndEvent, AgentSwitchEvent, ToolExecutionEndEvent
from agentcore.testing import check_well_formed

from .test_dbos_runs import Worker, env, lines, run_id, text_of

pytestmark = pytest.mark.anyio
__all__ = ["env"]  # (the fixture, imported)

BILLING_DONE = "[You are billing.] done with ['record', 'transfer_to_triage']"
"""billing's last answer: the system prompt and tools of its request, as its model saw them."""


def answers(messages: list[Any]) -> list[AssistantMessage]:
    return [m for m in messages if isinstance(m, AssistantMessage)]


async def test_a_handoff_continues_in_the_target_after_a_kill(
    env: tuple[DBOSClient, Worker],
) -> None:
    client, worker = env
    rid = run_id()
    run = await start_run(client, "refund", id=rid, model="tools", agent="triage")
    marker = worker.effects / "stream-billing"
    with anyio.fail_after(60):
        while not lines(marker, rid):  # noqa: ASYNC110 (the worker writes it)
            await anyio.sleep(0.05)
    worker.kill()  # held in billing's first request: the handoff's result is checkpointed
    (worker.effects / f"gate-{rid}").touch()
    worker.start()
    messages = await run.result()
    events = [e async for e in run.events()]
    switches = [e for e in events if isinstance(e, AgentSwitchEvent)]
    assert [(s.from_agent, s.to_agent, s.tool_call_id, s.returns) for s in switches] == [
        ("triage", "billing", "h1", False)
    ]
    ends = {e.tool_call_id: e.agent for e in events if isinstance(e, ToolExecutionEndEvent)}
    assert ends == {"h1": "triage", "b1": "billing"}
    agent_end = events[-1]
    assert isinstance(agent_end, AgentEndEvent) and agent_end.last_agent == "billing"
    assert [(m.agent, m.provider) for m in answers(messages)] == [
        ("triage", "faux-triage"),
        ("billing", "faux-billing"),
        ("billing", "faux-billing"),
    ]
    assert text_of(messages[-1]) == BILLING_DONE
    asked = lines(marker, rid)
    assert len(asked) == 2 and asked[0][1] != asked[1][1]  # asked again, by the new process
    assert [line[1:] for line in lines(worker.effects / "effects", rid)] == [["b1", "refund"]]
    check_well_formed(events)

    for next_agent, agent, provider in (
        ("last", "billing", "faux-billing"),
        ("first", "triage", "faux-triage"),
    ):
        more = await start_run(
            client,
            "and one more thing",
            id=f"{rid}-{next_agent}",
            model="tools",
            agent="triage",
            messages=messages,
            options=RunOptions(next_agent=next_agent),  # type: ignore[arg-type]
        )
        (answer,) = answers(await more.result())
        assert (answer.agent, answer.provider) == (agent, provider)
