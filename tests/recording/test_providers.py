"""The other providers behind the adapters: Azure OpenAI (Chat Completions on a deployment, and
the v1 Responses API; its key goes in an `api-key` header) and Mistral (a catalogue model on the
Chat Completions adapter), recorded against the fault server and replayed offline with no key."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from agentcore.llm import complete, get_model
from agentcore.llm.model import AzureOpenAI, Model, ModelCost
from agentcore.llm.types import Context, StreamOptions, Tool
from agentcore.messages import UserMessage
from agentcore.testing import recorded
from llm.fault_server import WIRES, Call, FaultServer
from recording.conftest import offline

pytestmark = pytest.mark.anyio

KEY = "provider-SECRET-key-0123456789"
WEATHER = Tool(
    name="get_weather",
    description="The weather in a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)


def azure(server: FaultServer, api: str) -> Model:
    return Model(
        id="gpt-4o",
        api=api,
        provider="azure-openai",
        base_url=server.url,
        cost=ModelCost(input=2.5, output=10.0),
        cloud=AzureOpenAI(deployment="my-gpt4o", api_version="2024-10-21"),
    )


def mistral(server: FaultServer, api: str) -> Model:
    return dataclasses.replace(
        get_model("mistral", "mistral-small-latest"), base_url=server.base_url()
    )


CASES = {
    "azure-chat": (azure, "openai-completions", "AZURE_OPENAI_API_KEY"),
    "azure-responses": (azure, "openai-responses", "AZURE_OPENAI_API_KEY"),
    "mistral": (mistral, "openai-completions", "MISTRAL_API_KEY"),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_recorded_and_replayed_offline_without_a_key(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make, api, variable = CASES[case]
    wire = WIRES[api]
    path = tmp_path / f"{case}.json"
    context = Context(messages=[UserMessage(content="Weather in Paris?")], tools=[WEATHER])
    monkeypatch.setenv(variable, KEY)
    with FaultServer() as server:
        model = make(server, api)
        call = Call("call_1", "get_weather", ['{"city": ', '"Paris"}'])
        server.enqueue(wire.sse(wire.answer(["Checking."], call).events))
        with recorded(path, mode="rerecord"):
            live = await complete(model, context, StreamOptions())
        assert len(server.requests) == 1
    assert live.stop_reason == "tool_use", live.error_message
    text = path.read_text()
    assert KEY not in text and "SECRET" not in text and '"api-key"' not in text

    monkeypatch.delenv(variable)
    with recorded(path) as replay:
        replayed = await complete(offline(model), context, StreamOptions())
    assert replay.replayed == 1
    assert (replayed.content, replayed.usage, replayed.stop_reason) == (
        live.content,
        live.usage,
        live.stop_reason,
    )
