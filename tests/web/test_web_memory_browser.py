"""The memory panel of the page, in a real headless Chromium against the server with the real
SQLite memory store and the faux model: a memory the agent writes (`remember`) shows in the
panel after the run, as text (a memory holding HTML runs nothing), and Delete removes it from
the page and the store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from agentcore.memory import Memory, MemoryScope, SqliteMemoryStore

from .test_web_browser import ARTIFACTS, _idle, _ready, _send, _wait, browser
from .web_support import start_server, stop_server

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402

__all__ = ["browser"]  # the fixture, imported for pytest

pytestmark = pytest.mark.timeout(300)

ALICE = MemoryScope(user="alice")
HOSTILE = "<img src=x onerror=\"window.__pwned='memory'\"> likes tea"


def _memories(d: Any) -> list[str]:
    return [e.text for e in d.find_elements(By.CSS_SELECTOR, "#memories li.memory .title")]


def test_the_panel_lists_what_is_remembered_and_deletes_it(browser: Any, tmp_path: Path) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    store = SqliteMemoryStore(tmp_path / "memory.db")

    async def other_user() -> None:
        await store.add("Bob's secret", scope=MemoryScope(user="bob"))

    anyio.run(other_user)
    served = start_server(tmp_path, agent_options={"memory": Memory(store, ALICE)})
    d = browser
    try:
        d.get(served.base_url + "/")
        _wait(d, _ready, "the page")
        assert d.find_element(By.ID, "memory-panel").is_displayed()
        assert _memories(d) == []  # bob's memory is not alice's
        _send(d, "remember: " + HOSTILE)
        _wait(d, lambda d: _memories(d) == [HOSTILE], "the memory in the panel")
        _wait(d, _idle, "the run to end")
        assert d.execute_script("return window.__pwned === undefined")
        assert not d.find_elements(By.CSS_SELECTOR, "#memories img")
        d.save_screenshot(str(ARTIFACTS / "memory-panel.png"))
        d.find_element(By.CSS_SELECTOR, "#memories li.memory .forget").click()
        _wait(d, lambda d: _memories(d) == [], "the memory to go")

        async def left() -> list[str]:
            return [r.text for r in await store.list(scope=ALICE)]

        assert anyio.run(left) == []
        d.refresh()
        _wait(d, _ready, "the page again")
        assert _memories(d) == []
    finally:
        stop_server(served)
        store.close()
