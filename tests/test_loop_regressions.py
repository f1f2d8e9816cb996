"""Regressions of the loop found after the conformance suite was written."""

from __future__ import annotations

import pytest

from agentcore import (
    AbortController,
    AgentContext,
    AgentLoopConfig,
    NextTurn,
    PrepareNextTurnContext,
    UserMessage,
    agent_loop,
    tool,
)
from agentcore.testing import FauxProvider, check_well_formed, faux_text, faux_tool_call

pytestmark = pytest.mark.anyio


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"


async def test_abort_inside_prepare_next_turn_sends_no_new_request() -> None:
    faux = FauxProvider([faux_tool_call("ping"), faux_text("never asked")])
    controller = AbortController()

    def prepare(ctx: PrepareNextTurnContext) -> NextTurn | None:
        controller.abort("stop here")
        return None

    config = AgentLoopConfig(model=faux.model, prepare_next_turn=prepare)
    run = agent_loop(
        [UserMessage(content="go")], AgentContext(tools=[ping]), config, signal=controller.signal
    )
    events = [event async for event in run]
    messages = await run.result()
    check_well_formed(events)
    assert faux.call_count == 1
    assert [m.role for m in messages] == ["user", "assistant", "tool_result"]
    assert faux.pending == 1
