"""The other providers behind the adapters: Azure OpenAI (Chat Completions on a deployment, and
the v1 Responses API; its key goes in an `api-key` header) and Mistral (a catalogue model on the
Chat Completions adapter), recorded against the fault server and replayed offline with no key."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from agentcore.llm import complete, get_model
from agentcore.llm.model import AzureOpenAI, Model, ModelCost, VertexAI
from agentcore.llm.types import Context, StreamOptions, Tool
from agentcore.messages import UserMessage
from agentcore.testing import recorded
from llm.fault_server import WIRES, Call, FaultServer
from recording.conftest import UNREACHABLE, offline

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


PROJECT = "my-project"


def vertex_gemini(server: FaultServer, token: str | None) -> Model:
    return Model(
        id="gemini-2.5-flash",
        api="google-generative-ai",
        provider="google-vertex",
        base_url=server.url if token else UNREACHABLE,
        cost=ModelCost(input=0.3, output=2.5),
        cloud=VertexAI(project=PROJECT, location="us-central1", token_provider=_tokens(token)),
    )


def vertex_claude(server: FaultServer, token: str | None) -> Model:
    return Model(
        id="claude-sonnet-4-5@20250929",
        api="anthropic-messages",
        provider="google-vertex-anthropic",
        base_url=(server.base_url("/v1") if token else UNREACHABLE + "/v1"),
        cost=ModelCost(input=3.0, output=15.0),
        cloud=VertexAI(project=PROJECT, location="us-east5", token_provider=_tokens(token)),
    )


def _tokens(token: str | None) -> Any:
    def provide() -> str:
        if token is None:
            raise AssertionError("a replay fetched a Vertex access token")
        return token

    return provide


@pytest.mark.parametrize(
    ("make", "api"),
    [(vertex_gemini, "google-generative-ai"), (vertex_claude, "anthropic-messages")],
    ids=["gemini", "claude"],
)
async def test_vertex_replays_fetch_no_token(make: Any, api: str, tmp_path: Path) -> None:
    """Vertex AI authenticates with an access token fetched before the request; a replay sends
    nothing, so it fetches none."""
    wire = WIRES[api]
    path = tmp_path / "vertex.json"
    context = Context(messages=[UserMessage(content="Hi")])
    with FaultServer() as server:
        server.enqueue(wire.sse(wire.answer(["Hello."]).events))
        with recorded(path, mode="rerecord"):
            live = await complete(make(server, KEY), context, StreamOptions())
        assert live.stop_reason == "stop", live.error_message
        assert f"/projects/{PROJECT}/locations/" in server.requests[0].path
        offline_model = make(server, None)
    assert KEY not in path.read_text()
    with recorded(path) as replay:
        replayed = await complete(offline_model, context, StreamOptions())
    assert replay.replayed == 1, replayed.error_message
    assert replayed.content == live.content and replayed.stop_reason == "stop"
