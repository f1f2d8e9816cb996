"""Hostile snippets test_code_mode.py does not cover, through the public API on the real Monty
sandbox: huge output (cut at the limit, with a note), the environment, the clock, processes, and
deep recursion under the default limits; each an error result naming the limit or the refusal
(a value over the output limit is cut, with a note)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("pydantic_monty")

from agentcore import AgentContext, AgentLoopConfig, UserMessage, run_agent_loop, tool
from agentcore.codemode import CodeLimits, code_mode
from agentcore.testing import FauxProvider, faux_text, faux_tool_call

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@tool
async def echo(text: str) -> str:
    """Echo a text.

    Args:
        text: what to echo.
    """
    return text


async def _results(snippets: list[str], limits: CodeLimits | None = None) -> list[Any]:
    faux = FauxProvider(
        [faux_tool_call("run_code", {"code": c}) for c in snippets] + [faux_text("done")]
    )
    messages = await run_agent_loop(
        [UserMessage(content="go")],
        AgentContext(tools=[code_mode([echo], limits=limits)]),
        AgentLoopConfig(model=faux.model),
        lambda _: None,
    )
    return [m for m in messages if m.role == "tool_result"]


async def test_huge_output_names_the_output_limit_and_a_huge_value_is_cut() -> None:
    results = await _results(
        ["for i in range(5000):\n  print('x' * 100)", "'y' * 1000000"],
        CodeLimits(output=1000),
    )
    printed, value = (r.content[0].text for r in results)
    assert results[0].is_error  # not the heap's memory limit, which it was named before
    assert printed.startswith("Limit reached: output (1,000 characters of printed output)")
    assert not results[1].is_error
    assert value.startswith("y" * 1000) and "[value cut: 999,000 more characters" in value


@pytest.mark.parametrize(
    ("snippet", "refusal"),
    [
        ("import os\nos.environ['HOME']", "not supported"),
        ("import os\nos.environ.get('PATH')", "not supported"),
        ("import datetime\ndatetime.datetime.now()", "not supported"),
        ("import subprocess", "ModuleNotFoundError"),
        ("import pathlib\npathlib.Path('/etc/passwd').read_text()", "PermissionError"),
        ("__import__('os')", "NameError"),
    ],
)
async def test_the_host_is_out_of_reach(snippet: str, refusal: str) -> None:
    (result,) = await _results([snippet])
    assert result.is_error, result.content[0].text
    assert refusal in result.content[0].text


async def test_deep_recursion_under_the_default_limit() -> None:
    (result,) = await _results(["def r(n):\n  return r(n + 1)\nr(0)"])
    assert result.is_error
    assert result.content[0].text.startswith("Limit reached: recursion (depth 200)")
