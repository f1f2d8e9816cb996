"""Durable runs against the real Temporal dev server and real worker processes: the transcript
equals an in-process run's, events are well formed, steering and follow-up signals, abort by
cancellation, continue-as-new, and replay of the recorded histories."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from temporalio import workflow
from temporalio.client import Client
from temporalio.worker import Replayer
from temporalio.workflow import NondeterminismError

from agentcore import (
    AgentContext,
    AgentLoopConfig,
    AgentMessage,
    ToolResultMessage,
    UserMessage,
    run_agent_loop,
)
from agentcore.temporal import AgentWorkflow, RunOptions, get_run, start_run, workflow_runner
from agentcore.testing import check_well_formed
from support.temporal import TASK_QUEUE, Workers, lines, wait_for_line

from .worker_app import local_tools, models

pytestmark = pytest.mark.anyio

FAST = RunOptions(heartbeat_timeout=2.0)
"""Lost workers are noticed within two seconds."""


def timeless(messages: list[AgentMessage]) -> list[Any]:
    """Messages without their timestamps (the two runs happen at different times)."""
    return [replace(m, timestamp=0) for m in messages]  # type: ignore[type-var]


def text_of(message: Any) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(getattr(b, "text", "") for b in content)


async def replay(client: Client, run_id: str) -> None:
    """Replay every run of the workflow's chain with the SDK's replayer (raises on
    non-determinism)."""
    replayer = Replayer(workflows=[AgentWorkflow], workflow_runner=workflow_runner())
    async for history in client.list_workflows(f"WorkflowId = '{run_id}'").map_histories():
        await replayer.replay_workflow(history)


async def test_transcript_equals_the_in_process_run(
    client: Client, workers: Workers, run_id: str
) -> None:
    prompt = UserMessage(content="What is 2 + 40?")
    run = await start_run(
        client,
        prompt,
        id=run_id,
        task_queue=TASK_QUEUE,
        model="tools",
        tools=["add", "record"],
        system_prompt="You are a careful calculator.",
        options=FAST,
    )
    events = [e async for e in run.events()]
    durable = await run.result()

    local_events: list[Any] = []
    local = await run_agent_loop(
        [prompt],
        AgentContext(system_prompt="You are a careful calculator.", tools=local_tools[:2]),
        AgentLoopConfig(model=models["tools"]),
        local_events.append,
    )
    assert timeless(durable) == timeless(local)
    assert [m.role for m in durable] == [
        *("user", "assistant", "tool_result", "tool_result"),
        *("assistant", "tool_result", "assistant", "tool_result", "assistant"),
    ]
    results = [m for m in durable if isinstance(m, ToolResultMessage)]
    assert text_of(results[0]) == "42" and not results[0].is_error
    assert results[2].is_error and "Validation failed" in text_of(results[2])
    assert text_of(results[3]) == "Tool nope not found"
    check_well_formed(events)
    # the same events as in-process, but for the text deltas (not part of a durable run)
    assert [e.type for e in events] == [e.type for e in local_events if e.type != "message_update"]
    assert events[-1].messages == durable  # type: ignore[union-attr]
    assert timeless(await get_run(client, run_id).transcript()) == timeless(durable)
    assert len(lines(workers.effects / "effects", run_id)) == 1
    await replay(client, run_id)


async def test_a_raising_tool_gives_its_own_message_as_in_process(
    client: Client, workers: Workers, run_id: str
) -> None:
    """A tool's exception is its error result's text, as in an in-process run (not the text of
    the heartbeat's task group wrapping it), for an async tool and a sync one (in a thread)."""
    run = await start_run(
        client,
        "go",
        id=run_id,
        task_queue=TASK_QUEUE,
        model="failing",
        tools=["explode", "explode_sync"],
        options=FAST,
    )
    durable = await run.result()
    results = [m for m in durable if isinstance(m, ToolResultMessage)]
    assert [(text_of(r), r.is_error) for r in results] == [
        ("the disk is full (async)", True),
        ("the disk is full (sync)", True),
    ]
    local = await run_agent_loop(
        [UserMessage(content="go")],
        AgentContext(tools=local_tools[-2:]),
        AgentLoopConfig(model=models["failing"]),
        lambda event: None,
    )
    assert timeless(durable) == timeless(local)


async def test_a_bad_model_name_ends_the_run_with_an_error(
    client: Client, workers: Workers, run_id: str
) -> None:
    run = await start_run(client, "hi", id=run_id, task_queue=TASK_QUEUE, model="nobody")
    messages = await run.result()
    answer = messages[-1]
    assert answer.stop_reason == "error"  # type: ignore[union-attr]
    assert "no model named 'nobody' is registered" in answer.error_message  # type: ignore[union-attr]


async def test_steering_and_follow_up_signals(
    client: Client, workers: Workers, run_id: str
) -> None:
    run = await start_run(
        client,
        "go",
        id=run_id,
        task_queue=TASK_QUEUE,
        model="slow-tool",
        tools=["slow", "record"],
        options=FAST,
    )
    await wait_for_line(workers.effects / "started", run_id)  # the slow tool is running
    await run.follow_up("and then?")
    await run.steer("change of plan")
    events = [e async for e in run.events()]
    messages = await run.result()
    assert [(m.role, text_of(m)) for m in messages if m.role == "user"] == [
        ("user", "go"),
        ("user", "change of plan"),
        ("user", "and then?"),
    ]
    roles = [m.role for m in messages]
    # the steering message comes right after the slow tool's turn, the follow-up at the end
    assert roles == [
        *("user", "assistant", "tool_result", "user", "assistant", "tool_result"),
        *("assistant", "user", "assistant"),
    ]
    check_well_formed(events)
    await replay(client, run_id)


async def test_cancelling_aborts_with_one_result_per_call(
    client: Client, workers: Workers, run_id: str
) -> None:
    run = await start_run(
        client,
        "go",
        id=run_id,
        task_queue=TASK_QUEUE,
        model="slow-tool",
        tools=["slow", "record"],
        options=FAST,
    )
    await wait_for_line(workers.effects / "started", run_id)
    await run.abort()
    messages = await run.result()
    assert [m.role for m in messages] == ["user", "assistant", "tool_result"]
    result = messages[-1]
    assert isinstance(result, ToolResultMessage) and result.is_error
    assert text_of(result) == "Tool execution was aborted."
    events = [e async for e in run.events()]
    check_well_formed(events)
    # the transcript can be continued: a new run picks it up
    transcript = await run.transcript()
    again = await start_run(
        client,
        id=f"{run_id}-again",
        task_queue=TASK_QUEUE,
        model="chat",
        messages=transcript,
    )
    assert (await again.result())[-1].role == "assistant"
    await replay(client, run_id)


async def test_a_long_run_continues_as_new_without_losing_messages(
    client: Client, workers: Workers, run_id: str
) -> None:
    run = await start_run(
        client,
        "loop",
        id=run_id,
        task_queue=TASK_QUEUE,
        model="loop",
        tools=["record"],
        options=RunOptions(heartbeat_timeout=2.0, history_limit=40),
    )
    events = [e async for e in run.events()]
    messages = await run.result()
    assert [m.role for m in messages] == ["user"] + ["assistant", "tool_result"] * 8 + ["assistant"]
    assert text_of(messages[-1]) == "looped"
    check_well_formed(events)
    assert events[-1].messages == messages  # type: ignore[union-attr]
    assert timeless(await run.transcript()) == timeless(messages)
    runs = [w async for w in client.list_workflows(f"WorkflowId = '{run_id}'")]
    assert len(runs) > 1, "the run never continued as new"
    notes = [line[1] for line in lines(workers.effects / "effects", run_id)]
    assert notes == [f"l{i}" for i in range(1, 9)]  # every call ran, once
    await replay(client, run_id)


async def test_watching_a_terminated_run_ends(
    client: Client, workers: Workers, run_id: str
) -> None:
    run = await start_run(
        client,
        "go",
        id=run_id,
        task_queue=TASK_QUEUE,
        model="slow-tool",
        tools=["slow", "record"],
        options=FAST,
    )
    await wait_for_line(workers.effects / "started", run_id)
    await run.handle.terminate("from the test")
    events = [e async for e in run.events()]  # returns although agent_end never comes
    assert events[0].type == "agent_start"
    assert events[-1].type == "tool_execution_start"


@workflow.defn(name="agentcore.AgentWorkflow", sandboxed=False)
class Impostor:
    """Not the agent workflow: it calls a tool where the real one asked a worker about tools."""

    @workflow.run
    async def run(self, data: dict[str, Any]) -> None:
        await workflow.execute_activity(
            "agentcore.tool", {}, start_to_close_timeout=timedelta(seconds=1)
        )


async def test_the_replayer_catches_a_workflow_that_does_not_replay(
    client: Client, workers: Workers, run_id: str
) -> None:
    run = await start_run(
        client, "hi", id=run_id, task_queue=TASK_QUEUE, model="tools", tools=["add"]
    )
    await run.result()
    await replay(client, run_id)  # the real workflow replays its history
    history = await client.get_workflow_handle(run_id).fetch_history()
    with pytest.raises(NondeterminismError):
        await Replayer(workflows=[Impostor]).replay_workflow(history)
