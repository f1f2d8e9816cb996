"""The tools and snippets of the suspension tests (tests/codemode/test_code_mode_approvals.py),
importable without pytest: its restart test runs the first half in a child process."""

from __future__ import annotations

from typing import Any

from agentcore import Agent, AgentTool, tool
from agentcore.codemode import code_mode
from agentcore.messages import ToolCall
from agentcore.testing import FauxProvider, faux_message

SNIPPET = """\
import asyncio
a = await log(item='first')
b, c = await asyncio.gather(log(item='second'), delete(path='x'))
await log(item='after ' + c)
print('printed before and after')
[a, b, c]
"""

DENIED = """\
a = await log(item='first')
try:
    c = await delete(path='x')
except RuntimeError as e:
    c = 'refused: ' + str(e)
await log(item='after')
c
"""


def tools_for(ran: list[str], **options: Any) -> list[AgentTool]:
    """A fresh `run_code` over `log` (no approval) and `delete` (approval), each recording in
    `ran` every time it runs (the side effects the test counts)."""

    @tool
    def log(item: str) -> str:
        """Log an item."""
        ran.append(item)
        return item

    @tool(requires_approval=True)
    def delete(path: str) -> str:
        """Delete a file."""
        ran.append(f"delete {path}")
        return f"deleted {path}"

    return [code_mode([log, delete], **options)]


def first_answer(code: str) -> Any:
    return faux_message(ToolCall(id="c1", name="run_code", arguments={"code": code}))


def agent_for(
    faux: FauxProvider, tools: list[AgentTool], messages: Any = None, **kwargs: Any
) -> Agent:
    state: dict[str, Any] = {"model": faux.model, "tools": tools}
    if messages is not None:  # (a new Agent on the transcript of another)
        state["messages"] = list(messages)
    return Agent(initial_state=state, **kwargs)
