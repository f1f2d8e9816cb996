"""Fixtures of the model-layer tests: a replay HTTP server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .replay_server import ReplayServer, serve


@pytest.fixture
def replay_server() -> Iterator[ReplayServer]:
    """A started `ReplayServer` (queue responses with `replay_server.enqueue(...)`)."""
    yield from serve()


@pytest.fixture
def anyio_backend() -> str:
    """Provider tests run under asyncio (the vendor SDKs' httpx clients need it)."""
    return "asyncio"
