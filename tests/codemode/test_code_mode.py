"""Code mode on the real Monty sandbox, driven by the faux provider: nested calls through the
one pipeline (events with the parent's id, hooks), REPL state, errors and limits as results."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

pytest.importorskip("pydantic_monty")

from agentcore import (
    AgentContext,
    AgentLoopConfig,
    BeforeToolCallResult,
    ToolExecutionMode,
    UserMessage,
    run_agent_loop,
    tool,
)
from agentcore.codemode import CodeLimits, code_mode
from agentcore.messages import ToolCall
from agentcore.testing import FauxProvider, faux_message, faux_text, faux_tool_call

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@tool
async def get_weather(city: str) -> dict[str, Any]:
    """The weather in a city.

    Args:
        city: the city's name.
    """
    return {"city": city, "temp": len(city) * 3}


async def _run(snippets: list[str], **config: Any) -> tuple[list[Any], list[Any]]:
    faux = FauxProvider(
        [faux_tool_call("run_code", {"code": c}) for c in snippets] + [faux_text("done")]
    )
    events: list[Any] = []
    tool_ = code_mode([get_weather], limits=config.pop("limits", None))
    messages = await run_agent_loop(
        [UserMessage(content="go")],
        AgentContext(tools=[tool_]),
        AgentLoopConfig(model=faux.model, **config),
        events.append,
    )
    results = [m for m in messages if m.role == "tool_result"]
    return results, events


def test_signature_in_description() -> None:
    text = code_mode([get_weather]).description
    assert "async def get_weather(*, city: str) -> Any:" in text
    assert "city: the city's name." in text


async def test_nested_calls_pass_the_pipeline_with_the_parent_id() -> None:
    seen: list[str] = []

    def before(ctx: Any) -> BeforeToolCallResult | None:
        seen.append(ctx.tool_call.name)
        if ctx.tool_call.arguments.get("city") == "Oslo":
            return BeforeToolCallResult(block=True, reason="no Oslo")
        return None

    code = (
        "import asyncio\n"
        "r = await asyncio.gather(get_weather(city='Paris'), get_weather(city='Rome'))\n"
        "print(len(r))\n"
        "max(r, key=lambda d: d['temp'])['city']"
    )
    results, events = await _run(
        [code, "r[1]['city']", "await get_weather(city='Oslo')"], before_tool_call=before
    )
    assert results[0].content[0].text == "2\nParis"
    assert results[1].content[0].text == "Rome"  # the REPL state of the run
    assert results[2].is_error and "no Oslo" in results[2].content[0].text
    assert seen.count("get_weather") == 3
    tools = [e for e in events if e.type.startswith("tool_execution")]
    first = [e for e in tools if e.tool_call_id.startswith(results[0].tool_call_id)]
    assert [(e.type, e.parent_tool_call_id) for e in first] == [
        ("tool_execution_start", None),
        ("tool_execution_start", results[0].tool_call_id),
        ("tool_execution_end", results[0].tool_call_id),
        ("tool_execution_start", results[0].tool_call_id),
        ("tool_execution_end", results[0].tool_call_id),
        ("tool_execution_end", None),  # the snippet's end after every nested call's
    ]


async def test_errors_and_limits_are_results() -> None:
    results, _ = await _run(
        [
            "1/0",
            "def f(:\n  pass",
            "nope(x=1)",
            "while True:\n  pass",
            "x = [0] * 10**9",
            "def r(n):\n  return r(n + 1)\nr(0)",
            "for c in ['a', 'b', 'c']:\n  await get_weather(city=c)",
            "open('/etc/passwd').read()",
            "import socket",
            "import os\nos.getenv('HOME')",
            "import time\ntime.time()",
        ],
        limits=CodeLimits(timeout=1.0, memory=32 * 1024 * 1024, recursion=50, tool_calls=2),
    )
    texts = [r.content[0].text for r in results]
    assert all(r.is_error for r in results), texts
    assert "ZeroDivisionError" in texts[0] and "line 1" in texts[0]
    assert "SyntaxError" in texts[1]
    assert "NameError" in texts[2]
    assert texts[3].startswith("Limit reached: timeout")
    assert texts[4].startswith("Limit reached: memory")
    assert texts[5].startswith("Limit reached: recursion")
    assert texts[6].startswith("Limit reached: tool_calls")
    assert "PermissionError" in texts[7]
    assert "ModuleNotFoundError" in texts[8]
    assert "not supported" in texts[9] and "not supported" in texts[10]


def test_limits_default_to_code_limits() -> None:
    import inspect

    assert inspect.signature(code_mode).parameters["limits"].default == CodeLimits()


def _sandbox_workers() -> list[int]:
    """The pids of this process's Monty workers (its child processes running `monty`)."""
    import os
    from pathlib import Path

    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == os.getpid() and b"monty" in cmdline and state != "Z":
            pids.append(int(proc.name))
    return pids


