"""Approvals wait inside the workflow: the run stops for the calls that need a decision, waits
(here across a restart of every worker), and carries the decisions out on whatever worker is alive,
building the transcript an in-process run builds; an abort while waiting still gives every call
one result."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from temporalio.client import Client

from agentcore import (
    AgentContext,
    AgentLoopConfig,
    ApprovalDecision,
    ConfigError,
    ToolResultMessage,
    UserMessage,
    run_agent_loop,
    run_agent_loop_continue,
)
from agentcore.approvals import pending_approvals
from agentcore.temporal import DurableRun, RunOptions, start_run
from agentcore.testing import check_well_formed
from support.temporal import TASK_QUEUE, Workers, lines

from .test_durable_run import replay, text_of, timeless
from .worker_app import local_tools, models

pytestmark = pytest.mark.anyio

TOOLS = ["pay", "record"]


async def waiting(run: DurableRun, count: int) -> list[str]:
    """The ids of the calls waiting for a decision, once `count` wait."""
    with anyio.fail_after(30):
        while True:
            requests = await run.pending_approvals()
            if len(requests) == count:
                return [r.tool_call_id for r in requests]
            await anyio.sleep(0.1)


async def in_process(prompt: UserMessage) -> list[Any]:
    """The same script in-process: stop, decide, continue."""
    tools = [t for t in local_tools if t.name in TOOLS]
    config = AgentLoopConfig(model=models["approval"])
    first = await run_agent_loop([prompt], AgentContext(tools=tools), config, lambda e: None)
    a1, a2 = pending_approvals(first)
    decided = [
        *first,
        ApprovalDecision.approve(a1, {"amount": 25}),
        ApprovalDecision.deny(a2, "too much"),
    ]
    rest = await run_agent_loop_continue(
        AgentContext(messages=decided, tools=tools), config, lambda e: None
    )
    return [*decided, *rest]


async def test_an_approval_after_every_worker_restarted(
    client: Client, workers: Workers, run_id: str
) -> None:
    prompt = UserMessage(content="pay the bills")
    run = await start_run(
        client,
        prompt,
        id=run_id,
        task_queue=TASK_QUEUE,
        model="approval",
        tools=TOOLS,
        options=RunOptions(heartbeat_timeout=2.0),
    )
    assert await waiting(run, 2) == ["a1", "a2"]
    for process in workers.alive():  # every worker dies; new ones come up
        workers.kill(process.pid)
    workers.ensure(2)
    with pytest.raises(ConfigError, match="no tool call 'a3' waits for a decision"):
        await run.approve("a3")
    await run.approve("a1", arguments={"amount": 25})
    await run.deny("a2", "too much")
    events = [e async for e in run.events()]
    messages = await run.result()
    assert timeless(messages) == timeless(await in_process(prompt))
    roles = [m.role for m in messages]
    assert roles[:6] == [
        *("user", "assistant", "tool_result", "approval_request", "approval_request"),
        "approval_decision",
    ]
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolResultMessage)}
    assert text_of(results["a1"]).endswith("paid 25") and not results["a1"].is_error
    assert results["a2"].is_error and "too much" in text_of(results["a2"])
    assert text_of(messages[-1]) == "Paid what was approved."
    effects = [line[1:] for line in lines(workers.effects / "effects", run_id)]
    assert effects == [["a3", "asked"], ["a1", "paid", "25"]]  # each ran once, a2 never
    check_well_formed(events)
    await replay(client, run_id)


async def test_aborting_while_calls_wait_gives_every_call_one_result(
    client: Client, workers: Workers, run_id: str
) -> None:
    run = await start_run(
        client, "pay", id=run_id, task_queue=TASK_QUEUE, model="approval", tools=TOOLS
    )
    await waiting(run, 2)
    await run.approve("a1")
    await run.abort()
    messages = await run.result()
    results = [m for m in messages if isinstance(m, ToolResultMessage)]
    assert sorted(r.tool_call_id for r in results) == ["a1", "a2", "a3"]
    assert all(r.is_error for r in results if r.tool_call_id != "a3")
    assert messages[-1].role == "tool_result"  # the model was not asked again
    assert [line[1] for line in lines(workers.effects / "effects", run_id)] == ["a3"]
    check_well_formed([e async for e in run.events()])
    await replay(client, run_id)


async def test_a_tools_question_waits_in_the_workflow_across_a_worker_restart(
    client: Client, workers: Workers, run_id: str
) -> None:
    """A tool that asks the user (`InputRequired`, what an MCP elicitation through approvals
    raises) on a worker: the durable run waits with the question, every worker is restarted, an
    answer off the schema is refused naming the field, and the answer runs the call again."""
    run = await start_run(
        client,
        UserMessage(content="pick a size"),
        id=run_id,
        task_queue=TASK_QUEUE,
        model="question",
        tools=["ask_size"],
        options=RunOptions(heartbeat_timeout=2.0),
    )
    assert await waiting(run, 1) == ["q1"]
    (request,) = await run.pending_approvals()
    assert request.reason == "Which size?"
    assert request.input_schema is not None and request.input_schema["required"] == ["size"]
    for process in workers.alive():
        workers.kill(process.pid)
    workers.ensure(2)
    with pytest.raises(ConfigError, match="size"):
        await run.approve("q1", arguments={"size": "XL"})
    await run.approve("q1", arguments={"size": "L"})
    messages = await run.result()
    (result,) = [m for m in messages if isinstance(m, ToolResultMessage)]
    assert text_of(result) == "accept: {'size': 'L'}" and not result.is_error
    assert text_of(messages[-1]) == "sized"
    effects = [line[1:] for line in lines(workers.effects / "effects", run_id)]
    assert effects == [["q1", "accept", "{'size':", "'L'}"]]  # it ran to the end once
    await replay(client, run_id)
