"""The chat page in a real headless Chromium (Debian's `chromium` and `chromium-driver`, installed
by `scripts/browser`), driven with Selenium, against `agentcore serve` run as a subprocess with the
scripted faux model (`faux_serve.py`).

One conversation, step by step: a prompt streams into the page (Markdown rendered), a tool card
shows its arguments and result, Stop aborts a long answer mid-way, a reload resumes the session,
and an answer holding `<script>` and HTML shows as text with no script run. Each step saves a
screenshot under `tests/artifacts/web/` (git-ignored).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.common.exceptions import (  # noqa: E402
    StaleElementReferenceException,
    WebDriverException,
)
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from agentcore import Agent, tool  # noqa: E402
from agentcore.skills import load_skills  # noqa: E402
from agentcore.testing import faux_text, faux_tool_call  # noqa: E402

from .web_support import start_server, stop_server  # noqa: E402

HERE = Path(__file__).parent
SRC = HERE.parents[1] / "src"
ARTIFACTS = HERE.parent / "artifacts" / "web"
CHROMIUM = os.environ.get("AGENTCORE_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("AGENTCORE_CHROMEDRIVER", "/usr/bin/chromedriver")
WAIT = 30.0  # seconds a step may take on a loaded machine before the test fails

pytestmark = pytest.mark.timeout(300)


def _browser_missing() -> str | None:
    if Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists():
        return None
    why = os.environ.get("AGENTCORE_BROWSER_UNAVAILABLE")
    return why or f"{CHROMIUM} or {CHROMEDRIVER} is missing: run scripts/browser ensure"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """`agentcore serve` with the faux model, on a free loopback port: its address and store."""
    sessions = tmp_path_factory.mktemp("sessions")
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    env.pop("AGENTCORE_TOKEN", None)
    process = subprocess.Popen(
        [
            sys.executable,
            str(HERE / "faux_serve.py"),
            "--port",
            "0",
            "--sessions-dir",
            str(sessions),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    try:
        assert line.startswith("agentcore serve: http://"), line
        yield line.split(": ", 1)[1].strip(), sessions
    finally:
        process.terminate()
        try:
            process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    missing = _browser_missing()
    if missing:
        pytest.skip(missing)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=1200,860",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = webdriver.ChromeService(executable_path=CHROMEDRIVER)
    try:
        driver = webdriver.Chrome(service=service, options=options)
    except WebDriverException as exc:
        pytest.fail(f"chromium did not start through {CHROMEDRIVER}: {exc.msg}")
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def shots() -> Path:
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True)
    return ARTIFACTS


def _wait(driver: Any, condition: Any, what: str) -> Any:
    # the page redraws a transcript from a snapshot (after a decision, a reconnect): an element
    # read a moment before may be gone, which only means "look again"
    wait = WebDriverWait(driver, WAIT, ignored_exceptions=(StaleElementReferenceException,))
    return wait.until(lambda d: condition(d), message=what)


def _send(driver: Any, text: str) -> None:
    prompt = driver.find_element(By.ID, "prompt")
    prompt.send_keys(text)
    driver.find_element(By.ID, "send").click()


def _assistant_texts(driver: Any) -> list[str]:
    return [e.text for e in driver.find_elements(By.CSS_SELECTOR, ".msg.assistant")]


def _ready(driver: Any) -> bool:
    return driver.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true"


def _idle(driver: Any) -> bool:
    return driver.find_element(By.ID, "status").text == "idle"


def test_a_conversation_in_the_page(browser: Any, server: tuple[str, Path], shots: Path) -> None:
    address, _sessions = server
    d = browser
    d.get(address)
    _wait(d, _ready, "the page")
    assert d.find_element(By.ID, "model").get_attribute("value") == "faux/scripted"
    d.save_screenshot(str(shots / "0-empty.png"))

    # 1. a prompt streams into the page, Markdown rendered
    _send(d, "Hello there")
    _wait(d, lambda d: any("You said" in t for t in _assistant_texts(d)), "the answer")
    _wait(d, _idle, "the run to end")
    answer = d.find_element(By.CSS_SELECTOR, ".msg.assistant .text")
    assert answer.find_element(By.TAG_NAME, "h1").text == "Echo"
    assert answer.find_element(By.TAG_NAME, "em").text == "Hello there"
    assert [li.text for li in answer.find_elements(By.TAG_NAME, "li")] == ["one", "two"]
    usage = d.find_element(By.CSS_SELECTOR, ".msg.assistant .usage-line").text
    assert usage.startswith("faux/scripted · ") and " out · $" in usage
    assert "#session=" in d.current_url
    d.save_screenshot(str(shots / "1-streamed.png"))

    # 2. a tool call shows as a card with its arguments and its result
    _send(d, "use the tool")
    card = _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, ".tool-card.done"), "the tool card")[
        0
    ]
    assert "calculator" in card.find_element(By.CSS_SELECTOR, ".head").text
    assert '"expression": "6*7"' in card.find_element(By.CSS_SELECTOR, ".args").text
    assert card.find_element(By.CSS_SELECTOR, ".tool-result").text == "6*7 = 42"
    _wait(
        d,
        lambda d: any("The calculator says: 6*7 = 42." in t for t in _assistant_texts(d)),
        "the answer after the tool",
    )
    _wait(d, _idle, "the run to end")
    d.save_screenshot(str(shots / "2-tool-card.png"))

    # 3. Stop aborts a long answer mid-way
    _send(d, "a long answer please")
    _wait(d, lambda d: "word20 " in _assistant_texts(d)[-1], "the long answer to stream")
    assert not d.find_element(By.ID, "stop").get_attribute("disabled")
    d.find_element(By.ID, "stop").click()
    _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, ".stopped"), "the answer to stop")
    _wait(d, _idle, "the run to end")
    stopped = _assistant_texts(d)[-1]
    assert "word3999" not in stopped  # it did not run to the end
    assert d.find_element(By.ID, "stop").get_attribute("disabled")
    d.save_screenshot(str(shots / "3-stopped.png"))

    # 4. a reload resumes the session: the same conversation, from the server
    before = [e.text for e in d.find_elements(By.CSS_SELECTOR, ".msg")]
    d.refresh()
    _wait(
        d,
        lambda d: len(d.find_elements(By.CSS_SELECTOR, ".msg")) == len(before),
        "the session to reload",
    )
    after = [e.text for e in d.find_elements(By.CSS_SELECTOR, ".msg")]
    assert after == before
    assert len(d.find_elements(By.CSS_SELECTOR, ".tool-card.done")) == 1
    titles = [e.text for e in d.find_elements(By.CSS_SELECTOR, "#sessions li.current .title")]
    assert titles == ["Hello there"]
    d.save_screenshot(str(shots / "4-reloaded.png"))

    # 5. model output with <script> and HTML shows as text, and nothing runs
    _send(d, "show me some html")
    _wait(d, lambda d: "not bold" in _assistant_texts(d)[-1], "the html answer")
    _wait(d, _idle, "the run to end")
    last = d.find_elements(By.CSS_SELECTOR, ".msg.assistant .text")[-1]
    assert '<script>window.__pwned = "script"</script>' in last.text
    assert '<img src="x" onerror="window.__pwned = \'img\'">' in last.text
    assert "<b>not bold</b>" in last.text
    assert last.find_elements(By.TAG_NAME, "script") == []
    assert last.find_elements(By.TAG_NAME, "img") == []
    assert last.find_elements(By.TAG_NAME, "b") == []
    assert d.execute_script("return window.__pwned === undefined")
    d.save_screenshot(str(shots / "5-html-as-text.png"))

    errors = [e for e in d.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == [], errors


def test_steering_and_branching_in_the_page(
    browser: Any, server: tuple[str, Path], shots: Path
) -> None:
    address, _sessions = server
    d = browser
    d.get(address)
    _wait(d, _ready, "the page")
    d.find_element(By.ID, "new-chat").click()
    _send(d, "a long answer please")
    _wait(d, lambda d: "word5 " in (_assistant_texts(d) or [""])[-1], "the long answer")
    assert d.find_element(By.ID, "send").text == "Steer"
    _send(d, "say hello instead")
    _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, ".msg.user.queued"), "the queued steering")
    d.save_screenshot(str(shots / "6-steering-queued.png"))
    d.find_element(By.ID, "stop").click()
    _wait(d, _idle, "the run to end")
    # the queued message survives the abort (the Agent keeps it) and runs with the next prompt
    _send(d, "hello")
    _wait(
        d,
        lambda d: len(d.find_elements(By.CSS_SELECTOR, ".msg.user:not(.queued)")) == 3,
        "the steering message to arrive",
    )
    _wait(d, _idle, "the run to end")
    users = [
        e.find_element(By.CSS_SELECTOR, ".body").text
        for e in d.find_elements(By.CSS_SELECTOR, ".msg.user:not(.queued)")
    ]
    assert users == ["a long answer please", "hello", "say hello instead"]
    # branch: edit the second prompt in a new session holding what came before it
    first_session = d.current_url.split("#session=")[1]
    second = d.find_elements(By.CSS_SELECTOR, ".msg.user:not(.queued)")[1]
    d.execute_script("arguments[0].querySelector('.branch-btn').click()", second)
    _wait(d, lambda d: d.current_url.split("#session=")[1] != first_session, "the branch to open")
    _wait(
        d,
        lambda d: d.find_element(By.ID, "prompt").get_attribute("value") == users[1],
        "the prompt to be prefilled",
    )
    _wait(
        d,
        lambda d: len(d.find_elements(By.CSS_SELECTOR, ".msg.user")) == 1,
        "the branch's transcript",
    )
    base, _, token = address.partition("/?token=")  # serve prints the token in the address
    bearer = {"Authorization": f"Bearer {token}"}
    listed = httpx.get(base + "/api/sessions", headers=bearer, timeout=30).json()
    branch = next(s for s in listed if s["id"] == d.current_url.split("#session=")[1])
    assert branch["parent"]["sessionId"] == first_session
    d.save_screenshot(str(shots / "7-branch.png"))


def test_a_message_typed_during_a_run_is_sent_as_the_chosen_kind(
    browser: Any, server: tuple[str, Path], shots: Path
) -> None:
    address, _sessions = server
    d = browser
    d.get(address)
    _wait(d, _ready, "the page")
    d.find_element(By.ID, "new-chat").click()
    _send(d, "a long answer please")
    _wait(d, lambda d: "word5 " in (_assistant_texts(d) or [""])[-1], "the long answer")
    prompt, send = d.find_element(By.ID, "prompt"), d.find_element(By.ID, "send")
    assert prompt.is_enabled() and send.is_enabled()  # typing during a run is never refused
    delivery = d.find_element(By.ID, "delivery")
    assert delivery.is_displayed() and send.text == "Steer"
    # the choice is visible, and the button says what a send will do
    delivery.find_element(By.CSS_SELECTOR, "option[value='follow-up']").click()
    _wait(d, lambda d: d.find_element(By.ID, "send").text == "Follow up", "the button's label")
    _send(d, "then this")
    delivery.find_element(By.CSS_SELECTOR, "option[value='steer']").click()
    _send(d, "steer this")

    def queued(d: Any) -> list[tuple[str, str]]:
        return [
            (e.get_attribute("data-kind"), e.find_element(By.CSS_SELECTOR, ".body").text)
            for e in d.find_elements(By.CSS_SELECTOR, ".msg.user.queued")
        ]

    _wait(d, lambda d: len(queued(d)) == 2, "both messages shown as queued")
    assert sorted(queued(d)) == [("followUp", "then this"), ("steering", "steer this")]
    labels = [e.text for e in d.find_elements(By.CSS_SELECTOR, ".msg.user.queued .kind")]
    assert any("follows up" in t for t in labels) and any("steers" in t for t in labels)
    d.save_screenshot(str(shots / "6b-follow-up-and-steering-queued.png"))
    # stopped: both stay queued (an abort loses none); the next message runs them after it
    d.find_element(By.ID, "stop").click()
    _wait(d, _idle, "the run to end")
    assert sorted(queued(d)) == [("followUp", "then this"), ("steering", "steer this")]
    _send(d, "hello")
    _wait(
        d,
        lambda d: len(d.find_elements(By.CSS_SELECTOR, ".msg.user:not(.queued)")) == 4,
        "the queued messages to arrive",
    )
    _wait(d, _idle, "the run to end")
    users = [
        e.find_element(By.CSS_SELECTOR, ".body").text
        for e in d.find_elements(By.CSS_SELECTOR, ".msg.user:not(.queued)")
    ]
    assert users == ["a long answer please", "hello", "steer this", "then this"]
    assert queued(d) == []
    errors = [e for e in d.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == [], errors


@pytest.mark.skipif(not hasattr(Agent, "approve"), reason="this agentcore has no approvals yet")
def test_approve_and_deny_in_the_page(browser: Any, tmp_path: Path, shots: Path) -> None:
    @tool(requires_approval=True)
    def remove(path: str) -> str:
        """Remove a file."""
        return f"removed {path}"

    served = start_server(tmp_path, tools=[remove])
    served.faux.set_responses(
        [
            faux_tool_call("remove", {"path": "a.txt"}, id="call_a"),
            faux_text("Done."),
            faux_tool_call("remove", {"path": "b.txt"}, id="call_b"),
            faux_text("Kept it."),
        ]
    )
    d = browser
    try:
        d.get(served.base_url + "/")
        _wait(d, _ready, "the page")
        _send(d, "remove a.txt")
        _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, ".tool-card .approve"), "Approve")
        assert "waiting for approval" in d.find_element(By.CSS_SELECTOR, ".tool-card .state").text
        d.save_screenshot(str(shots / "8-approval-asked.png"))
        # clicked at once where it is now (the card is redrawn when the state changes)
        d.execute_script("document.querySelector('.tool-card .approve').click()")
        _wait(d, lambda d: any("Done." in t for t in _assistant_texts(d)), "the run to continue")
        card = d.find_element(By.CSS_SELECTOR, ".tool-card.done")
        assert card.find_element(By.CSS_SELECTOR, ".tool-result").text == "removed a.txt"
        _send(d, "remove b.txt")
        _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, ".tool-card .deny"), "Deny")
        d.execute_script("document.querySelector('.tool-card .deny').click()")
        _wait(d, lambda d: any("Kept it." in t for t in _assistant_texts(d)), "the run to continue")
        denied = d.find_elements(By.CSS_SELECTOR, ".tool-card.denied")
        assert (
            len(denied) == 1 and denied[0].find_element(By.CSS_SELECTOR, ".state").text == "denied"
        )
        assert not d.find_elements(By.CSS_SELECTOR, ".tool-card.error")
        d.save_screenshot(str(shots / "9-approval-decided.png"))
    finally:
        stop_server(served)


def test_a_skill_activation_shows_in_the_transcript(
    browser: Any, tmp_path: Path, shots: Path
) -> None:
    folder = tmp_path / "skills" / "notes"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: notes\ndescription: Take notes.\n---\nWrite notes in Markdown.\n"
    )
    served = start_server(tmp_path, agent_options={"skills": load_skills(folder).skills})
    served.faux.set_responses(
        [faux_tool_call("activate_skill", {"name": "notes"}, id="call_s"), faux_text("Noted.")]
    )
    d = browser
    try:
        d.get(served.base_url + "/")
        _wait(d, _ready, "the page")
        _send(d, "take notes")
        _wait(d, lambda d: any("Noted." in t for t in _assistant_texts(d)), "the answer")

        def skill_card(d: Any) -> Any:
            cards = d.find_elements(By.CSS_SELECTOR, ".tool-card.skill.done")
            return cards[0] if cards else None

        card = _wait(d, skill_card, "the skill card")
        assert card.find_element(By.CSS_SELECTOR, ".badge").text.lower() == "skill"  # CSS caps
        assert card.find_element(By.CSS_SELECTOR, ".name").text == "activate_skill: notes"
        assert card.find_element(By.CSS_SELECTOR, ".state").text == "skill activated"
        assert "Write notes in Markdown." in card.find_element(By.CSS_SELECTOR, ".tool-result").text
        d.save_screenshot(str(shots / "skill-activated.png"))
        d.refresh()  # the stored transcript shows it the same way
        _wait(d, lambda d: any("Noted." in t for t in _assistant_texts(d)), "the reload")
        card = _wait(d, skill_card, "the skill card after a reload")
        assert card.find_element(By.CSS_SELECTOR, ".name").text == "activate_skill: notes"
        assert card.find_element(By.CSS_SELECTOR, ".state").text == "skill activated"
    finally:
        stop_server(served)


def test_tool_call_ids_named_like_object_members(browser: Any, tmp_path: Path, shots: Path) -> None:
    """Ids `__proto__` and `constructor` key nothing on Object.prototype; the transcript shows."""

    @tool
    def echo(text: str) -> str:
        """Echo the text."""
        return f"echoed {text}"

    served = start_server(tmp_path, tools=[echo])
    served.faux.set_responses(
        [
            faux_tool_call("echo", {"text": "one"}, id="__proto__"),
            faux_tool_call("echo", {"text": "two"}, id="constructor"),
            faux_text("All echoed."),
        ]
    )
    d = browser
    try:
        d.get(served.base_url + "/")
        _wait(d, _ready, "the page")
        _send(d, "echo twice")
        _wait(d, lambda d: any("All echoed." in t for t in _assistant_texts(d)), "the answer")
        results = [e.text for e in d.find_elements(By.CSS_SELECTOR, ".tool-card .tool-result")]
        assert results == ["echoed one", "echoed two"]
        assert d.execute_script("return Object.keys(Object.prototype).length") == 0
        assert d.execute_script("return typeof ({}).el") == "undefined"
        d.refresh()  # the transcript redrawn from the stored session
        _wait(d, lambda d: any("All echoed." in t for t in _assistant_texts(d)), "the reload")
        results = [e.text for e in d.find_elements(By.CSS_SELECTOR, ".tool-card .tool-result")]
        assert results == ["echoed one", "echoed two"]
        d.save_screenshot(str(shots / "10-member-named-ids.png"))
    finally:
        stop_server(served)


HOSTILE_MARKDOWN = """Results:

| Tool | Calls | Note |
|:-----|------:|:----:|
| `read` | 3 | <img src=x onerror="window.__pwned = 'cell'"> |
| grep | 12 | </td></tr></table><b>escaped</b> |

- outer
  - inner
    - innermost
- second

```python
print("<script>window.__pwned = 'code'</script>")
```

[docs](https://example.com/docs) [bad](javascript:window.__pwned='link') [mail](mailto:a@b.c)
"""


def test_markdown_tables_lists_code_and_links_in_the_page(
    browser: Any, tmp_path: Path, shots: Path
) -> None:
    served = start_server(tmp_path)
    served.faux.set_responses([faux_text(HOSTILE_MARKDOWN)])
    d = browser
    try:
        d.get(served.base_url + "/")
        _wait(d, _ready, "the page")
        _send(d, "format it")
        _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, ".msg.assistant table"), "the table")
        _wait(d, _idle, "the run to end")
        text = d.find_elements(By.CSS_SELECTOR, ".msg.assistant .text")[-1]
        table = text.find_element(By.TAG_NAME, "table")
        rows = [
            [c.text for c in tr.find_elements(By.CSS_SELECTOR, "th, td")]
            for tr in table.find_elements(By.TAG_NAME, "tr")
        ]
        assert rows == [
            ["Tool", "Calls", "Note"],
            ["read", "3", "<img src=x onerror=\"window.__pwned = 'cell'\">"],
            ["grep", "12", "</td></tr></table><b>escaped</b>"],
        ]
        aligns = [
            c.value_of_css_property("text-align") for c in table.find_elements(By.TAG_NAME, "th")
        ]
        assert aligns == ["left", "right", "center"]
        assert len(text.find_elements(By.TAG_NAME, "table")) == 1
        outer = text.find_element(By.CSS_SELECTOR, ":scope > ul")
        assert [li.text.split("\n")[0] for li in outer.find_elements(By.XPATH, "./li")] == [
            "outer",
            "second",
        ]
        assert outer.find_element(By.CSS_SELECTOR, "li > ul > li > ul > li").text == "innermost"
        code = text.find_element(By.CSS_SELECTOR, ".code-block pre code")
        assert code.text == "print(\"<script>window.__pwned = 'code'</script>\")"
        copy = text.find_element(By.CSS_SELECTOR, ".code-block button.copy")
        assert copy.text == "Copy"
        copy.click()
        _wait(d, lambda d: copy.text in ("Copied", "Copy failed"), "the copy button to answer")
        assert copy.text == "Copied"
        links = text.find_elements(By.TAG_NAME, "a")
        assert [(a.text, a.get_attribute("href")) for a in links] == [
            ("docs", "https://example.com/docs"),
            ("mail", "mailto:a@b.c"),
        ]
        assert all(a.get_attribute("target") == "_blank" for a in links)
        assert all(a.get_attribute("rel") == "noopener noreferrer" for a in links)
        assert "[bad](javascript:window.__pwned='link')" in text.text
        for tag in ("img", "script", "b"):
            assert text.find_elements(By.TAG_NAME, tag) == [], tag
        assert d.execute_script("return window.__pwned === undefined")
        d.save_screenshot(str(shots / "11-markdown.png"))
    finally:
        stop_server(served)


_LONG_RESULT = "\n".join(f"line {i} of a long tool result" for i in range(300))
_GEOMETRY = """
const m = document.getElementById('messages');
return {top: m.scrollTop, height: m.scrollHeight, client: m.clientHeight,
        gap: m.scrollHeight - m.scrollTop - m.clientHeight,
        button: !document.getElementById('new-activity').hidden};
"""
_IN_VIEW = """
const m = document.getElementById('messages').getBoundingClientRect();
const r = arguments[0].getBoundingClientRect();
return r.top >= m.top && r.bottom <= m.bottom && r.height > 0;
"""


def test_the_page_follows_the_conversation(browser: Any, tmp_path: Path, shots: Path) -> None:
    @tool
    def dump() -> str:
        """Print a long listing."""
        return _LONG_RESULT

    @tool(requires_approval=True)
    def remove(path: str) -> str:
        """Remove a file."""
        return f"removed {path}"

    served = start_server(tmp_path, tools=[dump, remove])
    served.faux.set_responses(
        [
            faux_tool_call("dump", {}, id="call_1"),
            faux_text("Listed."),
            faux_tool_call("dump", {}, id="call_2"),
            faux_text("Listed again."),
            faux_tool_call("remove", {"path": "a.txt"}, id="call_3"),
            faux_text("Removed."),
        ]
    )
    d = browser
    try:
        d.get(served.base_url + "/")
        _wait(d, _ready, "the page")
        # 1. at the bottom, a long tool result arriving at once keeps the bottom in view
        _send(d, "list it")
        _wait(d, lambda d: any("Listed." in t for t in _assistant_texts(d)), "the answer")
        _wait(d, _idle, "the run to end")
        _wait(d, lambda d: d.execute_script(_GEOMETRY)["gap"] <= 40, "the page to follow")
        g = d.execute_script(_GEOMETRY)
        assert g["height"] > 3 * g["client"] and not g["button"], g
        d.save_screenshot(str(shots / "12-followed.png"))

        # 2. scrolled up, the position is kept and "new activity" is offered; it goes down
        d.execute_script("document.getElementById('messages').scrollTop = 200")
        _wait(d, lambda d: d.execute_script(_GEOMETRY)["top"] == 200, "the scroll")
        session = d.current_url.split("#session=")[1]
        prompt = f"{served.base_url}/api/sessions/{session}/prompt"
        with served.client() as client:  # from another tab, as it were
            assert client.post(prompt, json={"text": "again"}).status_code < 300
        _wait(d, lambda d: any("Listed again." in t for t in _assistant_texts(d)), "the answer")
        _wait(d, lambda d: d.execute_script(_GEOMETRY)["button"], "the new-activity button")
        assert d.execute_script(_GEOMETRY)["top"] == 200
        button = d.find_element(By.ID, "new-activity")
        assert button.is_displayed() and "new activity" in button.text
        d.save_screenshot(str(shots / "13-new-activity.png"))
        button.click()
        _wait(d, lambda d: d.execute_script(_GEOMETRY)["gap"] <= 40, "the bottom")
        assert not d.execute_script(_GEOMETRY)["button"]
        _wait(d, _idle, "the run to end")

        # 3. an approval card is brought into view, however far up the reader is
        d.execute_script("document.getElementById('messages').scrollTop = 0")
        _wait(d, lambda d: d.execute_script(_GEOMETRY)["top"] == 0, "the scroll")
        with served.client() as client:
            assert client.post(prompt, json={"text": "remove a.txt"}).status_code < 300
        approve = _wait(
            d, lambda d: d.find_elements(By.CSS_SELECTOR, ".tool-card .approve"), "Approve"
        )[0]
        _wait(d, lambda d: d.execute_script(_IN_VIEW, approve), "the approval card in view")
        d.save_screenshot(str(shots / "14-approval-in-view.png"))
        approve.click()
        _wait(d, lambda d: any("Removed." in t for t in _assistant_texts(d)), "the answer")
    finally:
        stop_server(served)


NARROW_ANSWER = (
    "A long token: " + "x" * 300 + "\n\n"
    "https://example.com/" + "a/" * 80 + "\n\n"
    "```\n" + "wide code line " * 30 + "\n```\n\n"
    "| " + " | ".join(f"column {i}" for i in range(12)) + " |\n"
    "|" + "---|" * 12 + "\n"
    "| " + " | ".join(f"value {i}" for i in range(12)) + " |\n"
)
_LAYOUT = """
const answer = document.querySelector('.msg.assistant');  // null while a session is redrawn
const m = answer ? answer.getBoundingClientRect() : {width: 0};
const a = document.getElementById('sidebar').getBoundingClientRect();
return {scroll: document.documentElement.scrollWidth, body: document.body.scrollWidth,
        inner: window.innerWidth, column: m.width,
        drawer: a.left >= 0 && getComputedStyle(document.getElementById('sidebar')).visibility
                === 'visible',
        closed: a.right <= 0 || getComputedStyle(document.getElementById('sidebar')).visibility
                === 'hidden'};
"""


@pytest.mark.parametrize("width", [360, 420, 1280])
def test_the_page_fits_narrow_and_wide_screens(
    browser: Any, tmp_path: Path, shots: Path, width: int
) -> None:
    served = start_server(tmp_path)
    served.faux.set_responses([faux_text(NARROW_ANSWER)] * 2)
    d = browser
    size = d.get_window_size()
    try:
        d.set_window_size(width, 800)
        d.get(served.base_url + "/")
        _wait(d, _ready, "the page")
        inner = d.execute_script("return window.innerWidth")
        assert inner <= width, inner
        _send(d, "Please " + "y" * 120)
        _wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, ".msg.assistant table"), "the answer")
        _wait(d, _idle, "the run to end")
        layout = d.execute_script(_LAYOUT)
        assert layout["scroll"] <= layout["inner"] and layout["body"] <= layout["inner"], layout
        assert layout["column"] >= min(300, inner - 60), layout
        code = d.find_element(By.CSS_SELECTOR, ".code-block pre")
        assert d.execute_script("return arguments[0].scrollWidth > arguments[0].clientWidth", code)
        menu = d.find_element(By.ID, "menu")
        d.save_screenshot(str(shots / f"15-width-{width}.png"))
        if width >= 720:
            assert layout["drawer"] and not menu.is_displayed()
            return
        assert layout["closed"] and menu.is_displayed()
        menu.click()
        _wait(d, lambda d: d.execute_script(_LAYOUT)["drawer"], "the drawer to open")
        d.save_screenshot(str(shots / f"16-drawer-{width}.png"))
        assert d.execute_script(_LAYOUT)["scroll"] <= inner
        d.find_element(By.CSS_SELECTOR, "#sessions li").click()  # choosing closes it
        _wait(d, lambda d: d.execute_script(_LAYOUT)["closed"], "the drawer to close")
        menu.click()
        _wait(d, lambda d: d.execute_script(_LAYOUT)["drawer"], "the drawer to open again")
        backdrop = d.find_element(By.ID, "backdrop")  # its uncovered right edge closes it
        ActionChains(d).move_to_element_with_offset(backdrop, inner // 2 - 10, 0).click().perform()
        _wait(d, lambda d: d.execute_script(_LAYOUT)["closed"], "the drawer to close")
    finally:
        d.set_window_size(size["width"], size["height"])
        stop_server(served)
