"""Fixtures of the end-to-end tests: the local model server, started by the test set-up.

When any selected test is marked `local_llm`, the server is started right after collection,
before the first test (so a first-time build, which takes minutes, does not count against a
test's timeout) and its progress is shown. Tests get it through the session-scoped `local_model`
fixture, which skips them with a visible reason when the server cannot be started on this
machine; see `local_server.py`.
"""

from __future__ import annotations

import pytest

from .local_server import LocalModel, LocalModelUnavailable, ensure_local_model


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly:
        return
    if not any(item.get_closest_marker("local_llm") for item in session.items):
        return
    capture = session.config.pluginmanager.getplugin("capturemanager")
    reporter = session.config.pluginmanager.getplugin("terminalreporter")

    def progress(line: str) -> None:
        if reporter is not None:
            reporter.write_line(line)

    try:
        if capture is not None:
            with capture.global_and_fixture_disabled():
                ensure_local_model(progress)
        else:
            ensure_local_model(progress)
    except Exception:
        pass  # remembered; the `local_model` fixture reports it in every test that needs it


@pytest.fixture(scope="session")
def local_model() -> LocalModel:
    """The running, warmed-up local model (skips with the reason when it cannot be started)."""
    try:
        return ensure_local_model()
    except LocalModelUnavailable as exc:
        pytest.skip(str(exc))
