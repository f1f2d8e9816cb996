"""G6: the invariants of every run, checked by hypothesis over random scripts.

A script is a random sequence of answers (text, thinking, tool calls, truncated or failed
answers); tools that succeed, raise, report errors, terminate, are slow, hang, stream updates,
flood the run with updates or abort it themselves; hooks that block, raise, rewrite or abort;
steering and follow-up queues; sequential or parallel batches; aborts at random points (after N
events, from the event listener, from a timer, from a tool); and a prompt or a lagging consumer.
Whatever happens:

- the events are well nested (`check_well_formed`), and `result()` is `agent_end.messages`;
- every `tool_execution_start` has one `tool_execution_end`;
- every tool call of an executed batch has exactly one result, in call order, in `turn_end` and
  in the transcript; failed or aborted answers run no tools;
- no tool (nor its `before_tool_call`) starts after the abort, an abort during tools asks the
  model nothing more, and at most one request (which then reports `aborted`) follows any abort;
- every polled steering or follow-up message joins the transcript (none is lost);
- all of this also under a guardrail of each kind and mode that blocks, rewrites or raises;
- the run always completes.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from agentcore import (
    AbortController,
    AfterToolCallResult,
    AgentContext,
    AgentLoopConfig,
    AgentTool,
    AgentToolResult,
    BeforeToolCallResult,
    NextTurn,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolExecutionMode,
    ToolResultMessage,
    UserMessage,
    agent_loop,
    run_agent_loop,
)
from agentcore.guardrails import (
    Block,
    Guardrail,
    InputGuardrailContext,
    OutputGuardrailContext,
    Rewrite,
    ToolCallGuardrailContext,
)
from agentcore.testing import FauxProvider, check_well_formed, faux_message

BEHAVIOURS = ["ok", "raise", "is_error", "terminate", "slow", "update", "abort", "hang", "flood"]
TOOLS = ["act", "act_sync", "seq", "missing"]
FAILING_HOOKS = [
    "convert_to_llm",
    "transform_context",
    "get_api_key",
    "get_steering_messages",
    "get_follow_up_messages",
    "prepare_next_turn",
    "should_stop_after_turn",
]

GUARDS = [
    "input_before",
    "input_alongside",
    "output_before",
    "output_alongside",
    "tool_before",
    "tool_alongside",
    "tool_result",
    "raise",
]
"""Guardrails a script may run under: each blocks some of what it sees (see `build_guards`)."""

SCHEMA = {
    "type": "object",
    "properties": {"behaviour": {"type": "string"}, "n": {"type": "integer"}},
    "required": ["behaviour"],
}


@dataclass(frozen=True)
class CallSpec:
    tool: str
    behaviour: str
    valid: bool


@dataclass(frozen=True)
class AnswerSpec:
    thinking: bool
    text: str
    calls: tuple[CallSpec, ...]
    stop: str


@dataclass(frozen=True)
class Script:
    answers: tuple[AnswerSpec, ...]
    mode: ToolExecutionMode
    max_parallel: int | None
    before: str | None
    after: str | None
    failing_hook: tuple[str, int] | None
    stop_after_turn: int | None
    swap_thinking: bool
    initial_steering: int
    steering_at: tuple[int, ...]
    follow_ups: int
    abort: tuple[str, float] | None
    consumer: str
    sink_raises_at: int | None
    paced: bool
    backend: str
    guards: str | None = None


call_specs = st.builds(
    CallSpec,
    tool=st.sampled_from(TOOLS),
    behaviour=st.sampled_from(BEHAVIOURS),
    valid=st.booleans() | st.just(True),
)
answers = st.builds(
    AnswerSpec,
    thinking=st.booleans(),
    text=st.sampled_from(["", "ok", "a somewhat longer answer that streams in several chunks"]),
    calls=st.integers(0, 3)
    .flatmap(lambda n: st.lists(call_specs, min_size=n, max_size=n))
    .map(tuple),
    stop=st.sampled_from(["stop"] * 12 + ["length", "error", "aborted"]),
)


@st.composite
def scripts(draw: st.DrawFn) -> Script:
    abort = draw(
        st.sampled_from([None, "events", "timer"]).flatmap(
            lambda kind: (
                st.just(None)
                if kind is None
                else st.tuples(st.just("events"), st.integers(1, 80).map(float))
                if kind == "events"
                else st.tuples(st.just("timer"), st.floats(0, 0.03))
            )
        )
    )
    consumer = draw(st.sampled_from(["iterate", "lagging", "emit_sync", "emit_async"]))
    return Script(
        answers=tuple(draw(st.lists(answers, min_size=2, max_size=5))),
        mode=draw(st.sampled_from(list(ToolExecutionMode))),
        max_parallel=draw(st.none() | st.integers(1, 3)),
        before=draw(
            st.sampled_from(
                [None, None, "block_some", "raise_some", "block_terminate", "abort_some"]
            )
        ),
        after=draw(st.sampled_from([None, None, "rewrite", "raise_some", "terminate", "flip"])),
        failing_hook=(
            None
            if (failing := draw(st.sampled_from([None, None, *FAILING_HOOKS]))) is None
            else (failing, draw(st.integers(1, 2)))
        ),
        stop_after_turn=draw(st.none() | st.none() | st.integers(1, 3)),
        swap_thinking=draw(st.booleans()),
        initial_steering=draw(st.integers(0, 1)),
        steering_at=tuple(draw(st.lists(st.integers(1, 40), max_size=2))),
        follow_ups=draw(st.integers(0, 2)),
        abort=abort,
        consumer=consumer,
        sink_raises_at=draw(
            st.sampled_from([None] * 5 + [0]).flatmap(
                lambda x: st.none() if x is None else st.integers(1, 60)
            )
        )
        if consumer.startswith("emit")
        else None,
        paced=draw(st.booleans()),
        backend=draw(st.sampled_from(["asyncio", "asyncio", "trio"])),
        guards=draw(st.sampled_from([None] * 4 + GUARDS)),
    )


@dataclass
class World:
    """Everything one run touches, and what the checks need to know afterwards."""

    script: Script
    controller: AbortController = field(default_factory=AbortController)
    events: list[Any] = field(default_factory=list)
    steering: list[Any] = field(default_factory=list)
    follow_up: list[Any] = field(default_factory=list)
    polled: list[Any] = field(default_factory=list)
    started_aborted: list[str] = field(default_factory=list)
    hook_calls: dict[str, int] = field(default_factory=dict)
    abort_at: tuple[int, int, bool] | None = None  # (events seen, model calls, in tool phase)
    gate: threading.Event = field(default_factory=threading.Event)
    faux: FauxProvider | None = None
    failed_hook: str | None = None

    def tick(self, name: str) -> None:
        n = self.hook_calls[name] = self.hook_calls.get(name, 0) + 1
        failing = self.script.failing_hook
        if failing is not None and failing[0] == name and failing[1] == n:
            self.failed_hook = name
            raise RuntimeError(f"{name} failed on call {n}")

    def on_event(self, event: Any) -> None:
        self.events.append(event)
        n = len(self.events)
        if n in self.script.steering_at:
            self.steering.append(UserMessage(content=f"steer at {n}"))
        abort = self.script.abort
        if abort is not None and abort[0] == "events" and n == int(abort[1]):
            self.controller.abort("after events")

    def record_abort(self, reason: Any) -> None:
        assert self.faux is not None
        events = list(self.events)
        in_tools = False
        for seen in reversed(events):
            if seen.type == "turn_end":
                break
            if seen.type.startswith("tool_execution"):
                in_tools = True
                break
            if seen.type == "message_end" and seen.message.role == "assistant":
                message = seen.message
                in_tools = bool(message.tool_calls) and message.stop_reason not in (
                    "error",
                    "aborted",
                )
                break
        self.abort_at = (len(events), self.faux.call_count, in_tools)


def build_answers(script: Script) -> list[Any]:
    out = []
    for i, spec in enumerate(script.answers):
        blocks: list[Any] = []
        if spec.thinking:
            blocks.append(ThinkingContent(thinking="considering the options"))
        if spec.text:
            blocks.append(TextContent(text=spec.text))
        for j, call in enumerate(spec.calls):
            arguments: dict[str, Any] = {"behaviour": call.behaviour, "n": j}
            if not call.valid:
                arguments["n"] = "not a number"
            blocks.append(ToolCall(id=f"c{i}_{j}", name=call.tool, arguments=arguments))
        out.append(faux_message(*blocks, stop_reason=spec.stop))  # type: ignore[arg-type]
    return out


def build_tools(world: World) -> list[AgentTool]:
    script = world.script
    hang_allowed = script.abort is not None and script.abort[0] == "timer"

    async def act(tool_call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> Any:
        if signal.aborted:
            world.started_aborted.append(tool_call_id)
        behaviour = args["behaviour"]
        if behaviour == "raise":
            raise RuntimeError("tool failed")
        if behaviour == "is_error":
            return AgentToolResult.error("reported failure")
        if behaviour == "terminate":
            return AgentToolResult.text("finished", terminate=True)
        if behaviour == "slow":
            await anyio.sleep(0.001 * (1 + args.get("n", 0)))
        if behaviour == "update":
            on_update(AgentToolResult.text("1/2"))
            await anyio.lowlevel.checkpoint()
            on_update(AgentToolResult.text("2/2"))
        if behaviour == "flood":  # more than the EventStream buffers before it pushes back
            for i in range(1100):
                on_update(AgentToolResult.text(str(i)))
        if behaviour == "abort":
            world.controller.abort("from a tool")
            await anyio.sleep(0.001)
        if behaviour == "hang" and hang_allowed:
            await anyio.sleep_forever()
        return AgentToolResult.text(f"{behaviour} done")

    def act_sync(tool_call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> Any:
        # Not checked for a start after the abort: the loop checks the signal in the worker
        # thread right before calling, but an abort from the event loop's thread can still land
        # between that check and this line (test_G2_sync_tool_dispatched_before_an_abort...).
        behaviour = args["behaviour"]
        if behaviour == "raise":
            raise RuntimeError("sync tool failed")
        if behaviour == "is_error":
            return AgentToolResult.error("reported failure")
        if behaviour == "terminate":
            return AgentToolResult.text("finished", terminate=True)
        if behaviour == "slow":
            time.sleep(0.001)
        if behaviour == "update":
            on_update(AgentToolResult.text("from a thread"))
        if behaviour == "abort":
            world.controller.abort("from a sync tool")
        if behaviour == "hang" and hang_allowed:
            world.gate.wait(2)
        return AgentToolResult.text(f"{behaviour} done")

    return [
        AgentTool(name="act", description="", parameters=SCHEMA, execute=act),
        AgentTool(name="act_sync", description="", parameters=SCHEMA, execute=act_sync),
        AgentTool(
            name="seq",
            description="",
            parameters=SCHEMA,
            execute=act,
            execution_mode=ToolExecutionMode.SEQUENTIAL,
        ),
    ]


def build_guards(kind: str | None) -> list[Guardrail]:
    """One guardrail of `kind` that blocks some of what it sees (or raises on it)."""
    if kind is None:
        return []

    async def check(ctx: Any) -> Any:
        await anyio.lowlevel.checkpoint()
        if kind == "raise":
            raise RuntimeError("guardrail failed")
        if isinstance(ctx, InputGuardrailContext):
            return Block("long") if len(ctx.messages) > 2 else None
        if isinstance(ctx, OutputGuardrailContext):
            return Block("longer") if "longer" in ctx.text or ctx.text == "ok" else None
        if isinstance(ctx, ToolCallGuardrailContext):
            return Block("odd") if ctx.tool_call.id.endswith("1") else None
        return Block("raised") if ctx.result.is_error else Rewrite(ctx.text + "!")

    guard_kind, mode = {
        "input_before": ("input", "before"),
        "input_alongside": ("input", "alongside"),
        "output_before": ("output", "before"),
        "output_alongside": ("output", "alongside"),
        "tool_before": ("tool_call", "before"),
        "tool_alongside": ("tool_call", "alongside"),
        "tool_result": ("tool_result", "before"),
        "raise": ("input", "before"),
    }[kind]
    return [Guardrail(check=check, kind=guard_kind, mode=mode)]  # type: ignore[arg-type]


def build_config(world: World, faux: FauxProvider) -> AgentLoopConfig:
    script = world.script

    def before(ctx: Any) -> BeforeToolCallResult | None:
        if world.controller.signal.aborted:
            world.started_aborted.append(f"before_tool_call {ctx.tool_call.id}")
        if script.before == "block_some" and ctx.tool_call.id.endswith("1"):
            return BeforeToolCallResult(block=True, reason="not allowed")
        if script.before == "raise_some" and ctx.tool_call.id.endswith("0"):
            raise RuntimeError("before hook failed")
        if script.before == "block_terminate":
            return BeforeToolCallResult(block=True, terminate=True)
        if script.before == "abort_some" and ctx.tool_call.id.endswith("1"):
            world.controller.abort("from before_tool_call")
        return None

    async def after(ctx: Any) -> AfterToolCallResult | None:
        if script.after == "rewrite":
            return AfterToolCallResult(content=[TextContent(text="rewritten")], details={"r": 1})
        if script.after == "raise_some" and ctx.tool_call.id.endswith("1"):
            raise RuntimeError("after hook failed")
        if script.after == "terminate":
            return AfterToolCallResult(terminate=True)
        if script.after == "flip":
            return AfterToolCallResult(is_error=not ctx.is_error)
        return None

    def convert(messages: list[Any]) -> list[Any]:
        world.tick("convert_to_llm")
        return [m for m in messages if m.role in ("user", "assistant", "tool_result")]

    async def transform(messages: list[Any], signal: Any) -> list[Any]:
        world.tick("transform_context")
        await anyio.lowlevel.checkpoint()
        return messages

    def get_api_key(provider: str) -> str:
        world.tick("get_api_key")
        return "key"

    def get_steering() -> list[Any]:
        world.tick("get_steering_messages")
        out, world.steering[:] = list(world.steering), []
        world.polled.extend(out)
        return out

    async def get_follow_up() -> list[Any]:
        world.tick("get_follow_up_messages")
        out, world.follow_up[:] = world.follow_up[:1], world.follow_up[1:]
        world.polled.extend(out)
        return out

    def prepare(ctx: Any) -> NextTurn | None:
        world.tick("prepare_next_turn")
        if script.swap_thinking:
            return NextTurn(thinking_level="low" if len(ctx.new_messages) % 2 else "off")
        return None

    def should_stop(ctx: Any) -> bool:
        world.tick("should_stop_after_turn")
        return script.stop_after_turn is not None and (
            world.hook_calls["should_stop_after_turn"] >= script.stop_after_turn
        )

    return AgentLoopConfig(
        model=faux.model,
        tool_execution=script.mode,
        max_parallel_tools=script.max_parallel,
        before_tool_call=before if script.before else None,
        after_tool_call=after if script.after else None,
        convert_to_llm=convert,
        transform_context=transform,
        get_api_key=get_api_key,
        get_steering_messages=get_steering,
        get_follow_up_messages=get_follow_up,
        prepare_next_turn=prepare,
        should_stop_after_turn=should_stop,
        guardrails=build_guards(script.guards),
    )


async def run_script(world: World) -> list[Any]:
    script = world.script
    faux = FauxProvider(
        build_answers(script),
        chunk_chars=(4, 16),
        tokens_per_second=50_000 if script.paced else None,
    )
    world.faux = faux
    world.controller.signal.add_listener(world.record_abort)
    world.steering.extend(UserMessage(content=f"early {i}") for i in range(script.initial_steering))
    world.follow_up.extend(UserMessage(content=f"follow {i}") for i in range(script.follow_ups))
    context = AgentContext(system_prompt="you are tested", tools=build_tools(world))
    config = build_config(world, faux)
    signal = world.controller.signal
    prompts = [UserMessage(content="go")]
    result: list[Any] = []

    async def timer(delay: float) -> None:
        await anyio.sleep(delay)
        world.controller.abort("timer")

    with anyio.fail_after(10):  # the run always completes
        async with anyio.create_task_group() as tg:
            if script.abort is not None and script.abort[0] == "timer":
                tg.start_soon(timer, script.abort[1])
            if script.consumer in ("iterate", "lagging"):
                async with agent_loop(prompts, context, config, signal=signal) as stream:
                    async for event in stream:
                        world.on_event(event)
                        if script.consumer == "lagging" and len(world.events) == 1:
                            await anyio.sleep(0.02)  # the run gets ahead and is pushed back
                    result = await stream.result()
            else:
                sink_calls = 0

                def emit(event: Any) -> None:
                    nonlocal sink_calls
                    world.on_event(event)
                    sink_calls += 1
                    if sink_calls == script.sink_raises_at:
                        raise RuntimeError("sink failed")

                async def emit_async(event: Any) -> None:
                    emit(event)
                    await anyio.lowlevel.checkpoint()

                sink = emit if script.consumer == "emit_sync" else emit_async
                result = await run_agent_loop(prompts, context, config, sink, signal=signal)
            tg.cancel_scope.cancel()  # the timer, if it has not fired
    return result


def check(world: World, result: list[Any]) -> None:
    events = world.events
    check_well_formed(events)
    end = events[-1]
    assert len(result) == len(end.messages)
    assert all(a is b for a, b in zip(result, end.messages, strict=True))

    # one end per start, each tool call processed once
    starts = [e.tool_call_id for e in events if e.type == "tool_execution_start"]
    ends = [e.tool_call_id for e in events if e.type == "tool_execution_end"]
    assert sorted(starts) == sorted(ends)
    assert len(starts) == len(set(starts))

    # every executed batch: one result per call, in call order
    for turn_end in (e for e in events if e.type == "turn_end"):
        message = turn_end.message
        ids = [r.tool_call_id for r in turn_end.tool_results]
        if message.stop_reason in ("error", "aborted"):
            assert ids == []
        else:
            assert ids == [c.id for c in message.tool_calls]
    for i, message in enumerate(result):
        if message.role != "assistant" or message.stop_reason in ("error", "aborted"):
            continue
        calls = message.tool_calls
        following = result[i + 1 : i + 1 + len(calls)]
        assert [m.tool_call_id for m in following if isinstance(m, ToolResultMessage)] == [
            c.id for c in calls
        ]
    assert sum(isinstance(m, ToolResultMessage) for m in result) == len(starts)

    # nothing starts after an abort; an abort during tools asks the model nothing more
    assert world.started_aborted == []
    assert world.faux is not None
    if world.abort_at is not None:
        _, calls_at_abort, in_tools = world.abort_at
        extra = world.faux.call_count - calls_at_abort
        assert extra in (0, 1)
        if extra == 1:
            assert result[-1].role == "assistant" and result[-1].stop_reason == "aborted"
        if in_tools and world.script.consumer.startswith("emit"):
            assert extra == 0

    # queued messages are never lost
    for message in world.polled:
        assert any(m is message for m in result)


@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(script=scripts())
def test_G6_invariants_hold_for_random_scripts(script: Script) -> None:
    world = World(script)
    try:
        result = anyio.run(run_script, world, backend=script.backend)
    finally:
        world.gate.set()
    check(world, result)
    last = result[-1]
    event(f"ended with {last.role} {getattr(last, 'stop_reason', '')}".strip())
    event(f"aborted: {world.abort_at is not None}")
    event(f"failed hook: {world.failed_hook}")
    event(f"failing hook planned: {script.failing_hook is not None}")
    event(f"tool executions: {min(sum(e.type == 'tool_execution_start' for e in world.events), 4)}")
    event(f"model calls: {min(world.faux.call_count if world.faux else 0, 4)}")
    event(f"guardrail: {script.guards} tripped: {world.events[-1].guardrail is not None}")


# --- the checker itself must be able to fail -----------------------------------------------


def _ev(kind: str, **fields: Any) -> Any:
    from types import SimpleNamespace

    return SimpleNamespace(type=kind, **fields)


USER = UserMessage(content="u")


@pytest.mark.parametrize(
    ("events", "message"),
    [
        ([], "no events"),
        ([_ev("turn_start")], "first event"),
        ([_ev("agent_start"), _ev("turn_start"), _ev("turn_end")], "last event"),
        (
            [_ev("agent_start"), _ev("turn_start"), _ev("turn_start"), _ev("agent_end")],
            "turn_start inside a turn",
        ),
        (
            [_ev("agent_start"), _ev("message_start", message=USER), _ev("agent_end")],
            "outside a turn",
        ),
        (
            [
                _ev("agent_start"),
                _ev("turn_start"),
                _ev("message_start", message=USER),
                _ev("turn_end"),
                _ev("agent_end", messages=[]),
            ],
            "inside the open message",
        ),
        (
            [
                _ev("agent_start"),
                _ev("turn_start"),
                _ev("message_start", message=USER),
                _ev("message_update"),
                _ev("message_end", message=USER),
                _ev("turn_end"),
                _ev("agent_end", messages=[USER]),
            ],
            "update of a user",
        ),
        (
            [
                _ev("agent_start"),
                _ev("turn_start"),
                _ev("tool_execution_start", tool_call_id="a"),
                _ev("turn_end"),
                _ev("agent_end", messages=[]),
            ],
            "tools still running",
        ),
        (
            [
                _ev("agent_start"),
                _ev("turn_start"),
                _ev("tool_execution_end", tool_call_id="a"),
                _ev("turn_end"),
                _ev("agent_end", messages=[]),
            ],
            "end without start",
        ),
        (
            [
                _ev("agent_start"),
                _ev("turn_start"),
                _ev("message_start", message=USER),
                _ev("message_end", message=USER),
                _ev("turn_end"),
                _ev("agent_end", messages=[]),
            ],
            "agent_end.messages",
        ),
        (
            [_ev("agent_start"), _ev("turn_start"), _ev("agent_end", messages=[])],
            "inside a turn",
        ),
    ],
)
def test_check_well_formed_rejects_broken_sequences(events: list[Any], message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        check_well_formed(events)
