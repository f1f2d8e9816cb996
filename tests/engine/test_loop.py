"""The loop's conformance scenarios L1-L28 (CONFORMANCE.md), one test (or a few) per line."""

from __future__ import annotations

import asyncio
import gc
import threading
from dataclasses import dataclass, replace
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from agentcore import (
    AfterToolCallContext,
    AfterToolCallResult,
    AgentContext,
    AgentLoopConfig,
    AgentToolResult,
    AssistantMessage,
    BeforeToolCallContext,
    BeforeToolCallResult,
    NextTurn,
    TextContent,
    ToolCall,
    ToolExecutionMode,
    ToolResultMessage,
    Usage,
    UserMessage,
    agent_loop,
    agent_loop_continue,
    default_convert_to_llm,
    run_agent_loop,
    run_agent_loop_continue,
)
from agentcore.llm import DoneEvent, ErrorEvent, MessageBuilder
from agentcore.testing import (
    FauxCall,
    FauxProvider,
    check_well_formed,
    event_types,
    faux_message,
    faux_text,
    faux_tool_call,
)
from support import (
    BACKENDS,
    ONE_TURN_NO_UPDATES,
    Recorder,
    collect,
    echo_tool,
    make_tool,
    replay,
    run,
    texts,
    user,
)

pytestmark = pytest.mark.anyio


def call(name: str, args: dict[str, Any] | None = None, *, id: str | None = None) -> ToolCall:
    return ToolCall(id=id or f"id_{name}", name=name, arguments=args or {})


def calls(*items: ToolCall, stop_reason: Any = "stop") -> AssistantMessage:
    return faux_message(*items, stop_reason=stop_reason)


def result_texts(run_: Any) -> list[str]:
    return [texts(m) for m in run_.result if isinstance(m, ToolResultMessage)]


# --- L1-L4: plain runs, the result, conversion --------------------------------------------------


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_L1_plain_prompt() -> None:
    faux = FauxProvider([faux_text("hello there, this is a longer answer")], chunk_chars=5)
    prompt = user("hi")
    r = await run([prompt], faux=faux)
    assert r.compact() == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_update…",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    assert [m.role for m in r.result] == ["user", "assistant"]
    assert r.result[0] is prompt
    assistant = r.result[1]
    assert assistant.text == "hello there, this is a longer answer"
    assert assistant.stop_reason == "stop"
    # message_start/end carry the message; the updates carry growing snapshots and the raw events
    starts, ends = r.of("message_start"), r.of("message_end")
    assert starts[0].message is prompt and ends[0].message is prompt
    assert ends[1].message is assistant
    updates = r.of("message_update")
    assert len(updates) > 3
    raw = [u.assistant_message_event.type for u in updates]
    assert raw[0] == "text_start" and raw[-1] == "text_end"
    deltas = [
        u.assistant_message_event.delta
        for u in updates
        if u.assistant_message_event.type == "text_delta"
    ]
    assert "".join(deltas) == assistant.text
    # each update's snapshot is the message as it stood then (read long after the run ended)
    so_far = ""
    for u in updates:
        event = u.assistant_message_event
        if event.type == "text_delta":
            so_far += event.delta
        assert u.message.text == so_far
        assert u.message.role == "assistant" and u.message.model == "faux-1"
    turn_end = r.of("turn_end")[0]
    assert turn_end.message is assistant and turn_end.tool_results == []
    assert faux.call_count == 1
    assert faux.calls[0].context.messages == [prompt]


async def test_L2_result_equals_agent_end_and_iterators_still_get_it() -> None:
    faux = FauxProvider([faux_text("ok")])
    stream = agent_loop([user()], AgentContext(), AgentLoopConfig(model=faux.model))
    async with stream:
        result = await stream.result()  # before reading a single event
        events = [e async for e in stream]
    assert events[-1].type == "agent_end"
    assert events[-1].messages == result
    assert events[0].type == "agent_start"
    assert [m.role for m in result] == ["user", "assistant"]
    # run_agent_loop returns the same list as its agent_end
    faux.append_responses(faux_text("ok"))
    seen: list[Any] = []
    returned = await run_agent_loop(
        [user()], AgentContext(), AgentLoopConfig(model=faux.model), seen.append
    )
    assert returned == seen[-1].messages


@dataclass(frozen=True, slots=True, kw_only=True)
class Note:
    """An application-defined message."""

    text: str
    role: str = "note"


async def test_L3_custom_message_filtered_by_convert_to_llm() -> None:
    faux = FauxProvider([faux_text("ok"), faux_text("ok")])
    note = Note(text="for the UI only")
    prompt = user("question")
    received: list[list[Any]] = []

    def convert(messages: list[Any]) -> list[Any]:
        received.append(list(messages))
        return default_convert_to_llm(messages)

    config = AgentLoopConfig(model=faux.model, convert_to_llm=convert)
    r = await run([prompt], AgentContext(messages=[note]), config)
    assert received == [[note, prompt]]
    assert faux.calls[0].context.messages == [prompt]
    assert note not in r.result
    # the default conversion drops it too
    await run([prompt], AgentContext(messages=[note]), AgentLoopConfig(model=faux.model))
    assert faux.calls[1].context.messages == [prompt]


async def test_L4_transform_context_runs_before_convert_to_llm() -> None:
    faux = FauxProvider([faux_text("ok")])
    order: list[str] = []
    pruned = [user("only this")]
    converted_input: list[Any] = []

    async def transform(messages: list[Any], signal: Any) -> list[Any]:
        order.append("transform")
        assert [m.content for m in messages] == ["old", "new"]
        assert not signal.aborted
        return pruned

    def convert(messages: list[Any]) -> list[Any]:
        order.append("convert")
        converted_input.append(messages)
        return list(messages)

    config = AgentLoopConfig(model=faux.model, transform_context=transform, convert_to_llm=convert)
    r = await run([user("new")], AgentContext(messages=[user("old")]), config)
    assert order == ["transform", "convert"]
    assert converted_input == [pruned]
    assert faux.calls[0].context.messages == pruned
    # the transcript itself is not pruned
    assert [texts(m) for m in r.result] == ["new", "ok"]


