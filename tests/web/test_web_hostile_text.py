"""Hostile text in the page, in a real headless Chromium: answers built to exhaust the Markdown
renderer (80 KB of emphasis, 20,000 links, nesting 40,000 deep, lists nested 250 deep)
are shown, as plain text past the renderer's bounds, and the rest of the transcript (a prompt
after them, an approval card and its buttons) still shows, after a reload and streamed live;
and bidi override marks show as escapes, never reordering the page's text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentcore import tool
from agentcore.testing import faux_text, faux_tool_call

from .test_web_browser import _assistant_texts, _idle, _ready, _send, _wait, browser
from .web_support import start_server, stop_server

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402

__all__ = ["browser"]  # the fixture, imported for pytest

pytestmark = pytest.mark.timeout(300)

HOSTILE = [
    "*a* " * 20_000 + "END-EMPHASIS",  # 80 KB of emphasis
    "[x](https://example.com/) " * 20_000 + "END-LINKS",  # 20,000 links
    "*" * 40_000 + "a" + "*" * 40_000 + " END-NESTED",  # emphasis nested 40,000 deep
    "\n".join(" " * (2 * i) + "- item" for i in range(250)) + "\n\nEND-LIST",  # 250 deep
]
ENDS = ["END-EMPHASIS", "END-LINKS", "END-NESTED", "END-LIST"]
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
BIDI_SHOWN = r"\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"

_TEXTS = "return [...document.querySelectorAll('.msg.assistant .text')].map(e => e.textContent);"


@tool(requires_approval=True)
def remove(path: str) -> str:
    """Remove a file."""
    return f"removed {path}"


def _answers() -> list[Any]:
    return [faux_text(text) for text in HOSTILE] + [
        faux_tool_call("remove", {"path": "a.txt"}, id="call_a"),
        faux_text("Done."),
    ]


def _check_transcript(d: Any) -> None:
    texts = _wait(d, lambda d: (t := d.execute_script(_TEXTS)) and len(t) >= 4 and t, "answers")
    for text, end in zip(texts, ENDS, strict=False):
        assert end in text, (end, text[-200:])
    # the bounds: shown as plain text, with a note saying so (nothing is cut)
    plain = d.find_elements(By.CSS_SELECTOR, ".msg.assistant .text .plain")
    assert len(plain) >= 2
    assert "*a* *a*" in texts[0] and "[x](https://example.com/)" in texts[1]
    notes = d.find_elements(By.CSS_SELECTOR, ".msg.assistant .render-note")
    assert notes and "plain text" in notes[0].text
    users = [e.text for e in d.find_elements(By.CSS_SELECTOR, ".msg.user .body")]
    assert users[-1] == "remove a.txt"  # the prompt after the hostile answers is there


def test_hostile_markdown_after_a_reload_leaves_the_rest_of_the_session(
    browser: Any, tmp_path: Path
) -> None:
    served = start_server(tmp_path, tools=[remove])
    served.faux.set_responses(_answers())
    d = browser
    try:
        with served.client() as client:
            sid = client.post("/api/sessions", json={}).json()["id"]
            for i, prompt in enumerate(["one", "two", "three", "four", "remove a.txt"]):
                sent = client.post(f"/api/sessions/{sid}/prompt", json={"text": prompt})
                assert sent.status_code == 202, sent.text
                for _ in range(3000):
                    state = client.get(f"/api/sessions/{sid}").json()["events"][1]["snapshot"]
                    if not state["running"]:
                        break
                    d.implicitly_wait(0)
                assert i < 4 or state["pendingApprovals"], state
        d.get(f"{served.base_url}/#session={sid}")  # the page opens the session: a snapshot
        _wait(d, _ready, "the page")
        _check_transcript(d)
        _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, ".tool-card .approve"), "Approve")
        d.execute_script("document.querySelector('.tool-card .approve').click()")
        _wait(d, lambda d: any("Done." in t for t in _assistant_texts(d)), "the run to continue")
        result = d.find_element(By.CSS_SELECTOR, ".tool-card.done .tool-result")
        assert result.text == "removed a.txt"
    finally:
        stop_server(served)


def test_hostile_markdown_streamed_live_leaves_the_page_working(
    browser: Any, tmp_path: Path
) -> None:
    served = start_server(tmp_path, tools=[remove])
    served.faux.set_responses(_answers())
    d = browser
    try:
        d.get(served.base_url + "/")
        _wait(d, _ready, "the page")
        for i, prompt in enumerate(["one", "two", "three", "four"]):
            _send(d, prompt)
            _wait(d, lambda d, i=i: len(d.execute_script(_TEXTS)) > i, "the answer")
            _wait(d, _idle, "the run to end")
            end = ENDS[i]
            _wait(d, lambda d, i=i, end=end: end in d.execute_script(_TEXTS)[i], end)
        _send(d, "remove a.txt")
        _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, ".tool-card .approve"), "Approve")
        _check_transcript(d)
        d.execute_script("document.querySelector('.tool-card .approve').click()")
        _wait(d, lambda d: any("Done." in t for t in _assistant_texts(d)), "the run to continue")
    finally:
        stop_server(served)


def test_bidi_marks_show_as_escapes_in_the_page(browser: Any, tmp_path: Path) -> None:
    served = start_server(tmp_path, tools=[remove])
    served.faux.set_responses(
        [
            faux_text(f"**bold {BIDI}** and `code {BIDI}` and plain {BIDI}\n\n```\n{BIDI}\n```"),
            faux_tool_call("remove", {"path": f"evil{BIDI}txt.exe"}, id="call_b"),
            faux_text("Done."),
        ]
    )
    d = browser
    try:
        d.get(served.base_url + "/")
        _wait(d, _ready, "the page")
        _send(d, f"prompt {BIDI} end")
        _wait(d, lambda d: any("plain" in t for t in _assistant_texts(d)), "the answer")
        _wait(d, _idle, "the run to end")
        _send(d, "remove it")
        _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, ".tool-card .approve"), "Approve")
        d.execute_script("document.querySelector('.tool-card .approve').click()")
        _wait(d, lambda d: any("Done." in t for t in _assistant_texts(d)), "the run to continue")
        d.refresh()  # and the same from the stored session
        _wait(d, _ready, "the page")
        _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, ".tool-card.done"), "the card")
        body = d.execute_script("return document.body.textContent;")
        assert not any(mark in body for mark in BIDI), "a raw bidi mark reached the page"
        answer = d.find_elements(By.CSS_SELECTOR, ".msg.assistant .text")[0]
        assert answer.find_element(By.TAG_NAME, "strong").text == f"bold {BIDI_SHOWN}"
        assert answer.find_element(By.CSS_SELECTOR, "pre code").text == BIDI_SHOWN
        user = d.find_elements(By.CSS_SELECTOR, ".msg.user .body")[0]
        assert user.text == f"prompt {BIDI_SHOWN} end"
        args = d.find_element(By.CSS_SELECTOR, ".tool-card .args").text
        assert f"evil{BIDI_SHOWN}txt.exe" in args
        titles = d.execute_script(
            "return [...document.querySelectorAll('#sessions li')].map(li => li.title);"
        )
        assert f"prompt {BIDI_SHOWN} end" in titles
        assert not any(mark in "".join(titles) for mark in BIDI)
        # editing in a branch starts from the message as it was sent, marks and all
        d.execute_script("document.querySelector('.msg.user .branch-btn').click()")
        _wait(d, lambda d: d.find_element(By.ID, "prompt").get_attribute("value"), "the branch")
        assert d.find_element(By.ID, "prompt").get_attribute("value") == f"prompt {BIDI} end"
    finally:
        stop_server(served)
