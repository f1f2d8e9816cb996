"""Tool approvals through the web endpoint (the approvals API of agentcore; these tests skip on
an agentcore without it): a call that needs approval ends the run with an AG-UI `interrupt`, the
state lists it, and a decision over HTTP (or an AG-UI `resume`) continues the run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ag_ui.core import Event
from pydantic import TypeAdapter

from agentcore import AgentTool, AgentToolResult, tool
from agentcore.testing import faux_text, faux_tool_call

from .web_support import Served, open_events, start_server, stop_server

EVENT: TypeAdapter[Any] = TypeAdapter(Event)


def _served(tmp_path: Path) -> Served:
    @tool(requires_approval=True)
    def remove(path: str) -> str:
        """Remove a file."""
        return f"removed {path}"

    s = start_server(tmp_path, tools=[remove])
    s.faux.set_responses(
        [
            faux_tool_call("remove", {"path": "a.txt"}, id="call_a"),
            faux_text("Done."),
            faux_tool_call("remove", {"path": "b.txt"}, id="call_b"),
            faux_text("Not removed, as you wish."),
        ]
    )
    return s


def test_an_approval_interrupts_the_run_and_a_decision_continues_it(tmp_path: Path) -> None:
    served = _served(tmp_path)
    try:
        with served.client() as client:
            sid = client.post("/api/sessions", json={}).json()["id"]
            with open_events(client, sid) as reader:
                reader.until("STATE_SNAPSHOT")
                client.post(f"/api/sessions/{sid}/prompt", json={"text": "remove a.txt"})
                events = reader.until("RUN_FINISHED", "RUN_ERROR")
                finished = EVENT.validate_python(events[-1].data)
                assert finished.outcome.type == "interrupt"
                assert [i.tool_call_id for i in finished.outcome.interrupts] == ["call_a"]
                assert not any(e.type == "TOOL_CALL_RESULT" for e in events)
                state = reader.until("STATE_SNAPSHOT")[-1].data["snapshot"]
                assert [p["toolCallId"] for p in state["pendingApprovals"]] == ["call_a"]
                assert state["pendingApprovals"][0]["arguments"] == {"path": "a.txt"}
                decided = client.post(
                    f"/api/sessions/{sid}/approvals/call_a", json={"approved": True}
                )
                assert decided.status_code == 200, decided.text
                after = reader.until("RUN_FINISHED", "RUN_ERROR")
            result = next(e.data for e in after if e.type == "TOOL_CALL_RESULT")
            assert result["toolCallId"] == "call_a" and result["content"] == "removed a.txt"
            assert EVENT.validate_python(after[-1].data).outcome.type == "success"
            again = client.post(f"/api/sessions/{sid}/approvals/call_a", json={"approved": True})
            assert again.status_code in (400, 409) and "call_a" in again.json()["error"]
    finally:
        stop_server(served)


def test_an_ag_ui_resume_denies_a_call(tmp_path: Path) -> None:
    served = _served(tmp_path)
    served.faux.set_responses(
        [
            faux_tool_call("remove", {"path": "b.txt"}, id="call_b"),
            faux_text("Not removed."),
        ]
    )
    try:
        with served.client() as client:
            body = {
                "threadId": "t1",
                "runId": "r1",
                "messages": [{"id": "u", "role": "user", "content": "remove b.txt"}],
            }
            with client.stream("POST", "/api/ag-ui", json=body) as response:
                lines = [line for line in response.iter_lines() if line.startswith("data: ")]
            assert '"interrupt"' in lines[-1]
            resume = {
                "threadId": "t1",
                "runId": "r2",
                "messages": [],
                "resume": [
                    {
                        "interruptId": "call_b",
                        "status": "resolved",
                        "payload": {"approved": False, "reason": "keep it"},
                    }
                ],
            }
            with client.stream("POST", "/api/ag-ui", json=resume) as response:
                lines = [line for line in response.iter_lines() if line.startswith("data: ")]
            joined = "\n".join(lines)
            assert '"TOOL_CALL_RESULT"' in joined and "keep it" in joined
            assert '"runId":"r2"' in lines[-1] and '"success"' in lines[-1]
    finally:
        stop_server(served)


def test_a_tools_question_is_an_interrupt_with_its_schema_and_the_answer_is_checked(
    tmp_path: Path,
) -> None:
    """A tool that asks the user for input while it runs (as an MCP server's elicitation does
    with `elicitation="approvals"`): an `input_required` interrupt carrying the schema, the
    state's `inputSchema`, an answer off the schema refused naming the field, and the call run
    again with the answer."""
    from agentcore.approvals import InputRequired, input_answer

    schema = {
        "type": "object",
        "properties": {"size": {"type": "string", "enum": ["small", "large"]}},
        "required": ["size"],
    }
    runs: list[str] = []

    class Ask(AgentTool):
        async def execute(self, tool_call_id: str, args: Any, *rest: Any) -> AgentToolResult:
            answer = input_answer(tool_call_id, "size")
            runs.append(tool_call_id)
            if answer is None:
                raise InputRequired("size", "Which size?", schema)
            return AgentToolResult.text(f"{answer.action}: {answer.content}")

    ask = Ask(name="order", description="Order.", parameters={"type": "object"})
    s = start_server(tmp_path, tools=[ask])
    s.faux.set_responses([faux_tool_call("order", {}, id="call_q"), faux_text("Ordered.")])
    try:
        with s.client() as client:
            sid = client.post("/api/sessions", json={}).json()["id"]
            with open_events(client, sid) as reader:
                reader.until("STATE_SNAPSHOT")
                client.post(f"/api/sessions/{sid}/prompt", json={"text": "order"})
                events = reader.until("RUN_FINISHED", "RUN_ERROR")
                finished = EVENT.validate_python(events[-1].data)
                (interrupt,) = finished.outcome.interrupts
                assert interrupt.reason == "input_required"
                assert interrupt.message == "Which size?"
                assert interrupt.response_schema == schema
                state = reader.until("STATE_SNAPSHOT")[-1].data["snapshot"]
                assert state["pendingApprovals"][0]["inputSchema"] == schema
                url = f"/api/sessions/{sid}/approvals/call_q"
                bad = client.post(url, json={"approved": True, "arguments": {"size": "huge"}})
                assert bad.status_code == 400 and "size" in bad.json()["error"]
                good = client.post(url, json={"approved": True, "arguments": {"size": "large"}})
                assert good.status_code == 200, good.text
                after = reader.until("RUN_FINISHED", "RUN_ERROR")
            result = next(e.data for e in after if e.type == "TOOL_CALL_RESULT")
            assert result["content"] == "accept: {'size': 'large'}"
            assert runs == ["call_q", "call_q"]  # run again, with the answer
    finally:
        stop_server(s)
