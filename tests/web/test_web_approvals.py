"""Tool approvals through the web endpoint (the approvals API of agentcore; these tests skip on
an agentcore without it): a call that needs approval ends the run with an AG-UI `interrupt`, the
state lists it, and a decision over HTTP (or an AG-UI `resume`) continues the run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ag_ui.core import Event
from pydantic import TypeAdapter

from agentcore import tool
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
