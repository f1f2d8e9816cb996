"""The stateful Agent: conformance scenarios A1-A11 (CONFORMANCE.md), then the rest of its API."""

from __future__ import annotations

import dataclasses
from typing import Any

import anyio
import anyio.lowlevel
import pytest

import agentcore.agent as agent_module
from agentcore import (
    AbortSignal,
    Agent,
    AgentBusyError,
    AgentEvent,
    AgentLoopConfig,
    AgentState,
    AgentToolResult,
    AssistantMessage,
    ConfigError,
    ImageContent,
    MessageFormatError,
    PrepareNextTurnContext,
    TextContent,
    ToolDefinitionError,
    ToolExecutionMode,
    UsageError,
    UserMessage,
)
from agentcore.llm import Model, ThinkingBudgets
from agentcore.testing import (
    FauxCall,
    FauxProvider,
    check_well_formed,
    event_types,
    faux_text,
    faux_tool_call,
)
from support import BACKENDS, ONE_TURN_NO_UPDATES, make_tool, texts


def roles(agent: Agent) -> list[str]:
    return [m.role for m in agent.state.messages]


def recorder(agent: Agent) -> list[AgentEvent]:
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    return events


def gated(gate: anyio.Event, text: str = "done") -> Any:
    """A faux response that waits for `gate` before answering."""

    async def respond(call: FauxCall) -> AssistantMessage:
        await gate.wait()
        return faux_text(text)

    return respond


async def started(faux: FauxProvider) -> None:
    """Wait until the faux provider received its first request."""
    with anyio.fail_after(5):
        while faux.call_count == 0:  # noqa: ASYNC110
            await anyio.sleep(0.001)


# --- A1-A11 ------------------------------------------------------------------------------------


def test_A1_default_state() -> None:
    agent = Agent()
    state = agent.state
    assert state.system_prompt == ""
    assert state.thinking_level == "off"
    assert state.tools == [] and state.messages == []
    assert isinstance(state.model, Model)
    assert state.is_streaming is False
    assert state.streaming_message is None
    assert state.pending_tool_calls == frozenset()
    assert state.error_message is None
    assert agent.signal is None
    assert agent.steering_mode == agent.follow_up_mode == "one-at-a-time"
    assert not agent.has_queued_messages()


def test_A1_custom_initial_state() -> None:
    faux = FauxProvider()
    message = UserMessage(content="earlier")
    agent = Agent(
        initial_state={
            "system_prompt": "Be brief.",
            "model": faux.model,
            "thinking_level": "high",
            "messages": [message],
        }
    )
    assert agent.state.system_prompt == "Be brief."
    assert agent.state.model is faux.model
    assert agent.state.thinking_level == "high"
    assert agent.state.messages == [message]
    same = Agent(initial_state=AgentState(system_prompt="Be brief.", model=faux.model))
    assert same.state.system_prompt == "Be brief." and same.state.model is faux.model
    with pytest.raises(ConfigError, match="is_streaming"):
        Agent(initial_state={"is_streaming": True})
    with pytest.raises(ConfigError, match="unknown initial_state key"):
        Agent(initial_state={"sytem_prompt": "typo"})


@pytest.mark.anyio
async def test_A2_subscribe_emits_nothing_and_unsubscribes() -> None:
    faux = FauxProvider([faux_text("a"), faux_text("b")])
    agent = Agent(initial_state={"model": faux.model})
    events: list[AgentEvent] = []
    unsubscribe = agent.subscribe(events.append)
    assert events == []
    agent.state.system_prompt = "changed"
    agent.state.messages = []
    agent.state.tools = []
    assert events == []
    await agent.prompt("one")
    seen = len(events)
    assert seen > 0
    unsubscribe()
    unsubscribe()  # twice is harmless
    await agent.prompt("two")
    assert len(events) == seen


