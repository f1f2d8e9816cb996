"""The edges around a tool's execution: invalid arguments, returned values, cancellation that
nobody asked for, timeouts, and updates that arrive as a run is torn down."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime
import decimal
import enum
import gc
import json
import logging
import math
import pathlib
import threading
import uuid
from collections import deque
from typing import Any

import anyio
import anyio.lowlevel
import pydantic
import pytest

from agentcore import (
    AbortController,
    AfterToolCallContext,
    AfterToolCallResult,
    AgentContext,
    AgentLoopConfig,
    AgentTool,
    AgentToolResult,
    AssistantMessage,
    ImageContent,
    TextContent,
    ToolCall,
    ToolExecutionMode,
    ToolResultMessage,
    Usage,
    UserMessage,
    agent_loop,
    run_agent_loop,
    tool,
)
from agentcore.llm import AssistantMessageEventStream
from agentcore.llm.events import DoneEvent
from agentcore.messages import from_json, to_json
from agentcore.testing import FauxProvider, faux_message, faux_text
from support import BACKENDS, Recorder, make_tool, run, texts

pytestmark = pytest.mark.anyio

PARALLEL = ToolExecutionMode.PARALLEL
SEQUENTIAL = ToolExecutionMode.SEQUENTIAL


def answer(*calls: ToolCall) -> Any:
    """A script step: an assistant message with these tool calls, built by hand (so a call can
    carry `invalid_arguments`, as the builder sets it)."""
    message = AssistantMessage(content=list(calls), stop_reason="tool_use")
    return lambda context, options: AssistantMessageEventStream.from_events(
        [DoneEvent(reason="tool_use", message=message)]
    )


def text_answer(text: str = "done") -> Any:
    message = AssistantMessage(content=[TextContent(text=text)], stop_reason="stop")
    return lambda context, options: AssistantMessageEventStream.from_events(
        [DoneEvent(reason="stop", message=message)]
    )


def results_of(r: Any) -> dict[str, ToolResultMessage]:
    return {m.tool_call_id: m for m in r.result if isinstance(m, ToolResultMessage)}


def storable(message: ToolResultMessage) -> None:
    """The message can be saved as strict JSON and loads back equal."""
    text = json.dumps(to_json(message), allow_nan=False)
    assert from_json(json.loads(text)) == message


# --- 1. invalid arguments never execute ---------------------------------------------------------


async def test_invalid_arguments_never_execute() -> None:
    touched: list[str] = []

    def prepare(raw: Any) -> Any:
        touched.append("prepare_arguments")

    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        touched.append(f"execute {args}")
        return AgentToolResult.text("ran")

    schema = {"type": "object", "properties": {"to": {"type": "string"}}, "required": ["to"]}
    pay = make_tool("pay", execute, schema, prepare_arguments=prepare)
    long_text = '{"to": "12345", "memo": "' + "x" * 5000
    calls = [
        ToolCall(id="cut", name="pay", invalid_arguments=long_text),
        ToolCall(id="garbage", name="pay", invalid_arguments='{"a":1,"b":23 oops'),
        ToolCall(id="two", name="pay", invalid_arguments='{"to": "1"}{"to": "2"}'),
        ToolCall(id="array", name="pay", invalid_arguments="[1, 2]"),
        ToolCall(id="unknown", name="nope", invalid_arguments="{"),
        ToolCall(id="fine", name="pay", arguments={"to": "42"}),
    ]

    def hook(ctx: Any) -> None:
        touched.append(f"{type(ctx).__name__} {ctx.tool_call.id}")

    recorder = Recorder([answer(*calls), text_answer()])
    config = AgentLoopConfig(
        model=FauxProvider().model, before_tool_call=hook, after_tool_call=hook
    )
    r = await run("go", AgentContext(tools=[pay]), config, stream_fn=recorder)

    # only the valid call went through the pipeline
    assert touched == [
        "prepare_arguments",
        "BeforeToolCallContext fine",
        "execute {'to': '42'}",
        "AfterToolCallContext fine",
    ]
    results = results_of(r)
    assert list(results) == ["cut", "garbage", "two", "array", "unknown", "fine"]
    assert texts(results["fine"]) == "ran" and not results["fine"].is_error
    assert texts(results["garbage"]) == (
        "Tool call was not executed: the arguments for pay were not valid JSON (expecting ',' "
        "delimiter at line 1 column 15). Send the call again with its arguments as one complete "
        'JSON object. Received:\n{"a":1,"b":23 oops'
    )
    assert "(extra data after the object at line 1 column 12)" in texts(results["two"])
    assert "(expected an object, got an array)" in texts(results["array"])
    assert "arguments for nope were not valid JSON" in texts(results["unknown"])
    cut = texts(results["cut"])
    assert "(unterminated string starting at line 1 column 25 (the text ends" in cut
    assert cut.endswith(f"Received:\n{long_text[:2000]}… {len(long_text) - 2000} more characters")
    assert all(results[i].is_error for i in ["cut", "garbage", "two", "array", "unknown"])
    # start, then at once the end; one pair per call, and the run goes on
    starts = [e.tool_call_id for e in r.of("tool_execution_start")]
    ends = [(e.tool_call_id, e.is_error) for e in r.of("tool_execution_end")]
    assert starts == [c.id for c in calls]
    assert ends[:5] == [(c.id, True) for c in calls[:5]] and ends[5] == ("fine", False)
    assert len(recorder.contexts) == 2


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_invalid_arguments_in_sequential_mode() -> None:
    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        raise AssertionError("must not run")

    t = make_tool("t", execute, execution_mode=SEQUENTIAL)
    recorder = Recorder([answer(ToolCall(id="a", name="t", invalid_arguments="{")), text_answer()])
    r = await run(
        "go",
        AgentContext(tools=[t]),
        AgentLoopConfig(model=FauxProvider().model),
        stream_fn=recorder,
    )
    result = results_of(r)["a"]
    assert result.is_error and "not valid JSON (expecting property name enclosed" in texts(result)
    assert [e.type for e in r.events if e.type.startswith("tool_execution")] == [
        "tool_execution_start",
        "tool_execution_end",
    ]


# --- 2. tool values become JSON by one rule ------------------------------------------------------


class Color(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


@dataclasses.dataclass
class Stats:
    mean: float
    seen: datetime.date


class Event(pydantic.BaseModel):
    name: str
    at: datetime.datetime


VALUES: list[tuple[Any, Any]] = [
    (5, 5),
    (2.5, 2.5),
    (True, True),
    ([], []),
    ({"n": 1, "list": [1, "a", None]}, {"n": 1, "list": [1, "a", None]}),
    (datetime.datetime(2024, 5, 6, 7, 8, 9), "2024-05-06T07:08:09"),
    (
        datetime.datetime(2024, 5, 6, tzinfo=datetime.UTC),
        "2024-05-06T00:00:00Z",
    ),
    (datetime.date(2024, 5, 6), "2024-05-06"),
    (datetime.timedelta(minutes=90), "PT1H30M"),
    (uuid.UUID(int=1), "00000000-0000-0000-0000-000000000001"),
    (decimal.Decimal("1.10"), "1.10"),
    (pathlib.PurePosixPath("/tmp/a.txt"), "/tmp/a.txt"),
    (Color.RED, "red"),
    (Level.HIGH, 3),
    ({"b", "c", "a"}, ["a", "b", "c"]),
    (frozenset({3, 1, 2}), [1, 2, 3]),
    ({1, "a"}, ["a", 1]),  # no common order: sorted by JSON text
    ((1, (2, 3)), [1, [2, 3]]),
    (deque([1, 2]), [1, 2]),
    ({1: "one", 2.5: "x", False: "f"}, {"1": "one", "2.5": "x", "false": "f"}),
    ({Color.RED: 1, "s": {False: 0}}, {"red": 1, "s": {"false": 0}}),
    (
        Stats(mean=1.5, seen=datetime.date(2024, 1, 2)),
        {"mean": 1.5, "seen": "2024-01-02"},
    ),
    (
        Event(name="x", at=datetime.datetime(2024, 1, 2, 3, 4)),
        {"name": "x", "at": "2024-01-02T03:04:00"},
    ),
    ({"nested": [{"when": datetime.date(2000, 1, 1)}]}, {"nested": [{"when": "2000-01-01"}]}),
]


def reporter(value: Any, *, sync: bool) -> AgentTool:
    """A `@tool` named `report` returning `value`, sync or async."""
    if sync:

        @tool(name="report")
        def report_sync() -> Any:
            """Report."""
            return value

        return report_sync

    @tool(name="report")
    async def report_async() -> Any:
        """Report."""
        return value

    return report_async


@pytest.mark.parametrize("sync", [True, False])
@pytest.mark.parametrize(("value", "expected"), VALUES)
async def test_tool_values_become_json(value: Any, expected: Any, sync: bool) -> None:
    faux = FauxProvider([faux_message(ToolCall(id="c", name="report")), faux_text("ok")])
    r = await run("go", AgentContext(tools=[reporter(value, sync=sync)]), faux=faux)
    result = results_of(r)["c"]
    assert not result.is_error, texts(result)
    assert texts(result) == json.dumps(expected, ensure_ascii=False)
    assert result.details == expected
    storable(result)
    assert faux.call_count == 2


def self_referencing() -> Any:
    items: list[Any] = [1]
    items.append(items)
    return {"items": items}


def generator() -> Any:
    return {"rows": (n for n in range(3))}


class Opaque:
    pass


def deep() -> Any:
    value: list[Any] = []
    for _ in range(300):
        value = [value]
    return value


NOT_JSON: list[tuple[Any, str]] = [
    ({"stats": {"mean": math.nan}}, "float('nan') at $.stats.mean"),
    ([1, math.inf], "float('inf') at $[1]"),
    (-math.inf, "float('-inf') at $"),
    ({"raw": b"\x00\xff"}, "bytes at $.raw"),
    ({"stats": {(1, 2): 3}}, "a dict key (1, 2) of type tuple at $.stats"),
    ({None: 1}, "a dict key None of type NoneType at $"),
    ({1: "a", "1": "b"}, 'two dict keys that both become "1" at $'),
    (self_referencing(), "a list that contains itself at $.items[1]"),
    (generator(), "generator at $.rows"),
    ({"x y": [Opaque()]}, f'{__name__}.Opaque at $["x y"][0]'),
    ({"s": {b"x"}}, "bytes at $.s[*]"),
    (Stats(mean=math.nan, seen=datetime.date(2024, 1, 1)), "float('nan') at $.mean"),
    (1 + 2j, "complex at $"),
]


@pytest.mark.parametrize("sync", [True, False])
@pytest.mark.parametrize(("value", "where"), NOT_JSON)
async def test_values_that_cannot_be_json_are_error_results(
    value: Any, where: str, sync: bool
) -> None:
    faux = FauxProvider([faux_message(ToolCall(id="c", name="report")), faux_text("ok")])
    r = await run("go", AgentContext(tools=[reporter(value, sync=sync)]), faux=faux)
    result = results_of(r)["c"]
    assert result.is_error
    assert texts(result) == f"tool 'report' returned a value that is not JSON: {where}"
    assert result.details is None
    storable(result)
    assert faux.call_count == 2  # the run goes on


async def test_too_deep_a_value_is_an_error_not_a_recursion_error() -> None:
    faux = FauxProvider([faux_message(ToolCall(id="c", name="report")), faux_text("ok")])
    r = await run("go", AgentContext(tools=[reporter(deep(), sync=True)]), faux=faux)
    text = texts(results_of(r)["c"])
    assert text.startswith(
        "tool 'report' returned a value that is not JSON: more than 200 levels of nesting at $[0]"
    )


async def test_a_value_is_not_copied_when_it_is_json_already() -> None:
    value = {"a": [1, 2], "b": {"c": "d"}}
    faux = FauxProvider([faux_message(ToolCall(id="c", name="report")), faux_text("ok")])
    r = await run("go", AgentContext(tools=[reporter(value, sync=False)]), faux=faux)
    assert results_of(r)["c"].details is value


async def test_details_are_made_json_by_the_same_rule() -> None:
    when = datetime.datetime(2024, 1, 2, 3, 4, 5)

    async def good(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult.text("ok", details={"when": when, "tags": {"b", "a"}})

    def bad(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult.text("ok", details={"raw": b"\x00"})

    seen: list[Any] = []

    def after(ctx: AfterToolCallContext) -> Any:
        seen.append((ctx.tool_call.id, ctx.is_error, ctx.result.details, texts(ctx.result)))
        if ctx.tool_call.id == "replaced":
            return AfterToolCallResult(details={"at": when.date()})
        if ctx.tool_call.id == "replaced_bad":
            return AfterToolCallResult(details=[math.nan])
        return None

    calls = [
        ToolCall(id="good", name="good"),
        ToolCall(id="bad", name="bad"),
        ToolCall(id="replaced", name="good"),
        ToolCall(id="replaced_bad", name="good"),
    ]
    faux = FauxProvider([faux_message(*calls), faux_text("ok")])
    config = AgentLoopConfig(model=faux.model, after_tool_call=after)
    r = await run(
        "go", AgentContext(tools=[make_tool("good", good), make_tool("bad", bad)]), config
    )
    results = results_of(r)
    expected = {"when": "2024-01-02T03:04:05", "tags": ["a", "b"]}
    assert results["good"].details == expected and not results["good"].is_error
    assert results["bad"].is_error and results["bad"].details is None
    assert texts(results["bad"]) == "tool 'bad' returned details that are not JSON: bytes at $.raw"
    assert results["replaced"].details == {"at": "2024-01-02"}
    assert results["replaced_bad"].is_error and texts(results["replaced_bad"]) == (
        "after_tool_call returned details that are not JSON: float('nan') at $[0]"
    )
    # the hook sees the JSON form, and the error result of bad details
    assert ("good", False, expected, "ok") in seen
    assert (
        "bad",
        True,
        None,
        "tool 'bad' returned details that are not JSON: bytes at $.raw",
    ) in seen
    for message in results.values():
        storable(message)
    ends = {e.tool_call_id: e.result for e in r.of("tool_execution_end")}
    assert ends["good"].details == expected  # the event carries what the transcript holds


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (
            {"content": None},
            "content must be a list of TextContent or ImageContent blocks, got NoneType",
        ),
        ({"content": "text"}, "content must be a list of .* got str"),
        ({"content": ["text"]}, r"content\[0\] must be TextContent or ImageContent, got str"),
        ({"content": [TextContent(text=None)]}, r"content\[0\].text must be a str, got NoneType"),  # type: ignore[arg-type]
        (
            {"content": [ImageContent(data=b"x", mime_type="image/png")]},
            r"content\[0\]: an ImageContent",
        ),  # type: ignore[arg-type]
        ({"usage": {"input": 1}}, "usage must be a Usage or None, got dict"),
        ({"added_tool_names": "deploy"}, "added_tool_names must be a list of tool names"),
        ({"added_tool_names": [1]}, "added_tool_names must be a list of tool names"),
        ({"is_error": 1}, "is_error must be True or False, got int 1"),
        ({"terminate": None}, "terminate must be True or False, got NoneType None"),
    ],
)
def test_agent_tool_result_checks_its_fields(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(TypeError, match=f"AgentToolResult.{match}"):
        AgentToolResult(**kwargs)


def test_agent_tool_result_accepts_what_it_documents() -> None:
    r = AgentToolResult(
        content=[TextContent(text="a"), ImageContent(data="aGk=", mime_type="image/png")],
        details={"any": "thing"},
        usage=Usage(input=1),
        added_tool_names=["x"],
        terminate=True,
        is_error=False,
    )
    assert r.terminate and len(r.content) == 2


@pytest.mark.parametrize("sync", [True, False])
async def test_a_tool_building_an_invalid_result_gets_an_error_result(sync: bool) -> None:
    def build(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult(content=None)  # type: ignore[arg-type]

    async def build_async(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        return build(tool_call_id, args, signal, on_update)

    faux = FauxProvider([faux_message(ToolCall(id="c", name="t")), faux_text("ok")])
    t = make_tool("t", build if sync else build_async)
    r = await run("go", AgentContext(tools=[t]), faux=faux)
    result = results_of(r)["c"]
    assert result.is_error and texts(result) == (
        "AgentToolResult.content must be a list of TextContent or ImageContent blocks, got NoneType"
    )
    assert faux.call_count == 2


async def test_after_tool_call_replacing_content_with_garbage_gets_an_error_result() -> None:
    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult.text("fine")

    def after(ctx: AfterToolCallContext) -> Any:
        return AfterToolCallResult(content="not a list")  # type: ignore[arg-type]

    faux = FauxProvider([faux_message(ToolCall(id="c", name="t")), faux_text("ok")])
    config = AgentLoopConfig(model=faux.model, after_tool_call=after)
    r = await run("go", AgentContext(tools=[make_tool("t", execute)]), config)
    result = results_of(r)["c"]
    assert result.is_error and texts(result) == (
        "after_tool_call returned an invalid result: AgentToolResult.content must be a list of "
        "TextContent or ImageContent blocks, got str"
    )


async def test_an_agent_with_a_session_survives_odd_values(tmp_path: pathlib.Path) -> None:
    """Issue 8, case 2: one odd value must not wedge a session-backed Agent."""
    from agentcore import Agent
    from agentcore.sessions import JsonlSessionStore

    returned = iter([{"at": datetime.datetime(2024, 1, 1), "tags": {"x"}}, math.nan, b"raw"])

    @tool
    def odd() -> Any:
        """Odd values."""
        return next(returned)

    faux = FauxProvider(
        [
            faux_message(ToolCall(id="a", name="odd")),
            faux_text("one"),
            faux_message(ToolCall(id="b", name="odd"), ToolCall(id="c", name="odd")),
            faux_text("two"),
            faux_text("three"),
        ]
    )
    store = JsonlSessionStore(tmp_path)
    agent = Agent(initial_state={"model": faux.model, "tools": [odd]}, session=store.create())
    await agent.prompt("first")
    await agent.prompt("second")
    await agent.prompt("third")  # the next prompt works
    assert agent.state.error_message is None
    assert store.load(agent.session.id).messages == agent.state.messages  # disk equals memory
    results = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    assert [m.is_error for m in results] == [False, True, True]
    assert results[0].details == {"at": "2024-01-01T00:00:00", "tags": ["x"]}


# --- 3. CancelledError that nobody asked for -----------------------------------------------------


async def raise_cancelled_error() -> None:
    raise asyncio.CancelledError()


async def await_a_task_someone_cancelled() -> None:
    task = asyncio.get_running_loop().create_task(asyncio.sleep(10))
    await asyncio.sleep(0)
    task.cancel()
    await task


async def reraise_a_caught_cancellation() -> None:
    """A cancellation caught inside the tool's own cancelled scope, raised outside it."""
    caught: BaseException | None = None
    with anyio.CancelScope() as inner:
        inner.cancel()
        try:
            await anyio.sleep(1)
        except anyio.get_cancelled_exc_class() as exc:
            caught = exc
    assert caught is not None
    raise caught


