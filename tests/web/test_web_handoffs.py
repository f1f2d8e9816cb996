"""Who speaks in the web chat (issue 34): through the web API, each answer's metadata names its
agent (streamed in `agentcore.message_end`, and in the snapshot of a reloaded session) and the
switch is a step; in headless Chromium each answer is labelled with its agent and the switch
shows as a line, live and after a reload."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentcore import AgentSpec, handoff
from agentcore.testing import faux_text, faux_tool_call

from .web_support import Served, open_events, start_server, stop_server

BILLING = AgentSpec(
    name="billing", description="Refunds and invoices.", system_prompt="You are billing."
)


def _answers() -> list[Any]:
    return [faux_tool_call("transfer_to_billing", {}, id="h1"), faux_text("Order 7 is refunded.")]


@pytest.fixture
def handoff_served(tmp_path: Path) -> Iterator[Served]:
    served = start_server(
        tmp_path,
        tools=[handoff(BILLING)],
        system_prompt="You are triage.",
        agent_options={"agent_name": "triage"},
    )
    served.faux.set_responses(_answers())
    yield served
    stop_server(served)


def test_the_api_names_the_agent_of_each_answer_and_the_switch(handoff_served: Served) -> None:
    with handoff_served.client() as client:
        sid = client.post("/api/sessions", json={}).json()["id"]
        with open_events(client, sid) as reader:
            reader.until("STATE_SNAPSHOT")
            sent = client.post(f"/api/sessions/{sid}/prompt", json={"text": "refund 7"})
            assert sent.status_code == 202, sent.text
            events = reader.until("RUN_FINISHED", "RUN_ERROR")
        with open_events(client, sid) as reader:
            snapshot = reader.until("MESSAGES_SNAPSHOT")[-1].data["messages"]
    assert events[-1].type == "RUN_FINISHED"
    customs = [(e.data["name"], e.data["value"]) for e in events if e.type == "CUSTOM"]
    ends = [v["agent"] for name, v in customs if name == "agentcore.message_end"]
    assert ends == ["triage", "billing"]
    switch = next(v for name, v in customs if name == "agentcore.agent_switch")
    assert (switch["fromAgent"], switch["toAgent"], switch["returns"]) == (
        "triage",
        "billing",
        False,
    )
    steps = [e.data["stepName"] for e in events if e.type == "STEP_STARTED"]
    assert "handoff triage -> billing" in steps
    answers = [m for m in snapshot if m["role"] == "assistant"]
    assert [m["metadata"]["agentcore"]["agent"] for m in answers] == ["triage", "billing"]


def test_a_session_without_handoffs_names_no_agent(served: Served) -> None:
    with served.client() as client:
        sid = client.post("/api/sessions", json={}).json()["id"]
        with open_events(client, sid) as reader:
            reader.until("STATE_SNAPSHOT")
            client.post(f"/api/sessions/{sid}/prompt", json={"text": "hello"})
            events = reader.until("RUN_FINISHED", "RUN_ERROR")
    ends = [e.data["value"] for e in events if e.type == "CUSTOM"]
    assert ends and all("agent" not in v for v in ends)


_LABELS = (
    "return [...document.querySelectorAll('.msg.assistant')]"
    ".map(e => (e.querySelector('.agent-name') || {}).textContent || '');"
)
_SWITCHES = "return [...document.querySelectorAll('.msg.handoff-line')].map(e => e.textContent);"


def test_the_page_labels_who_speaks(browser: Any, handoff_served: Served) -> None:
    from .test_web_browser import _assistant_texts, _idle, _ready, _send, _wait

    d = browser
    d.get(handoff_served.base_url + "/")
    _wait(d, _ready, "the page")
    _send(d, "refund 7")
    _wait(d, lambda d: any("Order 7" in t for t in _assistant_texts(d)), "billing's answer")
    _wait(d, _idle, "the run to end")
    assert d.execute_script(_LABELS) == ["triage", "billing"]
    assert d.execute_script(_SWITCHES) == ["handoff: triage → billing"]
    d.refresh()  # the session again, from its snapshot: the same labels and switch
    _wait(d, _ready, "the page")
    _wait(d, lambda d: d.execute_script(_LABELS) == ["triage", "billing"], "the labels")
    assert d.execute_script(_SWITCHES) == ["handoff: triage → billing"]


from .test_web_browser import browser  # noqa: E402  (the fixture, for pytest)

__all__ = ["browser"]
