"""Bounded runs: `max_turns` and usage limits end a run cleanly after a turn, and say so
(`AgentEndEvent.limit`, `EventStream.limit`, `AgentState.limit`); the request options carry the
timeouts and retries; an abort before a request calls nothing; tool-call ids are unique whatever
the stream function returns.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from agentcore import (
    AbortController,
    Agent,
    AgentContext,
    AgentLoopConfig,
    AssistantMessage,
    ConfigError,
    Cost,
    LimitReached,
    NextTurn,
    PrepareNextTurnContext,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UsageLimits,
    agent_loop,
    tool,
)
from agentcore.llm import AssistantMessageEventStream, Context, Model
from agentcore.llm.events import DoneEvent
from agentcore.testing import FauxProvider, check_well_formed, faux_text, faux_tool_call
from support import ONE_TURN_NO_UPDATES, Run, collect, run, user

pytestmark = pytest.mark.anyio


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"


def looping(n: int = 50) -> FauxProvider:
    """A model that calls `ping` every time it is asked (for `n` answers)."""
    return FauxProvider([faux_tool_call("ping") for _ in range(n)])


def assert_one_result_per_call(r: Run) -> None:
    """Every tool call of the run has exactly one result, right after its answer."""
    messages = r.result
    for i, m in enumerate(messages):
        if isinstance(m, AssistantMessage) and m.tool_calls:
            results = messages[i + 1 : i + 1 + len(m.tool_calls)]
            assert [getattr(x, "tool_call_id", None) for x in results] == [
                c.id for c in m.tool_calls
            ]
    calls = [c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    results = [m.tool_call_id for m in messages if isinstance(m, ToolResultMessage)]
    assert sorted(calls) == sorted(results) and len(set(calls)) == len(calls)


# --- max_turns ---------------------------------------------------------------------------------


async def test_max_turns_ends_a_model_that_keeps_calling_tools() -> None:
    faux = looping()
    config = AgentLoopConfig(model=faux.model, max_turns=3)
    stream = agent_loop([user("go")], AgentContext(tools=[ping]), config)
    r = await collect(stream)
    assert faux.call_count == 3
    assert len(r.of("turn_end")) == 3
    assert_one_result_per_call(r)
    assert isinstance(r.result[-1], ToolResultMessage)  # the last results wait for an answer
    expected = LimitReached(kind="max_turns", limit=3, used=3)
    assert r.end.limit == expected
    assert stream.limit == expected
    assert r.types[-2:] == ["turn_end", "agent_end"]


async def test_max_turns_counts_the_turns_of_this_run_only() -> None:
    faux = looping()
    earlier = [user("before"), AssistantMessage(content=[], stop_reason="stop")]
    config = AgentLoopConfig(model=faux.model, max_turns=2)
    r = await run("go", AgentContext(messages=earlier, tools=[ping]), config)
    assert faux.call_count == 2 and r.end.limit.used == 2


async def test_a_run_that_finishes_below_max_turns_reports_no_limit() -> None:
    faux = FauxProvider([faux_tool_call("ping"), faux_tool_call("ping"), faux_text("done")])
    config = AgentLoopConfig(model=faux.model, max_turns=4)
    stream = agent_loop([user("go")], AgentContext(tools=[ping]), config)
    r = await collect(stream)
    assert r.result[-1].text == "done"
    assert r.end.limit is None and stream.limit is None


async def test_a_final_answer_on_the_last_allowed_turn_still_reports_the_limit() -> None:
    """The bound was reached, and the run did not look for queued messages: it says so."""
    faux = FauxProvider([faux_text("hello")])
    r = await run("hi", config=AgentLoopConfig(model=faux.model, max_turns=1))
    assert r.result[-1].text == "hello"
    assert r.end.limit == LimitReached(kind="max_turns", limit=1, used=1)


async def test_limits_off_change_nothing() -> None:
    script = [faux_tool_call("ping") for _ in range(12)] + [faux_text("done")]
    plain = await run("go", AgentContext(tools=[ping]), faux=(faux := FauxProvider(list(script))))
    assert faux.call_count == 13 and plain.end.limit is None
    loose = FauxProvider(list(script))
    bounded = await run(
        "go",
        AgentContext(tools=[ping]),
        AgentLoopConfig(
            model=loose.model,
            max_turns=13 + 1,
            usage_limits=UsageLimits(input_tokens=10**9, output_tokens=10**9, cost=10.0),
        ),
    )
    assert bounded.types == plain.types
    assert bounded.end.limit is None
    assert AgentLoopConfig(model=loose.model).max_turns is None
    assert AgentLoopConfig(model=loose.model).usage_limits is None


async def test_the_hooks_see_the_last_turn_and_should_stop_wins() -> None:
    faux = looping()
    seen: list[int] = []

    def prepare(ctx: PrepareNextTurnContext) -> NextTurn | None:
        seen.append(len(ctx.tool_results))
        return None

    config = AgentLoopConfig(model=faux.model, max_turns=2, prepare_next_turn=prepare)
    r = await run("go", AgentContext(tools=[ping]), config)
    assert seen == [1, 1] and r.end.limit.kind == "max_turns"

    stopper = looping()
    config = AgentLoopConfig(
        model=stopper.model, max_turns=2, should_stop_after_turn=lambda ctx: True
    )
    r = await run("go", AgentContext(tools=[ping]), config)
    assert stopper.call_count == 1 and r.end.limit is None
    config = AgentLoopConfig(
        model=stopper.model,
        max_turns=1,
        should_stop_after_turn=lambda ctx: True,
    )
    r = await run("go", AgentContext(tools=[ping]), config)
    assert r.end.limit is None  # the caller's own stop came first


async def test_a_limit_takes_no_queued_message() -> None:
    """Once a bound is reached the queues are not polled: what is queued stays queued."""
    polls: list[str] = []
    follow_up = [user("follow")]

    def steering() -> list[Any]:
        polls.append("steering")
        return []

    def follow() -> list[Any]:
        polls.append("follow_up")
        out = list(follow_up)
        follow_up.clear()
        return out

    for script in ([faux_tool_call("ping")], [faux_text("done")]):
        polls.clear()
        faux = FauxProvider([*script, faux_text("unused")])
        config = AgentLoopConfig(
            model=faux.model,
            max_turns=1,
            get_steering_messages=steering,
            get_follow_up_messages=follow,
        )
        r = await run("go", AgentContext(tools=[ping]), config)
        assert r.end.limit.kind == "max_turns"
        assert polls == ["steering"]  # only the poll before the first request
        assert len(follow_up) == 1 and faux.call_count == 1


async def test_max_turns_is_checked_when_the_config_is_built() -> None:
    faux = FauxProvider()
    for bad in (0, -1, 1.5, True, "3"):
        with pytest.raises(ConfigError, match="max_turns"):
            AgentLoopConfig(model=faux.model, max_turns=bad)  # type: ignore[arg-type]


# --- usage limits ------------------------------------------------------------------------------


def usage_model() -> Model:
    return FauxProvider().model


def answering(usage: Usage, *, calls: int = 20) -> tuple[Any, list[Context]]:
    """A stream function whose answers call `ping` (the first `calls` of them; then it says
    "done") and each report `usage`."""
    contexts: list[Context] = []

    def stream_fn(model: Model, context: Context, options: Any) -> AssistantMessageEventStream:
        contexts.append(context)
        n = len(contexts)
        more = n <= calls
        message = AssistantMessage(
            content=[ToolCall(id=f"call_{n}", name="ping", arguments={})]
            if more
            else [TextContent(text="done")],
            api=model.api,
            provider=model.provider,
            model=model.id,
            usage=usage,
            stop_reason="tool_use" if more else "stop",
        )
        return AssistantMessageEventStream.from_events(
            [DoneEvent(reason=message.stop_reason, message=message)]  # type: ignore[arg-type]
        )

    return stream_fn, contexts


PER_ANSWER = Usage(
    input=100,
    output=10,
    cache_read=50,
    cache_write=5,
    cost=Cost(input=0.004, output=0.006),
)


@pytest.mark.parametrize(
    ("limits", "turns", "expected"),
    [
        # input counts cached tokens too: 155 per answer
        (UsageLimits(input_tokens=300), 2, LimitReached(kind="input_tokens", limit=300, used=310)),
        (UsageLimits(input_tokens=310), 2, LimitReached(kind="input_tokens", limit=310, used=310)),
        (UsageLimits(output_tokens=25), 3, LimitReached(kind="output_tokens", limit=25, used=30)),
        (UsageLimits(cost=0.025), 3, None),  # cost: compared approximately below
        (
            UsageLimits(input_tokens=10_000, output_tokens=40, cost=1.0),
            4,
            LimitReached(kind="output_tokens", limit=40, used=40),
        ),
    ],
)
async def test_a_usage_limit_ends_the_run_after_the_turn_that_reached_it(
    limits: UsageLimits, turns: int, expected: LimitReached | None
) -> None:
    stream_fn, contexts = answering(PER_ANSWER)
    config = AgentLoopConfig(model=usage_model(), usage_limits=limits)
    stream = agent_loop([user("go")], AgentContext(tools=[ping]), config, stream_fn=stream_fn)
    r = await collect(stream)
    assert len(contexts) == turns
    assert len(r.of("turn_end")) == turns
    assert_one_result_per_call(r)
    limit = r.end.limit
    assert stream.limit == limit
    if expected is not None:
        assert limit == expected
    else:
        assert limit.kind == "cost" and limit.limit == 0.025
        assert limit.used == pytest.approx(0.03)


async def test_usage_totals_count_this_runs_answers_only() -> None:
    earlier = AssistantMessage(content=[], usage=Usage(output=1_000), stop_reason="stop")
    stream_fn, contexts = answering(PER_ANSWER)
    config = AgentLoopConfig(model=usage_model(), usage_limits=UsageLimits(output_tokens=20))
    r = await run(
        "go",
        AgentContext(messages=[user("before"), earlier], tools=[ping]),
        config,
        stream_fn=stream_fn,
    )
    assert len(contexts) == 2 and r.end.limit.used == 20


async def test_usage_limits_with_the_faux_providers_estimates() -> None:
    # the faux provider estimates 4 characters a token: `{}` is one output token per answer
    faux = FauxProvider([faux_tool_call("ping") for _ in range(10)])
    config = AgentLoopConfig(model=faux.model, usage_limits=UsageLimits(output_tokens=3))
    r = await run("go", AgentContext(tools=[ping]), config)
    assert faux.call_count == 3
    assert r.end.limit == LimitReached(kind="output_tokens", limit=3, used=3)


def test_usage_limits_refuse_values_no_total_can_reach() -> None:
    for bad in (0, -5, float("nan"), float("inf"), True, "10"):
        with pytest.raises(ConfigError, match=r"UsageLimits\.cost"):
            UsageLimits(cost=bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"UsageLimits\.input_tokens"):
        UsageLimits(input_tokens=1.5)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="usage_limits"):
        AgentLoopConfig(model=usage_model(), usage_limits={"cost": 1.0})  # type: ignore[arg-type]


def test_a_limit_reads_as_a_sentence() -> None:
    assert str(LimitReached(kind="max_turns", limit=3, used=3)) == "max_turns reached: 3 of 3 turns"
    assert (
        str(LimitReached(kind="input_tokens", limit=1000, used=1234))
        == "input_tokens limit reached: 1,234 tokens used of 1,000"
    )
    assert (
        str(LimitReached(kind="cost", limit=0.5, used=0.51))
        == "cost limit reached: $0.5100 used of $0.5000"
    )


async def test_a_limit_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    faux = looping()
    with caplog.at_level(logging.INFO, logger="agentcore"):
        await run("go", AgentContext(tools=[ping]), AgentLoopConfig(model=faux.model, max_turns=2))
    records = [r for r in caplog.records if r.name == "agentcore"]
    assert [r.getMessage() for r in records] == ["the run ended: max_turns reached: 2 of 2 turns"]
    assert records[0].levelno == logging.WARNING


def test_the_limit_of_a_stream_read_from_synchronous_code() -> None:
    faux = looping()
    config = AgentLoopConfig(model=faux.model, max_turns=2)
    stream = agent_loop([user("go")], AgentContext(tools=[ping]), config)
    events = list(stream)
    stream.result_sync()
    check_well_formed(events)
    assert stream.limit == events[-1].limit == LimitReached(kind="max_turns", limit=2, used=2)  # type: ignore[union-attr]


async def test_the_stream_limit_is_readable_when_agent_end_arrives() -> None:
    faux = looping()
    stream = agent_loop(
        [user("go")], AgentContext(tools=[ping]), AgentLoopConfig(model=faux.model, max_turns=1)
    )
    async with stream:
        async for event in stream:
            if event.type == "agent_end":
                assert stream.limit is event.limit is not None
                break


# --- request options ---------------------------------------------------------------------------


async def test_every_request_carries_the_timeouts_and_retries() -> None:
    faux = FauxProvider([faux_tool_call("ping"), faux_text("done")])
    config = AgentLoopConfig(
        model=faux.model, request_timeout=12.5, idle_timeout=7.0, max_retries=0
    )
    await run("go", AgentContext(tools=[ping]), config)
    assert faux.call_count == 2
    for call in faux.calls:
        options = call.options
        assert (options.request_timeout, options.idle_timeout, options.max_retries) == (
            12.5,
            7.0,
            0,
        )
    default = FauxProvider([faux_text("ok")])
    await run("go", faux=default)
    options = default.calls[0].options
    assert (options.request_timeout, options.idle_timeout, options.max_retries) == (None, None, 3)


async def test_the_timeouts_survive_a_model_switch() -> None:
    faux = FauxProvider([faux_tool_call("ping"), faux_text("done")])
    other = FauxProvider(model_id="faux-2").model
    config = AgentLoopConfig(
        model=faux.model,
        request_timeout=1.5,
        prepare_next_turn=lambda ctx: NextTurn(model=other, thinking_level="low"),
    )
    await run("go", AgentContext(tools=[ping]), config, stream_fn=faux.stream_fn)
    assert [c.options.request_timeout for c in faux.calls] == [1.5, 1.5]
    assert faux.calls[1].model is other


# --- an abort before the request ---------------------------------------------------------------


async def test_an_abort_before_the_first_request_calls_nothing() -> None:
    controller = AbortController()
    controller.abort()
    called: list[str] = []

    def transform(messages: list[Any]) -> list[Any]:
        called.append("transform_context")
        return messages

    def convert(messages: list[Any]) -> list[Any]:
        called.append("convert_to_llm")
        return list(messages)

    def key(provider: str) -> str:
        called.append("get_api_key")
        return "k"

    faux = FauxProvider([faux_text("never")])
    config = AgentLoopConfig(
        model=faux.model, transform_context=transform, convert_to_llm=convert, get_api_key=key
    )
    r = await run("go", config=config, signal=controller.signal)
    assert called == []
    assert faux.call_count == 0 and faux.pending == 1
    assert r.types == ONE_TURN_NO_UPDATES
    last = r.result[-1]
    assert isinstance(last, AssistantMessage)
    assert (last.stop_reason, last.error_message) == ("aborted", "request was aborted")
    assert (last.api, last.provider, last.model) == ("faux", faux.model.provider, "faux-1")


async def test_an_abort_inside_transform_context_sends_nothing() -> None:
    controller = AbortController()
    converted: list[Any] = []

    def transform(messages: list[Any]) -> list[Any]:
        controller.abort()
        return messages

    faux = FauxProvider([faux_text("never")])
    config = AgentLoopConfig(
        model=faux.model,
        transform_context=transform,
        convert_to_llm=lambda messages: converted.append(1) or list(messages),
    )
    r = await run("go", config=config, signal=controller.signal)
    assert converted == [] and faux.call_count == 0
    assert r.result[-1].stop_reason == "aborted"


async def test_an_abort_while_polling_steering_sends_no_next_request() -> None:
    controller = AbortController()
    polls = 0

    def steering() -> list[Any]:
        nonlocal polls
        polls += 1
        if polls == 2:  # after the first turn
            controller.abort()
            return [user("late steer")]
        return []

    faux = FauxProvider([faux_tool_call("ping"), faux_text("never")])
    config = AgentLoopConfig(model=faux.model, get_steering_messages=steering)
    r = await run("go", AgentContext(tools=[ping]), config, signal=controller.signal)
    assert faux.call_count == 1
    assert [m.role for m in r.result] == ["user", "assistant", "tool_result", "user", "assistant"]
    assert r.result[-1].stop_reason == "aborted"


# --- duplicate tool-call ids from a stream function --------------------------------------------


def scripted(*messages: AssistantMessage) -> Any:
    """A stream function that answers with ready messages (a `done` event each)."""
    queue = list(messages)

    def stream_fn(model: Model, context: Context, options: Any) -> AssistantMessageEventStream:
        message = queue.pop(0)
        reason = "tool_use" if message.tool_calls else "stop"
        return AssistantMessageEventStream.from_events([DoneEvent(reason=reason, message=message)])

    return stream_fn


@pytest.mark.parametrize("mode", ["parallel", "sequential"])
async def test_duplicate_tool_call_ids_from_a_stream_function_are_made_unique(mode: str) -> None:
    from agentcore import ToolExecutionMode

    answer = AssistantMessage(
        content=[
            ToolCall(id="call_1", name="ping", arguments={}),
            ToolCall(id="call_1", name="ping", arguments={}),
            ToolCall(id="call_1_2", name="ping", arguments={}),
            ToolCall(id="other", name="ping", arguments={}),
        ],
        stop_reason="tool_use",
    )
    config = AgentLoopConfig(
        model=usage_model(),
        tool_execution=ToolExecutionMode(mode),
    )
    r = await run(
        "go",
        AgentContext(tools=[ping]),
        config,
        stream_fn=scripted(answer, AssistantMessage(content=[], stop_reason="stop")),
    )
    ids = ["call_1", "call_1_2", "call_1_2_2", "other"]
    message_end = next(e.message for e in r.of("message_end") if e.message.role == "assistant")
    assert [c.id for c in message_end.tool_calls] == ids
    assert [e.tool_call_id for e in r.of("tool_execution_start")] == ids
    assert sorted(e.tool_call_id for e in r.of("tool_execution_end")) == sorted(ids)
    assert [m.tool_call_id for m in r.result if isinstance(m, ToolResultMessage)] == ids
    assert r.of("turn_end")[0].message.tool_calls == message_end.tool_calls
    assert_one_result_per_call(r)


async def test_unique_ids_leave_a_message_without_duplicates_as_it_is() -> None:
    answer = AssistantMessage(
        content=[
            ToolCall(id="a", name="ping", arguments={}),
            ToolCall(id="b", name="ping", arguments={}),
        ],
        stop_reason="tool_use",
    )
    r = await run(
        "go",
        AgentContext(tools=[ping]),
        AgentLoopConfig(model=usage_model()),
        stream_fn=scripted(answer, AssistantMessage(content=[], stop_reason="stop")),
    )
    assert r.result[1] is answer


# --- the Agent ---------------------------------------------------------------------------------


def test_the_agent_bounds_its_runs_by_default() -> None:
    agent = Agent()
    assert agent.max_turns == 100
    assert (agent.tool_timeout, agent.request_timeout, agent.idle_timeout) == (600.0, 300.0, 300.0)
    assert agent.max_retries == 3 and agent.usage_limits is None
    config = agent._loop_config()
    assert (config.max_turns, config.tool_timeout, config.request_timeout) == (100, 600.0, 300.0)
    assert (config.idle_timeout, config.max_retries) == (300.0, 3)


async def test_the_agent_stops_a_looping_model_at_its_default_max_turns() -> None:
    faux = looping(120)
    agent = Agent(initial_state={"model": faux.model, "tools": [ping]})
    await agent.prompt("go")
    assert faux.call_count == 100
    assert agent.state.limit == LimitReached(kind="max_turns", limit=100, used=100)
    assert agent.state.is_streaming is False


async def test_agent_state_limit_is_set_at_the_end_and_reset_when_a_run_starts() -> None:
    faux = FauxProvider(
        [faux_tool_call("ping"), faux_tool_call("ping"), faux_tool_call("ping"), faux_text("ok")]
    )
    agent = Agent(initial_state={"model": faux.model, "tools": [ping]}, max_turns=2)
    assert agent.state.limit is None
    seen: list[Any] = []
    agent.subscribe(
        lambda event: (
            seen.append((event.type, agent.state.limit))
            if event.type in ("agent_start", "agent_end")
            else None
        )
    )
    added = await agent.prompt("go")
    expected = LimitReached(kind="max_turns", limit=2, used=2)
    assert agent.state.limit == expected
    assert seen == [("agent_start", None), ("agent_end", expected)]
    assert isinstance(added[-1], ToolResultMessage)
    # the transcript ends with tool results: continue_ answers them, with a fresh count
    seen.clear()
    agent.max_turns = 3
    await agent.continue_()
    assert seen == [("agent_start", None), ("agent_end", None)]
    assert agent.state.limit is None
    assert agent.state.messages[-1].text == "ok"


async def test_agent_reset_clears_the_limit() -> None:
    faux = looping()
    agent = Agent(initial_state={"model": faux.model, "tools": [ping]}, max_turns=1)
    await agent.prompt("go")
    assert agent.state.limit is not None
    agent.reset()
    assert agent.state.limit is None


async def test_agent_follow_ups_stay_queued_when_a_limit_ends_the_run() -> None:
    faux = looping()
    agent = Agent(initial_state={"model": faux.model, "tools": [ping]}, max_turns=2)
    agent.follow_up("afterwards")
    agent.steer("meanwhile")
    await agent.prompt("go")
    assert agent.state.limit is not None
    # the steering message was taken before the first request; the follow-up never was
    assert [m.content for m in agent.follow_up_queue] == ["afterwards"]
    assert "afterwards" not in [getattr(m, "content", None) for m in agent.state.messages]


async def test_agent_usage_limits_and_none_turns_a_bound_off() -> None:
    stream_fn, contexts = answering(PER_ANSWER)
    agent = Agent(
        initial_state={"model": usage_model(), "tools": [ping]},
        stream_fn=stream_fn,
        max_turns=None,
        usage_limits=UsageLimits(output_tokens=50),
    )
    await agent.prompt("go")
    assert len(contexts) == 5
    assert agent.state.limit == LimitReached(kind="output_tokens", limit=50, used=50)


def test_agent_state_limit_cannot_be_set_by_the_caller() -> None:
    with pytest.raises(ConfigError, match="limit"):
        Agent(initial_state={"limit": None})


async def test_agent_passes_its_timeouts_to_every_request() -> None:
    faux = FauxProvider([faux_tool_call("ping"), faux_text("done")])
    agent = Agent(
        initial_state={"model": faux.model, "tools": [ping]},
        request_timeout=2.0,
        idle_timeout=None,
        max_retries=1,
    )
    with anyio.fail_after(10):
        await agent.prompt("go")
    assert [
        (c.options.request_timeout, c.options.idle_timeout, c.options.max_retries)
        for c in faux.calls
    ] == [(2.0, None, 1), (2.0, None, 1)]
