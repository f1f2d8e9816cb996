"""The whole stack against a real model: Qwen2.5-Coder-1.5B on llama.cpp (scripts/local-model).

These tests check the protocol and the event sequence — deltas streamed, tool-call arguments
accumulated and parsed, tool results sent back, usage, abort, concurrency, the stateful Agent —
never the model's judgement beyond what a prompt makes all but certain. Every request has a
generous time limit (the model writes ~6-15 tokens/s on 2 cores), runs at temperature 0 and with a
small `max_tokens`; tests that need a plain answer send no tools.
"""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
import pytest

from agentcore import (
    AbortController,
    Agent,
    AgentContext,
    AgentEndEvent,
    AgentEvent,
    AgentLoopConfig,
    AgentMessage,
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    agent_loop,
    tool,
)
from agentcore.llm import (
    AssistantMessageEvent,
    Context,
    Model,
    SimpleStreamOptions,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    stream_simple,
)
from agentcore.testing import check_well_formed

from .local_server import LocalModel

pytestmark = [pytest.mark.local_llm, pytest.mark.anyio]

REQUEST_TIMEOUT = 120  # seconds per model request: generous for a 1.5B model on 2 slow cores
TERSE = "You are a terse assistant. Answer in one short sentence."


def text_of(message: AgentMessage) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    return "".join(b.text for b in content if isinstance(b, TextContent))


async def stream_once(
    model: Model, prompt: str, *, max_tokens: int = 64, system_prompt: str = TERSE
) -> tuple[list[AssistantMessageEvent], AssistantMessage]:
    """One plain request (no tools) through `stream_simple`: its events and final message."""
    context = Context(system_prompt=system_prompt, messages=[UserMessage(content=prompt)])
    options = SimpleStreamOptions(temperature=0, max_tokens=max_tokens)
    with anyio.fail_after(REQUEST_TIMEOUT):
        stream = stream_simple(model, context, options)
        events = [event async for event in stream]
        message = await stream.result()
    return events, message


async def run_loop(
    prompt: str,
    context: AgentContext,
    config: AgentLoopConfig,
    *,
    requests: int = 1,
    on_event: Any = None,
    signal: Any = None,
) -> tuple[list[AgentEvent], list[AgentMessage]]:
    """`agent_loop` to its end (at most `requests` model requests' worth of time), checked for
    well-formed events and `result() == agent_end.messages`."""
    events: list[AgentEvent] = []
    with anyio.fail_after(REQUEST_TIMEOUT * requests):
        async with agent_loop([UserMessage(content=prompt)], context, config, signal) as stream:
            async for event in stream:
                events.append(event)
                if on_event is not None:
                    on_event(event)
            result = await stream.result()
    check_well_formed(events)
    assert events[-1].type == "agent_end"
    end = events[-1]
    assert isinstance(end, AgentEndEvent) and result == end.messages
    return events, result


def assistant_events(events: list[AgentEvent]) -> list[AssistantMessageEvent]:
    return [e.assistant_message_event for e in events if e.type == "message_update"]


# --- a plain streamed answer ------------------------------------------------------------------


@pytest.mark.timeout(REQUEST_TIMEOUT + 30)
async def test_plain_streamed_answer(local_model: LocalModel) -> None:
    events, message = await stream_once(
        local_model.model, "What is the capital of France? Answer in one sentence."
    )
    types = [e.type for e in events]
    deltas = [e.delta for e in events if e.type == "text_delta"]
    assert len(deltas) >= 2, f"expected the text in several deltas, got {types}"
    assert types == ["start", "text_start", *["text_delta"] * len(deltas), "text_end", "done"]
    assert events[-1].type == "done" and events[-1].reason == "stop"
    assert message.stop_reason == "stop" and message.error_message is None
    assert message.tool_calls == []
    text = text_of(message)
    assert text.strip() and "".join(deltas) == text
    assert (message.api, message.provider, message.model) == (
        "openai-completions",
        "local",
        "qwen2.5-coder-1.5b",
    )


# --- usage ----------------------------------------------------------------------------------


@pytest.mark.timeout(REQUEST_TIMEOUT + 30)
async def test_usage_is_reported(local_model: LocalModel) -> None:
    _, message = await stream_once(local_model.model, "Name one primary colour.", max_tokens=32)
    usage = message.usage
    assert usage.input > 0, usage  # llama.cpp reprocesses at least one prompt token
    assert usage.output > 0, usage
    assert usage.total_tokens == usage.input + usage.output + usage.cache_read + usage.cache_write
    assert usage.input + usage.cache_read > 10  # the system prompt and question, as tokens
    assert usage.cost.total == 0.0  # a local model is free


