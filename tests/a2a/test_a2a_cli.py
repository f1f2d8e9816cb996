"""`agentcore serve --a2a`, as a subprocess: it prints its address and a generated token, and the
a2a-sdk's client with that token gets the agent's answer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from a2a_support import answer_text, collect, sdk_client, user_message

HERE = Path(__file__).parent


async def ask(url: str, token: str) -> list[dict[str, Any]]:
    async with sdk_client(url, headers={"Authorization": f"Bearer {token}"}) as client:
        return await collect(client.send_message(user_message("hi")))


def test_serve_a2a_prints_its_address_and_token_and_answers(tmp_path: Path) -> None:
    command = [
        *(sys.executable, str(HERE / "faux_serve_a2a.py")),
        *("--port", "0", "--sessions-dir", str(tmp_path), "--a2a-name", "cli agent"),
    ]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        try:
            assert process.stdout is not None and process.stderr is not None
            lines = [process.stdout.readline() for _ in range(3)]
            assert all(lines), (lines, process.stderr.read())
            url = lines[0].split(": ", 1)[1].split(" ")[0]
            token = lines[1].split("token ", 1)[1].split(" ")[0]
            assert url.startswith("http://127.0.0.1:")
            events = anyio.run(ask, url, token)
        finally:
            process.terminate()
            process.wait(timeout=10)
    assert answer_text(events) == "Served over A2A."
    task_id = events[0]["task"]["id"]
    assert (tmp_path / f"{task_id}.jsonl").exists()  # the task's transcript is a session
