"""Code mode on the real Monty sandbox, driven by the faux provider: nested calls through the
one pipeline (events with the parent's id, hooks), REPL state, errors and limits as results."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("pydantic_monty")

from agentcore import (
    AgentContext,
    AgentLoopConfig,
    BeforeToolCallResult,
    UserMessage,
    run_agent_loop,
    tool,
)
from agentcore.codemode import CodeLimits, code_mode
from agentcore.testing import FauxProvider, faux_text, faux_tool_call

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