# --- a tool call, executed by the loop, and the answer after its result ---------------------------


@tool
def get_weather(city: str) -> str:
    """Get the current weather in a city.

    Args:
        city: the city's name, e.g. "Paris".
    """
    return json.dumps({"city": city, "temperature_c": 18, "condition": "light rain"})


@pytest.mark.timeout(4 * REQUEST_TIMEOUT + 30)
async def test_tool_call_round_trip(local_model: LocalModel) -> None:
    payloads: list[dict[str, Any]] = []

    def record(payload: Any, model: Model) -> None:
        payloads.append(payload)

    turns = 0

    def at_most_three_turns(ctx: Any) -> bool:  # bounds a model that keeps calling the tool
        nonlocal turns
        turns += 1
        return turns >= 3

    config = AgentLoopConfig(
        model=local_model.model,
        temperature=0,
        max_tokens=128,
        on_payload=record,
        should_stop_after_turn=at_most_three_turns,
    )
    context = AgentContext(
        system_prompt="You are a helpful assistant. Use the tools when they help.",
        tools=[get_weather],
    )
    events, messages = await run_loop(
        "What is the weather in Paris right now?", context, config, requests=3
    )
    types = [e.type for e in events]

    # the first answer: a tool call whose arguments streamed in as JSON fragments
    first = messages[1]
    assert isinstance(first, AssistantMessage), messages
    assert first.stop_reason == "tool_use", (first.stop_reason, first.error_message, first.content)
    assert len(first.tool_calls) >= 1
    call = first.tool_calls[0]
    assert call.name == "get_weather" and call.id
    assert isinstance(call.arguments, dict)
    first_end = next(
        i for i, e in enumerate(events) if e.type == "message_end" and e.message is first
    )
    index = first.content.index(call)
    call_events = [
        e
        for e in assistant_events(events[:first_end])
        if isinstance(e, ToolCallStartEvent | ToolCallDeltaEvent | ToolCallEndEvent)
        and e.content_index == index
    ]
    fragments = [e.delta for e in call_events if isinstance(e, ToolCallDeltaEvent)]
    assert isinstance(call_events[0], ToolCallStartEvent)
    assert isinstance(call_events[-1], ToolCallEndEvent) and call_events[-1].tool_call == call
    assert len(fragments) >= 2, f"expected the arguments in several fragments: {fragments}"
    for e in call_events:  # the partial arguments are parsed as they stream, never failing
        block = e.partial.content[index]
        assert isinstance(block, ToolCall) and isinstance(block.arguments, dict)
    assert json.loads("".join(fragments)) == call.arguments  # the fragments are the arguments

    # executed by the loop: start, end, then the result message, in that order
    start = next(i for i, e in enumerate(events) if e.type == "tool_execution_start")
    end = next(i for i, e in enumerate(events) if e.type == "tool_execution_end")
    result_start = next(
        i
        for i, e in enumerate(events)
        if e.type == "message_start" and isinstance(e.message, ToolResultMessage)
    )
    assert first_end < start < end < result_start
    assert events[start].tool_call_id == call.id  # type: ignore[union-attr]
    assert events[start].args == call.arguments  # type: ignore[union-attr]
    assert events[end].is_error is False  # type: ignore[union-attr]
    result = messages[2]
    assert isinstance(result, ToolResultMessage) and result.tool_call_id == call.id
    assert not result.is_error and '"temperature_c": 18' in text_of(result)

    # the result went back to the server as a `tool` message answering that call
    assert len(payloads) >= 2
    second = payloads[1]["messages"]
    assert second[-1]["role"] == "tool" and '"temperature_c": 18' in second[-1]["content"]
    assert second[-2]["role"] == "assistant" and second[-2]["tool_calls"]
    assert second[-2]["tool_calls"][0]["id"] == second[-1]["tool_call_id"]

    # ... and the model answered it in a new turn, finishing normally
    final = messages[-1]
    assert isinstance(final, AssistantMessage)
    assert final.stop_reason == "stop", (final.stop_reason, final.error_message, final.content)
    assert final.tool_calls == [] and text_of(final).strip()
    assert types.index("turn_end") < len(types) - 1 - types[::-1].index("turn_start")
    for message in messages:
        if isinstance(message, AssistantMessage):
            assert message.usage.output > 0 and message.usage.total_tokens > 0


# --- abort mid-stream ---------------------------------------------------------------------------


