"""Tools: `@tool`, `AgentTool`, argument validation, sync tools, and bad input of every kind."""

from __future__ import annotations

import threading
import time
from typing import Any, Literal

import anyio
import pydantic
import pytest

from agentcore import (
    AbortSignal,
    AgentContext,
    AgentLoopConfig,
    AgentTool,
    AgentToolResult,
    ConfigError,
    ImageContent,
    MessageFormatError,
    TextContent,
    ToolCall,
    ToolDefinitionError,
    ToolError,
    ToolExecutionMode,
    ToolResultMessage,
    agent_loop,
    agent_loop_continue,
    run_agent_loop,
    tool,
)
from agentcore._tools.validation import ArgumentsError, ArgumentsValidator
from agentcore.llm import MessageBuilder
from agentcore.testing import FauxProvider, faux_message, faux_text, faux_tool_call
from support import BACKENDS, Recorder, make_tool, replay, run, texts, user

pytestmark = pytest.mark.anyio


async def run_tool(t: AgentTool, arguments: dict[str, Any]) -> ToolResultMessage:
    """Have the faux model call `t` once and return the result message."""
    faux = FauxProvider([faux_tool_call(t.name, arguments, id="call"), faux_text("done")])
    r = await run("go", AgentContext(tools=[t]), faux=faux)
    result = r.result[2]
    assert isinstance(result, ToolResultMessage) and result.tool_call_id == "call"
    assert faux.call_count == 2  # the result always goes back to the model
    return result


# --- @tool ----------------------------------------------------------------------------------


def test_tool_decorator_schema_and_description() -> None:
    @tool
    def search(query: str, limit: int = 10, mode: Literal["fast", "deep"] = "fast") -> str:
        """Search the web for pages.

        Returns the best hits first.

        Args:
            query: what to look for,
                in plain words.
            limit: at most this many hits.

        Returns:
            one line per hit.
        """
        return ""

    assert isinstance(search, AgentTool)
    assert search.name == "search" and search.label == "search"
    assert search.description == "Search the web for pages.\n\nReturns the best hits first."
    schema = search.llm_tool.parameters
    assert schema["type"] == "object"
    assert schema["required"] == ["query"]
    props = schema["properties"]
    assert set(props) == {"query", "limit", "mode"}
    assert props["query"]["type"] == "string"
    assert props["query"]["description"] == "what to look for, in plain words."
    assert props["limit"] == {
        "default": 10,
        "description": "at most this many hits.",
        "title": "Limit",
        "type": "integer",
    }
    assert props["mode"]["enum"] == ["fast", "deep"]
    assert search.llm_tool.name == "search" and search.llm_tool.description == search.description


def test_tool_decorator_with_options() -> None:
    @tool(name="web-search", description="Find pages.", label="Web search")
    async def anything(q: str) -> str:
        return q

    assert anything.name == "web-search"
    assert anything.description == "Find pages."
    assert anything.label == "Web search"
    assert anything.execution_mode is None

    @tool(execution_mode=ToolExecutionMode.SEQUENTIAL)
    def shell(cmd: str) -> str:
        """Run a command."""
        return cmd

    assert shell.execution_mode is ToolExecutionMode.SEQUENTIAL


async def test_tool_decorator_injects_signal_on_update_and_id() -> None:
    seen: dict[str, Any] = {}

    @tool
    async def work(
        path: str, signal: AbortSignal, on_update: Any, tool_call_id: str, *, depth: int = 1
    ) -> str:
        """Do work."""
        seen.update(path=path, signal=signal, tool_call_id=tool_call_id, depth=depth)
        on_update(AgentToolResult.text("halfway"))
        return "done"

    assert set(work.llm_tool.parameters["properties"]) == {"path", "depth"}
    assert work.llm_tool.parameters["required"] == ["path"]
    faux = FauxProvider([faux_tool_call("work", {"path": "/tmp"}, id="c7"), faux_text("ok")])
    r = await run("go", AgentContext(tools=[work]), faux=faux)
    assert seen["path"] == "/tmp" and seen["depth"] == 1 and seen["tool_call_id"] == "c7"
    assert isinstance(seen["signal"], AbortSignal) and not seen["signal"].aborted
    assert [texts(u.partial_result) for u in r.of("tool_execution_update")] == ["halfway"]
    assert texts(r.result[2]) == "done"


