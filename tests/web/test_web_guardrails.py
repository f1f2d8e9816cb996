"""A tripped guardrail on the web API: the run ends with RUN_ERROR naming it, and the run's
usage event carries the trip."""

from __future__ import annotations

from pathlib import Path

import pytest

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


def test_the_page_shows_a_trip(tmp_path: Path) -> None:
    """In headless Chromium: the page shows the trip's sentence as the answer's error line."""
    pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.common.by import By

    from .test_web_browser import _browser_missing, _ready, _send, _wait
    from .test_web_browser import browser as browser_fixture

    missing = _browser_missing()
    if missing:
        pytest.skip(missing)
    served = start_server(tmp_path, agent_options={"guardrails": [max_input_size(5)]})
    browsers = browser_fixture.__wrapped__()  # type: ignore[attr-defined]  # the same Chromium setup
    d = next(browsers)
    try:
        d.get(served.base_url + "/")
        _wait(d, _ready, "the page")
        _send(d, "far too long a prompt")
        lines = _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, ".error-line"), "the error")
        assert lines[0].text == (
            "input guardrail 'max_input_size' blocked the request: the input has 21 "
            "characters; at most 5 are allowed"
        )
        assert served.faux.call_count == 0
    finally:
        for _ in browsers:  # quits the browser (its event stream closes) before the server stops
            pass
        stop_server(served)
