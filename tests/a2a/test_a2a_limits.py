"""`agentcore serve --a2a` under the shared server's limits (`agentcore.netguard.serve`), as a
subprocess with a low file descriptor limit: clients that never finish their headers are closed
after `--header-timeout` and, past `--max-connections`, make room, so the agent card is still
served; and `serve_a2a` refuses limits that are not positive."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from a2a_support import TOKEN, new_agent

from agentcore import ConfigError
from agentcore.a2a import serve_a2a
from agentcore.testing import FauxProvider, faux_text
from support.slow_clients import FD_LIMIT, all_closed_within, low_fd_limit, open_slow_connections

HERE = Path(__file__).parent
SRC = HERE.parents[1] / "src"


@pytest.mark.skipif(sys.platform != "linux", reason="file descriptor limits as on Linux")
def test_slow_clients_cannot_starve_serve_a2a(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    env.pop("AGENTCORE_TOKEN", None)
    command = [
        *(sys.executable, str(HERE / "faux_serve_a2a.py"), "--port", "0"),
        *("--sessions-dir", str(tmp_path), "--token", TOKEN),
        *("--header-timeout", "2", "--max-connections", "30"),
    ]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=low_fd_limit,
    )
    slow = []
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("agentcore serve --a2a: http://127.0.0.1:"), line + (
            process.stderr.read() if process.stderr else ""
        )
        url = line.split(": ", 1)[1].split(" ")[0]
        slow = open_slow_connections(int(url.rsplit(":", 1)[1]))
        assert len(slow) > FD_LIMIT  # more than the server has file descriptors
        started = time.monotonic()
        with httpx.Client(timeout=15) as client:
            card = client.get(
                url + "/.well-known/agent-card.json",
                headers={"Authorization": f"Bearer {TOKEN}"},
            )
        assert card.status_code == 200, card.text
        assert time.monotonic() - started < 10
        # the slow ones are closed by the header timeout (or made room for)
        assert all_closed_within(slow, 2.5) == len(slow)
    finally:
        for s in slow:
            s.close()
        process.terminate()
        process.communicate(timeout=20)


@pytest.mark.anyio
async def test_the_limits_must_be_positive() -> None:
    agent = new_agent(FauxProvider([faux_text("x")]).model, [])
    with pytest.raises(ConfigError, match="header_timeout and max_connections"):
        await serve_a2a(agent, port=0, header_timeout=0)
    with pytest.raises(ConfigError, match="header_timeout and max_connections"):
        await serve_a2a(agent, port=0, max_connections=-1)
