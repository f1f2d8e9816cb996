"""The page answers a tool's question for the user (an MCP elicitation: an approval request with
an input schema) with a form built from the schema, in a real headless Chromium.

- `agentcore serve --mcp elicit_server.py` (an MCP server written with the official SDK, over
  stdio): the `book` tool asks for a booking; the form is filled from the keyboard and the tool
  gets the answer; Decline and Cancel reach the tool as such; a field title that is HTML shows
  as text and nothing runs; the form fits a narrow screen.
- A tool raising `InputRequired` in a served app: an answer the page lets through (a `pattern`
  only the server checks) is refused with a 400 whose message shows beside the form, then the
  corrected answer goes; a choice with titles (`oneOf`); a schema the form cannot show field by
  field (a nested object) is answered as JSON in a textarea.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentcore import AgentTool, AgentToolResult
from agentcore.testing import faux_text, faux_tool_call

from .test_web_browser import (
    ARTIFACTS,
    HERE,
    SRC,
    _assistant_texts,
    _idle,
    _ready,
    _send,
    _wait,
    browser,
)
from .web_support import start_server, stop_server

pytest.importorskip("mcp")
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from .elicit_server import HOSTILE_TITLE

__all__ = ["browser"]  # the fixture, imported for pytest

pytestmark = pytest.mark.timeout(300)

_FITS = """
const m = document.getElementById('messages');
const form = document.querySelector('.input-form');
const r = form.getBoundingClientRect();
return m.scrollWidth <= m.clientWidth + 1 && r.right <= window.innerWidth + 1;
"""


@pytest.fixture(scope="module")
def shots() -> Path:
    # beside tests/artifacts/web/, which test_web_browser.py empties when it starts
    folder = ARTIFACTS.parent / "web-input-form"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def mcp_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`agentcore serve --mcp "python elicit_server.py"` with the scripted faux model."""
    sessions = tmp_path_factory.mktemp("sessions")
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    env.pop("AGENTCORE_TOKEN", None)
    mcp = f"python {HERE / 'elicit_server.py'}"
    command = [sys.executable, str(HERE / "faux_serve.py"), "--port", "0"]
    command += ["--sessions-dir", str(sessions), "--mcp", mcp]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    try:
        if not line.startswith("agentcore serve: http://"):
            process.kill()
            pytest.fail(f"serve did not start: {line!r} {process.communicate()[1]}")
        yield line.split(": ", 1)[1].strip()
    finally:
        process.terminate()
        try:
            process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


def _form(d: Any) -> Any:
    forms = [f for f in d.find_elements(By.CSS_SELECTOR, ".input-form") if f.is_displayed()]
    return forms[-1] if forms else None


def _field(form: Any, name: str) -> Any:
    return form.find_element(By.CSS_SELECTOR, f"[name='{name}']")


def _results(d: Any) -> list[str]:
    return [e.text for e in d.find_elements(By.CSS_SELECTOR, ".tool-card .tool-result")]


def _ask(d: Any, prompt: str) -> Any:
    count = len(d.find_elements(By.CSS_SELECTOR, ".input-form"))
    _send(d, prompt)
    _wait(d, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".input-form")) > count, "the form")
    return _wait(d, _form, "the form shown")


