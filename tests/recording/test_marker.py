"""The pytest plugin as users meet it: tests marked `recorded` replay their committed recordings
(`recordings/test_marker/<test>.json`, beside this file) with no server and no key.

Re-record them with `scripts/test tests/recording/test_marker.py --agentcore-record=rerecord`:
then `live` starts the fault server and sets the keys, and the same tests record.
`test_secrets.py` checks every committed recording for keys and signatures."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agentcore import AgentContext, AgentLoopConfig, run_agent_loop, tool
from agentcore.llm.model import Model
from agentcore.messages import AssistantMessage, UserMessage
from agentcore.testing import Recording
from llm.fault_server import API_KEY, Call, FaultServer
from recording.conftest import ALL_WIRES, Nowhere, set_aws_credentials

pytestmark = pytest.mark.anyio

KEYS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "google": "GEMINI_API_KEY"}


@tool
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@pytest.fixture
def live(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The fault server and the keys while recording (`--agentcore-record`), else None."""
    if request.config.getoption("agentcore_record") in (None, "replay"):
        yield None
        return
    set_aws_credentials(monkeypatch)
    for variable in KEYS.values():
        monkeypatch.setenv(variable, API_KEY)
    with FaultServer() as server:
        yield server


def model_for(api: str, live: FaultServer | None) -> Model:
    wire = ALL_WIRES[api]
    if live is None:
        return wire.model(Nowhere())  # type: ignore[arg-type]
    call = Call("call_7", "add", ['{"a": 2', ', "b": 3}'])
    live.enqueue(
        wire.sse(wire.answer(["Adding."], call).events),
        wire.sse(wire.answer(["2 + 3 = 5."]).events),
    )
    return wire.model(live)


@pytest.mark.recorded
@pytest.mark.parametrize("api", list(ALL_WIRES))
async def test_a_marked_test_replays_its_recording(
    api: str, live: FaultServer | None, recorded_traffic: Recording
) -> None:
    config = AgentLoopConfig(model=model_for(api, live), max_retries=0)
    context = AgentContext(messages=[], tools=[add])
    messages = await run_agent_loop([UserMessage(content="2+3?")], context, config, _ignore)
    answers = [m for m in messages if isinstance(m, AssistantMessage)]
    assert [a.stop_reason for a in answers] == ["tool_use", "stop"], answers[-1].error_message
    assert answers[-1].text == "2 + 3 = 5."
    assert recorded_traffic.requests == 2
    assert recorded_traffic.path.parent.name == "test_marker"
    assert recorded_traffic.path.name == f"test_a_marked_test_replays_its_recording[{api}].json"


def _ignore(event: Any) -> None:
    return None