async def test_tool_decorator_injects_an_optional_signal() -> None:
    got: list[Any] = []

    @tool
    async def wait(seconds: float, signal: AbortSignal | None = None) -> str:
        """Wait a while."""
        got.append(signal)
        return "waited"

    assert set(wait.llm_tool.parameters["properties"]) == {"seconds"}
    result = await run_tool(wait, {"seconds": 0.1})
    assert texts(result) == "waited"
    assert isinstance(got[0], AbortSignal)


async def test_tool_decorator_return_values() -> None:
    class Point(pydantic.BaseModel):
        x: int
        y: int

    image = ImageContent(data="aGk=", mime_type="image/png")

    @tool
    def as_dict(n: int) -> dict[str, int]:
        """A dict."""
        return {"n": n}

    @tool
    def as_none(n: int) -> None:
        """Nothing."""

    @tool
    def as_blocks(n: int) -> list[Any]:
        """Blocks."""
        return [TextContent(text="look"), image]

    @tool
    def as_result(n: int) -> AgentToolResult:
        """A ready result."""
        return AgentToolResult.text("ready", details={"d": n})

    @tool
    def as_model(n: int) -> Point:  # a local class: the return annotation is never evaluated
        """A pydantic model."""
        return Point(x=n, y=2)

    r = await run_tool(as_dict, {"n": 3})
    assert texts(r) == '{"n": 3}' and r.details == {"n": 3}
    r = await run_tool(as_none, {"n": 3})
    assert r.content == [] and not r.is_error
    r = await run_tool(as_blocks, {"n": 3})
    assert r.content == [TextContent(text="look"), image]
    r = await run_tool(as_result, {"n": 3})
    assert texts(r) == "ready" and r.details == {"d": 3}
    r = await run_tool(as_model, {"n": 3})
    # one rule for every value: the model's JSON text, and its JSON data as details
    assert texts(r) == '{"x": 3, "y": 2}' and r.details == {"x": 3, "y": 2}


async def test_tool_decorator_validates_with_pydantic() -> None:
    calls: list[Any] = []

    @tool
    def add(a: int, b: int, exact: bool = False) -> str:
        """Add two integers."""
        calls.append((a, b, exact))
        return str(a + b)

    r = await run_tool(add, {"a": "5", "b": 2, "exact": "true"})
    assert texts(r) == "7" and calls == [(5, 2, True)]
    r = await run_tool(add, {"a": "five"})
    assert r.is_error
    text = texts(r)
    assert 'Validation failed for tool "add"' in text
    assert "  - a: " in text and "  - b: " in text
    assert '"a": "five"' in text
    assert len(calls) == 1


class Opaque:
    """A type pydantic cannot describe."""


def test_tool_decorator_rejects_what_cannot_be_described() -> None:
    with pytest.raises(ToolDefinitionError, match=r"\*args"):

        @tool
        def variadic(*names: str) -> str:
            """Nope."""
            return ""

    with pytest.raises(ToolDefinitionError, match="JSON Schema"):

        @tool
        def opaque(thing: Opaque) -> str:
            """Nope."""
            return ""

    with pytest.raises(ToolDefinitionError, match="invalid tool name"):

        @tool(name="has spaces")
        def spaced() -> str:
            """Nope."""
            return ""


