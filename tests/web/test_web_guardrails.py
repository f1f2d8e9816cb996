"""A tripped guardrail on the web API: the run ends with RUN_ERROR naming it, and the run's
usage event carries the trip."""

from __future__ import annotations

from pathlib import Path

from agentcore.guardrails import max_input_size

from .web_support import open_events, start_server, stop_server


def test_a_trip_ends_the_run_with_an_error_naming_the_guardrail(tmp_path: Path) -> None:
    served = start_server(tmp_path, agent_options={"guardrails": [max_input_size(5)]})
    try:
        with served.client() as client:
            sid = client.post("/api/sessions", json={}).json()["id"]
            with open_events(client, sid) as reader:
                reader.until("STATE_SNAPSHOT")
                response = client.post(
                    f"/api/sessions/{sid}/prompt", json={"text": "too long a prompt"}
                )
                assert response.status_code < 300, response.text
                events = reader.until("RUN_FINISHED", "RUN_ERROR")
    finally:
        stop_server(served)
    assert events[-1].type == "RUN_ERROR"
    assert events[-1].data["message"] == (
        "input guardrail 'max_input_size' blocked the request: the input has 17 characters; "
        "at most 5 are allowed"
    )
    usage = next(
        e.data["value"]
        for e in events
        if e.type == "CUSTOM" and e.data["name"] == "agentcore.run_usage"
    )
    assert usage["guardrail"]["guardrail"] == "max_input_size"
    assert served.faux.call_count == 0
