"""`agentcore.tools.task_tool`, the one skeleton of the agents-as-tools: `agentcore.agent_tool`
(an agent here) and `agentcore.a2a.a2a_tool` (a remote one) are built on it, so the model sees
the same `task` parameter from both."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from agentcore import (
    AbortController,
    AbortSignal,
    AgentLoopConfig,
    AgentToolResult,
    TextContent,
    ToolUpdateCallback,
)
from agentcore.testing import FauxProvider
from agentcore.tools import TASK_SCHEMA, task_tool

SRC = Path(__file__).parents[1] / "src" / "agentcore"

# what the model has seen as the agents-as-tools' parameters, pinned
SEEN_BY_MODELS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "task": {
            "type": "string",
            "description": "What the agent should do, with everything it needs to know: it "
            "does not see this conversation.",
        }
    },
    "required": ["task"],
}


@pytest.mark.anyio
async def test_a_task_tool_hands_the_task_its_signal_and_updates_to_run() -> None:
    seen: list[tuple[str, AbortSignal]] = []

    async def run(task: str, signal: AbortSignal, on_update: ToolUpdateCallback) -> AgentToolResult:
        seen.append((task, signal))
        on_update(AgentToolResult(content=[TextContent(text="half")]))
        return AgentToolResult(content=[TextContent(text=f"did {task}")])

    tool = task_tool(run, name="helper", description="Helps.", label="Helper", timeout=5.0)
    assert (tool.name, tool.description, tool.label, tool.timeout) == (
        "helper",
        "Helps.",
        "Helper",
        5.0,
    )
    assert tool.llm_tool.parameters == SEEN_BY_MODELS == TASK_SCHEMA
    updates: list[AgentToolResult] = []
    signal = AbortController().signal
    result = await tool.execute("c1", {"task": "it"}, signal, updates.append)
    assert result.content == [TextContent(text="did it")]
    assert seen == [("it", signal)] and updates[0].content == [TextContent(text="half")]


def test_the_agents_as_tools_are_task_tools() -> None:
    pytest.importorskip("a2a")
    from agentcore import agent_tool
    from agentcore.a2a import a2a_tool

    model = FauxProvider([]).model
    local = agent_tool(AgentLoopConfig(model=model), name="local", description="Here.")
    remote = a2a_tool("http://127.0.0.1:9", name="remote", description="There.")
    assert local.llm_tool.parameters == remote.llm_tool.parameters == SEEN_BY_MODELS
    # one skeleton: neither integration keeps its own copy of the schema or builds the tool
    for module in ("_tools/agent_tool.py", "a2a/_tool.py"):
        tree = ast.parse((SRC / module).read_text(encoding="utf-8"))
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        assert "TASK_SCHEMA" not in names and "task_tool" in names, module
        calls = [
            n.func.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        ]
        assert "AgentTool" not in calls, module
