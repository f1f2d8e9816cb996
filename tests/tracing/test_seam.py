"""The instrumentation seam itself, without OpenTelemetry: `TraceTree` nests like the spans
(also a run inside a parallel tool), a raising `start_run`/`end_run` never hurts a run, and the
hooks see each request, retry-free path and tool exactly once."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from agentcore import (
    AgentContext,
    AgentLoopConfig,
    AgentToolResult,
    UserMessage,
    get_instrumentation,
    run_agent_loop,
    set_instrumentation,
)
from agentcore.testing import FauxProvider, faux_text, faux_tool_call
from agentcore.tracing import TraceTree
from support import BACKENDS, make_tool, run

pytestmark = pytest.mark.anyio


@pytest.fixture
def tree() -> Any:
    recorder = TraceTree()
    previous = set_instrumentation(recorder)
    yield recorder
    set_instrumentation(previous)


def names(recorder: TraceTree) -> list[str]:
    out: list[str] = []

    def walk(node: Any, depth: int) -> None:
        out.append("  " * depth + node.name)
        for child in node.children:
            walk(child, depth + 1)

    for root in recorder.roots:
        walk(root, 0)
    return out


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_the_tree_nests_runs_started_in_parallel_tools(tree: TraceTree) -> None:
    inner = FauxProvider([faux_text("a"), faux_text("b")])

    def sub(name: str) -> Any:
        async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
            await run_agent_loop(
                [UserMessage(content=name)],
                AgentContext(),
                AgentLoopConfig(model=inner.model),
                lambda event: None,
            )
            return AgentToolResult.text(name)

        return make_tool(name, execute)

    both = faux_tool_call("x", {})
    both = type(both)(
        content=[*both.content, *faux_tool_call("y", {}).content], stop_reason="tool_use"
    )
    outer = FauxProvider([both, faux_text("done")])
    await run("go", AgentContext(tools=[sub("x"), sub("y")]), faux=outer)
    m, i = outer.model.id, inner.model.id
    assert names(tree) == [
        "invoke_agent",
        f"  chat {m}",
        "  execute_tool x",
        "    invoke_agent",
        f"      chat {i}",
        "  execute_tool y",
        "    invoke_agent",
        f"      chat {i}",
        f"  chat {m}",
    ]
    assert all(n.end is not None for n in tree.roots)
    rendered = tree.render().splitlines()
    assert rendered[0].startswith("invoke_agent  ") and "2 turns" in rendered[0]
    assert rendered[3].startswith("│  └─ invoke_agent  ")


class Raising:
    def __init__(self, where: str) -> None:
        self.where = where
        self.ended = 0

    def start_run(self, run: Any) -> Any:
        if self.where == "start":
            raise RuntimeError("start broke")
        return self

    def start_request(self, model: Any, context: Any) -> None:
        return None

    def start_tool(self, call: Any) -> None:
        return None

    def end_run(self, messages: Any, limit: Any, error: Any) -> None:
        self.ended += 1
        raise RuntimeError("end broke")


@pytest.mark.parametrize("where", ["start", "end"])
async def test_a_raising_start_or_end_run_is_logged_and_the_run_goes_on(
    where: str, caplog: pytest.LogCaptureFixture
) -> None:
    instrumentation = Raising(where)
    previous = set_instrumentation(instrumentation)
    try:
        done = await run("hi", faux=FauxProvider([faux_text("hello")]))
    finally:
        set_instrumentation(previous)
    assert done.result[-1].stop_reason == "stop"
    (record,) = [r for r in caplog.records if r.name == "agentcore"]
    assert record.levelno == logging.ERROR
    assert f"{where}_run raised" in record.getMessage()
    assert instrumentation.ended == (0 if where == "start" else 1)


def test_set_instrumentation_returns_the_one_it_replaces() -> None:
    first, second = TraceTree(), TraceTree()
    assert set_instrumentation(first) is None
    assert set_instrumentation(second) is first
    assert get_instrumentation() is second
    assert set_instrumentation(None) is second
    assert get_instrumentation() is None


class Counting:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def start_run(self, run: Any) -> Any:
        self.calls.append(f"run {len(run.prompts)} prompt(s), {len(run.tools)} tool(s)")
        return self

    def start_request(self, model: Any, context: Any) -> Any:
        self.calls.append(f"request with {len(context.messages)} messages")
        return self

    def on_retry(self, attempt: int, error: str, delay: float) -> None:
        self.calls.append("retry")

    def on_first_event(self) -> None:
        self.calls.append("first event")

    def end_request(self, message: Any, error: Any) -> None:
        self.calls.append(f"end request {message.stop_reason}")

    def start_tool(self, call: Any) -> Any:
        self.calls.append(f"tool {call.name}")
        return self

    def executing(self) -> Any:
        import contextlib

        self.calls.append("executing")
        return contextlib.nullcontext()

    def end_tool(self, result: Any, is_error: bool, error: Any) -> None:
        self.calls.append(f"end tool error={is_error}")

    def end_run(self, messages: Any, limit: Any, error: Any) -> None:
        self.calls.append(f"end run {len(messages)} messages")


async def test_each_hook_is_called_once_in_order() -> None:
    counting = Counting()
    previous = set_instrumentation(counting)

    async def echo(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult.text("ok")

    try:
        faux = FauxProvider(
            [faux_tool_call("echo", {}), faux_tool_call("nope", {}), faux_text("x")]
        )
        await run("hi", AgentContext(tools=[make_tool("echo", echo)]), faux=faux)
    finally:
        set_instrumentation(previous)
    assert counting.calls == [
        "run 1 prompt(s), 1 tool(s)",
        "request with 1 messages",
        "first event",
        "end request tool_use",
        "tool echo",
        "executing",
        "end tool error=False",
        "request with 3 messages",
        "first event",
        "end request tool_use",
        "tool nope",  # an unknown tool: no execute, so no `executing`
        "end tool error=True",
        "request with 5 messages",
        "first event",
        "end request stop",
        "end run 6 messages",
    ]
