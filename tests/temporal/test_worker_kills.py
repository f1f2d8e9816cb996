"""A worker killed with SIGKILL at any point loses nothing: with a second worker running, the
run completes, every finished tool call ran once, a model request cut off mid-stream is retried,
a tool registered with retry=False is not run twice, and the events stay well formed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from temporalio.client import Client

from agentcore import ToolResultMessage
from agentcore.temporal import RunOptions, start_run
from agentcore.testing import check_well_formed
from support.temporal import TASK_QUEUE, Workers, lines, wait_for_line

from .test_durable_run import replay, text_of

pytestmark = pytest.mark.anyio

FAST = RunOptions(heartbeat_timeout=2.0)


@pytest.fixture
def two_workers(workers: Workers) -> Iterator[Workers]:
    """The session's pool with two workers alive before and after the test."""
    workers.ensure(2)
    yield workers
    workers.ensure(2)


async def test_kill_during_a_model_stream(
    client: Client, two_workers: Workers, run_id: str
) -> None:
    run = await start_run(
        client, "tell me", id=run_id, task_queue=TASK_QUEUE, model="slow-stream", options=FAST
    )
    marker = two_workers.effects / "stream-slow-stream"
    first = await wait_for_line(marker, run_id)  # the answer is streaming on this worker
    two_workers.kill(int(first[1]))
    events = [e async for e in run.events()]
    messages = await run.result()
    assert [m.role for m in messages] == ["user", "assistant"]
    assert text_of(messages[-1]) == "a long and slowly streamed answer " * 10
    attempts = lines(marker, run_id)
    assert len(attempts) == 2 and attempts[1][1] != first[1]  # retried on the other worker
    check_well_formed(events)
    await replay(client, run_id)


async def test_kill_during_a_tool(client: Client, two_workers: Workers, run_id: str) -> None:
    run = await start_run(
        client,
        "go",
        id=run_id,
        task_queue=TASK_QUEUE,
        model="slow-tool",
        tools=["slow", "record"],
        options=FAST,
    )
    started = await wait_for_line(two_workers.effects / "started", run_id)
    two_workers.kill(int(started[2]))
    events = [e async for e in run.events()]
    messages = await run.result()
    assert [m.role for m in messages] == ["user", "assistant", "tool_result"] * 1 + [
        "assistant",
        "tool_result",
        "assistant",
    ]
    assert text_of(messages[2]) == "slowly noted: n1"
    effects = [line[1] for line in lines(two_workers.effects / "effects", run_id)]
    assert effects == ["s1", "s2"]  # each call finished once
    assert len(lines(two_workers.effects / "started", run_id)) == 2  # the killed one restarted
    check_well_formed(events)
    await replay(client, run_id)


async def test_kill_between_turns(client: Client, two_workers: Workers, run_id: str) -> None:
    """A worker killed while the run is between two turns (its second request is held by the
    script's gate, so no tool runs at that moment): every call ran once."""
    run = await start_run(
        client, "loop", id=run_id, task_queue=TASK_QUEUE, model="gated-loop", tools=["record"]
    )
    events = []
    killed = False
    async for event in run.events():
        events.append(event)
        if event.type == "turn_end" and not killed:
            ran = lines(two_workers.effects / "effects", run_id)
            assert [line[1] for line in ran] == ["l1"], "turn_end before the tool ran"
            two_workers.kill(two_workers.alive()[0].pid)  # it may hold the workflow, or not
            killed = True
            (two_workers.effects / f"gate-{run_id}").touch()  # the next turn may begin
    messages = await run.result()
    assert [m.role for m in messages] == ["user"] + ["assistant", "tool_result"] * 8 + ["assistant"]
    effects = [line[1] for line in lines(two_workers.effects / "effects", run_id)]
    assert effects == [f"l{i}" for i in range(1, 9)]  # every call ran once, none again
    check_well_formed(events)
    await replay(client, run_id)


async def test_a_tool_that_must_not_run_twice_is_not_retried(
    client: Client, two_workers: Workers, run_id: str
) -> None:
    run = await start_run(
        client,
        "pay",
        id=run_id,
        task_queue=TASK_QUEUE,
        model="once",
        tools=["charge"],
        options=FAST,
    )
    started = await wait_for_line(two_workers.effects / "started", run_id)
    two_workers.kill(int(started[2]))
    messages = await run.result()
    result = messages[2]
    assert isinstance(result, ToolResultMessage) and result.is_error
    assert "is not run again: it is registered with retry=False" in text_of(result)
    assert lines(two_workers.effects / "effects", run_id) == []  # never charged twice (nor once)
    assert len(lines(two_workers.effects / "started", run_id)) == 1
    assert text_of(messages[-1]) == "charged"  # the script goes on; the model saw the error
