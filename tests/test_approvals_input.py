"""Input requests: a tool that asks the user for input while it runs (`InputRequired`, what an
MCP client with `elicitation="approvals"` raises) waits as a call waiting for approval does, and
runs again with the answers; on a real Agent with the faux model."""

from __future__ import annotations

from typing import Any

import pytest

from agentcore import Agent, AgentTool, AgentToolResult, ConfigError, ToolResultMessage, tool
from agentcore.approvals import ApprovalRequest, InputRequired, input_answer
from agentcore.messages import ToolCall
from agentcore.testing import FauxProvider, check_well_formed, faux_message, faux_text

pytestmark = pytest.mark.anyio

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
AGE = {"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"]}


class Form(AgentTool):
    """Asks two questions, one after the other; counts its runs."""

    def __init__(self) -> None:
        super().__init__(name="form", description="Fill a form.", parameters={"type": "object"})
        self.runs = 0

    async def execute(self, tool_call_id: str, args: Any, *rest: Any) -> AgentToolResult:
        self.runs += 1
        name = input_answer(tool_call_id, "name")
        if name is None:
            raise InputRequired("name", "Your name?", NAME)
        age = input_answer(tool_call_id, "age")
        if age is None:
            raise InputRequired("age", "Your age?", AGE)
        if name.action != "accept" or age.action != "accept":
            return AgentToolResult.text(f"not filled: {name.action}/{age.action}")
        assert name.content is not None and age.content is not None
        return AgentToolResult.text(f"{name.content['name']}, {age.content['age']}")


@tool(requires_approval=True)
def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


async def test_two_questions_in_turn_with_an_approval_in_the_same_batch() -> None:
    form = Form()
    faux = FauxProvider(
        [
            faux_message(
                ToolCall(id="f", name="form", arguments={}),
                ToolCall(id="d", name="delete", arguments={"path": "x"}),
            ),
            faux_text("All done."),
        ]
    )
    events: list[Any] = []
    agent = Agent(initial_state={"model": faux.model, "tools": [form, delete]})
    agent.subscribe(lambda event, *_: events.append(event))
    await agent.prompt("go")
    check_well_formed(events)
    waiting = agent.state.pending_approvals
    assert [(r.tool_call_id, r.input_key) for r in waiting] == [("f", "name"), ("d", None)]
    assert waiting[0].reason == "Your name?" and waiting[0].input_schema == NAME
    assert not any(isinstance(m, ToolResultMessage) for m in agent.state.messages)

    with pytest.raises(ConfigError, match="name"):
        agent.approve("f", arguments={"name": 3})
    agent.approve("f", arguments={"name": "Ann"})
    agent.approve("d")
    events.clear()
    await agent.continue_()
    check_well_formed(events)
    # the delete ran; the form ran again and asked its second question
    (result,) = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    assert result.tool_call_id == "d"
    (request,) = agent.state.pending_approvals
    assert isinstance(request, ApprovalRequest)
    assert (request.tool_call_id, request.input_key, request.reason) == ("f", "age", "Your age?")

    agent.approve("f", arguments={"age": 41})
    events.clear()
    await agent.continue_()
    check_well_formed(events)
    results = {m.tool_call_id: m for m in agent.state.messages if isinstance(m, ToolResultMessage)}
    assert results["f"].content[0].text == "Ann, 41"  # type: ignore[union-attr]
    assert form.runs == 3
    assert agent.state.messages[-1].text == "All done."
    assert len(faux.calls) == 2  # the model was asked only after every call had its result


async def test_a_new_message_cancels_a_question() -> None:
    form = Form()
    faux = FauxProvider(
        [
            faux_message(ToolCall(id="f", name="form", arguments={})),
            faux_text("ok"),
            faux_text("ok"),
        ]
    )
    agent = Agent(initial_state={"model": faux.model, "tools": [form]})
    await agent.prompt("go")
    agent.deny("f", "no")  # a decline: the tool runs again and is told
    await agent.continue_()
    (request,) = agent.state.pending_approvals  # its second question
    assert request.input_key == "age"
    await agent.prompt("never mind")  # a new message: the question is cancelled
    results = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    assert results[0].content[0].text == "not filled: decline/cancel"  # type: ignore[union-attr]
