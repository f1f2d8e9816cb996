"""`agentcore.tools.tool_pipeline()`: what a tool reaches during a run, and when it is made. The
run registers itself once (not once per batch), and each batch's pipeline is made on first use."""

from __future__ import annotations

from typing import Any

import pytest

from agentcore import AgentContext, AgentLoopConfig, ToolCall, run_agent_loop, tool
from agentcore._tools import pipeline as pipeline_var
from agentcore.testing import FauxProvider, faux_message, faux_text
from agentcore.tools import tool_pipeline
from support import run, texts, user

pytestmark = pytest.mark.anyio


def calls(*names: str, batch: int) -> Any:
    return faux_message(*(ToolCall(id=f"b{batch}-{i}", name=n) for i, n in enumerate(names)))


async def test_one_pipeline_per_batch_and_none_outside_a_batch() -> None:
    seen: list[tuple[str, Any]] = []

    @tool
    async def look() -> str:
        """Look at the pipeline."""
        seen.append(("tool", tool_pipeline()))
        return "ok"

    def transform_context(messages: list[Any]) -> list[Any]:  # before each request: no batch
        seen.append(("between", tool_pipeline()))
        return messages

    faux = FauxProvider([calls("look", "look", batch=1), calls("look", batch=2), faux_text("end")])
    config = AgentLoopConfig(model=faux.model, transform_context=transform_context)
    r = await run("go", AgentContext(tools=[look]), config)
    assert texts(r.result[-1]) == "end"
    assert [kind for kind, _ in seen] == ["between", "tool", "tool", "between", "tool", "between"]
    assert all(p is None for kind, p in seen if kind == "between")
    first, second, third = (p for kind, p in seen if kind == "tool")
    assert first is not None and first is second  # the same batch: the same pipeline
    assert third is not None and third is not first  # another batch: its own
    assert third.scope is first.scope  # the run
    assert tool_pipeline() is None  # outside a run


async def test_the_run_registers_once_not_per_batch() -> None:
    registered: list[Any] = []

    @tool
    async def quiet() -> str:
        """Never asks for the pipeline."""
        registered.append(pipeline_var.current.get())
        return "ok"

    faux = FauxProvider([calls("quiet", batch=1), calls("quiet", batch=2), faux_text("end")])
    await run_agent_loop(
        [user("go")], AgentContext(tools=[quiet]), AgentLoopConfig(model=faux.model), lambda e: None
    )
    assert len(registered) == 2
    assert registered[0] is not None and registered[0] is registered[1]
    assert pipeline_var.current.get() is None  # reset when the run ends


async def test_a_sub_run_between_its_batches_sees_no_pipeline_of_the_outer_batch() -> None:
    inner_seen: list[Any] = []

    def inner_transform(messages: list[Any]) -> list[Any]:
        inner_seen.append(tool_pipeline())
        return messages

    @tool
    async def delegate() -> str:
        """Run a sub-agent without tools."""
        inner = FauxProvider([faux_text("inner")])
        config = AgentLoopConfig(model=inner.model, transform_context=inner_transform)
        await run_agent_loop([user("sub")], AgentContext(), config, lambda e: None)
        outer = tool_pipeline()
        inner_seen.append(outer)
        return "ok"

    faux = FauxProvider([calls("delegate", batch=1), faux_text("end")])
    r = await run("go", AgentContext(tools=[delegate]), AgentLoopConfig(model=faux.model))
    assert texts(r.result[-1]) == "end"
    assert inner_seen[0] is None  # the sub-run's own request: no batch of its own running
    assert inner_seen[1] is not None  # back in the outer tool: the outer batch's pipeline