# --- L5-L8: one tool, truncation, argument handling --------------------------------------------


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_L5_one_tool_call_then_answer() -> None:
    log: list[Any] = []
    faux = FauxProvider([faux_tool_call("echo", {"x": 1}, id="c1"), faux_text("done")])
    r = await run("go", AgentContext(tools=[echo_tool(log=log)]), faux=faux)
    assert r.compact() == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_update…",
        "message_end",
        "tool_execution_start",
        "tool_execution_end",
        "message_start",
        "message_end",
        "turn_end",
        "turn_start",
        "message_start",
        "message_update…",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    u, a1, res, a2 = r.result
    assert (u.role, a1.role, res.role, a2.role) == ("user", "assistant", "tool_result", "assistant")
    assert a1.stop_reason == "tool_use" and a1.tool_calls[0].id == "c1"
    assert res.tool_call_id == "c1" and res.tool_name == "echo" and not res.is_error
    assert texts(res) == "echo:{'x': 1}"
    assert a2.text == "done"
    assert log == [("c1", {"x": 1})]
    first_end, second_end = r.of("turn_end")
    assert first_end.message is a1 and first_end.tool_results == [res]
    assert second_end.message is a2 and second_end.tool_results == []
    start, end = r.of("tool_execution_start")[0], r.of("tool_execution_end")[0]
    assert (start.tool_call_id, start.tool_name, start.args) == ("c1", "echo", {"x": 1})
    assert (end.tool_call_id, end.is_error) == ("c1", False)
    assert end.result.content == res.content
    # the second request carries the tool result
    assert faux.calls[1].context.messages == [u, a1, res]
    assert [t.name for t in faux.calls[0].context.tools] == ["echo"]


async def test_L6_length_truncated_tool_calls_are_not_executed() -> None:
    log: list[Any] = []
    hooks: list[str] = []
    truncated = calls(
        call("echo", {"x": 1}, id="a"), call("echo", {"x": 2}, id="b"), stop_reason="length"
    )
    faux = FauxProvider([truncated, faux_text("retrying")])
    config = AgentLoopConfig(
        model=faux.model,
        before_tool_call=lambda ctx: hooks.append("before"),
        after_tool_call=lambda ctx: hooks.append("after"),
    )
    r = await run("go", AgentContext(tools=[echo_tool(log=log)]), config)
    assert log == [] and hooks == []
    assert r.result[1].stop_reason == "length"
    results = [m for m in r.result if isinstance(m, ToolResultMessage)]
    assert [m.tool_call_id for m in results] == ["a", "b"]
    for m in results:
        assert m.is_error
        assert "output token limit" in texts(m)
        assert "not executed" in texts(m)
    ends = r.of("tool_execution_end")
    assert [e.is_error for e in ends] == [True, True]
    assert faux.call_count == 2  # the model is asked again
    assert r.result[-1].text == "retrying"
    assert r.compact()[7:16] == [
        "tool_execution_start",
        "tool_execution_end",
        "message_start",
        "message_end",
        "tool_execution_start",
        "tool_execution_end",
        "message_start",
        "message_end",
        "turn_end",
    ]


async def test_L7_before_tool_call_mutation_reaches_execute_unvalidated() -> None:
    received: list[Any] = []

    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        received.append(dict(args))
        return AgentToolResult.text("ok")

    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
    }
    tool = make_tool("count", execute, schema)

    def before(ctx: BeforeToolCallContext) -> None:
        assert ctx.args == {"n": 5}  # validated and coerced
        ctx.args["n"] = "not a number"  # breaks the schema: must not be re-validated
        ctx.args["extra"] = True

    faux = FauxProvider([faux_tool_call("count", {"n": "5"}), faux_text("done")])
    config = AgentLoopConfig(model=faux.model, before_tool_call=before)
    r = await run("go", AgentContext(tools=[tool]), config)
    assert received == [{"n": "not a number", "extra": True}]
    assert result_texts(r) == ["ok"]
    # the model's own call is untouched
    assert r.result[1].tool_calls[0].arguments == {"n": "5"}


async def test_L8_prepare_arguments_adapts_old_arguments() -> None:
    received: list[Any] = []

    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        received.append(args)
        return AgentToolResult.text("ok")

    schema = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "line": {"type": "integer"}},
        "required": ["path"],
        "additionalProperties": False,
    }

    def prepare(raw: dict[str, Any]) -> dict[str, Any] | None:
        if "file" in raw:  # the old name of the argument
            return {"path": raw["file"], **{k: v for k, v in raw.items() if k != "file"}}
        return None

    tool = make_tool("read", execute, schema, prepare_arguments=prepare)
    faux = FauxProvider(
        [
            calls(
                call("read", {"file": "a.txt", "line": "3"}, id="old"),
                call("read", {"path": "b.txt"}, id="new"),
            ),
            faux_text("done"),
        ]
    )
    r = await run("go", AgentContext(tools=[tool]), faux=faux)
    assert sorted(received, key=lambda a: a["path"]) == [
        {"path": "a.txt", "line": 3},  # renamed, then validated and coerced
        {"path": "b.txt"},
    ]
    assert all(not m.is_error for m in r.result if isinstance(m, ToolResultMessage))