# --- sync tools -------------------------------------------------------------------------------


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_sync_tools_run_in_a_worker_thread() -> None:
    loop_thread = threading.get_ident()
    threads: dict[str, int] = {}

    @tool
    def decorated(x: int) -> str:
        """Sync, decorated."""
        threads["decorated"] = threading.get_ident()
        return "d"

    def plain(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> AgentToolResult:
        threads["plain"] = threading.get_ident()
        on_update(AgentToolResult.text("from the worker"))
        return AgentToolResult.text("p")

    async def native(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        threads["native"] = threading.get_ident()
        return AgentToolResult.text("n")

    class Subclassed(AgentTool):
        def execute(self, tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
            threads["subclassed"] = threading.get_ident()
            return AgentToolResult.text("s")

    tools = [
        decorated,
        make_tool("plain", plain),
        make_tool("native", native),
        Subclassed(name="subclassed", description="", parameters={"type": "object"}),
    ]
    batch = faux_message(
        *(
            faux_tool_call(t.name, {"x": 1} if t.name == "decorated" else {}).content[0]
            for t in tools
        )
    )
    faux = FauxProvider([batch, faux_text("ok")])
    r = await run("go", AgentContext(tools=tools), faux=faux)
    assert [texts(m) for m in r.result[2:6]] == ["d", "p", "n", "s"]
    assert threads["native"] == loop_thread
    for name in ("decorated", "plain", "subclassed"):
        assert threads[name] != loop_thread, name
    assert [texts(u.partial_result) for u in r.of("tool_execution_update")] == ["from the worker"]


async def test_sync_tool_does_not_block_the_event_loop() -> None:
    ticks: list[float] = []

    def sleepy(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        time.sleep(0.15)
        return AgentToolResult.text("rested")

    async def ticker() -> None:
        for _ in range(5):
            ticks.append(time.monotonic())
            await anyio.sleep(0.01)

    faux = FauxProvider([faux_tool_call("sleepy"), faux_text("ok")])
    async with anyio.create_task_group() as tg:
        tg.start_soon(ticker)
        r = await run("go", AgentContext(tools=[make_tool("sleepy", sleepy)]), faux=faux)
    assert texts(r.result[2]) == "rested"
    assert len(ticks) == 5 and ticks[-1] - ticks[0] < 0.14


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_on_update_from_a_foreign_thread() -> None:
    """Progress reported from a thread the tool started itself still arrives, before the end."""

    async def crawl(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        def work() -> None:
            on_update(AgentToolResult.text("page 1"))
            on_update(AgentToolResult.text("page 2"))

        worker = threading.Thread(target=work)
        worker.start()
        await anyio.to_thread.run_sync(worker.join)
        return AgentToolResult.text("crawled")

    faux = FauxProvider([faux_tool_call("crawl"), faux_text("ok")])
    r = await run("go", AgentContext(tools=[make_tool("crawl", crawl)]), faux=faux)
    updates = [texts(u.partial_result) for u in r.of("tool_execution_update")]
    assert updates == ["page 1", "page 2"]
    assert r.types.index("tool_execution_update") < r.types.index("tool_execution_end")


# --- AgentTool and results ------------------------------------------------------------------


async def test_agent_tool_with_pydantic_parameters() -> None:
    class Move(pydantic.BaseModel):
        x: int
        y: int = 0

    got: list[Any] = []

    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        got.append(args)
        return AgentToolResult.text(f"{args.x},{args.y}")

    move = AgentTool(name="move", description="Move.", parameters=Move, execute=execute)
    assert move.llm_tool.parameters == Move.model_json_schema()
    r = await run_tool(move, {"x": "3"})
    assert texts(r) == "3,0" and got == [Move(x=3, y=0)]


async def test_tool_errors_become_results() -> None:
    def raises_tool_error(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        raise ToolError("permission denied: /etc/shadow")

    async def returns_garbage(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        return "a plain string from a raw AgentTool"

    r = await run_tool(make_tool("denied", raises_tool_error), {})
    assert r.is_error and texts(r) == "permission denied: /etc/shadow"
    assert r.details is None or r.details == {}
    r = await run_tool(make_tool("garbage", returns_garbage), {})
    assert r.is_error and "AgentToolResult" in texts(r)


async def test_tool_result_fields_reach_the_message() -> None:
    from agentcore import Usage

    usage = Usage(input=10, output=5)

    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult(
            content=[TextContent(text="spawned")],
            details={"agent": "sub"},
            usage=usage,
            added_tool_names=["deploy"],
        )

    r = await run_tool(make_tool("spawn", execute), {})
    assert r.details == {"agent": "sub"} and r.usage == usage
    assert r.added_tool_names == ["deploy"] and not r.is_error


def test_agent_tool_result_helpers() -> None:
    ok = AgentToolResult.text("fine", details={"a": 1})
    assert ok.content == [TextContent(text="fine")] and ok.details == {"a": 1} and not ok.is_error
    err = AgentToolResult.error("broken")
    assert err.is_error and err.content == [TextContent(text="broken")]
    assert not AgentToolResult().terminate


# --- validation -------------------------------------------------------------------------------

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "i": {"type": "integer"},
        "n": {"type": "number"},
        "b": {"type": "boolean"},
        "s": {"type": "string"},
        "opt": {"type": ["integer", "null"]},
        "items": {"type": "array", "items": {"type": "integer"}},
        "inner": {
            "type": "object",
            "properties": {"flag": {"type": "boolean"}},
            "required": ["flag"],
        },
    },
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"i": "5"}, {"i": 5}),
        ({"i": " 7 "}, {"i": 7}),
        ({"i": "5.0"}, {"i": 5}),
        ({"n": "2.5"}, {"n": 2.5}),
        ({"n": "3"}, {"n": 3}),
        ({"b": "true"}, {"b": True}),
        ({"b": "false"}, {"b": False}),
        ({"b": "TRUE"}, {"b": True}),
        ({"s": 5}, {"s": "5"}),
        ({"s": True}, {"s": "true"}),
        ({"opt": "4"}, {"opt": 4}),
        ({"opt": None}, {"opt": None}),
        ({"items": ["1", 2, "3"]}, {"items": [1, 2, 3]}),
        ({"inner": {"flag": "false"}}, {"inner": {"flag": False}}),
    ],
)
def test_validation_coerces_scalars_on_a_copy(given: dict[str, Any], expected: Any) -> None:
    validator = ArgumentsValidator("t", SCHEMA)
    original = repr(given)
    out = validator.validate(given)
    assert out == expected
    assert [type(v) for v in out.values()] == [type(v) for v in expected.values()]
    assert repr(given) == original  # the model's arguments are never touched


@pytest.mark.parametrize(
    ("given", "lines"),
    [
        ({"i": "five"}, ["  - i: 'five' is not of type 'integer'"]),
        ({"b": "yes"}, ["  - b: 'yes' is not of type 'boolean'"]),
        ({"i": "2.5"}, ["  - i: '2.5' is not of type 'integer'"]),
        ({"items": [1, "x"]}, ["  - items[1]: 'x' is not of type 'integer'"]),
        ({"inner": {}}, ["  - inner.flag: required property is missing"]),
        ({"zzz": 1}, ["  - root: Additional properties are not allowed ('zzz' was unexpected)"]),
        (
            {"i": "x", "b": "y"},
            [
                "  - b: 'y' is not of type 'boolean'",
                "  - i: 'x' is not of type 'integer'",
            ],
        ),
    ],
)
def test_validation_error_texts(given: dict[str, Any], lines: list[str]) -> None:
    validator = ArgumentsValidator("calc", SCHEMA)
    with pytest.raises(ArgumentsError) as info:
        validator.validate(given)
    text = str(info.value)
    head, _, shown = text.partition("\n\nReceived arguments:\n")
    assert head.splitlines() == ['Validation failed for tool "calc":', *lines]
    import json

    assert json.loads(shown) == given


def test_validation_of_required_properties() -> None:
    validator = ArgumentsValidator(
        "t",
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "required": ["a", "b"],
        },
    )
    with pytest.raises(ArgumentsError) as info:
        validator.validate({})
    assert "  - a: required property is missing" in str(info.value)
    assert "  - b: required property is missing" in str(info.value)


# --- bad input: a clear error at the call that received it ----------------------------------


@pytest.mark.parametrize(
    ("parameters", "match"),
    [
        ({"type": "object", "properties": {"a": {"type": "strin"}}}, "not valid JSON Schema"),
        ({"type": "object", "required": "a"}, "not valid JSON Schema"),
        ({"type": "array", "items": {}}, "must describe an object"),
        ("not a schema", "JSON Schema dict or a Pydantic model"),
    ],
)
def test_invalid_schema_is_rejected(parameters: Any, match: str) -> None:
    async def execute(*args: Any) -> Any:
        return AgentToolResult()

    with pytest.raises(ToolDefinitionError, match=match) as info:
        AgentTool(name="bad", description="", parameters=parameters, execute=execute)
    assert "'bad'" in str(info.value)


@pytest.mark.parametrize(
    "name", ["", "has space", "a" * 65, "dots.not.allowed", "trailing\n", 42, None]
)
def test_bad_tool_name_is_rejected(name: Any) -> None:
    with pytest.raises(ToolDefinitionError, match="invalid tool name"):
        AgentTool(name=name, description="", parameters={"type": "object"}, execute=print)


def test_tool_without_execute_is_rejected() -> None:
    with pytest.raises(ToolDefinitionError, match="execute"):
        AgentTool(name="t", description="", parameters={"type": "object"})
    with pytest.raises(ToolDefinitionError, match="execute must be callable"):
        AgentTool(name="t", description="", parameters={"type": "object"}, execute="no")  # type: ignore[arg-type]


def test_duplicate_tool_name_in_context() -> None:
    a = make_tool("read", print)
    b = make_tool("read", print)
    with pytest.raises(ToolDefinitionError, match="'read' is used twice"):
        AgentContext(tools=[a, b])
    with pytest.raises(ToolDefinitionError, match="AgentTool"):
        AgentContext(tools=[print])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("hook", "value"),
    [
        ("before_tool_call", lambda: None),
        ("before_tool_call", lambda a, b, c: None),
        ("after_tool_call", "not a function"),
        ("prepare_next_turn", lambda *, ctx: None),
        ("should_stop_after_turn", lambda: True),
        ("convert_to_llm", lambda: []),
        ("convert_to_llm", None),
        ("transform_context", lambda a, b, c: a),
        ("get_api_key", lambda: "key"),
        ("get_steering_messages", lambda queue: []),
        ("get_follow_up_messages", 42),
        ("on_payload", lambda payload: payload),
    ],
)
def test_hook_of_the_wrong_shape(hook: str, value: Any) -> None:
    model = FauxProvider().model
    with pytest.raises(ConfigError, match=hook):
        AgentLoopConfig(model=model, **{hook: value})


