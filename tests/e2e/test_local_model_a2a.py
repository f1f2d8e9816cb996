"""Two agentcore agents on the real local model, one delegating to the other over A2A: the inner
agent served by `serve_a2a` on 127.0.0.1, the outer one calling it through `a2a_tool`.

Only the protocol is checked (the outer model called the tool with a task, the remote task
completed with a non-empty answer and the inner run's usage, the events stayed well formed),
never the models' wording.
"""

from __future__ import annotations

import functools

import anyio
import pytest

from agentcore import (
    AgentContext,
    AgentLoopConfig,
    AssistantMessage,
    ToolResultMessage,
)
from agentcore.testing import check_well_formed

from .local_server import LocalModel
from .test_local_model import REQUEST_TIMEOUT, run_loop

pytestmark = [pytest.mark.local_llm, pytest.mark.anyio]


@pytest.mark.timeout(REQUEST_TIMEOUT * 4 + 30)
async def test_an_agent_delegates_to_another_over_a2a(local_model: LocalModel) -> None:
    pytest.importorskip("a2a")
    from agentcore.a2a import a2a_tool, serve_a2a

    inner = AgentLoopConfig(model=local_model.model, temperature=0, max_tokens=48)
    turns = 0

    def at_most_two_turns(ctx: object) -> bool:  # bounds a model that keeps calling the tool
        nonlocal turns
        turns += 1
        return turns >= 2

    async with anyio.create_task_group() as group:
        url = await group.start(
            functools.partial(
                serve_a2a,
                inner,
                port=0,
                context=AgentContext(system_prompt="You are a geography expert. Answer briefly."),
                name="geographer",
            )
        )
        outer = AgentLoopConfig(
            model=local_model.model,
            temperature=0,
            max_tokens=96,
            should_stop_after_turn=at_most_two_turns,
        )
        context = AgentContext(
            system_prompt="You answer by asking the geographer tool. Always call it first.",
            tools=[a2a_tool(url, name="geographer", description="Answers geography questions.")],
        )
        events, messages = await run_loop(
            "Use the geographer tool to find the capital of France.",
            context,
            outer,
            requests=3,
        )
        group.cancel_scope.cancel()
    check_well_formed(events)
    first = messages[1]
    assert isinstance(first, AssistantMessage), messages
    assert first.stop_reason == "tool_use", (first.stop_reason, first.error_message, first.content)
    call = first.tool_calls[0]
    assert call.name == "geographer" and isinstance(call.arguments.get("task"), str)
    result = next(m for m in messages if isinstance(m, ToolResultMessage))
    assert not result.is_error, result.content
    assert result.content and result.content[0].text.strip()  # type: ignore[union-attr]
    assert result.details["state"] == "TASK_STATE_COMPLETED"
    assert result.usage is not None and result.usage.output > 0  # the inner run's usage
    assert any(e.type == "tool_execution_update" for e in events)  # streamed over A2A