# --- L9-L11: batches ---------------------------------------------------------------------------


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_L9_parallel_ordering() -> None:
    fast_done = anyio.Event()

    async def slow(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        await fast_done.wait()  # would hang forever if the batch ran sequentially
        await anyio.sleep(0.01)
        return AgentToolResult.text("slow result")

    async def fast(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        fast_done.set()
        return AgentToolResult.text("fast result")

    tools = [make_tool("slow", slow), make_tool("fast", fast)]
    faux = FauxProvider([calls(call("slow", id="s"), call("fast", id="f")), faux_text("done")])
    with anyio.fail_after(5):
        r = await run("go", AgentContext(tools=tools), faux=faux)
    tool_part = [
        (e.type, getattr(e, "tool_call_id", None) or getattr(e.message, "tool_call_id", None))
        for e in r.events
        if e.type.startswith("tool_execution")
        or (e.type.startswith("message_") and getattr(e.message, "role", "") == "tool_result")
    ]
    assert tool_part == [
        ("tool_execution_start", "s"),
        ("tool_execution_start", "f"),
        ("tool_execution_end", "f"),  # completion order
        ("tool_execution_end", "s"),
        ("message_start", "s"),  # call order
        ("message_end", "s"),
        ("message_start", "f"),
        ("message_end", "f"),
    ]
    turn_end = r.of("turn_end")[0]
    assert [m.tool_call_id for m in turn_end.tool_results] == ["s", "f"]
    assert [m.role for m in r.result] == [
        "user",
        "assistant",
        "tool_result",
        "tool_result",
        "assistant",
    ]
    assert [m.tool_call_id for m in r.result[2:4]] == ["s", "f"]
    assert result_texts(r) == ["slow result", "fast result"]


async def test_L10_steering_during_sequential_batch_skips_nothing() -> None:
    steering: list[Any] = []
    log: list[str] = []
    steer = user("change of plan")

    async def first(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        log.append("first")
        steering.append(steer)  # arrives while the batch runs
        await anyio.lowlevel.checkpoint()
        return AgentToolResult.text("1")

    async def second(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        log.append("second")
        return AgentToolResult.text("2")

    def get_steering() -> list[Any]:
        out = list(steering)
        steering.clear()
        return out

    faux = FauxProvider([calls(call("first", id="1"), call("second", id="2")), faux_text("ok")])
    config = AgentLoopConfig(
        model=faux.model,
        tool_execution=ToolExecutionMode.SEQUENTIAL,
        get_steering_messages=get_steering,
    )
    tools = [make_tool("first", first), make_tool("second", second)]
    r = await run("go", AgentContext(tools=tools), config)
    assert log == ["first", "second"]
    assert result_texts(r) == ["1", "2"]
    assert all(not m.is_error for m in r.result if isinstance(m, ToolResultMessage))
    types = r.compact()
    i = types.index("turn_end")
    assert types[i : i + 5] == [
        "turn_end",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
    ]
    injected = r.events[r.types.index("turn_end") + 2]
    assert injected.message is steer
    roles = [m.role for m in faux.calls[1].context.messages]
    assert roles == ["user", "assistant", "tool_result", "tool_result", "user"]
    assert faux.calls[1].context.messages[-1] is steer
    assert r.result[-2] is steer


def _overlap_tools(log: list[tuple[str, str]], mode: ToolExecutionMode | None) -> list[Any]:
    def make(name: str) -> Any:
        async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
            log.append(("start", name))
            await anyio.sleep(0.02)
            log.append(("end", name))
            return AgentToolResult.text(name)

        return make_tool(name, execute, execution_mode=mode if name == "b" else None)

    return [make("a"), make("b"), make("c")]


def _max_active(log: list[tuple[str, str]]) -> int:
    active = peak = 0
    for kind, _ in log:
        active += 1 if kind == "start" else -1
        peak = max(peak, active)
    return peak


async def test_L11_sequential_tool_makes_the_batch_sequential() -> None:
    log: list[tuple[str, str]] = []
    tools = _overlap_tools(log, ToolExecutionMode.SEQUENTIAL)
    faux = FauxProvider(
        [calls(call("a", id="a"), call("b", id="b"), call("c", id="c")), faux_text("ok")]
    )
    config = AgentLoopConfig(model=faux.model, tool_execution=ToolExecutionMode.PARALLEL)
    r = await run("go", AgentContext(tools=tools), config)
    assert _max_active(log) == 1
    assert log == [
        ("start", "a"),
        ("end", "a"),
        ("start", "b"),
        ("end", "b"),
        ("start", "c"),
        ("end", "c"),
    ]
    # sequential: each call's end and result message before the next call starts
    tool_types = [t for t in r.types if t.startswith("tool_") or t == "message_end"][2:]
    assert tool_types[:3] == ["tool_execution_start", "tool_execution_end", "message_end"]

    # the same tools, all parallel, overlap
    log.clear()
    tools = _overlap_tools(log, ToolExecutionMode.PARALLEL)
    faux.append_responses(
        calls(call("a", id="a"), call("b", id="b"), call("c", id="c")), faux_text("ok")
    )
    await run("go", AgentContext(tools=tools), config)
    assert _max_active(log) == 3

    # a parallel tool cannot force parallelism when the config says sequential
    log.clear()
    faux.append_responses(
        calls(call("a", id="a"), call("b", id="b"), call("c", id="c")), faux_text("ok")
    )
    sequential = replace(config, tool_execution=ToolExecutionMode.SEQUENTIAL)
    await run("go", AgentContext(tools=tools), sequential)
    assert _max_active(log) == 1


async def test_parallel_tools_bounded_by_max_parallel_tools() -> None:
    log: list[tuple[str, str]] = []

    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        log.append(("start", tool_call_id))
        await anyio.sleep(0.01)
        log.append(("end", tool_call_id))
        return AgentToolResult.text(tool_call_id)

    tool = make_tool("t", execute)
    batch = calls(*(call("t", id=f"c{i}") for i in range(6)))
    faux = FauxProvider([batch, faux_text("ok")])
    config = AgentLoopConfig(model=faux.model, max_parallel_tools=2)
    r = await run("go", AgentContext(tools=[tool]), config)
    assert _max_active(log) == 2
    assert result_texts(r) == [f"c{i}" for i in range(6)]


# --- L12-L14: between turns -------------------------------------------------------------------


async def test_L12_prepare_next_turn_swaps_context_model_and_thinking() -> None:
    faux = FauxProvider(
        [
            faux_tool_call("echo", {}),
            faux_tool_call("echo", {}),
            faux_tool_call("echo", {}),
            faux_text("ok"),
        ]
    )
    other = replace(faux.model, id="faux-other")
    extra = echo_tool("extra")
    turns: list[Any] = []

    def prepare(ctx: Any) -> NextTurn | None:
        turns.append(ctx)
        n = len(turns)
        if n == 1:
            new_context = AgentContext(
                system_prompt="new system prompt",
                messages=ctx.context.messages,
                tools=[*ctx.context.tools, extra],
            )
            return NextTurn(context=new_context, thinking_level="off")
        if n == 2:
            return NextTurn(model=other, thinking_level="low")
        return None

    config = AgentLoopConfig(model=faux.model, reasoning="high", prepare_next_turn=prepare)
    context = AgentContext(system_prompt="old system prompt", tools=[echo_tool()])
    r = await run("go", context, config)
    first, second, third, fourth = faux.calls
    assert first.context.system_prompt == "old system prompt"
    assert first.options.reasoning == "high"  # type: ignore[attr-defined]
    assert first.model.id == "faux-1"
    assert second.context.system_prompt == "new system prompt"
    assert [t.name for t in second.context.tools] == ["echo", "extra"]
    assert second.options.reasoning is None  # type: ignore[attr-defined]  # "off": no reasoning
    assert second.model.id == "faux-1"
    assert third.model.id == "faux-other"
    assert third.options.reasoning == "low"  # type: ignore[attr-defined]
    assert third.context.system_prompt == "new system prompt"
    assert fourth.model.id == "faux-other"
    # the hook sees the turn it follows
    assert turns[0].message is r.result[1]
    assert turns[0].tool_results == [r.result[2]]
    assert turns[0].new_messages == r.result[:3]
    assert len(turns) == 4


async def test_L13_should_stop_after_turn() -> None:
    log: list[Any] = []
    polls = {"steering": 0, "follow_up": 0}

    def steering() -> list[Any]:
        polls["steering"] += 1
        return []

    def follow_up() -> list[Any]:
        polls["follow_up"] += 1
        return [user("more")]

    faux = FauxProvider([faux_tool_call("echo", {"x": 1}), faux_text("never asked")])
    config = AgentLoopConfig(
        model=faux.model,
        should_stop_after_turn=lambda ctx: True,
        get_steering_messages=steering,
        get_follow_up_messages=follow_up,
    )
    r = await run("go", AgentContext(tools=[echo_tool(log=log)]), config)
    assert r.compact() == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_update…",
        "message_end",
        "tool_execution_start",
        "tool_execution_end",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    assert faux.call_count == 1 and faux.pending == 1
    assert len(log) == 1
    assert polls == {"steering": 1, "follow_up": 0}  # only the initial steering poll


async def test_L13_should_stop_after_turn_false_goes_on() -> None:
    seen: list[Any] = []

    async def stop(ctx: Any) -> bool:
        seen.append(ctx.message)
        return False

    faux = FauxProvider([faux_tool_call("echo"), faux_text("done")])
    config = AgentLoopConfig(model=faux.model, should_stop_after_turn=stop)
    r = await run("go", AgentContext(tools=[echo_tool()]), config)
    assert faux.call_count == 2
    assert seen == [r.result[1], r.result[3]]


def _terminating(name: str, terminate: bool) -> Any:
    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult.text(name, terminate=terminate)

    return make_tool(name, execute)


async def test_L14_every_result_terminates() -> None:
    faux = FauxProvider([faux_tool_call("stop"), faux_text("never asked")])
    r = await run("go", AgentContext(tools=[_terminating("stop", True)]), faux=faux)
    assert faux.call_count == 1 and faux.pending == 1
    assert [m.role for m in r.result] == ["user", "assistant", "tool_result"]
    assert r.types[-2:] == ["turn_end", "agent_end"]

    # two calls, both terminating
    faux.set_responses([calls(call("stop", id="x"), call("stop", id="y")), faux_text("never")])
    await run("go", AgentContext(tools=[_terminating("stop", True)]), faux=faux)
    assert faux.call_count == 2 and faux.pending == 1


async def test_L14_mixed_terminate_continues() -> None:
    faux = FauxProvider([calls(call("stop", id="x"), call("go_on", id="y")), faux_text("answered")])
    tools = [_terminating("stop", True), _terminating("go_on", False)]
    r = await run("go", AgentContext(tools=tools), faux=faux)
    assert faux.call_count == 2
    assert r.result[-1].text == "answered"


async def test_L14_error_result_vetoes_terminate() -> None:
    # a not-found call carries no terminate flag, so the batch is not terminating
    faux = FauxProvider(
        [calls(call("stop", id="x"), call("missing", id="y")), faux_text("answered")]
    )
    await run("go", AgentContext(tools=[_terminating("stop", True)]), faux=faux)
    assert faux.call_count == 2


async def test_L14_after_tool_call_terminate_stops() -> None:
    faux = FauxProvider([faux_tool_call("go_on"), faux_text("never asked")])
    config = AgentLoopConfig(
        model=faux.model, after_tool_call=lambda ctx: AfterToolCallResult(terminate=True)
    )
    r = await run("go", AgentContext(tools=[_terminating("go_on", False)]), config)
    assert faux.call_count == 1
    assert r.result[-1].role == "tool_result"

    # and after_tool_call can veto a tool's own terminate
    faux.set_responses([faux_tool_call("stop"), faux_text("answered")])
    config = AgentLoopConfig(
        model=faux.model, after_tool_call=lambda ctx: AfterToolCallResult(terminate=False)
    )
    await run("go", AgentContext(tools=[_terminating("stop", True)]), config)
    assert faux.call_count == 3


async def test_L14_blocked_call_with_terminate_stops() -> None:
    executed: list[str] = []

    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        executed.append(tool_call_id)
        return AgentToolResult.text("ran")

    faux = FauxProvider([faux_tool_call("rm", id="c"), faux_text("never asked")])
    config = AgentLoopConfig(
        model=faux.model,
        before_tool_call=lambda ctx: BeforeToolCallResult(
            block=True, reason="denied", terminate=True
        ),
    )
    r = await run("go", AgentContext(tools=[make_tool("rm", execute)]), config)
    assert executed == []
    assert faux.call_count == 1
    res = r.result[-1]
    assert res.is_error and texts(res) == "denied"


async def test_L14_terminated_batch_still_runs_queued_follow_up() -> None:
    queue = [user("one more thing")]
    faux = FauxProvider([faux_tool_call("stop"), faux_text("answered")])
    config = AgentLoopConfig(
        model=faux.model, get_follow_up_messages=lambda: [queue.pop()] if queue else []
    )
    r = await run("go", AgentContext(tools=[_terminating("stop", True)]), config)
    assert faux.call_count == 2
    assert [m.role for m in r.result] == ["user", "assistant", "tool_result", "user", "assistant"]


# --- L15-L16: continue ---------------------------------------------------------------------


async def test_L15_continue_rejects_empty_and_assistant_tail() -> None:
    faux = FauxProvider([faux_text("x")])
    config = AgentLoopConfig(model=faux.model)
    with pytest.raises(ValueError, match="no messages"):
        agent_loop_continue(AgentContext(), config)
    tail = AgentContext(messages=[user(), AssistantMessage(content=[TextContent(text="hi")])])
    with pytest.raises(ValueError, match="assistant"):
        agent_loop_continue(tail, config)
    with pytest.raises(ValueError):
        await run_agent_loop_continue(AgentContext(), config, lambda e: None)
    with pytest.raises(ValueError):
        await run_agent_loop_continue(tail, config, lambda e: None)
    assert faux.call_count == 0


async def test_L15_continue_from_user_message() -> None:
    faux = FauxProvider([faux_text("answer")])
    prompt = user("earlier")
    stream = agent_loop_continue(AgentContext(messages=[prompt]), AgentLoopConfig(model=faux.model))
    r = await collect(stream)
    assert r.compact() == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_update…",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    assert [m.role for m in r.result] == ["assistant"]
    assert r.result[0].text == "answer"
    assert faux.calls[0].context.messages == [prompt]

    # run_agent_loop_continue likewise
    faux.append_responses(faux_text("again"))
    seen: list[Any] = []
    out = await run_agent_loop_continue(
        AgentContext(messages=[prompt]), AgentLoopConfig(model=faux.model), seen.append
    )
    assert [m.text for m in out] == ["again"]
    assert "message_start" in event_types(seen) and seen[2].message.role == "assistant"


async def test_L16_custom_tail_converted_to_user_is_accepted_by_continue() -> None:
    faux = FauxProvider([faux_text("seen it")])
    note = Note(text="a file changed")

    def convert(messages: list[Any]) -> list[Any]:
        return [UserMessage(content=m.text) if isinstance(m, Note) else m for m in messages]

    config = AgentLoopConfig(model=faux.model, convert_to_llm=convert)
    context = AgentContext(
        messages=[user("hi"), AssistantMessage(content=[TextContent(text="hello")]), note]
    )
    r = await collect(agent_loop_continue(context, config))
    assert [m.role for m in r.result] == ["assistant"]
    sent = faux.calls[0].context.messages
    assert [m.role for m in sent] == ["user", "assistant", "user"]
    assert sent[-1].content == "a file changed"


# --- L17-L22: the tool pipeline ----------------------------------------------------------------


async def test_L17_tool_not_found() -> None:
    hooks: list[str] = []
    faux = FauxProvider([faux_tool_call("nope", {"a": 1}, id="c"), faux_text("sorry")])
    config = AgentLoopConfig(
        model=faux.model,
        before_tool_call=lambda ctx: hooks.append("before"),
        after_tool_call=lambda ctx: hooks.append("after"),
    )
    r = await run("go", AgentContext(tools=[echo_tool()]), config)
    assert hooks == []
    res = r.result[2]
    assert res.is_error and texts(res) == "Tool nope not found"
    end = r.of("tool_execution_end")[0]
    assert end.is_error and end.tool_name == "nope"
    assert faux.call_count == 2 and r.result[-1].text == "sorry"


SCHEMA = {
    "type": "object",
    "properties": {
        "count": {"type": "integer"},
        "flag": {"type": "boolean"},
        "name": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "integer"}},
    },
    "required": ["count", "name"],
}


async def test_L18_validation_failure_names_each_path() -> None:
    executed: list[Any] = []

    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        executed.append(args)
        return AgentToolResult.text("ok")

    faux = FauxProvider(
        [
            faux_tool_call("t", {"count": "many", "flag": "perhaps", "tags": [1, "x"]}),
            faux_text("fixed"),
        ]
    )
    r = await run("go", AgentContext(tools=[make_tool("t", execute, SCHEMA)]), faux=faux)
    assert executed == []
    res = r.result[2]
    assert res.is_error
    text = texts(res)
    assert 'Validation failed for tool "t"' in text
    for path in ("count", "flag", "name", "tags[1]"):
        assert f"  - {path}: " in text, path
    assert "required property is missing" in text
    # the received arguments are shown, as the model sent them
    assert "Received arguments:" in text
    assert '"count": "many"' in text and '"flag": "perhaps"' in text
    assert faux.call_count == 2


async def test_L18_scalar_coercion() -> None:
    executed: list[Any] = []

    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        executed.append(args)
        return AgentToolResult.text("ok")

    raw = {"count": "5", "flag": "true", "name": "x", "tags": ["1", 2]}
    faux = FauxProvider([faux_tool_call("t", raw), faux_text("done")])
    r = await run("go", AgentContext(tools=[make_tool("t", execute, SCHEMA)]), faux=faux)
    assert executed == [{"count": 5, "flag": True, "name": "x", "tags": [1, 2]}]
    assert type(executed[0]["count"]) is int and executed[0]["flag"] is True
    assert not r.result[2].is_error
    # coerced on a copy: the transcript keeps what the model sent
    assert r.result[1].tool_calls[0].arguments == raw
    assert r.of("tool_execution_start")[0].args == raw


async def test_L19_before_tool_call_blocks() -> None:
    executed: list[str] = []
    after: list[str] = []

    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        executed.append(tool_call_id)
        return AgentToolResult.text("ran")

    def before(ctx: BeforeToolCallContext) -> BeforeToolCallResult | None:
        assert isinstance(ctx.assistant_message, AssistantMessage)
        assert ctx.tool_call.name == "t"
        assert ctx.context.messages[-1] is ctx.assistant_message
        if ctx.tool_call.id == "reason":
            return BeforeToolCallResult(block=True, reason="not in this directory")
        if ctx.tool_call.id == "plain":
            return BeforeToolCallResult(block=True)
        return None

    faux = FauxProvider(
        [
            calls(call("t", id="reason"), call("t", id="plain"), call("t", id="allowed")),
            faux_text("ok"),
        ]
    )
    config = AgentLoopConfig(
        model=faux.model,
        before_tool_call=before,
        after_tool_call=lambda ctx: after.append(ctx.tool_call.id),
    )
    r = await run("go", AgentContext(tools=[make_tool("t", execute)]), config)
    assert executed == ["allowed"]
    assert after == ["allowed"]
    reason, plain, allowed = r.result[2:5]
    assert reason.is_error and texts(reason) == "not in this directory"
    assert plain.is_error and texts(plain) == "Tool execution was blocked."
    assert not allowed.is_error and texts(allowed) == "ran"
    assert faux.call_count == 2


async def test_L19_raising_before_tool_call_gives_error_result() -> None:
    executed: list[str] = []

    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        executed.append(tool_call_id)
        return AgentToolResult.text("ran")

    async def before(ctx: Any, signal: Any) -> None:
        raise RuntimeError("policy engine down")

    faux = FauxProvider([faux_tool_call("t"), faux_text("ok")])
    config = AgentLoopConfig(model=faux.model, before_tool_call=before)
    r = await run("go", AgentContext(tools=[make_tool("t", execute)]), config)
    assert executed == []
    assert r.result[2].is_error and texts(r.result[2]) == "policy engine down"
    assert faux.call_count == 2


USAGE = Usage(input=3, output=4)


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        (
            AfterToolCallResult(content=[TextContent(text="rewritten")]),
            ("rewritten", {"k": 1}, False, None),
        ),
        (AfterToolCallResult(details={"k": 2}), ("orig", {"k": 2}, False, None)),
        (AfterToolCallResult(is_error=True), ("orig", {"k": 1}, True, None)),
        (AfterToolCallResult(usage=USAGE), ("orig", {"k": 1}, False, USAGE)),
        (None, ("orig", {"k": 1}, False, None)),
        (AfterToolCallResult(), ("orig", {"k": 1}, False, None)),
    ],
)
async def test_L20_after_tool_call_replaces_each_field(
    override: Any, expected: tuple[Any, ...]
) -> None:
    seen: list[AfterToolCallContext] = []

    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult.text("orig", details={"k": 1})

    def after(ctx: AfterToolCallContext) -> Any:
        seen.append(ctx)
        return override

    faux = FauxProvider([faux_tool_call("t", {"a": 1}), faux_text("ok")])
    config = AgentLoopConfig(model=faux.model, after_tool_call=after)
    r = await run("go", AgentContext(tools=[make_tool("t", execute)]), config)
    res = r.result[2]
    assert (texts(res), res.details, res.is_error, res.usage) == expected
    end = r.of("tool_execution_end")[0]
    assert end.is_error == expected[2] and end.result.details == expected[1]
    assert seen[0].args == {"a": 1} and seen[0].result.details == {"k": 1} and not seen[0].is_error
    assert faux.call_count == 2