def test_an_mcp_servers_question_answered_in_the_page(
    browser: Any, mcp_server: str, shots: Path
) -> None:
    d = browser
    d.set_window_size(1200, 860)
    d.get(mcp_server)
    _wait(d, _ready, "the page")

    # 1. the question and a form built from its schema; the HTML title is text
    form = _ask(d, "book a table")
    card = d.find_elements(By.CSS_SELECTOR, ".tool-card")[-1]
    assert card.find_element(By.CSS_SELECTOR, ".state").text == "waiting for your answer"
    question = card.find_element(By.CSS_SELECTOR, ".question").text
    # named by its own name (serverInfo), not its command line (issue 30)
    asked = "Booking at Chez Nous: who, when and how many?"
    assert question == f"MCP server 'booking-server' asks: {asked}"
    labels = [e.text for e in form.find_elements(By.TAG_NAME, "label")]
    assert labels == [
        "Your name *",
        "Email *",
        "Day *",
        HOSTILE_TITLE + " *",
        "Room *",
        "A quiet table",
    ]
    assert card.find_elements(By.TAG_NAME, "img") == []
    assert card.find_elements(By.TAG_NAME, "b") == []
    assert "<b>not bold</b>" in form.text and "As on your ID" in form.text
    assert d.execute_script("return window.__pwned === undefined")
    kinds = {
        n: _field(form, n).get_attribute("type") for n in ("name", "email", "day", "seats", "quiet")
    }
    assert kinds == {
        "name": "text",
        "email": "email",
        "day": "date",
        "seats": "number",
        "quiet": "checkbox",
    }
    seats = _field(form, "seats")
    assert (seats.get_attribute("min"), seats.get_attribute("max")) == ("1", "8")
    assert _field(form, "name").get_attribute("maxlength") == "40"
    options = [o.text for o in Select(_field(form, "room")).options]
    assert options == ["(choose one)", "garden", "hall"]
    # the first field has the focus: the form is answered from the keyboard
    first = _field(form, "name")
    _wait(d, lambda d: d.switch_to.active_element == first, "the focus on the first field")
    d.save_screenshot(str(shots / "1-asked.png"))

    # 2. the page's own quick checks: required fields, a bad email, a number out of range
    _field(form, "name").send_keys(Keys.ENTER)  # Enter submits the form
    errors = form.find_elements(By.CSS_SELECTOR, ".field-error")
    _wait(d, lambda d: errors[0].text == "required", "the field's message")
    assert (
        form.find_element(By.CSS_SELECTOR, ".form-error").text == "Check the fields marked above."
    )
    assert _field(form, "name").get_attribute("aria-invalid") == "true"
    _field(form, "name").send_keys("Ada Lovelace")
    _field(form, "email").send_keys("not-an-email")
    _field(form, "seats").send_keys("9")
    form.find_element(By.CSS_SELECTOR, ".submit-answer").click()
    _wait(d, lambda d: "an email address" in errors[1].text, "the email's message")
    assert errors[3].text == "at most 8"
    assert d.switch_to.active_element == _field(form, "email")  # the first field in error
    d.save_screenshot(str(shots / "2-checked.png"))
    assert _results(d)[-1:] != ["booked"]  # nothing was sent

    # 3. filled in from the keyboard, the answer reaches the tool
    email = _field(form, "email")
    email.clear()
    email.send_keys("ada@example.com", Keys.TAB)
    # the date picker's typing order follows the browser's locale: set the value as a picker does
    d.execute_script(
        "arguments[0].value = '2026-12-24';"
        "arguments[0].dispatchEvent(new Event('input', {bubbles: true}));",
        _field(form, "day"),
    )
    seats.clear()
    seats.send_keys("3")
    Select(_field(form, "room")).select_by_visible_text("hall")
    _field(form, "quiet").send_keys(Keys.SPACE)
    assert _field(form, "quiet").is_selected()
    _field(form, "name").send_keys(Keys.ENTER)
    _wait(d, lambda d: any("booked" in r for r in _results(d)), "the tool's result")
    assert _results(d)[-1] == (
        "booked Chez Nous for Ada Lovelace <ada@example.com> on 2026-12-24: 3 seats in the "
        "hall, quiet"
    )
    _wait(d, _idle, "the run to end")
    assert not _form(d)
    d.save_screenshot(str(shots / "3-answered.png"))

    # 4. Decline, then Cancel: the tool is told which
    form = _ask(d, "book again")
    form.find_element(By.CSS_SELECTOR, ".decline").click()
    _wait(d, lambda d: _results(d)[-1] == "no booking: the user chose decline", "the decline")
    _wait(d, _idle, "the run to end")

    # 5. a narrow screen: the form fits, and is cancelled from the keyboard
    d.set_window_size(380, 800)
    form = _ask(d, "book once more")
    _wait(d, lambda d: d.execute_script(_FITS), "the form to fit the narrow screen")
    d.save_screenshot(str(shots / "5-narrow.png"))
    form.find_element(By.CSS_SELECTOR, ".cancel").send_keys(Keys.ENTER)
    _wait(d, lambda d: _results(d)[-1] == "no booking: the user chose cancel", "the cancel")
    _wait(d, _idle, "the run to end")
    d.set_window_size(1200, 860)
    assert d.execute_script("return window.__pwned === undefined")
    severe = [e for e in d.get_log("browser") if e["level"] == "SEVERE"]
    assert severe == [], severe


class Ask(AgentTool):
    """Asks the question of its arguments (`schema`, `message`); answers with what it got."""

    async def execute(self, tool_call_id: str, args: Any, *rest: Any) -> AgentToolResult:
        from agentcore.approvals import InputRequired, input_answer

        answer = input_answer(tool_call_id, "q")
        if answer is None:
            raise InputRequired("q", args["message"], args["schema"])
        return AgentToolResult.text(f"{answer.action}: {answer.content}")


CODE_SCHEMA = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "title": "Code", "pattern": "^[A-Z]{3}$"},
        "size": {
            "type": "string",
            "title": "Cup",
            "oneOf": [{"const": "s", "title": "Small cup"}, {"const": "l", "title": "Large cup"}],
        },
        "extras": {
            "type": "array",
            "title": "Extras",
            "items": {
                "anyOf": [{"const": "milk", "title": "Milk"}, {"const": "ice", "title": "Ice"}]
            },
            "maxItems": 1,
        },
    },
    "required": ["code", "size"],
}
NESTED_SCHEMA = {
    "type": "object",
    "properties": {"where": {"type": "object", "properties": {"city": {"type": "string"}}}},
    "required": ["where"],
}