@pytest.mark.timeout(2 * REQUEST_TIMEOUT + 30)
async def test_abort_mid_stream_then_the_server_keeps_serving(local_model: LocalModel) -> None:
    controller = AbortController()
    deltas = 0
    aborted_at: float | None = None

    def abort_after_some_text(event: AgentEvent) -> None:
        nonlocal deltas, aborted_at
        if event.type == "message_update" and event.assistant_message_event.type == "text_delta":
            deltas += 1
            if deltas == 5:
                aborted_at = time.perf_counter()
                controller.abort("enough")

    config = AgentLoopConfig(model=local_model.model, temperature=0, max_tokens=256)
    events, messages = await run_loop(
        "Count from 1 to 100, separated by commas.",
        AgentContext(system_prompt="You follow instructions exactly."),
        config,
        on_event=abort_after_some_text,
        signal=controller.signal,
    )
    ended_at = time.perf_counter()
    assert aborted_at is not None, "the answer ended before 5 text deltas arrived"
    assert ended_at - aborted_at < 10, "the run did not end promptly after the abort"

    final = messages[-1]
    assert isinstance(final, AssistantMessage)
    assert final.stop_reason == "aborted"
    partial = text_of(final)
    assert partial.strip(), "the aborted message keeps the text that arrived"
    streamed = "".join(
        e.delta for e in assistant_events(events) if e.type == "text_delta"
    )  # everything streamed before the abort took effect
    assert partial == streamed
    assert [e.type for e in events][-2:] == ["turn_end", "agent_end"]

    # the server is still serving: a next request is answered normally
    _, message = await stream_once(local_model.model, "Say hello.", max_tokens=16)
    assert message.stop_reason in ("stop", "length") and message.error_message is None
    assert text_of(message).strip()


# --- two runs at once -----------------------------------------------------------------------------


@pytest.mark.timeout(2 * REQUEST_TIMEOUT + 30)
async def test_two_runs_in_parallel(local_model: LocalModel) -> None:
    config = AgentLoopConfig(model=local_model.model, temperature=0, max_tokens=32)
    prompts = ["Name one fruit.", "Name one animal."]
    results: dict[int, tuple[list[AgentEvent], list[AgentMessage]]] = {}

    async def one(i: int) -> None:
        results[i] = await run_loop(prompts[i], AgentContext(system_prompt=TERSE), config)

    with anyio.fail_after(2 * REQUEST_TIMEOUT):
        async with anyio.create_task_group() as tg:
            for i in range(len(prompts)):
                tg.start_soon(one, i)

    assert sorted(results) == [0, 1]
    for i, (events, messages) in results.items():
        assert [text_of(m) for m in messages[:1]] == [prompts[i]]
        final = messages[-1]
        assert isinstance(final, AssistantMessage)
        assert final.stop_reason in ("stop", "length"), (final.stop_reason, final.error_message)
        assert text_of(final).strip()
        assert any(
            e.type == "message_update" and e.assistant_message_event.type == "text_delta"
            for e in events
        )


# --- the stateful Agent, with a follow-up message ------------------------------------------------


@pytest.mark.timeout(2 * REQUEST_TIMEOUT + 30)
async def test_agent_with_a_follow_up_message(local_model: LocalModel) -> None:
    agent = Agent(
        initial_state={"model": local_model.model, "system_prompt": TERSE},
        temperature=0,
        max_tokens=48,
    )
    seen: list[str] = []
    queued = False

    def listener(event: AgentEvent) -> None:
        nonlocal queued
        seen.append(event.type)
        # queue the follow-up while the first answer is still streaming
        if event.type == "message_update" and not queued:
            queued = True
            agent.follow_up("And what is the capital of Italy?")

    agent.subscribe(listener)
    with anyio.fail_after(2 * REQUEST_TIMEOUT):
        added = await agent.prompt("What is the capital of France?")

    assert queued
    roles = [m.role for m in agent.state.messages]
    assert roles == ["user", "assistant", "user", "assistant"], roles
    assert added == agent.state.messages
    assert text_of(agent.state.messages[2]) == "And what is the capital of Italy?"
    for answer in agent.state.messages[1::2]:
        assert isinstance(answer, AssistantMessage)
        assert answer.stop_reason in ("stop", "length"), (answer.stop_reason, answer.error_message)
        assert text_of(answer).strip()
    assert seen.count("agent_start") == 1 and seen.count("agent_end") == 1
    assert seen.count("turn_start") == 2
    assert not agent.state.is_streaming and agent.state.error_message is None
    assert agent.follow_up_queue == ()