async def _until_gone(workers: set[int], seconds: float = 10.0) -> set[int]:
    """The workers of `workers` still alive after waiting up to `seconds` for them to exit
    (a killed worker takes a moment to go on a loaded machine)."""
    with anyio.move_on_after(seconds):
        while workers & set(_sandbox_workers()):  # noqa: ASYNC110  (other processes)
            await anyio.sleep(0.01)
    return workers & set(_sandbox_workers())


@tool
async def kill_sandbox() -> str:
    """Kill the sandbox's worker process (a crash, as the worker dying of its own would be)."""
    import os
    import signal

    pids = _sandbox_workers()
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    return f"killed {len(pids)}"


async def test_a_crashed_worker_is_an_error_result_and_the_next_snippet_gets_a_fresh_one() -> None:
    faux = FauxProvider(
        [
            faux_tool_call("run_code", {"code": "x = 1\nx"}),
            faux_tool_call("run_code", {"code": "await kill_sandbox()\n'unreachable'"}),
            faux_tool_call("run_code", {"code": "y = 2\ny"}),
            faux_tool_call("run_code", {"code": "x"}),
            faux_text("done"),
        ]
    )
    messages = await run_agent_loop(
        [UserMessage(content="go")],
        AgentContext(tools=[code_mode([get_weather, kill_sandbox])]),
        AgentLoopConfig(model=faux.model),
        lambda event: None,
    )
    results = [m for m in messages if m.role == "tool_result"]
    texts = [r.content[0].text for r in results]
    assert not results[0].is_error and texts[0] == "1"
    assert results[1].is_error and "worker crashed" in texts[1], texts[1]
    assert not results[2].is_error and texts[2] == "2"  # a fresh worker
    assert results[3].is_error and "NameError" in texts[3]  # without the crashed one's state


async def test_nested_call_ids_are_numbered_per_parent_call() -> None:
    code = "await get_weather(city='Paris')\nawait get_weather(city='Rome')"
    faux = FauxProvider(
        [
            faux_message(
                "",
                ToolCall(id="p1", name="run_code", arguments={"code": code}),
                ToolCall(id="p2", name="run_code", arguments={"code": code}),
            ),
            faux_text("done"),
        ]
    )
    events: list[Any] = []
    await run_agent_loop(
        [UserMessage(content="go")],
        AgentContext(tools=[code_mode([get_weather])]),
        AgentLoopConfig(model=faux.model, tool_execution=ToolExecutionMode.SEQUENTIAL),
        events.append,
    )
    ids = [e.tool_call_id for e in events if e.type == "tool_execution_start"]
    assert ids == ["p1", "p1.1", "p1.2", "p2", "p2.1", "p2.2"]


@tool
async def slow(seconds: float) -> str:
    """Wait, then say so."""
    import anyio

    await anyio.sleep(seconds)
    return "slept"


@pytest.mark.parametrize(
    "code",
    [
        "import asyncio\nawait asyncio.gather(slow(seconds=3600), get_weather(city='Oslo'))",
        "await get_weather(city='Oslo')\nwhile True:\n  pass",
    ],
    ids=["blocked-in-a-slow-nested-tool", "infinite-loop"],
)
async def test_abort_during_a_snippet(code: str) -> None:
    """CONFORMANCE P2: every nested call gets one result, the snippet one error result, the
    run ends after that turn (no new model request)."""
    from agentcore.abort import AbortController

    controller = AbortController()
    events: list[Any] = []

    def emit(event: Any) -> None:
        events.append(event)
        if event.type == "tool_execution_end" and event.parent_tool_call_id is not None:
            controller.abort()  # the snippet is running: in `slow`, or about to loop forever

    faux = FauxProvider([faux_tool_call("run_code", {"code": code}), faux_text("never asked")])
    before = set(_sandbox_workers())  # another test's worker, still exiting, is not this one's
    messages = await run_agent_loop(
        [UserMessage(content="go")],
        AgentContext(tools=[code_mode([get_weather, slow], limits=CodeLimits(timeout=600))]),
        AgentLoopConfig(model=faux.model),
        emit,
        controller.signal,
    )
    results = [m for m in messages if m.role == "tool_result"]
    assert len(results) == 1 and results[0].is_error
    assert "abort" in results[0].content[0].text.lower(), results[0].content[0].text
    starts = [e.tool_call_id for e in events if e.type == "tool_execution_start"]
    ends = [e.tool_call_id for e in events if e.type == "tool_execution_end"]
    assert sorted(starts) == sorted(ends)  # one end for every call, nested ones included
    assert ends[-1] == results[0].tool_call_id  # the snippet's end after every nested call's
    assert [m.role for m in messages][-1] == "tool_result"  # no model request after the turn
    assert events[-1].type == "agent_end"
    nested = [e for e in events if e.type == "tool_execution_end" and e.parent_tool_call_id]
    if "slow" in code:
        slow_end = next(e for e in nested if e.tool_name == "slow")
        assert slow_end.is_error and "abort" in slow_end.result.content[0].text.lower()
    mine = set(_sandbox_workers()) - before
    assert await _until_gone(mine) == set()  # no worker is left running the snippet