@pytest.mark.anyio
async def test_A3_stream_function_raising() -> None:
    def explode(model: Any, context: Any, options: Any) -> Any:
        raise RuntimeError("the stream function exploded")

    agent = Agent(initial_state={"model": FauxProvider().model}, stream_fn=explode)
    events = recorder(agent)
    await agent.prompt("hi")
    assert event_types(events) == ONE_TURN_NO_UPDATES
    check_well_formed(events)
    last = agent.state.messages[-1]
    assert roles(agent) == ["user", "assistant"]
    assert last.stop_reason == "error"
    assert "the stream function exploded" in (last.error_message or "")
    assert agent.state.error_message == last.error_message
    assert not agent.state.is_streaming


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_A4_prompt_waits_for_async_agent_end_listeners(anyio_backend: str) -> None:
    faux = FauxProvider([faux_text("hello")])
    agent = Agent(initial_state={"model": faux.model})
    finished = False
    streaming_during: list[bool] = []

    async def slow(event: AgentEvent) -> None:
        nonlocal finished
        if event.type == "agent_end":
            streaming_during.append(agent.state.is_streaming)
            await anyio.sleep(0.05)
            streaming_during.append(agent.state.is_streaming)
            finished = True

    agent.subscribe(slow)
    await agent.prompt("hi")
    assert finished
    assert streaming_during == [True, True]
    assert not agent.state.is_streaming


@pytest.mark.anyio
async def test_A4_wait_for_idle_waits_for_slow_listeners() -> None:
    faux = FauxProvider([faux_text("hello")])
    agent = Agent(initial_state={"model": faux.model})
    done: list[str] = []

    async def slow(event: AgentEvent) -> None:
        if event.type == "message_end":
            await anyio.sleep(0.03)
            done.append(event.message.role)

    agent.subscribe(slow)
    await agent.wait_for_idle()  # idle: returns at once
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.prompt, "hi")
        await anyio.lowlevel.checkpoint()
        assert agent.state.is_streaming
        await agent.wait_for_idle()
        assert done == ["user", "assistant"]
        assert not agent.state.is_streaming


@pytest.mark.anyio
async def test_A5_listeners_receive_the_run_signal() -> None:
    faux = FauxProvider([faux_text("a long answer " * 40)], tokens_per_second=2000)
    agent = Agent(initial_state={"model": faux.model})
    agent.abort()  # idle: harmless
    signals: list[AbortSignal] = []

    def listener(event: AgentEvent, signal: AbortSignal) -> None:
        signals.append(signal)
        if event.type == "message_update" and not signal.aborted:
            assert agent.signal is signal
            agent.abort()

    agent.subscribe(listener)
    agent.subscribe(lambda event: len(signals))  # a sync listener's return value is ignored
    await agent.prompt("hi")
    assert signals and all(s is signals[0] for s in signals)
    assert signals[0].aborted
    last = agent.state.messages[-1]
    assert last.stop_reason == "aborted"
    assert agent.state.error_message == last.error_message
    assert agent.signal is None
    agent.abort()


@pytest.mark.anyio
async def test_A6_steer_and_follow_up_queue_without_touching_the_transcript() -> None:
    faux = FauxProvider()
    agent = Agent(initial_state={"model": faux.model, "messages": [UserMessage(content="x")]})
    before = list(agent.state.messages)
    steering = UserMessage(content="steer")
    agent.steer(steering)
    agent.follow_up("follow")
    assert agent.state.messages == before
    assert agent.has_queued_messages()
    assert agent.steering_queue == (steering,)
    assert texts(agent.follow_up_queue[0]) == "follow"
    assert faux.call_count == 0
    with pytest.raises(MessageFormatError):
        agent.steer(42)  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_A7_prompt_continue_and_reset_refused_during_a_run() -> None:
    gate = anyio.Event()
    faux = FauxProvider([gated(gate)])
    agent = Agent(initial_state={"model": faux.model})
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.prompt, "hi")
        await started(faux)
        with pytest.raises(AgentBusyError, match=r"steer\(\) or follow_up\(\)"):
            await agent.prompt("again")
        with pytest.raises(AgentBusyError, match="before continuing"):
            await agent.continue_()
        transcript = list(agent.state.messages)
        with pytest.raises(AgentBusyError, match="reset"):
            agent.reset()
        assert agent.state.messages == transcript
        assert agent.state.is_streaming
        gate.set()
    assert roles(agent) == ["user", "assistant"]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_A8_continue_on_assistant_tail_runs_a_queued_follow_up(anyio_backend: str) -> None:
    faux = FauxProvider([faux_text("first"), faux_text("second")])
    agent = Agent(initial_state={"model": faux.model})
    await agent.prompt("hi")
    agent.follow_up("and then?")
    await agent.continue_()
    assert roles(agent) == ["user", "assistant", "user", "assistant"]
    assert texts(agent.state.messages[2]) == "and then?"
    assert faux.call_count == 2
    assert not agent.has_queued_messages()


