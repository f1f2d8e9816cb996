"""Shared fixtures and hooks of the tests (the helpers they import are in `support/`).

Tests run under asyncio by default; a few take `anyio_backend` as a parameter to also run under
trio (`@pytest.mark.parametrize("anyio_backend", support.BACKENDS)`). The model is always the
`faux` provider or a small scripted stream function; agentcore's own code is never mocked.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentcore.llm import Model, get_models, get_providers, register_model, unregister_model
from support.markers import EXTERNAL, SLOW, matcher
from support.servers import make_run_dir, stop_servers

# installed as a pytest11 entry point; named here too for a checkout whose install predates it
pytest_plugins = ["agentcore.testing._pytest_plugin"]

_RUN_DIR = pytest.StashKey[Path]()
_SHARED_SCOPES = ("session", "package", "module")


def pytest_configure(config: pytest.Config) -> None:
    """The run's controller (or a run without xdist) makes the folder its workers share."""
    if not hasattr(config, "workerinput"):
        config.stash[_RUN_DIR] = make_run_dir()


def pytest_unconfigure(config: pytest.Config) -> None:
    """Every worker has finished: stop the servers they started (see `support.servers`)."""
    run_dir = config.stash.get(_RUN_DIR, None)
    if run_dir is not None:
        stop_servers(run_dir)


_SLOW = matcher(SLOW)
_EXTERNAL = matcher(EXTERNAL)


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by these marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests listed in `support.markers` `slow` or `external`, and those that need a
    server the project's scripts start (the local model, Temporal) `external`.

    Under pytest-xdist with `--dist loadgroup` (as `scripts/test` runs it), tests that share an
    expensive fixture are kept on one worker so that it is made once (`support.scheduling`): the
    `local_llm` tests (one model server, fastest one request at a time), the tests of one
    session-scoped fixture (Temporal, the built packages), and a module's tests that share a
    module-scoped fixture (the docs site, the browser)."""
    groups: dict[str, str] = {}
    for item in items:
        if _SLOW.fullmatch(item.nodeid):
            item.add_marker(pytest.mark.slow)
        fixtures = getattr(item, "fixturenames", ())
        if (
            _EXTERNAL.fullmatch(item.nodeid)
            or item.get_closest_marker("local_llm")
            or "temporal_address" in fixtures  # tests/temporal marks these `temporal`
        ):
            item.add_marker(pytest.mark.external)
        group = _shared_fixture_group(item)
        if group is not None:
            groups[item.nodeid] = group
    if hasattr(config, "workerinput") and config.getoption("loadgroup", False):  # xdist sets it
        from support.scheduling import write_groups

        write_groups(groups)


@pytest.hookimpl(optionalhook=True, tryfirst=True)  # before xdist's own
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadgroup` keeps a group's tests on one worker (see `support.scheduling`)."""
    if config.getoption("dist") != "loadgroup":
        return None
    from support.scheduling import GroupScheduling

    return GroupScheduling(config, log)


def _shared_fixture_group(item: pytest.Item) -> str | None:
    if item.get_closest_marker("local_llm"):
        return "local_llm"
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    scopes: dict[str, str] = {}
    for name in info.names_closure:
        definitions = info.name2fixturedefs.get(name)
        if definitions and definitions[-1].baseid:  # the project's fixtures, not plugins'
            scopes[name] = definitions[-1].scope
    for name, scope in scopes.items():
        if scope == "session":
            return name
    if any(scope in _SHARED_SCOPES for scope in scopes.values()):
        return item.nodeid.split("::")[0]
    return None


def _catalogue() -> dict[tuple[str, str], Model]:
    return {(m.provider, m.id): m for p in get_providers() for m in get_models(p)}


@pytest.fixture(autouse=True)
def _catalogue_restored() -> Iterator[None]:
    """Every test leaves the model catalogue as it found it: models a test registered are
    unregistered, and shipped ones it replaced or removed are put back."""
    before = _catalogue()
    yield
    after = _catalogue()
    for (provider, model_id), model in after.items():
        if (provider, model_id) not in before:
            unregister_model(provider, model_id)
        elif before[(provider, model_id)] is not model:
            register_model(before[(provider, model_id)])
    for key, model in before.items():
        if key not in after:
            register_model(model)


@pytest.fixture
def anyio_backend() -> str:
    """Most agent-layer tests run under asyncio only; see `BACKENDS` for the trio subset."""
    return "asyncio"


@pytest.fixture(autouse=True)
def _sessions_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`agentcore chat` saves every chat: in tests, never in the user's home."""
    monkeypatch.setenv("AGENTCORE_HOME", str(tmp_path_factory.mktemp("agentcore-home")))
