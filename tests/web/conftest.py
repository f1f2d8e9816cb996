"""Fixtures of the web tests: a server per test (see `web_support.py`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("ag_ui")

from .web_support import Served, start_server, stop_server


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    """A server whose faux model streams as fast as it is read."""
    s = start_server(tmp_path)
    yield s
    stop_server(s)


@pytest.fixture
def slow_served(tmp_path: Path) -> Iterator[Served]:
    """A server whose faux model streams slowly (a long answer takes a minute): to stop it."""
    s = start_server(tmp_path, tokens_per_second=100)
    yield s
    stop_server(s)