@pytest.mark.anyio
async def test_A8_continue_with_two_steering_messages_one_at_a_time() -> None:
    faux = FauxProvider([faux_text("first"), faux_text("s1"), faux_text("s2")])
    agent = Agent(initial_state={"model": faux.model})
    await agent.prompt("hi")
    agent.steer("one")
    agent.steer("two")
    await agent.continue_()
    assert faux.call_count == 3  # the prompt, then one call per steering message
    tail = agent.state.messages[-4:]
    assert [m.role for m in tail] == ["user", "assistant", "user", "assistant"]
    assert [texts(m) for m in tail] == ["one", "s1", "two", "s2"]


@pytest.mark.anyio
async def test_A8_continue_refusals() -> None:
    faux = FauxProvider([faux_text("answer"), faux_text("from the user message")])
    agent = Agent(initial_state={"model": faux.model})
    with pytest.raises(ConfigError, match="no messages"):
        await agent.continue_()
    await agent.prompt("hi")
    with pytest.raises(ConfigError, match="assistant"):
        await agent.continue_()
    agent.state.messages.append(UserMessage(content="go on"))
    await agent.continue_()
    assert texts(agent.state.messages[-1]) == "from the user message"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("mode", "calls", "transcript"),
    [
        ("all", 1, ["prompt", "s1", "s2", "a1"]),
        ("one-at-a-time", 2, ["prompt", "s1", "a1", "s2", "a2"]),
    ],
)
async def test_A9_steering_modes(mode: Any, calls: int, transcript: list[str]) -> None:
    faux = FauxProvider([faux_text("a1"), faux_text("a2")])
    agent = Agent(initial_state={"model": faux.model}, steering_mode=mode)
    agent.steer("s1")
    agent.steer("s2")
    await agent.prompt("prompt")
    assert faux.call_count == calls
    assert [texts(m) for m in agent.state.messages] == transcript
    assert not agent.has_queued_messages()


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("mode", "transcript"),
    [
        ("all", ["prompt", "a1", "f1", "f2", "a2"]),
        ("one-at-a-time", ["prompt", "a1", "f1", "a2", "f2", "a3"]),
    ],
)
async def test_A9_follow_up_modes(mode: Any, transcript: list[str]) -> None:
    faux = FauxProvider([faux_text("a1"), faux_text("a2"), faux_text("a3")])
    agent = Agent(initial_state={"model": faux.model})
    agent.follow_up_mode = mode
    agent.follow_up("f1")
    agent.follow_up("f2")
    await agent.prompt("prompt")
    assert [texts(m) for m in agent.state.messages] == transcript
    with pytest.raises(ConfigError):
        agent.follow_up_mode = "some"  # type: ignore[assignment]


@pytest.mark.anyio
async def test_A10_options_are_forwarded_and_changes_apply_to_the_next_prompt() -> None:
    faux = FauxProvider([faux_text("a"), faux_text("b")])
    payloads: list[Any] = []
    budgets = ThinkingBudgets(low=1024)
    agent = Agent(
        initial_state={"model": faux.model, "thinking_level": "low"},
        session_id="session-1",
        temperature=0.25,
        max_tokens=321,
        api_key="key",
        headers={"x-test": "1"},
        metadata={"user": "u"},
        transport="sse",
        cache_retention="long",
        max_retry_delay_ms=1234,
        thinking_budgets=budgets,
        on_payload=lambda payload, model: payloads.append(payload),
    )
    await agent.prompt("one")
    first = faux.calls[0].options
    assert first.session_id == "session-1"
    assert first.temperature == 0.25 and first.max_tokens == 321
    assert first.api_key == "key" and first.headers == {"x-test": "1"}
    assert first.metadata == {"user": "u"}
    assert first.transport == "sse" and first.cache_retention == "long"
    assert first.max_retry_delay_ms == 1234
    assert first.reasoning == "low" and first.thinking_budgets is budgets
    agent.session_id = "session-2"
    agent.temperature = None
    agent.state.thinking_level = "off"
    await agent.prompt("two")
    second = faux.calls[1].options
    assert second.session_id == "session-2"
    assert second.temperature is None
    assert second.reasoning is None


