"""Regressions of the loop found after the conformance suite was written."""

from __future__ import annotations

from typing import Any

import pytest

from agentcore import (
    AbortController,
    AgentContext,
    AgentLoopConfig,
    NextTurn,
    PrepareNextTurnContext,
    ToolCall,
    UserMessage,
    agent_loop,
    tool,
)
from agentcore.testing import (
    FauxProvider,
    check_well_formed,
    faux_message,
    faux_text,
    faux_tool_call,
)

pytestmark = pytest.mark.anyio


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"


async def test_abort_inside_prepare_next_turn_sends_no_new_request() -> None:
    faux = FauxProvider([faux_tool_call("ping"), faux_text("never asked")])
    controller = AbortController()

    def prepare(ctx: PrepareNextTurnContext) -> NextTurn | None:
        controller.abort("stop here")
        return None

    config = AgentLoopConfig(model=faux.model, prepare_next_turn=prepare)
    run = agent_loop(
        [UserMessage(content="go")], AgentContext(tools=[ping]), config, signal=controller.signal
    )
    events = [event async for event in run]
    messages = await run.result()
    check_well_formed(events)
    assert faux.call_count == 1
    assert [m.role for m in messages] == ["user", "assistant", "tool_result"]
    assert faux.pending == 1


async def test_a_repeated_start_event_opens_no_second_message() -> None:
    from agentcore.llm import AssistantMessageEventStream, MessageBuilder

    def stream_fn(model, context, options):  # type: ignore[no-untyped-def]
        async def events():  # type: ignore[no-untyped-def]
            b = MessageBuilder(model)
            yield b.start()
            yield b.start()
            i = (start := b.text_start()).content_index
            yield start
            yield b.text_delta(i, "hi")
            yield b.text_end(i)
            yield b.done("stop")

        return AssistantMessageEventStream(events())

    faux = FauxProvider()
    run = agent_loop(
        [UserMessage(content="go")],
        AgentContext(),
        AgentLoopConfig(model=faux.model),
        stream_fn=stream_fn,
    )
    events = [event async for event in run]
    check_well_formed(events)
    assert (await run.result())[-1].text == "hi"


async def test_a_sink_failing_on_the_answer_fails_the_run_before_tools_run() -> None:
    from agentcore import run_agent_loop

    ran: list[str] = []

    @tool
    def side_effect() -> str:
        """Record that it ran."""
        ran.append("ran")
        return "done"

    faux = FauxProvider([faux_tool_call("side_effect"), faux_text("unused")])
    seen: list[object] = []

    def emit(event: object) -> None:
        seen.append(event)
        message = getattr(event, "message", None)
        is_answer = getattr(message, "role", "") == "assistant"
        if event.type == "message_end" and is_answer and message.tool_calls:  # type: ignore[attr-defined, union-attr]
            raise RuntimeError("listener broke")

    messages = await run_agent_loop(
        [UserMessage(content="go")],
        AgentContext(tools=[side_effect]),
        AgentLoopConfig(model=faux.model),
        emit,
    )
    check_well_formed(seen)  # type: ignore[arg-type]
    assert ran == []
    assert messages[-1].stop_reason == "error" and "listener broke" in messages[-1].error_message


async def test_prepare_next_turn_with_an_unknown_thinking_level_fails_the_run() -> None:
    faux = FauxProvider([faux_tool_call("ping"), faux_text("unused")])
    config = AgentLoopConfig(
        model=faux.model,
        prepare_next_turn=lambda ctx: NextTurn(thinking_level="extreme"),  # type: ignore[arg-type]
    )
    run = agent_loop([UserMessage(content="go")], AgentContext(tools=[ping]), config)
    events = [event async for event in run]
    check_well_formed(events)
    last = (await run.result())[-1]
    assert last.stop_reason == "error" and "thinking_level='extreme'" in last.error_message


async def test_duplicate_tool_call_ids_from_a_model_get_one_result_each() -> None:
    faux = FauxProvider(
        [
            faux_message(
                ToolCall(id="call_1", name="ping", arguments={}),
                ToolCall(id="call_1", name="ping", arguments={}),
            ),
            faux_text("done"),
        ]
    )
    run = agent_loop(
        [UserMessage(content="go")], AgentContext(tools=[ping]), AgentLoopConfig(model=faux.model)
    )
    events = [event async for event in run]
    check_well_formed(events)
    messages = await run.result()
    ids = [c.id for c in messages[1].tool_calls]
    assert ids == ["call_1", "call_1_2"]
    assert [m.tool_call_id for m in messages[2:4]] == ids


async def test_an_agent_loop_stream_dropped_by_its_reader_stops_its_run() -> None:
    # The run used to hold its own stream (to report `limit` and the like), so a stream dropped
    # mid-run was never collected and its run went on, unread, until back-pressure held it
    # forever.
    import gc

    import anyio

    from agentcore.llm import AssistantMessageEventStream, MessageBuilder

    closed = anyio.Event()
    deltas = 0

    def endless(model: Any, context: Any, options: Any) -> AssistantMessageEventStream:
        async def events() -> Any:
            nonlocal deltas
            builder = MessageBuilder(model)
            yield builder.start()
            index = builder.text_start().content_index
            try:
                while True:
                    await anyio.sleep(0.001)
                    deltas += 1
                    yield builder.text_delta(index, "x")
            finally:
                closed.set()

        return AssistantMessageEventStream(events())

    faux = FauxProvider([])
    stream = agent_loop(
        [UserMessage(content="go")],
        AgentContext(),
        AgentLoopConfig(model=faux.model),
        stream_fn=endless,
    )
    async for _event in stream:
        break
    del stream, _event
    gc.collect()
    with anyio.fail_after(5):
        await closed.wait()
    seen = deltas
    await anyio.sleep(0.05)
    assert deltas == seen  # nothing reads on, and nothing is produced any more
