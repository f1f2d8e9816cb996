"""Recording the local model (llama.cpp behind the OpenAI Chat Completions API): an agent run
with a tool recorded, then replayed with the model pointed at a host that does not exist; and
`python -m agentcore.cli run --record` / `--replay` as processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentcore import Agent, tool
from agentcore.messages import AssistantMessage
from agentcore.testing import recorded
from e2e.local_server import LocalModel, LocalModelUnavailable, ensure_local_model
from recording.conftest import offline

pytestmark = [pytest.mark.local_llm, pytest.mark.anyio, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def local_model() -> LocalModel:
    try:
        return ensure_local_model()
    except LocalModelUnavailable as exc:
        pytest.skip(str(exc))


@tool
def get_weather(city: str) -> str:
    """The current weather in a city."""
    return f"Sunny and 21 degrees in {city}"


async def ask(model: Any) -> list[Any]:
    agent = Agent(initial_state={"model": model, "tools": [get_weather]}, temperature=0)
    await agent.prompt("What is the weather in Paris?")
    return agent.state.messages


async def test_an_agent_run_on_the_local_model_replays_offline(
    local_model: LocalModel, tmp_path: Path
) -> None:
    path = tmp_path / "local.json"
    with recorded(path, mode="rerecord") as recording:
        live = await ask(local_model.model)
    answers = [m for m in live if isinstance(m, AssistantMessage)]
    assert answers[-1].stop_reason == "stop", answers[-1].error_message
    assert recording.requests == len(answers)
    exchanges = json.loads(path.read_text())["exchanges"]
    assert exchanges[0]["request"]["body"]["model"] == local_model.model.id

    with recorded(path) as replay:
        replayed = await ask(offline(local_model.model))
    assert replay.replayed == len(answers)
    assert [m.content for m in replayed] == [m.content for m in live]
    usage = [m.usage for m in replayed if isinstance(m, AssistantMessage)]
    assert usage == [m.usage for m in answers]


def test_the_command_records_and_replays_the_local_model(
    local_model: LocalModel, tmp_path: Path
) -> None:
    path = tmp_path / "cli.json"
    command = [sys.executable, "-m", "agentcore.cli", "run", "Say hello in one word.", "--json"]
    env = {**os.environ, "AGENTCORE_HOME": str(tmp_path / "home")}
    live = subprocess.run(
        [*command, "--record", str(path), "--max-tokens", "20"],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert live.returncode == 0, live.stderr
    replay = subprocess.run(
        [*command, "--replay", str(path), "--max-tokens", "20"],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert replay.returncode == 0, replay.stderr

    def answer(stdout: str) -> Any:
        ends = [json.loads(line) for line in stdout.splitlines() if '"agent_end"' in line]
        return ends[-1]["messages"][-1]["content"]

    assert answer(replay.stdout) == answer(live.stdout)
