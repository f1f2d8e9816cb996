"""The guarantees beyond the reference implementation, G1-G5 (CONFORMANCE.md).

G1 never hang, G2 one result per tool call on abort, G3 abort during tools ends the run after the
turn, G4 abort during streaming keeps the partial message, G5 queued messages survive an abort.
G6 (the invariants over random scripts) lives in test_invariants.py.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import pytest

from agentcore import (
    AbortController,
    AgentContext,
    AgentLoopConfig,
    AgentToolResult,
    ToolCall,
    ToolExecutionMode,
    ToolResultMessage,
    agent_loop,
    run_agent_loop,
)
from agentcore.llm import AssistantMessageEventStream, MessageBuilder
from agentcore.llm.events import AssistantMessageEvent
from agentcore.testing import (
    FauxProvider,
    check_well_formed,
    event_types,
    faux_message,
    faux_text,
    faux_tool_call,
)
from support import BACKENDS, ONE_TURN_NO_UPDATES, Run, make_tool, run, texts, user

pytestmark = pytest.mark.anyio


def boom(text: str) -> Callable[..., Any]:
    def hook(*args: Any) -> Any:
        raise RuntimeError(text)

    return hook


def assert_failed_with(r: Run, text: str) -> None:
    last = r.result[-1]
    assert last.role == "assistant"
    assert last.stop_reason == "error"
    assert text in (last.error_message or "")
    assert r.types[-3:] == ["message_end", "turn_end", "agent_end"]
    assert r.of("message_end")[-1].message is last
    turn_end = r.of("turn_end")[-1]
    assert turn_end.message is last and turn_end.tool_results == []


def echo() -> Any:
    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult.text("echoed")

    return make_tool("echo", execute)


# --- G1: failures end the run, never a hang -------------------------------------------------


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_G1_stream_function_raising(kind: str) -> None:
    model = FauxProvider().model

    def sync_fn(*args: Any) -> Any:
        raise ConnectionError("connection pool exhausted")

    async def async_fn(*args: Any) -> Any:
        await anyio.lowlevel.checkpoint()
        raise ConnectionError("connection pool exhausted")

    with anyio.fail_after(5):
        r = await run(
            "go",
            config=AgentLoopConfig(model=model),
            stream_fn=sync_fn if kind == "sync" else async_fn,
        )
    assert r.types == ONE_TURN_NO_UPDATES
    assert_failed_with(r, "connection pool exhausted")
    assert [m.role for m in r.result] == ["user", "assistant"]
    last = r.result[-1]
    assert (last.api, last.provider, last.model) == (model.api, model.provider, model.id)


async def test_G1_stream_source_raising_midway_keeps_what_arrived() -> None:
    model = FauxProvider().model

    def stream_fn(model_: Any, context: Any, options: Any) -> AssistantMessageEventStream:
        async def events() -> AsyncIterator[AssistantMessageEvent]:
            b = MessageBuilder(model_)
            yield b.start()
            i = (start := b.text_start()).content_index
            yield start
            yield b.text_delta(i, "half an ans")
            raise OSError("socket closed")

        return AssistantMessageEventStream(events())

    with anyio.fail_after(5):
        r = await run("go", config=AgentLoopConfig(model=model), stream_fn=stream_fn)
    assert_failed_with(r, "socket closed")
    assert r.result[-1].text == "half an ans"
    assert r.compact()[4:] == [
        "message_start",
        "message_update…",
        "message_end",
        "turn_end",
        "agent_end",
    ]


async def test_G1_stream_function_returning_garbage() -> None:
    with anyio.fail_after(5):
        r = await run(
            "go",
            config=AgentLoopConfig(model=FauxProvider().model),
            stream_fn=lambda *a: "not a stream",
        )
    assert r.types == ONE_TURN_NO_UPDATES
    assert_failed_with(r, "AssistantMessageEventStream")


@pytest.mark.parametrize(
    "hook", ["convert_to_llm", "transform_context", "get_api_key", "get_steering_messages"]
)
async def test_G1_hook_raising_before_the_first_request(hook: str) -> None:
    faux = FauxProvider([faux_text("never")])
    config = AgentLoopConfig(model=faux.model, **{hook: boom(f"{hook} exploded")})
    with anyio.fail_after(5):
        r = await run("go", config=config)
    assert r.types == ONE_TURN_NO_UPDATES
    assert_failed_with(r, f"{hook} exploded")
    assert faux.call_count == 0


@pytest.mark.parametrize(
    "hook",
    [
        "prepare_next_turn",
        "should_stop_after_turn",
        "get_steering_messages",
        "get_follow_up_messages",
    ],
)
async def test_G1_hook_raising_after_a_turn_opens_its_own_turn(hook: str) -> None:
    calls = {"n": 0}

    def fail_later(*args: Any) -> Any:
        calls["n"] += 1
        if hook == "get_steering_messages" and calls["n"] == 1:
            return []  # the initial poll works; the one after the first turn fails
        raise RuntimeError(f"{hook} exploded")

    faux = FauxProvider([faux_text("first"), faux_text("never")])
    config = AgentLoopConfig(model=faux.model, **{hook: fail_later})
    with anyio.fail_after(5):
        r = await run("go", config=config)
    assert r.compact() == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_update…",
        "message_end",
        "turn_end",
        "turn_start",  # the error message sits in a turn of its own
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    assert_failed_with(r, f"{hook} exploded")
    assert [m.role for m in r.result] == ["user", "assistant", "assistant"]
    assert r.result[1].text == "first"
    assert faux.call_count == 1


async def test_G1_convert_to_llm_raising_on_a_later_turn() -> None:
    n = {"calls": 0}

    def convert(messages: list[Any]) -> list[Any]:
        n["calls"] += 1
        if n["calls"] == 2:
            raise ValueError("cannot convert tool results")
        return list(messages)

    faux = FauxProvider([faux_tool_call("echo"), faux_text("never")])
    config = AgentLoopConfig(model=faux.model, convert_to_llm=convert)
    r = await run("go", AgentContext(tools=[echo()]), config)
    assert_failed_with(r, "cannot convert tool results")
    assert [m.role for m in r.result] == ["user", "assistant", "tool_result", "assistant"]
    types = r.types
    # the second turn started normally; the failure fills it
    assert types[-6:] == [
        "turn_end",
        "turn_start",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ]


async def test_G1_hooks_returning_the_wrong_thing() -> None:
    faux = FauxProvider([faux_text("first"), faux_text("never")])
    config = AgentLoopConfig(model=faux.model, prepare_next_turn=lambda ctx: "not a NextTurn")
    r = await run("go", config=config)
    assert_failed_with(r, "NextTurn")

    faux.set_responses([faux_text("never")])
    config = AgentLoopConfig(model=faux.model, get_steering_messages=lambda: ["not a message"])
    r = await run("go", config=config)
    assert_failed_with(r, "get_steering_messages()[0] is not a message")


@pytest.mark.parametrize("on", ["agent_start", "message_update", "tool_execution_end", "turn_end"])
async def test_G1_emit_sink_raising(on: str) -> None:
    faux = FauxProvider([faux_tool_call("echo"), faux_text("done")])
    seen: list[Any] = []
    raised = []

    async def emit(event: Any) -> None:
        seen.append(event)
        if event.type == on and not raised:
            raised.append(event)
            raise RuntimeError(f"sink broke on {on}")

    with anyio.fail_after(5):
        out = await run_agent_loop(
            [user()], AgentContext(tools=[echo()]), AgentLoopConfig(model=faux.model), emit
        )
    check_well_formed(seen)
    assert out == seen[-1].messages
    last = out[-1]
    assert last.role == "assistant" and last.stop_reason == "error"
    assert last.error_message == f"sink broke on {on}"
    assert event_types(seen)[-3:] == ["message_end", "turn_end", "agent_end"]
    # every tool call of an executed batch still has its result
    answered = [m for m in out if m.role == "assistant" and m.stop_reason == "tool_use"]
    ids = [c.id for m in answered for c in m.tool_calls]
    assert ids == [m.tool_call_id for m in out if isinstance(m, ToolResultMessage)]


async def test_G1_emit_sink_always_raising() -> None:
    faux = FauxProvider([faux_text("done")])

    def emit(event: Any) -> None:
        raise RuntimeError("sink is gone")

    with anyio.fail_after(5):
        out = await run_agent_loop(
            [user()], AgentContext(), AgentLoopConfig(model=faux.model), emit
        )
    assert out[-1].stop_reason == "error" and out[-1].error_message == "sink is gone"


# --- G2/G3: abort during tools --------------------------------------------------------------


def _abort_tools(
    controller: AbortController, log: list[str], gate: threading.Event | None = None
) -> list[Any]:
    async def first(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        log.append("first")
        return AgentToolResult.text("first done")

    async def aborter(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        log.append("aborter")
        controller.abort("user pressed escape")
        await anyio.sleep_forever()

    async def third(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        log.append("third")
        return AgentToolResult.text("third done")

    return [make_tool("first", first), make_tool("aborter", aborter), make_tool("third", third)]


BATCH = faux_message(
    ToolCall(id="1", name="first", arguments={}),
    ToolCall(id="2", name="aborter", arguments={}),
    ToolCall(id="3", name="third", arguments={}),
)


def _results(r: Run) -> dict[str, ToolResultMessage]:
    results = [m for m in r.result if isinstance(m, ToolResultMessage)]
    assert [m.tool_call_id for m in results] == ["1", "2", "3"]  # exactly one each, in order
    return {m.tool_call_id: m for m in results}


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_G2_abort_during_sequential_batch() -> None:
    controller = AbortController()
    log: list[str] = []
    faux = FauxProvider([BATCH, faux_text("never asked")])
    config = AgentLoopConfig(model=faux.model, tool_execution=ToolExecutionMode.SEQUENTIAL)
    with anyio.fail_after(5):
        tools = _abort_tools(controller, log)
        r = await run("go", AgentContext(tools=tools), config, signal=controller.signal)
    assert log == ["first", "aborter"]  # nothing starts after the abort
    results = _results(r)
    assert not results["1"].is_error and texts(results["1"]) == "first done"
    assert results["2"].is_error and "abort" in texts(results["2"]).lower()
    assert results["3"].is_error and "abort" in texts(results["3"]).lower()
    assert texts(results["3"]) == "Tool call was not executed: the run was aborted."
    assert len(r.of("tool_execution_start")) == len(r.of("tool_execution_end")) == 3
    # G3: the run ends after this turn, without asking the model again
    assert faux.call_count == 1 and faux.pending == 1
    assert r.types[-2:] == ["turn_end", "agent_end"]
    assert r.types.count("turn_start") == 1


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_G2_abort_during_parallel_batch() -> None:
    controller = AbortController()
    log: list[str] = []
    cancelled: list[str] = []

    async def slow(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        log.append(tool_call_id)
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.append(tool_call_id)

    async def aborter(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        log.append(tool_call_id)
        await anyio.sleep(0.01)
        controller.abort()
        await anyio.sleep_forever()

    tools = [make_tool("first", slow), make_tool("aborter", aborter), make_tool("third", slow)]
    faux = FauxProvider([BATCH, faux_text("never asked")])
    with anyio.fail_after(5):
        r = await run("go", AgentContext(tools=tools), faux=faux, signal=controller.signal)
    assert sorted(log) == ["1", "2", "3"]
    assert sorted(cancelled) == ["1", "3"]
    results = _results(r)
    for m in results.values():
        assert m.is_error and texts(m) == "Tool execution was aborted."
    assert faux.call_count == 1
    assert r.types[-2:] == ["turn_end", "agent_end"]


async def test_G2_abort_during_parallel_preflight_starts_nothing() -> None:
    """An abort while call 2 is being prepared: prepared call 1 must not start either."""
    controller = AbortController()
    log: list[str] = []

    async def before(ctx: Any) -> None:
        if ctx.tool_call.id == "2":
            controller.abort()

    faux = FauxProvider([BATCH, faux_text("never asked")])
    config = AgentLoopConfig(model=faux.model, before_tool_call=before)
    r = await run(
        "go", AgentContext(tools=_abort_tools(controller, log)), config, signal=controller.signal
    )
    assert log == []
    for m in _results(r).values():
        assert m.is_error and texts(m) == "Tool call was not executed: the run was aborted."
    assert faux.call_count == 1


async def test_G2_abort_with_bounded_parallelism() -> None:
    """Calls waiting for a slot when the abort comes never start."""
    controller = AbortController()
    log: list[str] = []
    faux = FauxProvider([BATCH, faux_text("never asked")])
    config = AgentLoopConfig(model=faux.model, max_parallel_tools=1)
    tools = _abort_tools(controller, log)
    r = await run("go", AgentContext(tools=tools), config, signal=controller.signal)
    assert log == ["first", "aborter"]
    results = _results(r)
    assert not results["1"].is_error
    assert texts(results["2"]) == "Tool execution was aborted."
    assert texts(results["3"]) == "Tool call was not executed: the run was aborted."


async def test_G2_abort_abandons_a_blocked_sync_tool() -> None:
    controller = AbortController()
    gate = threading.Event()

    def blocking(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        gate.wait(5)
        return AgentToolResult.text("too late")

    faux = FauxProvider([faux_tool_call("block", id="b"), faux_text("never")])

    async def abort_soon() -> None:
        await anyio.sleep(0.05)
        controller.abort()

    try:
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(abort_soon)
                r = await run(
                    "go",
                    AgentContext(tools=[make_tool("block", blocking)]),
                    faux=faux,
                    signal=controller.signal,
                )
    finally:
        gate.set()
    res = r.result[-1]
    assert res.role == "tool_result" and res.is_error
    assert texts(res) == "Tool execution was aborted."
    assert faux.call_count == 1


async def test_G2_tool_honouring_the_signal() -> None:
    """A tool that watches its signal and returns (rather than being cancelled)."""
    controller = AbortController()
    faux = FauxProvider([faux_tool_call("watch"), faux_text("never")])

    def watch(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        controller.abort()
        assert signal.aborted
        raise RuntimeError("stopped: aborted")

    r = await run(
        "go", AgentContext(tools=[make_tool("watch", watch)]), faux=faux, signal=controller.signal
    )
    assert r.result[-1].role == "tool_result" and r.result[-1].is_error
    assert faux.call_count == 1


# --- G4: abort during streaming ---------------------------------------------------------------

LONG = "The quick brown fox jumps over the lazy dog. " * 20


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_G4_abort_during_streaming_keeps_the_partial_message() -> None:
    controller = AbortController()
    faux = FauxProvider([faux_text(LONG)], chunk_chars=8, tokens_per_second=2000)
    seen: list[Any] = []

    def emit(event: Any) -> None:
        seen.append(event)
        if sum(e.type == "message_update" for e in seen) == 5:
            controller.abort()

    with anyio.fail_after(5):
        out = await run_agent_loop(
            [user()],
            AgentContext(),
            AgentLoopConfig(model=faux.model),
            emit,
            signal=controller.signal,
        )
    check_well_formed(seen)
    assert [m.role for m in out] == ["user", "assistant"]
    partial = out[-1]
    assert partial.stop_reason == "aborted"
    assert partial.text and LONG.startswith(partial.text) and len(partial.text) < len(LONG)
    assert partial.usage.output > 0 and partial.usage.input > 0
    assert partial.usage.total_tokens == partial.usage.input + partial.usage.output
    assert event_types(seen)[-3:] == ["message_end", "turn_end", "agent_end"]
    assert seen[-2].message is partial
    assert faux.call_count == 1


async def test_G4_abort_from_a_timer_and_from_another_thread() -> None:
    for use_thread in (False, True):
        controller = AbortController()
        faux = FauxProvider([faux_text(LONG)], chunk_chars=4, tokens_per_second=1000)

        def fire(controller: AbortController = controller) -> None:
            controller.abort("timeout")

        async def abort_soon(
            fire: Callable[[], None] = fire, use_thread: bool = use_thread
        ) -> None:
            await anyio.sleep(0.03)
            if use_thread:
                await anyio.to_thread.run_sync(fire)
            else:
                fire()

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(abort_soon)
                r = await run("go", faux=faux, signal=controller.signal)
        last = r.result[-1]
        assert last.stop_reason == "aborted"
        assert 0 < len(last.text) < len(LONG)
        assert last.usage.output > 0


async def test_G4_aborted_before_the_run() -> None:
    controller = AbortController()
    controller.abort()
    faux = FauxProvider([faux_text("never")])
    r = await run("go", faux=faux, signal=controller.signal)
    assert r.types == ONE_TURN_NO_UPDATES
    assert r.result[-1].stop_reason == "aborted"
    assert faux.pending == 1


# --- G5: queued messages survive an abort ----------------------------------------------------


class Queues:
    """Steering and follow-up queues that are consumed when polled."""

    def __init__(self) -> None:
        self.steering: list[Any] = []
        self.follow_up: list[Any] = []

    def get_steering(self) -> list[Any]:
        out, self.steering = self.steering, []
        return out

    def get_follow_up(self) -> list[Any]:
        out, self.follow_up = self.follow_up, []
        return out


async def test_G5_queues_survive_abort_during_tools() -> None:
    controller = AbortController()
    queues = Queues()
    steer, follow = user("steer"), user("follow")

    async def tool(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        queues.steering.append(steer)
        queues.follow_up.append(follow)
        controller.abort()
        await anyio.sleep_forever()

    faux = FauxProvider([faux_tool_call("t"), faux_text("never")])
    config = AgentLoopConfig(
        model=faux.model,
        get_steering_messages=queues.get_steering,
        get_follow_up_messages=queues.get_follow_up,
    )
    r = await run(
        "go", AgentContext(tools=[make_tool("t", tool)]), config, signal=controller.signal
    )
    assert queues.steering == [steer] and queues.follow_up == [follow]
    assert steer not in r.result and follow not in r.result


async def test_G5_queues_survive_abort_during_streaming() -> None:
    controller = AbortController()
    queues = Queues()
    steer, follow = user("steer"), user("follow")
    faux = FauxProvider([faux_text(LONG)], chunk_chars=4, tokens_per_second=1000)
    config = AgentLoopConfig(
        model=faux.model,
        get_steering_messages=queues.get_steering,
        get_follow_up_messages=queues.get_follow_up,
    )
    stream = agent_loop([user()], AgentContext(), config, signal=controller.signal)
    async with stream:
        async for event in stream:
            if event.type == "message_update":
                queues.steering.append(steer)
                queues.follow_up.append(follow)
                controller.abort()
                break
        out = await stream.result()
    assert out[-1].stop_reason == "aborted"
    assert queues.steering == [steer] and queues.follow_up == [follow]


async def test_G5_queues_survive_an_abort_before_the_run() -> None:
    controller = AbortController()
    controller.abort()
    queues = Queues()
    queues.steering.append(user("steer"))
    queues.follow_up.append(user("follow"))
    faux = FauxProvider([faux_text("never")])
    config = AgentLoopConfig(
        model=faux.model,
        get_steering_messages=queues.get_steering,
        get_follow_up_messages=queues.get_follow_up,
    )
    await run("go", config=config, signal=controller.signal)
    assert len(queues.steering) == 1 and len(queues.follow_up) == 1


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_G2_sync_tool_dispatched_before_an_abort_does_not_start_after_it() -> None:
    """A worker thread may pick up a sync call only after the abort fired: its body must not
    run then (its result would be discarded anyway)."""
    controller = AbortController()
    ran: list[bool] = []

    def sync_tool(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        ran.append(signal.aborted)
        return AgentToolResult.text("did the work")

    async def aborter(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        controller.abort()
        await anyio.sleep(0.01)
        return AgentToolResult.text("aborted")

    for _ in range(20):
        faux = FauxProvider(
            [
                faux_message(
                    ToolCall(id="s", name="sync_tool", arguments={}),
                    ToolCall(id="a", name="aborter", arguments={}),
                )
            ]
        )
        controller = AbortController()
        tools = [make_tool("sync_tool", sync_tool), make_tool("aborter", aborter)]
        r = await run("go", AgentContext(tools=tools), faux=faux, signal=controller.signal)
        results = {m.tool_call_id: m for m in r.result if isinstance(m, ToolResultMessage)}
        assert set(results) == {"s", "a"}
        assert results["s"].is_error
    assert True not in ran  # a body that ran at all ran before the abort


class Fatal(BaseException):
    """Not an Exception: like KeyboardInterrupt."""


async def test_G1_base_exception_in_a_hook_never_hangs_the_stream() -> None:
    def fatal(ctx: Any) -> None:
        raise Fatal("hook pulled the plug")

    faux = FauxProvider([faux_text("first"), faux_text("never")])
    stream = agent_loop(
        [user()], AgentContext(), AgentLoopConfig(model=faux.model, prepare_next_turn=fatal)
    )
    events: list[Any] = []
    with anyio.fail_after(5):
        async with stream:
            async for event in stream:
                events.append(event)
            with pytest.raises(Fatal, match="pulled the plug"):
                await stream.result()
    assert events[-1].type == "turn_end"


@pytest.mark.parametrize("where", ["hook", "parallel_tool", "sequential_tool"])
async def test_G1_base_exception_escapes_run_agent_loop_as_itself(where: str) -> None:
    async def fatal_tool(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        raise Fatal("interrupted")

    def fatal_hook(ctx: Any) -> None:
        raise Fatal("interrupted")

    batch = faux_message(
        ToolCall(id="1", name="fatal", arguments={}), ToolCall(id="2", name="echo", arguments={})
    )
    faux = FauxProvider([batch if where != "hook" else faux_text("first"), faux_text("never")])
    config = AgentLoopConfig(
        model=faux.model,
        prepare_next_turn=fatal_hook if where == "hook" else None,
        tool_execution=ToolExecutionMode.SEQUENTIAL
        if where == "sequential_tool"
        else ToolExecutionMode.PARALLEL,
    )
    with anyio.fail_after(5), pytest.raises(Fatal, match="interrupted"):
        tools = [make_tool("fatal", fatal_tool), echo()]
        await run_agent_loop([user()], AgentContext(tools=tools), config, lambda e: None)


@pytest.mark.parametrize("hook", ["prepare_next_turn", "should_stop_after_turn"])
async def test_G3_abort_from_a_between_turns_hook_asks_nothing_more(hook: str) -> None:
    controller = AbortController()

    def aborting(ctx: Any) -> Any:
        controller.abort()
        return None if hook == "prepare_next_turn" else False

    faux = FauxProvider([faux_tool_call("echo"), faux_text("never asked")])
    config = AgentLoopConfig(model=faux.model, **{hook: aborting})
    r = await run("go", AgentContext(tools=[echo()]), config, signal=controller.signal)
    assert faux.call_count == 1
    assert [m.role for m in r.result] == ["user", "assistant", "tool_result"]
    assert r.types[-2:] == ["turn_end", "agent_end"]


@pytest.mark.parametrize("anyio_backend", BACKENDS)
@pytest.mark.parametrize("during", ["streaming", "tools"])
async def test_outer_cancellation_propagates_and_is_not_an_abort(during: str) -> None:
    """Only the run's own signal turns into `aborted`; a caller's timeout cancels the run."""

    async def forever(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        await anyio.sleep_forever()

    answer = faux_text(LONG) if during == "streaming" else faux_tool_call("forever")
    faux = FauxProvider([answer], chunk_chars=4, tokens_per_second=1000)
    seen: list[Any] = []
    with anyio.fail_after(5), anyio.move_on_after(0.05) as scope:
        await run_agent_loop(
            [user()],
            AgentContext(tools=[make_tool("forever", forever)]),
            AgentLoopConfig(model=faux.model),
            seen.append,
        )
    assert scope.cancelled_caught
    assert "agent_end" not in event_types(seen)
    assert not any(
        e.type == "message_end" and getattr(e.message, "stop_reason", None) == "aborted"
        for e in seen
    )
