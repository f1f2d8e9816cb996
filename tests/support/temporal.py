"""Helpers of the durable-run tests: a pool of real worker processes
(`python -m agentcore.temporal worker`) serving `tests/temporal/worker_app.py`, and readers of the
effects files its activities write. The fixtures are in `tests/temporal/conftest.py`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio

from . import ROOT

__all__ = ["TASK_QUEUE", "Workers", "lines", "wait_for_line"]

SRC = ROOT / "src"
APP_DIR = ROOT / "tests" / "temporal"
"""The folder of `worker_app`, put on the workers' path."""
TASK_QUEUE = f"agentcore-tests-{os.getpid()}"


class Workers:
    """Worker processes serving `worker_app` on the session's task queue."""

    def __init__(self, address: str, effects: Path) -> None:
        self.address = address
        self.effects = effects
        self.processes: list[subprocess.Popen[str]] = []
        self.logs: list[Any] = []

    def start(self) -> subprocess.Popen[str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(SRC), str(APP_DIR)])
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
