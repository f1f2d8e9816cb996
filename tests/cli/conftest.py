"""Fixtures of the `agentcore` command's tests: a registered faux model, and no `AGENTCORE_MODEL`
from the environment the tests run in."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentcore.llm import register_model
from agentcore.testing import FauxProvider


@pytest.fixture
def faux() -> Iterator[FauxProvider]:
    """A faux provider registered in the catalogue as `<provider_id>/faux-1`."""
    provider = FauxProvider()
    register_model(provider.model)
    yield provider


@pytest.fixture(autouse=True)
def _no_model_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTCORE_MODEL", raising=False)
