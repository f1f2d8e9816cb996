"""Recorded model traffic through every adapter's real SDK: an agent run recorded against the
fault server (which speaks each API's documented wire format, Bedrock's binary event stream
included), then replayed with the server gone, no key in the environment and the model pointed
at a host that does not exist; the answers, tool calls and usage come out the same."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentcore import AgentContext, AgentLoopConfig, agent_loop, run_agent_loop, tool
from agentcore.errors import MissingApiKeyError
from agentcore.llm import check_model, complete
from agentcore.llm.model import Model
from agentcore.llm.types import Context, StreamOptions
from agentcore.messages import AssistantMessage, ToolResultMessage, UserMessage
from agentcore.testing import Recording, recorded
from llm.fault_server import API_KEY, CREDENTIALS, WIRES, Call, FaultResponse, FaultServer, Wire
from recording.conftest import ALL_WIRES, Nowhere, offline, set_aws_credentials
from support import BACKENDS

pytestmark = pytest.mark.anyio

KEYS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "google": "GEMINI_API_KEY"}
APIS = list(ALL_WIRES)


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}"


def set_key(monkeypatch: pytest.MonkeyPatch, wire: Wire) -> None:
    """The provider's key (or AWS credentials) in the environment, as a user recording has."""
    if wire.api == "bedrock-converse-stream":
        set_aws_credentials(monkeypatch)
    else:
        monkeypatch.setenv(KEYS[wire.provider], API_KEY)


def script_weather(server: FaultServer, wire: Wire) -> None:
    """A tool call, then the answer."""
    call = Call("call_1", "get_weather", ['{"city"', ': "Paris"}'])
    server.enqueue(
        wire.sse(wire.answer(["Let me ", "check."], call).events),
        wire.sse(wire.answer(["It is ", "sunny."]).events),
    )


async def run(model: Model, prompt: str = "Weather in Paris?") -> list[Any]:
    config = AgentLoopConfig(model=model, max_retries=0)
    context = AgentContext(system_prompt="Be brief.", messages=[], tools=[get_weather])
    return await run_agent_loop([UserMessage(content=prompt)], context, config, lambda e: None)


def outcome(messages: list[Any]) -> list[Any]:
    """What a replay must reproduce (timestamps aside)."""
    shown: list[Any] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            shown.append((message.content, message.usage, message.stop_reason))
        elif isinstance(message, ToolResultMessage):
            shown.append((message.tool_call_id, message.content, message.is_error))
        else:
            shown.append(message.content)
    return shown


