"""The Agent from other threads: `steer`, `follow_up` and `abort` during a run, and the
synchronous facade driven from one thread while others queue and abort."""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from agentcore import Agent, AgentBusyError, AgentToolResult, AssistantMessage
from agentcore.sessions import JsonlSessionStore
from agentcore.testing import FauxCall, FauxProvider, faux_text, faux_tool_call
from support import BACKENDS, make_tool, texts


def user_texts(agent: Agent) -> list[str]:
    return [texts(m) for m in agent.state.messages if m.role == "user"]


def wait_until(condition: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not met")
        time.sleep(0.001)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", BACKENDS)
@pytest.mark.parametrize("mode", ["one-at-a-time", "all"])
async def test_steer_and_follow_up_from_another_thread_lose_and_repeat_nothing(
    anyio_backend: str, mode: Any
) -> None:
    faux = FauxProvider([faux_text("answer " * 20)] * 500, tokens_per_second=3000)
    agent = Agent(initial_state={"model": faux.model}, steering_mode=mode, follow_up_mode=mode)
    sent: list[str] = []
    overlapped = threading.Event()

    def producer() -> None:
        for i in range(60):
            if agent.state.is_streaming:
                overlapped.set()
            message = f"s{i}" if i % 2 else f"f{i}"
            sent.append(message)
            if i % 2:
                agent.steer(message)
            else:
                agent.follow_up(message)
            time.sleep(0.0005)

    async with anyio.create_task_group() as tg:
        tg.start_soon(anyio.to_thread.run_sync, producer)
        await agent.prompt("start")
    assert overlapped.is_set()  # some messages were queued while the run was going
    while agent.has_queued_messages():  # what arrived after the run ended is still queued
        await agent.continue_()
    delivered = user_texts(agent)[1:]
    assert Counter(delivered) == Counter(sent), "a queued message was lost or repeated"
    steering = [m for m in delivered if m.startswith("s")]
    follow_ups = [m for m in delivered if m.startswith("f")]
    assert steering == [m for m in sent if m.startswith("s")]  # each queue is FIFO
    assert follow_ups == [m for m in sent if m.startswith("f")]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_abort_from_another_thread_while_streaming(anyio_backend: str) -> None:
    faux = FauxProvider([faux_text("a very long answer " * 200)], tokens_per_second=500)
    agent = Agent(initial_state={"model": faux.model})
    streaming = threading.Event()

    def listener(event: Any) -> None:
        if event.type == "message_update" and event.message.text:
            streaming.set()

    agent.subscribe(listener)

    def aborter() -> None:
        streaming.wait(5)
        agent.steer("queued before the abort")
        agent.abort()

    async with anyio.create_task_group() as tg:
        tg.start_soon(anyio.to_thread.run_sync, aborter)
        with anyio.fail_after(5):
            await agent.prompt("talk")
    last = agent.state.messages[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason == "aborted"
    assert 0 < len(last.text) < len("a very long answer " * 200)
    assert [texts(m) for m in agent.steering_queue] == ["queued before the abort"]


@pytest.mark.anyio
async def test_abort_from_another_thread_while_a_sync_tool_runs() -> None:
    release = threading.Event()
    started = threading.Event()

    def blocking_tool(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        started.set()
        release.wait(5)
        return AgentToolResult.text("finished late")

    faux = FauxProvider([faux_tool_call("block", {}), faux_text("never")])
    agent = Agent(initial_state={"model": faux.model, "tools": [make_tool("block", blocking_tool)]})

    def aborter() -> None:
        started.wait(5)
        assert agent.state.pending_tool_calls
        agent.abort()

    async with anyio.create_task_group() as tg:
        tg.start_soon(anyio.to_thread.run_sync, aborter)
        with anyio.fail_after(5):
            await agent.prompt("go")
    release.set()
    assert [m.role for m in agent.state.messages] == ["user", "assistant", "tool_result"]
    assert agent.state.messages[-1].is_error
    assert faux.call_count == 1  # the model is not asked again after an abort during tools
    assert agent.state.pending_tool_calls == frozenset()


def test_sync_facade_with_other_threads_steering_and_aborting() -> None:
    turns = 0

    def respond(call: FauxCall) -> AssistantMessage:
        nonlocal turns
        turns += 1
        return faux_text("part " * (400 if turns == 1 else 20))

    faux = FauxProvider([respond] * 1000, tokens_per_second=4000)
    agent = Agent(initial_state={"model": faux.model})

    def steerer() -> None:
        wait_until(lambda: faux.call_count >= 1)
        for i in range(5):
            agent.follow_up(f"more {i}")
            time.sleep(0.005)
        wait_until(lambda: turns >= 3)
        agent.abort()

    thread = threading.Thread(target=steerer)
    thread.start()
    agent.prompt_sync("begin")
    thread.join(5)
    assert agent.state.messages[-1].stop_reason in ("aborted", "stop")
    assert not agent.state.is_streaming
    delivered = user_texts(agent)[1:]
    queued = [texts(m) for m in agent.follow_up_queue]
    assert delivered + queued == [f"more {i}" for i in range(5)]


def test_two_threads_prompting_at_once_one_is_refused() -> None:
    gate = threading.Event()

    async def respond(call: FauxCall) -> AssistantMessage:
        await anyio.to_thread.run_sync(gate.wait, 5)
        return faux_text("ok")

    faux = FauxProvider([respond, respond])
    agent = Agent(initial_state={"model": faux.model})
    errors: list[BaseException] = []

    def second() -> None:
        wait_until(lambda: faux.call_count == 1)
        try:
            agent.prompt_sync("second")
        except AgentBusyError as exc:
            errors.append(exc)
        gate.set()

    thread = threading.Thread(target=second)
    thread.start()
    agent.prompt_sync("first")
    thread.join(5)
    assert len(errors) == 1
    assert user_texts(agent) == ["first"]


@pytest.mark.anyio
async def test_queue_writes_from_threads_reach_the_session(tmp_path: Path) -> None:
    faux = FauxProvider([faux_text("answer " * 30)] * 100, tokens_per_second=3000)
    store = JsonlSessionStore(tmp_path)
    session = store.create()
    agent = Agent(initial_state={"model": faux.model}, session=session)

    def producer() -> None:
        wait_until(lambda: faux.call_count >= 1)
        threads = [
            threading.Thread(target=lambda k=k: [agent.follow_up(f"t{k}-{i}") for i in range(20)])
            for k in range(4)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        agent.abort()

    async with anyio.create_task_group() as tg:
        tg.start_soon(anyio.to_thread.run_sync, producer)
        await agent.prompt("start")
    stored = store.load(session.id)
    delivered = [texts(m) for m in stored.messages if m.role == "user"][1:]
    queued = [texts(m) for m in stored.state.follow_up]
    assert Counter(delivered + queued) == Counter(f"t{k}-{i}" for k in range(4) for i in range(20))
    assert queued == [texts(m) for m in agent.follow_up_queue]
    store.close()