STRAY = (
    "Tool 'stray' failed: it raised CancelledError, but the run was not cancelled (did it await "
    "a task that something else cancelled?)."
)


# awaiting a cancelled asyncio task (the issue's case) needs asyncio; the others run on both
STRAY_CASES = [
    (backend, how)
    for backend in BACKENDS
    for how in ["raise", "sync_raise", "foreign_task", "reraise"]
    if how != "foreign_task" or backend == "asyncio"
]


@pytest.mark.parametrize(("anyio_backend", "how"), STRAY_CASES)
@pytest.mark.parametrize("mode", [PARALLEL, SEQUENTIAL])
@pytest.mark.parametrize("with_signal", [False, True])
async def test_stray_cancelled_error_is_a_tool_failure(
    mode: ToolExecutionMode, how: str, with_signal: bool
) -> None:

    async def stray(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        if how == "foreign_task":
            await await_a_task_someone_cancelled()
        elif how == "reraise":
            await reraise_a_caught_cancellation()
        else:
            await raise_cancelled_error()

    def stray_sync(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        raise asyncio.CancelledError()

    async def fine(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        await anyio.lowlevel.checkpoint()
        return AgentToolResult.text("fine")

    tools = [
        make_tool("stray", stray_sync if how == "sync_raise" else stray),
        make_tool("fine", fine),
    ]
    faux = FauxProvider(
        [
            faux_message(ToolCall(id="s", name="stray"), ToolCall(id="f", name="fine")),
            faux_text("went on"),
        ]
    )
    config = AgentLoopConfig(model=faux.model, tool_execution=mode)
    signal = AbortController().signal if with_signal else None
    with anyio.fail_after(10):
        r = await run("go", AgentContext(tools=tools), config, signal=signal)
    results = results_of(r)
    assert results["s"].is_error and texts(results["s"]) == STRAY
    assert texts(results["f"]) == "fine"
    assert faux.call_count == 2 and texts(r.result[-1]) == "went on"
    assert r.types[-2:] == ["turn_end", "agent_end"]


@pytest.mark.parametrize("anyio_backend", BACKENDS)
@pytest.mark.parametrize("mode", [PARALLEL, SEQUENTIAL])
async def test_a_real_outer_cancellation_still_propagates(mode: ToolExecutionMode) -> None:
    """A tool that cancels the caller's scope: the run is cancelled, not given an error result."""
    outer = anyio.CancelScope()

    async def cancels(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        outer.cancel()
        await anyio.sleep_forever()

    faux = FauxProvider(
        [faux_message(ToolCall(id="a", name="c"), ToolCall(id="b", name="c")), faux_text("x")]
    )
    seen: list[Any] = []
    with anyio.fail_after(10):
        with outer:
            await run_agent_loop(
                [UserMessage(content="go")],
                AgentContext(tools=[make_tool("c", cancels)]),
                AgentLoopConfig(model=faux.model, tool_execution=mode),
                seen.append,
                signal=AbortController().signal,
            )
    assert outer.cancelled_caught
    types = [e.type for e in seen]
    assert "agent_end" not in types and "tool_execution_end" not in types


# --- 4. timeouts ---------------------------------------------------------------------------------


@pytest.mark.parametrize("anyio_backend", BACKENDS)
@pytest.mark.parametrize("mode", [PARALLEL, SEQUENTIAL])
@pytest.mark.parametrize("where", ["tool", "config", "both"])
async def test_a_tool_that_runs_too_long_times_out(
    mode: ToolExecutionMode, where: str, caplog: pytest.LogCaptureFixture
) -> None:
    never = anyio.Event()

    async def slow(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        await never.wait()

    async def fast(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult.text("fast")

    seen: list[Any] = []

    def after(ctx: AfterToolCallContext) -> None:
        seen.append((ctx.tool_call.id, ctx.is_error, texts(ctx.result)))

    tool_timeout = {"tool": None, "config": 0.05, "both": 0.3}[where]
    timeout = {"tool": 0.05, "config": None, "both": 0.05}[where]
    faux = FauxProvider(
        [
            faux_message(ToolCall(id="s", name="slow"), ToolCall(id="f", name="fast")),
            faux_text("went on"),
        ]
    )
    config = AgentLoopConfig(
        model=faux.model, tool_execution=mode, tool_timeout=tool_timeout, after_tool_call=after
    )
    tools = [make_tool("slow", slow, timeout=timeout), make_tool("fast", fast)]
    with caplog.at_level(logging.WARNING, logger="agentcore"), anyio.fail_after(10):
        r = await run("go", AgentContext(tools=tools), config)
    results = results_of(r)
    assert results["s"].is_error and texts(results["s"]) == "Tool 'slow' timed out after 0.05 s."
    assert texts(results["f"]) == "fast"
    assert ("s", True, "Tool 'slow' timed out after 0.05 s.") in seen  # after_tool_call saw it
    assert faux.call_count == 2 and texts(r.result[-1]) == "went on"
    records = [rec for rec in caplog.records if rec.name == "agentcore"]
    assert [(rec.levelno, rec.getMessage()) for rec in records] == [
        (logging.WARNING, "tool 'slow' (call s) timed out after 0.05 s")
    ]


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_a_sync_tool_that_times_out_is_abandoned_and_its_result_discarded() -> None:
    release = threading.Event()
    returned = threading.Event()

    @tool(timeout=0.05)
    def blocking(on_update: Any) -> str:
        """Blocks until released."""
        release.wait(30)
        on_update(AgentToolResult.text("too late"))  # dropped: the call is over
        returned.set()
        return "late result"

    assert blocking.timeout == 0.05
    faux = FauxProvider([faux_message(ToolCall(id="b", name="blocking")), faux_text("ok")])
    with anyio.fail_after(10):
        r = await run("go", AgentContext(tools=[blocking]), faux=faux)
    result = results_of(r)["b"]
    assert result.is_error and texts(result) == "Tool 'blocking' timed out after 0.05 s."
    release.set()
    await anyio.to_thread.run_sync(returned.wait, 10)
    assert not r.of("tool_execution_update")


async def test_no_timeout_by_default() -> None:
    config = AgentLoopConfig(model=FauxProvider().model)
    assert config.tool_timeout is None
    assert make_tool("t", lambda *a: None).timeout is None


async def test_a_timeout_does_not_cover_the_hooks() -> None:
    """Only `execute` is bounded: a slow after_tool_call does not turn the result into a
    timeout."""

    async def quick(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult.text("quick")

    async def after(ctx: AfterToolCallContext) -> None:
        await anyio.sleep(0.1)

    faux = FauxProvider([faux_message(ToolCall(id="q", name="quick")), faux_text("ok")])
    config = AgentLoopConfig(model=faux.model, tool_timeout=0.01, after_tool_call=after)
    r = await run("go", AgentContext(tools=[make_tool("quick", quick)]), config)
    assert texts(results_of(r)["q"]) == "quick"


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_abort_during_a_timed_call_is_an_abort() -> None:
    controller = AbortController()

    async def waits(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        controller.abort()
        await anyio.sleep_forever()

    faux = FauxProvider([faux_message(ToolCall(id="w", name="waits")), faux_text("never")])
    config = AgentLoopConfig(model=faux.model, tool_timeout=30)
    with anyio.fail_after(10):
        r = await run(
            "go", AgentContext(tools=[make_tool("waits", waits)]), config, signal=controller.signal
        )
    assert texts(results_of(r)["w"]) == "Tool execution was aborted."
    assert faux.call_count == 1


# --- 5. no pump coroutine is left unawaited when a run is torn down ------------------------------


def soon(fn: Any) -> None:
    """Run `fn` on the event loop's next round, as an update from another thread arrives."""
    try:
        import trio

        trio.lowlevel.current_trio_token().run_sync_soon(fn)
    except RuntimeError:  # not under trio
        asyncio.get_running_loop().call_soon(fn)


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_an_update_while_the_run_is_torn_down_is_dropped() -> None:
    """The consumer leaves while tools run in parallel; an update from another thread lands
    just as the last tool has exited and the run's task group is shutting down. No pump may be
    started then: under trio that created the pump's coroutine and then failed to spawn it
    ("coroutine '_Batch.pump' was never awaited"), in about half of such runs (trio runs the two
    ready callbacks in a random order), so the scenario is repeated."""
    delivered: list[bool] = []

    def late_update(on_update: Any) -> None:
        with contextlib.suppress(RuntimeError):  # old behaviour: the task group refused it
            on_update(AgentToolResult.text("late"))
        delivered.append(True)

    for _ in range(16):
        running = anyio.Event()

        async def lingerer(
            tool_call_id: str, args: Any, signal: Any, on_update: Any, running: Any = running
        ) -> Any:
            running.set()
            try:
                await anyio.sleep_forever()
            finally:
                with anyio.CancelScope(shield=True):
                    for _ in range(20):  # rounds enough for the run's body to leave
                        await anyio.lowlevel.checkpoint()
                # the last thing this (the last) task does: the update arrives after it exited
                soon(lambda: late_update(on_update))

        async def quick(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
            return AgentToolResult.text("quick")

        faux = FauxProvider(
            [
                faux_message(ToolCall(id="l", name="lingerer"), ToolCall(id="q", name="quick")),
                faux_text("x"),
            ]
        )
        tools = [make_tool("lingerer", lingerer), make_tool("quick", quick)]
        events: list[Any] = []
        with anyio.fail_after(10):
            prompts = [UserMessage(content="go")]
            config = AgentLoopConfig(model=faux.model)
            async with agent_loop(prompts, AgentContext(tools=tools), config) as stream:
                async for event in stream:
                    events.append(event)
                    if event.type == "tool_execution_end":  # quick's: the lingerer runs
                        await running.wait()
                        break
            for _ in range(5):
                await anyio.lowlevel.checkpoint()
        assert not [e for e in events if e.type == "tool_execution_update"]
        gc.collect()  # a coroutine never awaited would warn here (an error under pytest)
    assert delivered == [True] * 16