@pytest.mark.anyio
async def test_A11_transcript_grows_at_message_end_only() -> None:
    faux = FauxProvider(
        [faux_tool_call("slow", {}, id="call-1", text="let me check"), faux_text("all done")],
        chunk_chars=3,
    )
    pending_in_tool: list[frozenset[str]] = []

    async def slow(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        pending_in_tool.append(agent.state.pending_tool_calls)
        return AgentToolResult.text("checked")

    agent = Agent(initial_state={"model": faux.model, "tools": [make_tool("slow", slow)]})
    problems: list[str] = []
    partial_texts: list[str] = []

    def listener(event: AgentEvent) -> None:
        state = agent.state
        n = len(state.messages)
        if event.type == "message_start":
            if state.streaming_message is not event.message:
                problems.append("streaming_message is not the started message")
            if event.message in state.messages:
                problems.append("message in transcript at message_start")
        elif event.type == "message_update":
            partial = state.streaming_message
            assert isinstance(partial, AssistantMessage)
            partial_texts.append(partial.text)
            if partial in state.messages or n != listener.count:  # type: ignore[attr-defined]
                problems.append("transcript changed during streaming")
        elif event.type == "message_end":
            if state.messages[-1] is not event.message or state.streaming_message is not None:
                problems.append("message_end did not append")
        elif event.type == "tool_execution_start" and "call-1" not in state.pending_tool_calls:
            problems.append("pending_tool_calls misses the running call")
        elif event.type == "tool_execution_end" and state.pending_tool_calls:
            problems.append("pending_tool_calls kept a finished call")
        listener.count = len(state.messages)  # type: ignore[attr-defined]

    listener.count = 0  # type: ignore[attr-defined]
    agent.subscribe(listener)
    await agent.prompt("check")
    assert problems == []
    assert pending_in_tool == [frozenset({"call-1"})]
    assert "let me check" in partial_texts and len(set(partial_texts)) > 2
    assert roles(agent) == ["user", "assistant", "tool_result", "assistant"]
    assert agent.state.streaming_message is None and agent.state.pending_tool_calls == frozenset()


# --- prompts -----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_prompt_forms_and_returned_messages() -> None:
    faux = FauxProvider([faux_text("1"), faux_text("2"), faux_text("3")])
    agent = Agent(initial_state={"model": faux.model})
    image = ImageContent(data="aGk=", mime_type="image/png")
    added = await agent.prompt("look", images=[image])
    assert added == agent.state.messages
    assert added[0].content == [TextContent(text="look"), image]
    await agent.prompt(UserMessage(content="a message"))
    await agent.prompt([UserMessage(content="x"), UserMessage(content="y")])
    assert [texts(m) for m in agent.state.messages[4:7]] == ["x", "y", "3"]
    with pytest.raises(MessageFormatError):
        await agent.prompt(42)  # type: ignore[arg-type]
    with pytest.raises(MessageFormatError, match=r"messages\[1\]"):
        await agent.prompt([UserMessage(content="x"), "not a message"])
    with pytest.raises(UsageError, match="images"):
        await agent.prompt(UserMessage(content="x"), images=[image])
    assert faux.call_count == 3


@pytest.mark.anyio
async def test_error_message_is_reset_when_a_run_starts() -> None:
    faux = FauxProvider(
        [AssistantMessage(stop_reason="error", error_message="boom"), faux_text("ok")]
    )
    agent = Agent(initial_state={"model": faux.model})
    await agent.prompt("one")
    assert agent.state.error_message == "boom"
    await agent.prompt("two")
    assert agent.state.error_message is None


# --- options -----------------------------------------------------------------------------------


def test_agent_forwards_every_loop_option() -> None:
    own = {"model", "reasoning", "get_steering_messages", "get_follow_up_messages"}
    loop_options = {f.name for f in dataclasses.fields(AgentLoopConfig)} - own
    assert set(agent_module.OPTIONS) == loop_options
    agent = Agent()
    for name in loop_options:
        assert hasattr(agent, name)


def test_options_of_the_wrong_shape_fail_at_construction() -> None:
    with pytest.raises(ConfigError, match="tool_execution"):
        Agent(tool_execution="parallel-ish")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="queue mode"):
        Agent(steering_mode="everything")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="listener"):
        Agent().subscribe(lambda a, b, c: None)


@pytest.mark.anyio
async def test_hooks_set_as_attributes_apply_from_the_next_run() -> None:
    faux = FauxProvider(
        [faux_tool_call("t", {}), faux_text("a"), faux_tool_call("t", {}), faux_text("b")]
    )
    calls: list[str] = []

    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        calls.append("executed")
        return AgentToolResult.text("ran")

    agent = Agent(initial_state={"model": faux.model, "tools": [make_tool("t", execute)]})
    await agent.prompt("one")
    seen_states: list[list[str]] = []

    def before(ctx: Any) -> Any:
        # the barrier: the assistant message is already in the state when tools are prepared
        seen_states.append(roles(agent))
        from agentcore import BeforeToolCallResult

        return BeforeToolCallResult(block=True, reason="not now")

    agent.before_tool_call = before
    agent.tool_execution = ToolExecutionMode.SEQUENTIAL
    await agent.prompt("two")
    assert calls == ["executed"]
    assert seen_states == [["user", "assistant", "tool_result", "assistant", "user", "assistant"]]
    assert texts(agent.state.messages[-2]) == "not now"


