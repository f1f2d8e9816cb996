"""Servers the tests start once for a whole run, also when pytest-xdist runs it in several workers.

The start scripts (`scripts/local-model`, `scripts/temporal`) are idempotent and hold a file
lock while they start a server, so every worker may call them: the first one starts the server,
the others find it running and reuse it. Nothing is ever started twice on one port.

Stopping is the delicate part: a worker that has run its share of the tests exits while the others
are still running theirs, so a server a worker started must not be stopped when that worker ends.
Under xdist such a worker hands the stop command to the run's controller instead
(`stop_when_run_ends`), which runs it once every worker has finished (`stop_servers`, called from
the root `conftest.py`). Without xdist the fixture stops its server itself, as before.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

__all__ = ["RUN_DIR_ENV", "make_run_dir", "stop_servers", "stop_when_run_ends"]

RUN_DIR_ENV = "AGENTCORE_TESTS_RUN_DIR"
"""A folder shared by the controller and the workers of one test run (made by the controller)."""


def is_xdist_worker() -> bool:
    """Whether this process is a pytest-xdist worker."""
    return "PYTEST_XDIST_WORKER" in os.environ


def make_run_dir() -> Path:
    """Make the run's shared folder and publish it to the workers (they inherit the environment)."""
    path = Path(tempfile.mkdtemp(prefix="agentcore-tests-"))
    os.environ[RUN_DIR_ENV] = str(path)
    return path


def stop_when_run_ends(name: str, command: list[str], env: dict[str, str] | None = None) -> bool:
    """In an xdist worker, have the controller run `command` (which stops the server `name`) when
    the whole run ends; True when that was arranged, False when the caller must stop it itself
    (no xdist)."""
    run_dir = os.environ.get(RUN_DIR_ENV)
    if not is_xdist_worker() or not run_dir:
        return False
    Path(run_dir, f"{name}.stop.json").write_text(json.dumps({"command": command, "env": env}))
    return True


def stop_servers(run_dir: Path) -> None:
    """Run the stop commands the workers handed over (once each), then remove the folder."""
    for path in sorted(run_dir.glob("*.stop.json")):
        order = json.loads(path.read_text())
        env = {**os.environ, **(order["env"] or {})}
        subprocess.run(order["command"], env=env, capture_output=True, timeout=60, check=False)
    shutil.rmtree(run_dir, ignore_errors=True)