async def test_hooks_of_the_right_shapes_are_accepted_and_called() -> None:
    called: list[str] = []

    def note(name: str, value: Any = None) -> Any:
        called.append(name)
        return value

    async def async_hook(ctx: Any, signal: Any = None) -> None:
        note("before_tool_call")

    class Callable_:
        def __call__(self, ctx: Any) -> None:
            note("after_tool_call")

    def follow_ups(*args: Any) -> None:
        note("get_follow_up_messages")

    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult.text("ran")

    faux = FauxProvider([faux_tool_call("t"), faux_text("ok")])
    config = AgentLoopConfig(
        model=faux.model,
        before_tool_call=async_hook,
        after_tool_call=Callable_(),
        prepare_next_turn=lambda ctx, signal: note("prepare_next_turn"),
        should_stop_after_turn=lambda ctx: note("should_stop_after_turn", False),
        transform_context=lambda messages: note("transform_context", messages),
        get_steering_messages=lambda: note("get_steering_messages", []),
        get_follow_up_messages=follow_ups,
        get_api_key=lambda provider: note("get_api_key"),
        on_payload=(on_payload := lambda payload, model: None),
    )
    r = await run("go", AgentContext(tools=[make_tool("t", execute)]), config)
    assert faux.calls[-1].options.on_payload is on_payload  # handed to the provider
    assert [m.role for m in r.result] == ["user", "assistant", "tool_result", "assistant"]
    assert texts(r.result[2]) == "ran" and not r.result[2].is_error
    assert set(called) == {
        "before_tool_call",
        "after_tool_call",
        "prepare_next_turn",
        "should_stop_after_turn",
        "transform_context",
        "get_steering_messages",
        "get_follow_up_messages",
        "get_api_key",
    }


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("model", "gpt-4o"),
        ("tool_execution", "parallel-ish"),
        ("max_parallel_tools", 0),
        ("reasoning", "extreme"),
    ],
)
def test_bad_config_options(option: str, value: Any) -> None:
    kwargs: dict[str, Any] = {"model": FauxProvider().model, option: value}
    with pytest.raises(ConfigError, match=option):
        AgentLoopConfig(**kwargs)