@pytest.mark.anyio
async def test_should_stop_after_turn_and_prepare_next_turn_receive_the_signal() -> None:
    faux = FauxProvider([faux_tool_call("t", {}), faux_text("never asked")])
    seen: list[tuple[list[str], bool]] = []

    def stop(ctx: PrepareNextTurnContext, signal: AbortSignal) -> bool:
        seen.append(([m.role for m in ctx.context.messages], isinstance(signal, AbortSignal)))
        return True

    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult.text("ok")

    agent = Agent(
        initial_state={"model": faux.model, "tools": [make_tool("t", execute)]},
        should_stop_after_turn=stop,
        prepare_next_turn=lambda ctx, signal: seen.append((["prepare"], signal.aborted is False)),
    )
    await agent.prompt("go")
    assert faux.call_count == 1
    assert seen == [(["prepare"], True), (["user", "assistant", "tool_result"], True)]


# --- failures ----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_raising_listener_ends_the_run_with_an_error_and_others_still_hear() -> None:
    faux = FauxProvider([faux_text("hello")])
    agent = Agent(initial_state={"model": faux.model})

    def bad(event: AgentEvent) -> None:
        if event.type == "message_end" and event.message.role == "assistant":
            raise ValueError("listener broke")

    agent.subscribe(bad)
    events = recorder(agent)
    await agent.prompt("hi")
    check_well_formed(events)
    assert agent.state.messages[-1].stop_reason == "error"
    assert agent.state.error_message == "listener broke"
    assert not agent.state.is_streaming


@pytest.mark.anyio
async def test_a_loop_that_raises_leaves_the_agent_idle_and_consistent() -> None:
    # The real loop raises out of the run when its event sink fails: here a listener breaks at
    # the first message_start, after agent_start and turn_start went out.
    faux = FauxProvider([faux_text("never streamed")])
    agent = Agent(initial_state={"model": faux.model})

    def breaks_at_the_first_message(event: AgentEvent) -> None:
        if event.type == "message_start":
            raise RuntimeError("the loop itself broke")

    events = recorder(agent)
    agent.subscribe(breaks_at_the_first_message)
    agent.steer("kept")
    await agent.prompt("hi")
    check_well_formed(events)
    assert [e.type for e in events][:3] == ["agent_start", "turn_start", "message_start"]
    assert roles(agent) == ["user", "assistant"]
    assert agent.state.messages[-1].error_message == "the loop itself broke"
    assert agent.state.error_message == "the loop itself broke"
    assert not agent.state.is_streaming and agent.signal is None
    assert [texts(m) for m in agent.steering_queue] == ["kept"]
    assert faux.call_count == 0  # the run broke before its request


@pytest.mark.anyio
async def test_messages_taken_by_a_run_that_cannot_start_go_back_to_the_queue() -> None:
    faux = FauxProvider([faux_text("a")])
    agent = Agent(initial_state={"model": faux.model})
    await agent.prompt("hi")
    agent.steer("first")
    agent.steer("second")
    agent.state.tools = ["not a tool"]  # type: ignore[list-item]
    with pytest.raises(ToolDefinitionError):
        await agent.continue_()
    assert [texts(m) for m in agent.steering_queue] == ["first", "second"]
    assert not agent.state.is_streaming


