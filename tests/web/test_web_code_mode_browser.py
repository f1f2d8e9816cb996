"""Code mode in the page, in a real headless Chromium against the server with a `run_code` tool
on the real Monty sandbox (`agentcore.codemode`) and the faux model: the snippet shows as code,
the calls it makes as cards indented under its card with their arguments and results, all as
text (a snippet and arguments holding HTML run nothing); after a reload the snippet and its
result show, its calls (in no transcript message) do not."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentcore import tool
from agentcore.testing import faux_text, faux_tool_call

from .test_web_browser import ARTIFACTS, _assistant_texts, _idle, _ready, _send, _wait, browser
from .web_support import start_server, stop_server

pytest.importorskip("pydantic_monty")
webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402

from agentcore.codemode import code_mode  # noqa: E402

__all__ = ["browser"]  # the fixture, imported for pytest

pytestmark = pytest.mark.timeout(300)

HOSTILE_CITY = "<img src=x onerror=\"window.__pwned='arg'\">"
SNIPPET = (
    "# <script>window.__pwned = 'code'</script>\n"
    "a = await get_weather(city='Paris')\n"
    f"b = await get_weather(city={HOSTILE_CITY!r})\n"
    "[a, b]"
)


@tool
async def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: the city's name.
    """
    return f"sunny in {city}"


@pytest.fixture
def shots() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


_SNIPPET_CARD = '.msg.assistant > .tool-card[data-tool-call-id="call_c"]'


def _nested(d: Any) -> list[Any]:
    return d.find_elements(By.CSS_SELECTOR, _SNIPPET_CARD + " > .nested-calls > .tool-card")


def test_a_snippet_shows_as_code_with_its_calls_under_it(
    browser: Any, tmp_path: Path, shots: Path
) -> None:
    served = start_server(tmp_path, tools=[code_mode([get_weather])])
    served.faux.set_responses(
        [faux_tool_call("run_code", {"code": SNIPPET}, id="call_c"), faux_text("Both sunny.")]
    )
    d = browser
    try:
        d.get(served.base_url + "/")
        _wait(d, _ready, "the page")
        _send(d, "weather in two cities")
        _wait(d, lambda d: any("Both sunny." in t for t in _assistant_texts(d)), "the answer")
        _wait(d, _idle, "the run to end")
        snippet = d.find_element(By.CSS_SELECTOR, _SNIPPET_CARD)
        assert "snippet" in snippet.get_attribute("class").split()
        code = snippet.find_element(By.CSS_SELECTOR, ":scope > pre.args.code")
        assert code.get_attribute("textContent") == SNIPPET  # the lines, not their JSON
        assert snippet.find_element(By.CSS_SELECTOR, ":scope > .label").text.lower() == "code"
        nested = _wait(d, lambda d: len(_nested(d)) == 2 and _nested(d), "the nested calls")
        ids = [c.get_attribute("data-tool-call-id") for c in nested]
        assert ids == ["call_c.1", "call_c.2"]
        for card, city in zip(nested, ("Paris", HOSTILE_CITY), strict=True):
            assert card.find_element(By.CSS_SELECTOR, ".name").text == "get_weather"
            assert card.find_element(By.CSS_SELECTOR, ".state").text == "done"
            args = card.find_element(By.CSS_SELECTOR, "pre.args").get_attribute("textContent")
            assert '"city": ' in args and city.replace('"', '\\"') in args
            result = card.find_element(By.CSS_SELECTOR, ".tool-result")
            assert result.get_attribute("textContent") == f"sunny in {city}"
        # indented under the snippet's card, inside it
        assert nested[0].location["x"] > snippet.location["x"] + 10
        assert snippet.find_element(By.CSS_SELECTOR, ":scope > .head > .state").text == "done"
        assert "sunny in Paris" in snippet.find_element(
            By.CSS_SELECTOR, ":scope > .tool-result"
        ).get_attribute("textContent")
        # model text is text: nothing it holds ran or became an element
        assert d.execute_script("return window.__pwned === undefined")
        assert not d.find_elements(By.CSS_SELECTOR, "#messages img, #messages script")
        d.save_screenshot(str(shots / "code-mode-live.png"))

        d.refresh()  # the stored transcript: the snippet and its result, not its calls
        _wait(d, lambda d: any("Both sunny." in t for t in _assistant_texts(d)), "the reload")
        snippet = d.find_element(By.CSS_SELECTOR, _SNIPPET_CARD)
        code = snippet.find_element(By.CSS_SELECTOR, ":scope > pre.args.code")
        assert code.get_attribute("textContent") == SNIPPET
        assert snippet.find_element(By.CSS_SELECTOR, ":scope > .head > .state").text == "done"
        assert not _nested(d)
        assert d.execute_script("return window.__pwned === undefined")
        assert not d.find_elements(By.CSS_SELECTOR, "#messages img, #messages script")
        d.save_screenshot(str(shots / "code-mode-reloaded.png"))
    finally:
        stop_server(served)


def test_a_reload_mid_run_shows_the_calls_made_so_far(
    browser: Any, tmp_path: Path, shots: Path
) -> None:
    """A reader joining while the snippet runs gets the run so far: its calls nested again."""
    gate = threading.Event()

    @tool
    async def wait_here() -> str:
        """Wait until the test lets it go."""
        await anyio.to_thread.run_sync(gate.wait, abandon_on_cancel=True)
        return "let go"

    snippet = "a = await get_weather(city='Paris')\nb = await wait_here()\n[a, b]"
    served = start_server(tmp_path, tools=[code_mode([get_weather, wait_here])])
    served.faux.set_responses(
        [faux_tool_call("run_code", {"code": snippet}, id="call_c"), faux_text("Both done.")]
    )
    d = browser
    try:
        d.get(served.base_url + "/")
        _wait(d, _ready, "the page")
        _send(d, "weather, then wait")

        def two_calls(d: Any) -> Any:
            cards = _nested(d)
            return len(cards) == 2 and cards

        _wait(d, two_calls, "the snippet's calls")
        d.refresh()  # mid-run: the run's events so far are replayed after the snapshot
        _wait(d, _ready, "the page after the reload")
        cards = _wait(d, two_calls, "the snippet's calls after the reload")
        assert [c.get_attribute("data-tool-call-id") for c in cards] == ["call_c.1", "call_c.2"]
        assert cards[0].find_element(By.CSS_SELECTOR, ".state").text == "done"
        assert cards[1].find_element(By.CSS_SELECTOR, ".state").text == "running…"
        code = d.find_element(By.CSS_SELECTOR, _SNIPPET_CARD + " > pre.args.code")
        assert code.get_attribute("textContent") == snippet
        d.save_screenshot(str(shots / "code-mode-mid-run.png"))
        gate.set()
        _wait(d, lambda d: any("Both done." in t for t in _assistant_texts(d)), "the answer")
        done = _wait(
            d,
            lambda d: (
                (c := _nested(d))
                and c[1].find_element(By.CSS_SELECTOR, ".state").text == "done"
                and c
            ),
            "the second call's result",
        )
        assert done[1].find_element(By.CSS_SELECTOR, ".tool-result").text == "let go"
    finally:
        gate.set()
        stop_server(served)