@pytest.mark.parametrize(
    "prompts",
    ["hi", ["hi"], [{"role": "user", "content": "hi"}], [None], [user(), 3], b"bytes", 42],
)
async def test_non_message_prompts(prompts: Any) -> None:
    faux = FauxProvider([faux_text("never")])
    config = AgentLoopConfig(model=faux.model)
    with pytest.raises(MessageFormatError, match="message"):
        agent_loop(prompts, AgentContext(), config)
    with pytest.raises(MessageFormatError):
        await run_agent_loop(prompts, AgentContext(), config, lambda e: None)
    assert faux.call_count == 0


async def test_wrong_context_or_config_type() -> None:
    faux = FauxProvider()
    config = AgentLoopConfig(model=faux.model)
    with pytest.raises(ConfigError, match="AgentContext"):
        agent_loop([user()], {"messages": []}, config)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="AgentLoopConfig"):
        agent_loop([user()], AgentContext(), {"model": faux.model})  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="AgentContext"):
        agent_loop_continue(None, config)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="emit"):
        await run_agent_loop([user()], AgentContext(), config, "print")  # type: ignore[arg-type]


# --- malformed tool calls from the model: error results, never exceptions -------------------


async def test_malformed_tool_calls_become_error_results() -> None:
    model = FauxProvider().model
    calls_seen: list[Any] = []

    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        calls_seen.append(args)
        return AgentToolResult.text("ran")

    schema = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["path"],
    }
    read = make_tool("read", execute, schema)

    def broken_answer() -> list[Any]:
        b = MessageBuilder(model)
        events: list[Any] = [b.start()]
        for call_id, name, raw in [
            ("bad_json", "read", '{"path": "a.txt", "n": oops}'),
            ("not_object", "read", "[1, 2, 3]"),
            ("wrong_type", "read", '{"path": ["a"], "n": {"x": 1}}'),
            ("unknown", "rm_rf", '{"path": "/"}'),
            ("empty_name", "", "{}"),
        ]:
            start = b.toolcall_start(id=call_id, name=name)
            events.append(start)
            events.append(b.toolcall_delta(start.content_index, raw))
            events.append(b.toolcall_end(start.content_index))
        events.append(b.done("tool_use"))
        return events

    recorder = Recorder([replay(broken_answer()), replay([MessageBuilder(model).done("stop")])])
    r = await run(
        "go",
        AgentContext(tools=[read]),
        AgentLoopConfig(model=model),
        stream_fn=recorder,
    )
    results = {m.tool_call_id: m for m in r.result if isinstance(m, ToolResultMessage)}
    assert list(results) == ["bad_json", "not_object", "wrong_type", "unknown", "empty_name"]
    assert all(m.is_error for m in results.values())
    wrong = texts(results["wrong_type"])
    assert "  - path: " in wrong and "  - n: " in wrong
    assert texts(results["unknown"]) == "Tool rm_rf not found"
    assert "not found" in texts(results["empty_name"])
    sent = {c.id: c for c in r.result[1].content if isinstance(c, ToolCall)}
    for call_id in ("bad_json", "not_object"):
        if sent[call_id].invalid_arguments is not None:  # the builder flagged the JSON
            assert "were not valid JSON" in texts(results[call_id])
    if sent["bad_json"].invalid_arguments is not None:
        assert calls_seen == []  # nothing ran on guessed arguments
    if sent["not_object"].invalid_arguments is None:
        assert "path" in texts(results["not_object"])
    if sent["bad_json"].invalid_arguments is None:
        # the truncated JSON was salvaged as far as it went, or reported
        bad = texts(results["bad_json"])
        assert bad == "ran" or "Validation failed" in bad
    assert len(recorder.contexts) == 2  # all of it went back to the model
    assert [m.role for m in recorder.contexts[1].messages][-5:] == ["tool_result"] * 5