@pytest.mark.parametrize("api", APIS)
async def test_a_run_recorded_replays_offline_without_a_key(
    api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wire = ALL_WIRES[api]
    path = tmp_path / "weather.json"
    with FaultServer() as server:
        model = wire.model(server)
        script_weather(server, wire)
        set_key(monkeypatch, wire)
        with recorded(path, mode="rerecord") as recording:
            live = await run(model)
        assert len(server.requests) == 2 and recording.requests == 2
    assert [m.stop_reason for m in live if isinstance(m, AssistantMessage)] == ["tool_use", "stop"]
    text = path.read_text()
    assert API_KEY not in text and "SECRET" not in text  # no key, token or signature written

    for name in (*KEYS.values(), "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    with recorded(path) as replay:
        replayed = await run(offline(model))
    assert replay.replayed == 2 and replay.unused == []
    assert outcome(replayed) == outcome(live)
    again = await _replay_again(path, offline(model))
    assert outcome(again) == outcome(live)  # deterministic: the same every time


async def _replay_again(path: Path, model: Model) -> list[Any]:
    with recorded(path):
        return await run(model)


async def test_the_file_holds_one_exchange_per_record_with_bodies_as_json(tmp_path: Path) -> None:
    """The format, read back: events one per line, the request body as JSON."""
    path = tmp_path / "r.json"
    with FaultServer() as server:
        wire = ALL_WIRES["openai-completions"]
        server.enqueue(wire.sse(wire.answer(["Hi"]).events))
        with recorded(path, mode="rerecord"):
            context = Context(messages=[UserMessage(content="hello")])
            await complete(wire.model(server), context, StreamOptions(api_key=API_KEY))
    data = json.loads(path.read_text())
    assert data["version"] == 1
    (exchange,) = data["exchanges"]
    request, response = exchange["request"], exchange["response"]
    assert request["method"] == "POST" and request["url"].endswith("/v1/chat/completions")
    assert request["body"]["messages"] == [{"content": "hello", "role": "user"}]
    assert "authorization" not in {k.lower() for k in request["headers"]}
    assert response["status"] == 200 and response["events"][-1] == {"text": "[DONE]"}
    lines = path.read_text().splitlines()
    event_lines = [line for line in lines if line.lstrip().startswith('{"data"')]
    assert len(event_lines) == len(response["events"]) - 1  # one line per event


@pytest.mark.parametrize("api", ["openai-completions", "bedrock-converse-stream"])
async def test_recording_the_same_traffic_twice_writes_the_same_file(
    api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wire = ALL_WIRES[api]
    set_key(monkeypatch, wire)
    with FaultServer() as server:
        model = wire.model(server)
        texts = []
        for name in ("first.json", "second.json"):
            script_weather(server, wire)
            with recorded(tmp_path / name, mode="rerecord"):
                await run(model)
            texts.append((tmp_path / name).read_text())
    assert texts[0] == texts[1]
    assert "timestamp" not in texts[0] and "user-agent" not in texts[0].lower()


async def test_a_retried_429_is_recorded_and_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fault server refuses first (429 with retry-after 0), then answers: both exchanges are
    recorded, and the replay retries exactly as the live run did."""
    wire = ALL_WIRES["anthropic-messages"]
    set_key(monkeypatch, wire)
    path = tmp_path / "retry.json"
    with FaultServer() as server:
        model = wire.model(server)
        server.enqueue(
            wire.error(429, "slow down", {"retry-after": "0"}),
            wire.sse(wire.answer(["Fine."]).events),
        )
        config = AgentLoopConfig(model=model, max_retries=2)
        context = AgentContext(messages=[])
        with recorded(path, mode="rerecord"):
            live = await run_agent_loop([UserMessage(content="hi")], context, config, print_none)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    statuses = [e["response"]["status"] for e in json.loads(path.read_text())["exchanges"]]
    assert statuses == [429, 200]
    config = AgentLoopConfig(model=offline(model), max_retries=2)
    with recorded(path) as replay:
        replayed = await run_agent_loop(
            [UserMessage(content="hi")], AgentContext(messages=[]), config, print_none
        )
    assert replay.replayed == 2
    assert outcome(replayed) == outcome(live)
    assert replayed[-1].stop_reason == "stop"


def print_none(event: Any) -> None:
    return None


async def test_a_connection_cut_mid_stream_is_replayed_as_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wire = ALL_WIRES["openai-completions"]
    set_key(monkeypatch, wire)
    path = tmp_path / "cut.json"
    with FaultServer() as server:
        model = wire.model(server)
        answer = wire.answer(["Hello ", "there ", "friend."])
        server.enqueue(FaultResponse(**{**_sse_fields(wire, answer.events), "reset_after": 3}))
        with recorded(path, mode="rerecord"):
            live = await run(model, "hi")
    response = json.loads(path.read_text())["exchanges"][0]["response"]
    assert "cut" in response and len(response["events"]) == 3
    with recorded(path):
        replayed = await run(offline(model), "hi")
    assert live[-1].stop_reason == replayed[-1].stop_reason == "error"
    assert outcome(replayed) == outcome(live)


def _sse_fields(wire: Wire, events: list[bytes]) -> dict[str, Any]:
    response = wire.sse(events)
    return {f.name: getattr(response, f.name) for f in dataclasses.fields(response)}


def test_recording_is_a_context_manager_for_sync_and_async_code(tmp_path: Path) -> None:
    recording = Recording(tmp_path / "x.json", mode="missing")
    with recording as entered:
        assert entered is recording
    assert not (tmp_path / "x.json").exists()  # nothing recorded, nothing written


def test_a_replay_needs_no_credentials_to_pass_the_model_check(tmp_path: Path) -> None:
    """`check_model` (what the command runs before sending) accepts a Bedrock or OpenAI model
    with no credentials while a recording replays, and refuses it otherwise."""
    (tmp_path / "r.json").write_text('{"exchanges": [], "version": 1}')
    bedrock = ALL_WIRES["bedrock-converse-stream"].model(Nowhere())  # type: ignore[arg-type]
    openai = offline(ALL_WIRES["openai-completions"].model(Nowhere()))  # type: ignore[arg-type]
    for model in (bedrock, openai):
        with pytest.raises(MissingApiKeyError):
            check_model(model)
        with recorded(tmp_path / "r.json"):
            check_model(model)


@pytest.mark.parametrize("api", list(WIRES))
async def test_a_key_the_server_quotes_back_is_not_written(
    api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fault server echoes the credential header into an error body, as careless gateways
    do: the recording keeps the error, with the key redacted."""
    wire = ALL_WIRES[api]
    set_key(monkeypatch, wire)
    path = tmp_path / "echo.json"
    with FaultServer() as server:
        server.enqueue(wire.error(400, f"bad request from {CREDENTIALS.decode()}"))
        with recorded(path, mode="rerecord"):
            live = await run(wire.model(server), "hi")
    text = path.read_text()
    assert API_KEY not in text and "<redacted>" in text
    assert live[-1].stop_reason == "error" and API_KEY not in (live[-1].error_message or "")
    monkeypatch.delenv(KEYS[wire.provider])
    with recorded(path):
        replayed = await run(offline(wire.model(server)), "hi")
    assert replayed[-1].stop_reason == "error"
    assert "bad request from" in (replayed[-1].error_message or "")


async def test_two_tasks_replay_two_recordings_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recording belongs to the task that entered it (a context variable)."""
    wire = ALL_WIRES["openai-completions"]
    set_key(monkeypatch, wire)
    with FaultServer() as server:
        model = wire.model(server)
        for name in ("a", "b"):
            server.enqueue(wire.sse(wire.answer([f"Answer {name}."]).events))
            with recorded(tmp_path / f"{name}.json", mode="rerecord"):
                await run(model, f"question {name}")
    monkeypatch.delenv("OPENAI_API_KEY")
    answers: dict[str, str] = {}

    async def replay(name: str) -> None:
        with recorded(tmp_path / f"{name}.json") as recording:
            await anyio.sleep(0.01)  # both recordings are active at once
            messages = await run(offline(model), f"question {name}")
        assert recording.replayed == 1
        answers[name] = messages[-1].text

    async with anyio.create_task_group() as group:
        group.start_soon(replay, "a")
        group.start_soon(replay, "b")
    assert answers == {"a": "Answer a.", "b": "Answer b."}


def test_the_synchronous_facade_replays_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`agentcore.agent_loop` called from plain code runs on a thread of its own, which sees the
    one recording active in the process."""
    wire = ALL_WIRES["anthropic-messages"]
    set_key(monkeypatch, wire)
    path = tmp_path / "sync.json"
    with FaultServer() as server:
        model = wire.model(server)
        server.enqueue(wire.sse(wire.answer(["Hello ", "from a thread."]).events))
        config = AgentLoopConfig(model=model, max_retries=0)
        with recorded(path, mode="rerecord"):
            list(agent_loop([UserMessage(content="hi")], AgentContext(messages=[]), config))
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    config = AgentLoopConfig(model=offline(model), max_retries=0)
    with recorded(path) as recording:
        events = list(agent_loop([UserMessage(content="hi")], AgentContext(messages=[]), config))
    assert recording.replayed == 1
    assert events[-1].messages[-1].text == "Hello from a thread."


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_recording_and_replaying_under_each_backend(
    anyio_backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wire = ALL_WIRES["anthropic-messages"]
    set_key(monkeypatch, wire)
    path = tmp_path / "r.json"
    with FaultServer() as server:
        model = wire.model(server)
        script_weather(server, wire)
        with recorded(path, mode="rerecord"):
            live = await run(model)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with recorded(path):
        replayed = await run(offline(model))
    assert outcome(replayed) == outcome(live)
