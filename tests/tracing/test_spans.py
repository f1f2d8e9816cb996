"""The GenAI spans and metrics of `agentcore.tracing`, read back from the OpenTelemetry SDK's
in-memory exporter: names, attributes, nesting and timing for plain answers, sequential and
parallel tools, errors, aborts, a run inside a tool and the `Agent`; content only on request."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest
from opentelemetry import trace
from opentelemetry.trace import StatusCode

from agentcore import (
    AbortController,
    Agent,
    AgentContext,
    AgentLoopConfig,
    AgentToolResult,
    ToolExecutionMode,
    UserMessage,
    agent_loop,
    run_agent_loop,
    run_usage,
    set_instrumentation,
    tool,
)
from agentcore.testing import FauxProvider, faux_error, faux_text, faux_tool_call
from agentcore.tracing import instrument, uninstrument
from support import BACKENDS, make_tool, run
from support.tracing import Traces, tree

pytestmark = pytest.mark.anyio


def attrs(span: Any) -> dict[str, Any]:
    return dict(span.attributes or {})


def current_span_id() -> int:
    return trace.get_current_span().get_span_context().span_id


async def test_a_plain_answer_is_a_chat_span_inside_an_invoke_agent_span(traces: Traces) -> None:
    faux = FauxProvider([faux_text("hello there")])
    done = await run("hi", faux=faux)
    assert tree(traces) == ["invoke_agent", f"  chat {faux.model.id}"]
    agent, chat = traces.one("invoke_agent"), traces.one("chat")
    assert chat.parent is not None and chat.parent.span_id == agent.context.span_id
    assert chat.kind == trace.SpanKind.CLIENT
    a = attrs(chat)
    usage = done.result[-1].usage
    assert a["gen_ai.operation.name"] == "chat"
    assert a["gen_ai.provider.name"] == a["gen_ai.system"] == faux.model.provider
    assert a["gen_ai.request.model"] == a["gen_ai.response.model"] == faux.model.id
    assert a["gen_ai.response.finish_reasons"] == ("stop",)
    assert a["gen_ai.usage.input_tokens"] == usage.input + usage.cache_read + usage.cache_write
    assert a["gen_ai.usage.output_tokens"] == usage.output > 0
    assert a["agentcore.retries"] == 0
    assert 0 <= a["agentcore.time_to_first_token"] <= (chat.end_time - chat.start_time) / 1e9
    assert "error.type" not in a and chat.status.status_code is StatusCode.UNSET
    b = attrs(agent)
    assert b["gen_ai.operation.name"] == "invoke_agent"
    assert b["agentcore.turns"] == 1
    assert b["gen_ai.usage.output_tokens"] == usage.output
    assert b["gen_ai.response.finish_reasons"] == ("stop",)
    # the run's span encloses the request's
    assert agent.start_time <= chat.start_time <= chat.end_time <= agent.end_time
    assert "gen_ai.input.messages" not in a and "gen_ai.output.messages" not in a


async def test_metrics(traces: Traces) -> None:
    faux = FauxProvider([faux_tool_call("echo", {"x": 1}), faux_text("done")])
    done = await run("hi", AgentContext(tools=[make_tool("echo", _echo)]), faux=faux)
    metrics = traces.metrics()
    tokens = metrics["gen_ai.client.token.usage"]
    by_type: dict[str, int] = {}
    for point in tokens:
        kind = point.attributes["gen_ai.token.type"]
        by_type[kind] = by_type.get(kind, 0) + point.sum
    total = run_usage(done.result)
    assert by_type == {
        "input": total.input + total.cache_read + total.cache_write,
        "output": total.output,
    }
    operations = {
        p.attributes["gen_ai.operation.name"]: p.count
        for p in metrics["gen_ai.client.operation.duration"]
    }
    assert operations == {"chat": 2, "invoke_agent": 1}
    (turns,) = metrics["agentcore.run.turns"]
    assert turns.sum == 2
    (tool_duration,) = metrics["agentcore.tool.duration"]
    assert tool_duration.attributes["gen_ai.tool.name"] == "echo" and tool_duration.count == 1
    assert sum(p.count for p in metrics["agentcore.request.time_to_first_token"]) == 2


async def _echo(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult.text(f"echo {args}")


async def test_sequential_tools_nest_under_the_run_between_the_requests(traces: Traces) -> None:
    seen: list[int] = []

    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        seen.append(current_span_id())
        return AgentToolResult.text("ok")

    tools = [make_tool("a", execute), make_tool("b", execute)]
    faux = FauxProvider(
        [faux_tool_call("a", {}, id="c1"), faux_tool_call("b", {}, id="c2"), faux_text("done")]
    )
    config = AgentLoopConfig(model=faux.model, tool_execution=ToolExecutionMode.SEQUENTIAL)
    await run("go", AgentContext(tools=tools), config)
    m = faux.model.id
    assert tree(traces) == [
        "invoke_agent",
        f"  chat {m}",
        "  execute_tool a",
        f"  chat {m}",
        "  execute_tool b",
        f"  chat {m}",
    ]
    chats = traces.named("chat")
    a, b = traces.one("execute_tool a"), traces.one("execute_tool b")
    assert chats[0].end_time <= a.start_time <= a.end_time <= chats[1].start_time
    assert chats[1].end_time <= b.start_time <= b.end_time <= chats[2].start_time
    assert seen == [a.context.span_id, b.context.span_id]
    assert attrs(a) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "a",
        "gen_ai.tool.call.id": "c1",
        "gen_ai.tool.type": "function",
    }


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_parallel_tools_each_run_inside_their_own_span(traces: Traces) -> None:
    both_running = anyio.Event()
    running = 0
    seen: dict[str, int] = {}

    def slow(name: str) -> Any:
        async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
            nonlocal running
            running += 1
            if running == 2:
                both_running.set()
            await both_running.wait()  # both calls are in flight at once
            await anyio.lowlevel.checkpoint()
            seen[name] = current_span_id()
            return AgentToolResult.text(name)

        return make_tool(name, execute)

    @tool
    def sync_tool() -> str:
        """A sync tool, run in a worker thread."""
        seen["sync_tool"] = current_span_id()
        return "sync"

    answer = faux_tool_call("a", {}, id="c1")
    answer = type(answer)(
        content=[
            *answer.content,
            *faux_tool_call("b", {}, id="c2").content,
            *faux_tool_call("sync_tool", {}, id="c3").content,
        ],
        stop_reason="tool_use",
    )
    faux = FauxProvider([answer, faux_text("done")])
    await run("go", AgentContext(tools=[slow("a"), slow("b"), sync_tool]), faux=faux)
    agent = traces.one("invoke_agent")
    spans = {s.name: s for s in traces.children(agent) if s.name.startswith("execute_tool")}
    assert set(spans) == {"execute_tool a", "execute_tool b", "execute_tool sync_tool"}
    for name, span in spans.items():
        assert seen[name.removeprefix("execute_tool ")] == span.context.span_id
    a, b = spans["execute_tool a"], spans["execute_tool b"]
    assert a.start_time < b.end_time and b.start_time < a.end_time  # they overlapped


async def test_a_failing_tool_records_its_exception(traces: Traces) -> None:
    async def broken(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        raise ValueError("the disk is full")

    faux = FauxProvider(
        [faux_tool_call("broken", {}), faux_tool_call("missing", {}), faux_text("sorry")]
    )
    await run("go", AgentContext(tools=[make_tool("broken", broken)]), faux=faux)
    span = traces.one("execute_tool broken")
    assert span.status.status_code is StatusCode.ERROR
    assert attrs(span)["error.type"] == "ValueError"
    (event,) = span.events
    assert event.name == "exception"
    assert event.attributes["exception.type"] == "ValueError"
    missing = traces.one("execute_tool missing")
    assert attrs(missing)["error.type"] == "tool_error"
    assert missing.status.status_code is StatusCode.ERROR
    # the run itself ended well
    assert traces.one("invoke_agent").status.status_code is StatusCode.UNSET


async def test_a_failed_answer_marks_the_chat_and_the_run(traces: Traces) -> None:
    faux = FauxProvider([faux_error("the model is down")])
    await run("hi", faux=faux)
    chat, agent = traces.one("chat"), traces.one("invoke_agent")
    for span in (chat, agent):
        assert span.status.status_code is StatusCode.ERROR
        assert span.status.description == "the model is down"
        assert attrs(span)["error.type"] == "error"
    assert attrs(chat)["gen_ai.response.finish_reasons"] == ("error",)


async def test_a_raising_stream_function_ends_the_chat_span_with_its_error(
    traces: Traces,
) -> None:
    faux = FauxProvider([faux_text("never")])

    def stream_fn(model: Any, context: Any, options: Any) -> Any:
        raise RuntimeError("no route to the model")

    await run("hi", config=AgentLoopConfig(model=faux.model), stream_fn=stream_fn)
    chat = traces.one("chat")
    assert attrs(chat)["error.type"] == "RuntimeError"
    assert chat.status.status_code is StatusCode.ERROR
    assert [e.name for e in chat.events] == ["exception"]
    assert attrs(traces.one("invoke_agent"))["error.type"] == "error"


async def test_an_abort_during_a_tool_is_recorded_on_the_tool_and_the_run(
    traces: Traces,
) -> None:
    controller = AbortController()

    async def wait(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        controller.abort()
        await anyio.sleep_forever()

    faux = FauxProvider([faux_tool_call("wait", {}), faux_text("never")])
    await run(
        "go", AgentContext(tools=[make_tool("wait", wait)]), faux=faux, signal=controller.signal
    )
    span = traces.one("execute_tool wait")
    assert attrs(span)["error.type"] == "aborted"
    assert span.status.status_code is StatusCode.ERROR
    agent = traces.one("invoke_agent")
    assert attrs(agent)["error.type"] == "aborted"
    assert len(traces.named("chat")) == 1


async def test_an_abort_while_streaming_is_recorded_on_the_chat_span(traces: Traces) -> None:
    controller = AbortController()
    faux = FauxProvider([faux_text("word " * 200)])
    config = AgentLoopConfig(model=faux.model)
    async with agent_loop(
        [UserMessage(content="hi")], AgentContext(), config, controller.signal
    ) as s:
        async for event in s:
            if event.type == "message_update":
                controller.abort()
    chat = traces.one("chat")
    assert attrs(chat)["error.type"] == "aborted"
    assert attrs(chat)["gen_ai.response.finish_reasons"] == ("aborted",)
    assert attrs(traces.one("invoke_agent"))["error.type"] == "aborted"


async def test_an_outer_cancellation_ends_the_spans(traces: Traces) -> None:
    async def hang(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        await anyio.sleep_forever()

    faux = FauxProvider([faux_tool_call("hang", {})])
    with anyio.move_on_after(0.05):
        await run_agent_loop(
            [UserMessage(content="go")],
            AgentContext(tools=[make_tool("hang", hang)]),
            AgentLoopConfig(model=faux.model),
            lambda event: None,
        )
    agent = traces.one("invoke_agent")
    assert agent.status.status_code is StatusCode.ERROR
    assert attrs(agent)["error.type"] == "CancelledError"
    hang = traces.one("execute_tool hang")  # ended too, not left open
    assert attrs(hang)["error.type"] == "CancelledError"
    assert hang.parent is not None and hang.parent.span_id == agent.context.span_id
    # nothing stays current after the run: the context is as it was
    assert not trace.get_current_span().get_span_context().is_valid


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_a_run_inside_a_tool_is_a_child_of_that_tools_span(traces: Traces) -> None:
    inner = FauxProvider([faux_text("inner answer"), faux_text("agent answer")])

    async def ask_inner(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        # an agent as a tool: once through agent_loop (its own task), once through an Agent
        async with agent_loop(
            [UserMessage(content="sub")], AgentContext(), AgentLoopConfig(model=inner.model)
        ) as stream:
            messages = await stream.result()
        agent = Agent(initial_state={"model": inner.model})
        await agent.prompt("sub again")
        return AgentToolResult.text(f"{len(messages)} {len(agent.state.messages)}")

    outer = FauxProvider([faux_tool_call("ask", {}), faux_text("done")])
    await run("go", AgentContext(tools=[make_tool("ask", ask_inner)]), faux=outer)
    m, i = outer.model.id, inner.model.id
    assert tree(traces) == [
        "invoke_agent",
        f"  chat {m}",
        "  execute_tool ask",
        "    invoke_agent",
        f"      chat {i}",
        "    invoke_agent",
        f"      chat {i}",
        f"  chat {m}",
    ]
    assert len({s.context.trace_id for s in traces.spans}) == 1


async def test_an_agent_prompt_is_one_invoke_agent_span_per_run(traces: Traces) -> None:
    faux = FauxProvider([faux_tool_call("echo", {"x": 1}), faux_text("one"), faux_text("two")])
    agent = Agent(initial_state={"model": faux.model, "tools": [make_tool("echo", _echo)]})
    await agent.prompt("first")
    await agent.prompt("second")
    m = faux.model.id
    assert tree(traces) == [
        "invoke_agent",
        f"  chat {m}",
        "  execute_tool echo",
        f"  chat {m}",
        "invoke_agent",
        f"  chat {m}",
    ]
    runs = traces.named("invoke_agent")
    assert runs[0].context.trace_id != runs[1].context.trace_id
    assert agent.state.usage == run_usage(agent.state.messages)


async def test_content_is_captured_only_when_asked(content_traces: Traces) -> None:
    faux = FauxProvider([faux_tool_call("echo", {"city": "Oslo"}), faux_text("It is sunny.")])
    await run(
        "weather in Oslo?",
        AgentContext(system_prompt="Be brief.", tools=[make_tool("echo", _echo)]),
        faux=faux,
    )
    first, last = content_traces.named("chat")
    a = attrs(first)
    assert "weather in Oslo?" in a["gen_ai.input.messages"]
    assert "Be brief." in a["gen_ai.system_instructions"]
    assert '"city":"Oslo"' in a["gen_ai.output.messages"]
    assert "It is sunny." in attrs(last)["gen_ai.output.messages"]
    t = attrs(content_traces.one("execute_tool echo"))
    assert t["gen_ai.tool.call.arguments"] == '{"city":"Oslo"}'
    assert t["gen_ai.tool.call.result"] == "echo {'city': 'Oslo'}"
    assert "weather in Oslo?" in attrs(content_traces.one("invoke_agent"))["gen_ai.input.messages"]


async def test_without_content_capture_no_text_reaches_an_attribute(traces: Traces) -> None:
    faux = FauxProvider([faux_tool_call("echo", {"city": "Oslo"}), faux_text("It is sunny.")])
    await run(
        "weather in Oslo?",
        AgentContext(system_prompt="Be brief.", tools=[make_tool("echo", _echo)]),
        faux=faux,
    )
    for span in traces.spans:
        text = repr(attrs(span)) + repr([e.attributes for e in span.events])
        for secret in ("Oslo", "sunny", "Be brief"):
            assert secret not in text, (span.name, text)


async def test_no_key_or_header_value_in_any_attribute(content_traces: Traces) -> None:
    faux = FauxProvider([faux_tool_call("echo", {}), faux_text("done")])
    config = AgentLoopConfig(
        model=faux.model,
        api_key="sk-live-KEY-123456789",
        headers={"Authorization": "Bearer HEADER-SECRET-987654", "X-Org": "org-VALUE-555"},
        get_api_key=lambda provider: "sk-hook-KEY-24680",
    )
    await run("hi", AgentContext(tools=[make_tool("echo", _echo)]), config)
    assert content_traces.spans
    for span in content_traces.spans:
        text = repr(attrs(span)) + repr([e.attributes for e in span.events])
        for secret in ("KEY-123456789", "HEADER-SECRET", "org-VALUE", "KEY-24680"):
            assert secret not in text


async def test_uninstrument_stops_tracing(traces: Traces) -> None:
    uninstrument()
    await run("hi", faux=FauxProvider([faux_text("hello")]))
    assert traces.spans == []


async def test_an_agent_name_names_the_run_span() -> None:
    from support.tracing import make_traces

    named = make_traces(agent_name="planner")
    try:
        await run("hi", faux=FauxProvider([faux_text("hello")]))
    finally:
        set_instrumentation(None)
    span = named.one("invoke_agent")
    assert span.name == "invoke_agent planner"
    assert attrs(span)["gen_ai.agent.name"] == "planner"


async def test_instrument_replaces_the_previous_instrumentation(traces: Traces) -> None:
    again = instrument()
    from agentcore import get_instrumentation

    assert get_instrumentation() is again


def test_the_core_never_imports_tracing_or_opentelemetry() -> None:
    """A run without `instrument()` loads neither this package nor the OpenTelemetry API."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from agentcore import Agent\n"
        "from agentcore.testing import FauxProvider, faux_text\n"
        "faux = FauxProvider([faux_text('hi')])\n"
        "Agent(initial_state={'model': faux.model}).prompt_sync('hi')\n"
        "print(sorted(m for m in sys.modules if m.startswith(('agentcore.tracing', "
        "'opentelemetry'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_a_synchronous_run_is_a_child_of_the_callers_span(traces: Traces) -> None:
    """`agent_loop` from plain code runs on a thread of its own, and `prompt_sync` on a portal:
    both nest under the span current where they were called."""
    faux = FauxProvider([faux_text("one"), faux_text("two")])
    tracer = traces.provider.get_tracer("test")
    with tracer.start_as_current_span("request handler") as outer:
        stream = agent_loop(
            [UserMessage(content="hi")], AgentContext(), AgentLoopConfig(model=faux.model)
        )
        stream.result_sync()
        Agent(initial_state={"model": faux.model}).prompt_sync("again")
    runs = traces.named("invoke_agent")
    assert len(runs) == 2
    for span in runs:
        assert span.parent is not None and span.parent.span_id == outer.get_span_context().span_id
