"""`agentcore run --json` lines of a run with handoffs (issue 34): the `agent_switch` event, the
agent of a tool event and `agent_end.last_agent`; a run without handoffs writes none of them."""

from __future__ import annotations

from agentcore import AgentEndEvent, AgentSwitchEvent, AgentToolResult, ToolExecutionEndEvent
from agentcore.cli._json import event_to_json


def test_a_switch_a_named_call_and_the_last_agent_are_written() -> None:
    switch = AgentSwitchEvent(from_agent="triage", to_agent="billing", tool_call_id="h1")
    assert event_to_json(switch) == {
        "type": "agent_switch",
        "from_agent": "triage",
        "to_agent": "billing",
        "tool_call_id": "h1",
        "returns": False,
    }
    result = AgentToolResult.text("ok")
    named = ToolExecutionEndEvent(
        tool_call_id="c", tool_name="refund", result=result, is_error=False, agent="billing"
    )
    assert event_to_json(named)["agent"] == "billing"
    assert event_to_json(AgentEndEvent(messages=[], last_agent="billing"))["last_agent"] == (
        "billing"
    )
    plain = ToolExecutionEndEvent(tool_call_id="c", tool_name="t", result=result, is_error=False)
    assert "agent" not in event_to_json(plain)
    assert "last_agent" not in event_to_json(AgentEndEvent(messages=[]))