async def test_L20_after_tool_call_can_turn_an_error_into_success() -> None:
    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        raise RuntimeError("flaky")

    faux = FauxProvider([faux_tool_call("t"), faux_text("ok")])
    config = AgentLoopConfig(
        model=faux.model,
        after_tool_call=lambda ctx: AfterToolCallResult(
            content=[TextContent(text="recovered")], is_error=False
        ),
    )
    r = await run("go", AgentContext(tools=[make_tool("t", execute)]), config)
    assert not r.result[2].is_error and texts(r.result[2]) == "recovered"


async def test_L20_raising_after_tool_call_gives_error_result() -> None:
    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult.text("fine")

    def after(ctx: Any) -> None:
        raise ValueError("audit log full")

    faux = FauxProvider([faux_tool_call("t"), faux_text("ok")])
    config = AgentLoopConfig(model=faux.model, after_tool_call=after)
    r = await run("go", AgentContext(tools=[make_tool("t", execute)]), config)
    assert r.result[2].is_error and texts(r.result[2]) == "audit log full"
    assert r.of("tool_execution_end")[0].is_error
    assert faux.call_count == 2


async def test_L21_raising_tool_and_is_error_result() -> None:
    seen: list[tuple[str, bool, str]] = []

    async def boom(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        raise FileNotFoundError("no such file: a.txt")

    def sync_boom(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        raise KeyError("k")

    async def soft(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult(
            content=[TextContent(text="exit code 1")], is_error=True, details={"code": 1}
        )

    def after(ctx: AfterToolCallContext) -> None:
        seen.append((ctx.tool_call.id, ctx.is_error, texts(ctx.result)))

    faux = FauxProvider(
        [
            calls(call("boom", id="b"), call("sync_boom", id="s"), call("soft", id="f")),
            faux_text("ok"),
        ]
    )
    config = AgentLoopConfig(model=faux.model, after_tool_call=after)
    tools = [make_tool("boom", boom), make_tool("sync_boom", sync_boom), make_tool("soft", soft)]
    r = await run("go", AgentContext(tools=tools), config)
    b, s, f = r.result[2:5]
    assert b.is_error and texts(b) == "no such file: a.txt"
    assert s.is_error and texts(s) == "'k'"
    assert f.is_error and texts(f) == "exit code 1" and f.details == {"code": 1}
    assert sorted(seen) == [
        ("b", True, "no such file: a.txt"),
        ("f", True, "exit code 1"),
        ("s", True, "'k'"),
    ]
    assert [e.is_error for e in r.of("tool_execution_end")] == [True, True, True]
    assert faux.call_count == 2


async def test_L22_on_update_events_before_end_late_updates_dropped() -> None:
    saved: list[Any] = []

    async def progress(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        on_update(AgentToolResult.text("25%"))
        await anyio.lowlevel.checkpoint()
        on_update(AgentToolResult.text("50%"))
        on_update(AgentToolResult.text("75%"))
        saved.append(on_update)
        return AgentToolResult.text("100%")

    def threaded(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        on_update(AgentToolResult.text("from a thread"))
        return AgentToolResult.text("thread done")

    def late(call_: FauxCall) -> AssistantMessage:
        saved[0](AgentToolResult.text("too late"))  # the tool has finished: dropped
        return faux_text("ok")

    faux = FauxProvider([calls(call("progress", id="p"), call("threaded", id="t")), late])
    tools = [make_tool("progress", progress), make_tool("threaded", threaded)]
    r = await run("go", AgentContext(tools=tools), faux=faux)
    updates = r.of("tool_execution_update")
    by_id: dict[str, list[str]] = {}
    for u in updates:
        by_id.setdefault(u.tool_call_id, []).append(texts(u.partial_result))
    assert by_id == {"p": ["25%", "50%", "75%"], "t": ["from a thread"]}
    for tool_id in ("p", "t"):
        positions = [
            i for i, e in enumerate(r.events) if getattr(e, "tool_call_id", None) == tool_id
        ]
        kinds = [r.events[i].type for i in positions]
        assert kinds[0] == "tool_execution_start" and kinds[-1] == "tool_execution_end"
        assert set(kinds[1:-1]) == {"tool_execution_update"}
    assert updates[0].tool_name == "progress" and updates[0].args == {}
    assert faux.call_count == 2
    assert all(texts(u.partial_result) != "too late" for u in updates)


# --- L23-L26: stream terminals, queues ---------------------------------------------------------


@pytest.mark.parametrize("aborted", [False, True])
async def test_L23_error_and_aborted_terminals(aborted: bool) -> None:
    log: list[Any] = []
    reason = "aborted" if aborted else "error"
    failing = faux_message(TextContent(text="partial"), call("echo", {"x": 1}), stop_reason=reason)
    failing = replace(failing, error_message="upstream 500")
    faux = FauxProvider([failing, faux_text("never asked")])
    polls: list[str] = []
    config = AgentLoopConfig(
        model=faux.model,
        get_follow_up_messages=lambda: polls.append("follow") or [],
        after_tool_call=lambda ctx: polls.append("after"),
    )
    r = await run("go", AgentContext(tools=[echo_tool(log=log)]), config)
    assert r.compact() == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_update…",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    assert log == [] and polls == []
    message = r.result[-1]
    assert message.stop_reason == reason and message.error_message == "upstream 500"
    assert message.tool_calls  # kept as it arrived, but not run
    turn_end = r.of("turn_end")[0]
    assert turn_end.message is message and turn_end.tool_results == []
    assert faux.call_count == 1


async def test_L24_stream_without_start_event() -> None:
    final = AssistantMessage(content=[TextContent(text="whole")], stop_reason="stop")
    builder = MessageBuilder(FauxProvider().model)
    index = (text_start := builder.text_start()).content_index
    no_start = [
        text_start,
        builder.text_delta(index, "dropped"),
        builder.text_end(index),
        builder.done("stop"),
    ]
    errored = AssistantMessage(stop_reason="error", error_message="connection refused")
    recorder = Recorder(
        [
            replay([DoneEvent(reason="stop", message=final)]),
        ]
    )
    config = AgentLoopConfig(model=FauxProvider().model)
    r = await run("go", config=config, stream_fn=recorder)
    assert r.types == ONE_TURN_NO_UPDATES
    assert r.events[4].message is final and r.events[5].message is final
    assert r.result[-1] is final

    # updates before a start are dropped
    recorder.script.append(replay(no_start))
    r = await run("go", config=config, stream_fn=recorder)
    assert "message_update" not in r.types
    assert r.result[-1].text == "dropped"

    # a setup failure that goes straight to `error`
    recorder.script.append(replay([ErrorEvent(reason="error", error=errored)]))
    r = await run("go", config=config, stream_fn=recorder)
    assert r.types[4:] == ["message_start", "message_end", "turn_end", "agent_end"]
    assert r.result[-1] is errored


async def test_L25_follow_ups_only_when_the_agent_would_stop() -> None:
    faux = FauxProvider(
        [faux_tool_call("echo"), faux_text("first answer"), faux_text("second answer")]
    )
    queue = [user("and another thing")]
    polled_at: list[int] = []

    def follow_up() -> list[Any]:
        polled_at.append(faux.call_count)
        return [queue.pop()] if queue else []

    config = AgentLoopConfig(model=faux.model, get_follow_up_messages=follow_up)
    r = await run("go", AgentContext(tools=[echo_tool()]), config)
    # not after the tool turn (the tool result needs an answer), only when the agent would stop
    assert polled_at == [2, 3]
    assert [m.role for m in r.result] == [
        "user",
        "assistant",
        "tool_result",
        "assistant",
        "user",
        "assistant",
    ]
    follow = r.result[4]
    i = next(i for i, e in enumerate(r.events) if e.type == "message_start" and e.message is follow)
    assert [e.type for e in r.events[i - 2 : i + 3]] == [
        "turn_end",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
    ]
    assert faux.calls[2].context.messages[-1] is follow


async def test_L26_steering_queued_before_the_run_is_injected_first() -> None:
    steer = user("actually, use French")
    queue = [steer]
    faux = FauxProvider([faux_text("bonjour")])
    config = AgentLoopConfig(
        model=faux.model, get_steering_messages=lambda: [queue.pop()] if queue else []
    )
    prompt = user("say hello")
    r = await run([prompt], config=config)
    assert r.compact() == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_end",
        "message_start",
        "message_update…",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    assert r.events[2].message is prompt and r.events[4].message is steer
    assert faux.calls[0].context.messages == [prompt, steer]
    assert r.result[:2] == [prompt, steer]


async def test_steering_with_follow_up_and_steering_after_turns() -> None:
    """Steering is polled after every turn, before follow-ups are considered."""
    faux = FauxProvider([faux_text("a1"), faux_text("a2"), faux_text("a3")])
    steering = [[], [user("steer")], [], []]
    follow = [[user("follow")], []]
    order: list[str] = []

    def get_steering() -> list[Any]:
        order.append("steering")
        return steering.pop(0) if steering else []

    def get_follow() -> list[Any]:
        order.append("follow")
        return follow.pop(0) if follow else []

    config = AgentLoopConfig(
        model=faux.model, get_steering_messages=get_steering, get_follow_up_messages=get_follow
    )
    r = await run("go", config=config)
    assert [texts(m) for m in r.result] == ["go", "a1", "steer", "a2", "follow", "a3"]
    assert order == ["steering", "steering", "steering", "follow", "steering", "follow"]


# --- L27-L28: sync use, early exit -------------------------------------------------------------


def test_L27_sync_iteration_without_event_loop() -> None:
    with pytest.raises(RuntimeError):
        asyncio.get_running_loop()
    log: list[Any] = []
    threads: list[int] = []

    def sync_tool(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        threads.append(threading.get_ident())
        log.append(args)
        return AgentToolResult.text("ok")

    faux = FauxProvider([faux_tool_call("t", {"x": 1}), faux_text("done")])
    stream = agent_loop(
        [user()], AgentContext(tools=[make_tool("t", sync_tool)]), AgentLoopConfig(model=faux.model)
    )
    events = []
    for event in stream:
        events.append(event)
    result = stream.result_sync()
    assert events[0].type == "agent_start" and events[-1].type == "agent_end"
    assert events[-1].messages == result
    assert [m.role for m in result] == ["user", "assistant", "tool_result", "assistant"]
    assert log == [{"x": 1}]
    assert threads[0] != threading.get_ident()

    # leaving a `with` block early stops the run and joins its thread
    gate = threading.Event()

    def blocking(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        gate.wait(5)
        return AgentToolResult.text("late")

    faux.set_responses([faux_tool_call("b"), faux_text("never")])
    stream = agent_loop(
        [user()], AgentContext(tools=[make_tool("b", blocking)]), AgentLoopConfig(model=faux.model)
    )
    seen = []
    with stream:
        for event in stream:
            seen.append(event.type)
            if event.type == "tool_execution_start":
                break
    gate.set()
    assert seen[-1] == "tool_execution_start"
    assert faux.call_count == 3  # the second answer was never requested
    with pytest.raises(anyio.ClosedResourceError):
        stream.result_sync()


async def test_L28_async_with_early_exit_stops_the_run() -> None:
    started = anyio.Event()
    cancelled: list[bool] = []

    async def forever(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.append(True)

    faux = FauxProvider([faux_tool_call("forever"), faux_text("never asked")])
    before = asyncio.all_tasks()
    stream = agent_loop(
        [user()],
        AgentContext(tools=[make_tool("forever", forever)]),
        AgentLoopConfig(model=faux.model),
    )
    seen: list[str] = []
    with anyio.fail_after(5):
        async with stream:
            async for event in stream:
                seen.append(event.type)
                if event.type == "tool_execution_start":
                    await started.wait()
                    break
    assert cancelled == [True]
    assert asyncio.all_tasks() == before  # no task left running
    assert faux.call_count == 1
    with pytest.raises(anyio.ClosedResourceError):
        await stream.result()


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_L28_early_exit_under_trio() -> None:
    cancelled: list[bool] = []

    async def forever(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.append(True)

    faux = FauxProvider([faux_tool_call("forever"), faux_text("never asked")])
    stream = agent_loop(
        [user()],
        AgentContext(tools=[make_tool("forever", forever)]),
        AgentLoopConfig(model=faux.model),
    )
    with anyio.fail_after(5):
        async with stream:
            async for event in stream:
                if event.type == "tool_execution_start":
                    await anyio.sleep(0.01)
                    break
    assert cancelled == [True]
    assert faux.call_count == 1


# --- emit -------------------------------------------------------------------------------------


async def test_run_agent_loop_awaits_an_async_emit() -> None:
    """The loop awaits `emit`, so a slow consumer slows the run (back-pressure)."""
    faux = FauxProvider([faux_tool_call("echo"), faux_text("done")])
    seen: list[str] = []
    inside: list[bool] = []
    busy = False

    async def emit(event: Any) -> None:
        nonlocal busy
        inside.append(busy)
        busy = True
        await anyio.lowlevel.checkpoint()
        seen.append(event.type)
        busy = False

    out = await run_agent_loop(
        [user()], AgentContext(tools=[echo_tool()]), AgentLoopConfig(model=faux.model), emit
    )
    assert not any(inside)  # never re-entered
    assert seen[0] == "agent_start" and seen[-1] == "agent_end"
    assert [m.role for m in out] == ["user", "assistant", "tool_result", "assistant"]


async def test_a_sync_emit_may_return_a_value() -> None:
    """Only an awaitable result of `emit` is awaited; whatever else it returns is ignored."""
    faux = FauxProvider([faux_tool_call("echo"), faux_text("done")])
    seen: list[str] = []

    def emit(event: Any) -> bool:
        seen.append(event.type)
        return True  # e.g. "handled"

    out = await run_agent_loop(
        [user()], AgentContext(tools=[echo_tool()]), AgentLoopConfig(model=faux.model), emit
    )
    assert out[-1].stop_reason == "stop" and out[-1].text == "done"
    assert seen[-1] == "agent_end" and "message_update" in seen


def _chatty_batch() -> tuple[list[Any], AssistantMessage]:
    async def chatty(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        for i in range(1500):
            on_update(AgentToolResult.text(str(i)))
        return AgentToolResult.text("chatty done")

    async def quiet(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        await anyio.sleep(0.02)
        return AgentToolResult.text("quiet done")

    tools = [make_tool("chatty", chatty), make_tool("quiet", quiet)]
    return tools, calls(call("chatty", id="a"), call("quiet", id="b"))


async def test_slow_consumer_and_parallel_tools_do_not_deadlock() -> None:
    """A tool floods updates while a sibling ends and the consumer lags behind: the run's
    tasks wait for the consumer together and all go on when it catches up."""
    tools, batch = _chatty_batch()
    faux = FauxProvider([batch, faux_text("done")])
    stream = agent_loop([user()], AgentContext(tools=tools), AgentLoopConfig(model=faux.model))
    events: list[Any] = []
    with anyio.fail_after(10):
        async with stream:
            async for event in stream:
                events.append(event)
                if len(events) == 1:
                    await anyio.sleep(0.1)  # the run gets far ahead meanwhile
            result = await stream.result()
    check_well_formed(events)
    roles = [m.role for m in result]
    assert roles == ["user", "assistant", "tool_result", "tool_result", "assistant"]
    assert sum(e.type == "tool_execution_update" for e in events) == 1500


async def test_leaving_while_the_run_waits_for_the_consumer_is_clean() -> None:
    tools, batch = _chatty_batch()
    faux = FauxProvider([batch, faux_text("done")])
    stream = agent_loop([user()], AgentContext(tools=tools), AgentLoopConfig(model=faux.model))
    with anyio.fail_after(5):
        async with stream:
            async for _ in stream:
                await anyio.sleep(0.1)  # the run fills the buffer and waits for us
                break
    gc.collect()  # a coroutine left un-awaited would warn here (an error under pytest)