@pytest.mark.parametrize("sync", [False, True])
async def test_tool_calling_sys_exit_gives_an_error_result(sync: bool) -> None:
    """A wrapped command-line program (argparse, click) exits: the agent's host must not."""
    import sys

    def exits(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        sys.exit(2)

    async def exits_async(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        sys.exit(2)

    with anyio.fail_after(5):
        r = await run_tool(make_tool("cli", exits if sync else exits_async), {})
    assert r.is_error and texts(r) == "The tool exited (SystemExit: 2)."


async def test_raising_prepare_arguments_gives_an_error_result() -> None:
    def prepare(raw: Any) -> Any:
        raise ValueError("cannot upgrade these arguments")

    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        raise AssertionError("must not run")

    r = await run_tool(make_tool("t", execute, prepare_arguments=prepare), {"a": 1})
    assert r.is_error and texts(r) == "cannot upgrade these arguments"


@pytest.mark.parametrize("hook", ["before_tool_call", "after_tool_call"])
async def test_hooks_returning_the_wrong_type_give_error_results(hook: str) -> None:
    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult.text("ran")

    faux = FauxProvider([faux_tool_call("t"), faux_text("ok")])
    config = AgentLoopConfig(model=faux.model, **{hook: lambda ctx: {"block": True}})
    r = await run("go", AgentContext(tools=[make_tool("t", execute)]), config)
    result = r.result[2]
    assert result.is_error and hook in texts(result) and "dict" in texts(result)
    assert faux.call_count == 2
