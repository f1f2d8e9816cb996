"""examples/durable_agent.py runs with the scripted model (and, marked `local_llm`, with the
local model): its worker is killed with SIGKILL while the tool runs, and the run completes on the
other worker."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from e2e.local_server import LocalModelUnavailable, ensure_local_model
from support import ROOT


def test_the_durable_agent_survives_kill_9(temporal_address: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTCORE_")}
    env.update(
        AGENTCORE_DURABLE_FAUX="1",
        AGENTCORE_TEMPORAL_ADDRESS=temporal_address,
        DURABLE_AGENT_LOG=str(tmp_path / "log"),
        PYTHONPATH=str(ROOT / "src"),
    )
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "durable_agent.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "kill -9" in out
    lines = len((ROOT / "pyproject.toml").read_text().splitlines())
    assert f"The count is in: pyproject.toml has {lines} lines." in out
    assert "the run survived: 4 messages, the tool finished 1 time(s)" in out
    log = (tmp_path / "log").read_text().split("\n")
    assert sum(1 for line in log if line.startswith("started")) == 2  # killed, then run again


@pytest.mark.local_llm
@pytest.mark.timeout(600)
def test_the_durable_agent_survives_kill_9_with_the_local_model(
    temporal_address: str, tmp_path: Path
) -> None:
    try:
        local = ensure_local_model()
    except LocalModelUnavailable as exc:
        pytest.skip(str(exc))
    port = urlsplit(local.base_url).port
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTCORE_")}
    env.update(
        AGENTCORE_TEMPORAL_ADDRESS=temporal_address,
        AGENTCORE_LOCAL_PORT=str(port),
        DURABLE_AGENT_LOG=str(tmp_path / "log"),
        PYTHONPATH=str(ROOT / "src"),
    )
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "durable_agent.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "kill -9" in done.stdout and "the run survived" in done.stdout
    assert "the tool finished 1 time(s)" in done.stdout