_MEMBER_NAMES = """
const done = arguments[arguments.length - 1];
// values a browser refuses (a negative length) or that are not text (an object description)
const odd = window.agentcoreInputForm.build({type: "object", properties: {a: {type: "string",
  maxLength: -1, minLength: -2, description: {html: "<b>x</b>"}}}}, {});
if (odd.el.querySelectorAll("input").length !== 1 || odd.el.querySelector(".hint")) {
  done("odd schema: " + odd.el.textContent);
  return;
}
const schema = {type: "object", properties: JSON.parse(
  '{"__proto__": {"type": "string"}, "constructor": {"type": "string"},' +
  ' "toString": {"type": "boolean"}}'), required: ["__proto__"]};
const form = window.agentcoreInputForm.build(schema, {
  submit: function (content) {
    done(JSON.stringify(content));
    return Promise.resolve();
  },
  decline: function () {}, cancel: function () {},
});
document.body.appendChild(form.el);
const fields = form.el.querySelectorAll("input");
fields[0].value = "p"; fields[1].value = "c"; fields[2].checked = true;
form.el.requestSubmit();
"""


def test_the_servers_refusal_and_the_json_fallback(
    browser: Any, tmp_path: Path, shots: Path
) -> None:
    ask = Ask(name="ask", description="Ask.", parameters={"type": "object"})
    served = start_server(tmp_path, tools=[ask])
    served.faux.set_responses(
        [
            faux_tool_call("ask", {"message": "Which code?", "schema": CODE_SCHEMA}, id="c1"),
            faux_text("Thanks."),
            faux_tool_call("ask", {"message": "Where?", "schema": NESTED_SCHEMA}, id="c2"),
            faux_text("Noted."),
        ]
    )
    d = browser
    d.set_window_size(1200, 860)
    try:
        d.get(served.base_url + "/")
        _wait(d, _ready, "the page")
        form = _ask(d, "ask me")
        options = [o.text for o in Select(_field(form, "size")).options]
        assert options == ["(choose one)", "Small cup", "Large cup"]
        # a multi-select: one checkbox per choice, `maxItems` checked on the page
        extras = form.find_elements(By.CSS_SELECTOR, "fieldset input[type=checkbox]")
        assert [e.get_attribute("value") for e in extras] == ["milk", "ice"]
        assert form.find_element(By.CSS_SELECTOR, "fieldset").text.splitlines() == [
            "Extras",
            "Milk",
            "Ice",
        ]
        for box in extras:
            box.send_keys(Keys.SPACE)
        # a code the page lets through (it does not check `pattern`): the server's 400, shown
        _field(form, "code").send_keys("abc")
        Select(_field(form, "size")).select_by_visible_text("Large cup")
        form.find_element(By.CSS_SELECTOR, ".submit-answer").click()
        shown = form.find_element(By.CSS_SELECTOR, ".form-error")
        problems = form.find_elements(By.CSS_SELECTOR, ".field-error")
        _wait(d, lambda d: problems[-1].text == "choose at most 1", "the multi-select's check")
        extras[1].send_keys(Keys.SPACE)  # ice, no more
        form.find_element(By.CSS_SELECTOR, ".submit-answer").click()
        _wait(d, lambda d: "does not match the requested schema" in shown.text, "the 400")
        assert "code" in shown.text and "^[A-Z]{3}$" in shown.text
        assert shown.get_attribute("role") == "alert"
        submit = form.find_element(By.CSS_SELECTOR, ".submit-answer")
        assert submit.is_enabled()
        assert d.switch_to.active_element == submit  # the keyboard goes on from there
        d.save_screenshot(str(shots / "6-refused.png"))
        code = _field(form, "code")
        code.clear()
        code.send_keys("ABC", Keys.ENTER)
        _wait(d, lambda d: any("Thanks." in t for t in _assistant_texts(d)), "the answer")
        assert _results(d)[-1] == "accept: {'code': 'ABC', 'size': 'l', 'extras': ['milk']}"
        _wait(d, _idle, "the run to end")

        # a nested object: answered as JSON, the schema shown as text
        form = _ask(d, "ask again")
        area = form.find_element(By.TAG_NAME, "textarea")
        assert form.find_elements(By.TAG_NAME, "input") == []
        area.clear()
        area.send_keys("{not json")
        form.find_element(By.CSS_SELECTOR, ".submit-answer").click()
        problem = form.find_element(By.CSS_SELECTOR, ".field-error")
        _wait(d, lambda d: problem.text.startswith("not JSON"), "the JSON message")
        area.clear()
        area.send_keys('{"where": {"city": "Oslo"}}')
        form.find_element(By.CSS_SELECTOR, ".submit-answer").click()
        _wait(d, lambda d: any("Noted." in t for t in _assistant_texts(d)), "the answer")
        assert _results(d)[-1] == "accept: {'where': {'city': 'Oslo'}}"
        d.save_screenshot(str(shots / "7-json-answered.png"))
        # field names that are Object members stay ordinary keys of the answer
        sent = json.loads(d.execute_async_script(_MEMBER_NAMES))  # as `api` sends it
        assert sent == {"__proto__": "p", "constructor": "c", "toString": True}
        assert d.execute_script("return Object.keys(Object.prototype).length") == 0
        severe = [e for e in d.get_log("browser") if e["level"] == "SEVERE"]
        # the refused answer's 400 is logged by the browser as a failed request, nothing else
        assert all("400" in e["message"] for e in severe), severe
    finally:
        stop_server(served)