@pytest.mark.anyio
async def test_queued_messages_survive_an_abort_and_are_delivered_once_later() -> None:
    gate = anyio.Event()
    faux = FauxProvider([gated(gate), faux_text("next")])
    agent = Agent(initial_state={"model": faux.model})
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.prompt, "hi")
        await started(faux)
        agent.steer("steer me")
        agent.follow_up("follow me")
        agent.abort()
        gate.set()
    assert agent.state.messages[-1].stop_reason == "aborted"
    assert [texts(m) for m in agent.steering_queue] == ["steer me"]
    assert [texts(m) for m in agent.follow_up_queue] == ["follow me"]
    faux.append_responses(faux_text("after follow"))
    await agent.prompt("again")
    delivered = [texts(m) for m in agent.state.messages if m.role == "user"]
    assert delivered == ["hi", "again", "steer me", "follow me"]
    assert not agent.has_queued_messages()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_cancelling_the_caller_leaves_the_agent_idle(anyio_backend: str) -> None:
    faux = FauxProvider(
        [faux_text("a long answer " * 100), faux_text("next")], tokens_per_second=500
    )
    agent = Agent(initial_state={"model": faux.model})
    agent.follow_up("still queued")
    with anyio.move_on_after(0.05):
        await agent.prompt("hi")
    assert not agent.state.is_streaming and agent.signal is None
    assert agent.state.streaming_message is None
    assert [texts(m) for m in agent.follow_up_queue] == ["still queued"]
    assert roles(agent) == ["user"]  # the partial answer never reached message_end
    faux.append_responses(faux_text("answered"))
    await agent.prompt("again")
    assert [texts(m) for m in agent.state.messages] == [
        "hi",
        "again",
        "next",
        "still queued",
        "answered",
    ]
    assert not agent.has_queued_messages()


@pytest.mark.anyio
async def test_abort_in_prepare_next_turn_keeps_what_was_queued_during_the_run() -> None:
    faux = FauxProvider([faux_tool_call("t", {}), faux_text("later")])

    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        agent.steer("steered while the tool ran")
        agent.follow_up("followed while the tool ran")
        return AgentToolResult.text("ok")

    def prepare(ctx: Any) -> None:
        agent.abort()

    agent = Agent(
        initial_state={"model": faux.model, "tools": [make_tool("t", execute)]},
        prepare_next_turn=prepare,
    )
    await agent.prompt("go")
    # an abort inside prepare_next_turn ends the run after that turn, with no new request
    assert agent.state.messages[-1].role == "tool_result"
    assert faux.call_count == 1
    assert [m.role for m in agent.state.messages if m.role != "assistant"] == [
        "user",
        "tool_result",
    ]
    assert [texts(m) for m in agent.steering_queue] == ["steered while the tool ran"]
    assert [texts(m) for m in agent.follow_up_queue] == ["followed while the tool ran"]
    agent.prepare_next_turn = None
    faux.append_responses(faux_text("after follow-up"))
    await agent.continue_()
    users = [texts(m) for m in agent.state.messages if m.role == "user"]
    assert users == ["go", "steered while the tool ran", "followed while the tool ran"]
    assert not agent.has_queued_messages()


# --- reset, sync facade --------------------------------------------------------------------------


@pytest.mark.anyio
async def test_reset_clears_transcript_error_and_queues_but_keeps_settings() -> None:
    faux = FauxProvider([AssistantMessage(stop_reason="error", error_message="bad")])
    agent = Agent(initial_state={"model": faux.model, "system_prompt": "sp"})
    await agent.prompt("hi")
    agent.steer("s")
    agent.follow_up("f")
    agent.reset()
    assert agent.state.messages == [] and agent.state.error_message is None
    assert not agent.has_queued_messages()
    assert agent.state.system_prompt == "sp" and agent.state.model is faux.model


def test_prompt_sync_and_continue_sync() -> None:
    faux = FauxProvider([faux_text("sync answer"), faux_text("continued")])
    agent = Agent(initial_state={"model": faux.model})
    added = agent.prompt_sync("hi")
    assert texts(added[-1]) == "sync answer"
    agent.follow_up("more")
    agent.continue_sync()
    assert texts(agent.state.messages[-1]) == "continued"
    assert not agent.state.is_streaming


@pytest.mark.anyio
async def test_prompt_sync_refuses_async_code() -> None:
    agent = Agent()
    with pytest.raises(UsageError, match=r"await agent\.prompt"):
        agent.prompt_sync("hi")
    with pytest.raises(UsageError, match=r"await agent\.continue_"):
        agent.continue_sync()


# --- docs/agent.md -----------------------------------------------------------------------------


def test_docs_agent_examples_run(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every Python block of docs/agent.md runs as written, each in a fresh namespace (also
    covered by tests/test_readme.py; here so the Agent's docs are checked with its tests)."""
    import re
    from pathlib import Path

    doc = Path(__file__).resolve().parent.parent / "docs" / "agent.md"
    blocks = re.findall(r"^```python\n(.*?)^```", doc.read_text(), flags=re.S | re.M)
    assert len(blocks) >= 6
    monkeypatch.chdir(tmp_path)  # nothing the examples write lands in the repository
    for i, code in enumerate(blocks):
        exec(compile(code, f"docs/agent.md block {i + 1}", "exec"), {"__name__": "__docs__"})
