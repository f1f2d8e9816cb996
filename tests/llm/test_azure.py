"""Azure OpenAI: both OpenAI adapters through the real `openai` SDK's `AsyncAzureOpenAI`
against a replay server on 127.0.0.1 serving Azure's URL scheme (deployments, `api-version`,
the v1 Responses path) and checking its credentials (`api-key`, an Entra ID bearer token)."""

from __future__ import annotations

import dataclasses
import json
import threading
from typing import Any

import pytest

from agentcore.abort import AbortController
from agentcore.errors import MissingApiKeyError
from agentcore.llm import (
    Context,
    Model,
    ModelCost,
    OpenAICompletionsCompat,
    ResponseInfo,
    SimpleStreamOptions,
    StreamOptions,
    Tool,
    get_model,
    is_context_overflow,
    register_model,
    stream,
    stream_simple,
)
from agentcore.llm.model import AzureOpenAI, cloud_from_json, cloud_to_json
from agentcore.llm.providers.openai_completions import ESTIMATE_NOTE
from agentcore.messages import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    UserMessage,
    to_json,
)

from .fault_server import CompletionsWire, ResponsesWire, Wire
from .helpers import collect, collect_aborting
from .replay_server import ReplayServer, ScriptedResponse, load_fixture
from .test_faults import (
    FAULTS,
    Fault,
    run_fault,
)

pytestmark = pytest.mark.anyio

KEY = "azure-key-0123456789abcdef"
TOKEN = "eyJ0eXAiOiJKV1Qi.entra-token-0123456789"
DEPLOYMENT = "my-gpt4o"
VERSION = "2024-10-21"
COST = ModelCost(input=2.5, output=10.0, cache_read=1.25)
CHAT_PATH = f"/openai/deployments/{DEPLOYMENT}/chat/completions?api-version={VERSION}"
RESPONSES_PATH = "/openai/v1/responses?api-version=preview"
WEATHER = Tool(
    name="get_weather",
    description="The weather in a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)


def make_model(server: ReplayServer, api: str = "openai-completions", **settings: Any) -> Model:
    return Model(
        id="gpt-4o",
        api=api,
        provider="azure-openai",
        base_url=server.url,
        reasoning=True,
        cost=COST,
        compat=OpenAICompletionsCompat(
            supports_developer_role=True,
            max_tokens_field="max_completion_tokens",
            supports_reasoning_effort=True,
        )
        if api == "openai-completions"
        else None,
        cloud=AzureOpenAI(deployment=DEPLOYMENT, api_version=VERSION, **settings),
    )


def ask(text: str = "Hi") -> Context:
    return Context(system_prompt="Be terse.", messages=[UserMessage(content=text)])


def chat(name: str, **kwargs: Any) -> ScriptedResponse:
    return ScriptedResponse.sse(load_fixture("azure-openai", name), **kwargs)


def responses(name: str, **kwargs: Any) -> ScriptedResponse:
    # the v1 Responses API streams exactly OpenAI's events
    return ScriptedResponse.sse(load_fixture("openai-responses", name), **kwargs)


async def run(model: Model, options: StreamOptions | None = None) -> AssistantMessage:
    _, message = await collect(stream(model, ask(), options or StreamOptions(api_key=KEY)))
    return message


# --- Chat Completions on a deployment ----------------------------------------------------------


async def test_chat_text_goes_to_the_deployment_with_the_api_key(
    replay_server: ReplayServer,
) -> None:
    replay_server.enqueue(chat("chat_text"))
    message = await run(make_model(replay_server))
    assert message.content == [TextContent(text="Hello, world!")]
    assert message.stop_reason == "stop" and message.error_message is None
    assert (message.api, message.provider, message.model) == (
        "openai-completions",
        "azure-openai",
        "gpt-4o",
    )
    (request,) = replay_server.requests
    assert (request.method, request.path) == ("POST", CHAT_PATH)
    assert request.headers["api-key"] == KEY and "authorization" not in request.headers
    assert request.json["model"] == DEPLOYMENT
    assert request.json["messages"][0] == {"role": "developer", "content": "Be terse."}
    assert request.json["stream_options"] == {"include_usage": True}
    assert request.json["max_completion_tokens"] == 16_384


async def test_chat_usage_and_cost(replay_server: ReplayServer) -> None:
    replay_server.enqueue(chat("chat_text"))
    usage = (await run(make_model(replay_server))).usage
    assert (usage.input, usage.cache_read, usage.output) == (20, 100, 4)
    assert usage.cost.input == pytest.approx(20 * 2.5 / 1e6)
    assert usage.cost.cache_read == pytest.approx(100 * 1.25 / 1e6)
    assert usage.cost.output == pytest.approx(4 * 10.0 / 1e6)


async def test_chat_tool_call_arguments_split_across_chunks(replay_server: ReplayServer) -> None:
    replay_server.enqueue(chat("chat_tool_call"))
    context = dataclasses.replace(ask("Weather in Paris?"), tools=[WEATHER])
    _, message = await collect(
        stream(make_model(replay_server), context, StreamOptions(api_key=KEY))
    )
    assert message.stop_reason == "tool_use"
    assert message.tool_calls == [
        ToolCall(
            id="call_abc123", name="get_weather", arguments={"city": "Paris", "units": "celsius"}
        )
    ]
    assert replay_server.requests[0].json["tools"][0]["function"]["name"] == "get_weather"


async def test_chat_thinking_level_is_the_reasoning_effort(replay_server: ReplayServer) -> None:
    replay_server.enqueue(chat("chat_text"))
    options = SimpleStreamOptions(api_key=KEY, reasoning="high")
    _, message = await collect(stream_simple(make_model(replay_server), ask(), options))
    assert message.stop_reason == "stop"
    body = replay_server.requests[0].json
    assert body["reasoning_effort"] == "high"
    assert body["messages"][0]["role"] == "developer"


async def test_hooks_see_the_body_and_the_response(replay_server: ReplayServer) -> None:
    replay_server.enqueue(chat("chat_text", headers={"x-ms-region": "Sweden Central"}))
    seen: list[Any] = []

    def on_payload(payload: Any, model: Model) -> Any:
        seen.append(payload["model"])
        return {**payload, "user": "u-1"}

    async def on_response(info: ResponseInfo, model: Model) -> None:
        seen.append((info.status, info.headers.get("x-ms-region")))

    options = StreamOptions(api_key=KEY, on_payload=on_payload, on_response=on_response)
    assert (await run(make_model(replay_server), options)).stop_reason == "stop"
    assert seen == [DEPLOYMENT, (200, "Sweden Central")]
    assert replay_server.requests[0].json["user"] == "u-1"


# --- Entra ID ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_entra_id_token_provider(replay_server: ReplayServer, kind: str) -> None:
    calls: list[int] = []

    def sync_provider() -> str:
        calls.append(threading.get_ident())
        return TOKEN

    async def async_provider() -> str:
        calls.append(threading.get_ident())
        return TOKEN

    provider = sync_provider if kind == "sync" else async_provider
    replay_server.enqueue(chat("chat_text"), responses("text"))
    for api in ("openai-completions", "openai-responses"):
        model = make_model(replay_server, api, token_provider=provider)
        message = await run(model, StreamOptions())
        assert message.stop_reason == "stop", message.error_message
    for request in replay_server.requests:
        assert request.headers["authorization"] == f"Bearer {TOKEN}"
        assert "api-key" not in request.headers
    assert len(calls) == 2
    here = threading.get_ident()
    # a plain provider may block on a token refresh: it runs in a worker thread
    assert all((ident != here) == (kind == "sync") for ident in calls)


async def test_a_token_provider_returning_nothing_is_an_error_text(
    replay_server: ReplayServer,
) -> None:
    model = make_model(replay_server, token_provider=lambda: "")
    message = await run(model, StreamOptions())
    assert message.stop_reason == "error"
    assert message.error_message is not None
    assert "Entra ID token provider returned str; expected a non-empty string" in (
        message.error_message
    )
    assert replay_server.requests == []


# --- Responses on the v1 API -------------------------------------------------------------------


async def test_responses_text_on_the_v1_path(replay_server: ReplayServer) -> None:
    replay_server.enqueue(responses("text"))
    message = await run(make_model(replay_server, "openai-responses"))
    assert message.stop_reason == "stop" and message.text
    (request,) = replay_server.requests
    assert (request.method, request.path) == ("POST", RESPONSES_PATH)
    assert request.headers["api-key"] == KEY
    assert request.json["model"] == DEPLOYMENT and request.json["stream"] is True


async def test_responses_reasoning_and_tool_calls(replay_server: ReplayServer) -> None:
    replay_server.enqueue(responses("reasoning"), responses("tool_call"))
    model = make_model(replay_server, "openai-responses", responses_api_version="2025-04-01")
    options = SimpleStreamOptions(api_key=KEY, reasoning="high")
    _, thought = await collect(stream_simple(model, ask(), options))
    assert isinstance(thought.content[0], ThinkingContent) and thought.text
    assert replay_server.requests[0].json["reasoning"] == {"effort": "high", "summary": "auto"}
    context = dataclasses.replace(ask("Weather?"), tools=[WEATHER])
    _, called = await collect(stream(model, context, StreamOptions(api_key=KEY)))
    assert called.stop_reason == "tool_use" and called.tool_calls
    assert all(r.path.endswith("responses?api-version=2025-04-01") for r in replay_server.requests)


# --- failures ----------------------------------------------------------------------------------


def _azure_error(status: int, code: str, message: str) -> ScriptedResponse:
    body = {"error": {"code": code, "message": message, "param": None, "type": None}}
    return ScriptedResponse.json(body, status=status, headers={"retry-after-ms": "10"})


@pytest.mark.parametrize("api", ["openai-completions", "openai-responses"])
async def test_429_is_retried(replay_server: ReplayServer, api: str) -> None:
    replay_server.enqueue(
        _azure_error(
            429,
            "429",
            "Requests to the ChatCompletions_Create Operation have exceeded call rate limit.",
        ),
        chat("chat_text") if api == "openai-completions" else responses("text"),
    )
    message = await run(make_model(replay_server, api))
    assert message.stop_reason == "stop", message.error_message
    assert len(replay_server.requests) == 2


async def test_429_storm_gives_up_with_the_status(replay_server: ReplayServer) -> None:
    replay_server.enqueue(*[_azure_error(429, "429", "rate limit") for _ in range(3)])
    options = StreamOptions(api_key=KEY, max_retries=2)
    message = await run(make_model(replay_server), options)
    assert message.stop_reason == "error"
    assert message.error_message == "429 429: rate limit"
    assert len(replay_server.requests) == 3


async def test_validation_error(replay_server: ReplayServer) -> None:
    replay_server.enqueue(
        _azure_error(
            400,
            "OperationNotSupported",
            "The chatCompletion operation does not work with the specified model.",
        )
    )
    message = await run(make_model(replay_server))
    assert message.error_message == (
        "400 OperationNotSupported: The chatCompletion operation does not work with the "
        "specified model."
    )
    assert len(replay_server.requests) == 1 and not is_context_overflow(message)


async def test_context_overflow_is_recognised(replay_server: ReplayServer) -> None:
    replay_server.enqueue(
        _azure_error(
            400,
            "context_length_exceeded",
            "This model's maximum context length is 128000 tokens. However, your messages "
            "resulted in 131072 tokens. Please reduce the length of the messages.",
        )
    )
    message = await run(make_model(replay_server))
    assert message.stop_reason == "error" and is_context_overflow(message)


async def test_dropped_connection_mid_stream(replay_server: ReplayServer) -> None:
    replay_server.enqueue(chat("chat_text", drop_after=3))
    message = await run(make_model(replay_server))
    assert message.stop_reason == "error" and message.text == "Hello"
    assert message.error_message is not None and "connection" in message.error_message


async def test_abort_mid_stream(replay_server: ReplayServer) -> None:
    replay_server.enqueue(chat("chat_text", delay=0.5))
    controller = AbortController()
    options = StreamOptions(api_key=KEY, signal=controller.signal)
    _, message = await collect_aborting(
        stream(make_model(replay_server), ask(), options), controller
    )
    assert (message.stop_reason, message.error_message) == (
        "aborted",
        "request was aborted" + ESTIMATE_NOTE,  # no usage arrived: estimated (issue 26)
    )
    assert message.text == "Hello"


# --- credentials -------------------------------------------------------------------------------


def _echo(request_headers: str) -> ScriptedResponse:
    body = {"error": {"code": "401", "message": f"Access denied: {request_headers}"}}
    return ScriptedResponse.json(body, status=401)


async def test_the_api_key_and_the_token_appear_in_no_text(replay_server: ReplayServer) -> None:
    """A gateway quoting the credential it refused: key and token are redacted from the error
    text, the events and the message (as stored)."""
    replay_server.enqueue(
        _echo(f"api-key: {KEY}"), _echo(f"Authorization: Bearer {TOKEN}"), _echo(TOKEN)
    )
    outcomes = []
    for model, options in (
        (make_model(replay_server), StreamOptions(api_key=KEY)),
        (make_model(replay_server, token_provider=lambda: TOKEN), StreamOptions()),
        (
            make_model(replay_server, "openai-responses", token_provider=lambda: TOKEN),
            StreamOptions(),
        ),
    ):
        outcomes.append(await collect(stream(model, ask(), options)))
    for events, message in outcomes:
        assert message.stop_reason == "error"
        assert message.error_message is not None and "[redacted]" in message.error_message
        texts = [repr(e) for e in events] + [json.dumps(to_json(message))]
        for text in texts:
            assert KEY not in text and TOKEN not in text and "entra-token" not in text, text


def test_a_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    model = Model(id="gpt-4o", api="openai-completions", provider="azure-openai")
    with pytest.raises(MissingApiKeyError, match="AZURE_OPENAI_API_KEY"):
        stream(model, ask())


async def test_a_missing_endpoint_is_an_error_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    model = Model(id="gpt-4o", api="openai-responses", provider="azure-openai")
    _, message = await collect(stream(model, ask(), StreamOptions(api_key=KEY)))
    assert message.stop_reason == "error" and message.error_message is not None
    assert "AZURE_OPENAI_ENDPOINT" in message.error_message and KEY not in message.error_message


async def test_a_catalogue_model_reads_the_environment(
    replay_server: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model of the `azure-openai` provider without settings: endpoint, key and API version
    from the environment, the model id as the deployment."""
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", replay_server.url + "/")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    monkeypatch.setenv("AZURE_OPENAI_API_VERSION", "2025-01-01-preview")
    register_model(Model(id="team-gpt", api="openai-completions", provider="azure-openai"))
    replay_server.enqueue(chat("chat_text"))
    _, message = await collect(stream(get_model("azure-openai", "team-gpt"), ask()))
    assert message.stop_reason == "stop", message.error_message
    (request,) = replay_server.requests
    assert (
        request.path
        == "/openai/deployments/team-gpt/chat/completions?api-version=2025-01-01-preview"
    )
    assert request.headers["api-key"] == KEY


# --- the cross-provider faults -----------------------------------------------------------------


class AzureCompletionsWire(CompletionsWire):
    provider = "azure-openai"
    prefix = ""
    endpoint = f"/chat/completions?api-version={VERSION}"

    def model(self, server: ReplayServer) -> Model:
        return dataclasses.replace(
            super().model(server), base_url=server.url, cloud=AzureOpenAI(api_version=VERSION)
        )


class AzureResponsesWire(ResponsesWire):
    provider = "azure-openai"
    prefix = ""
    endpoint = "/openai/v1/responses?api-version=preview"

    def model(self, server: ReplayServer) -> Model:
        return dataclasses.replace(super().model(server), base_url=server.url, cloud=AzureOpenAI())


AZURE_WIRES: dict[str, Wire] = {
    "azure-completions": AzureCompletionsWire(),
    "azure-responses": AzureResponsesWire(),
}


def fault_cases(wires: dict[str, Wire]) -> list[Any]:
    """The cross-provider fault cases that the wire formats of `wires` can carry."""
    return [
        pytest.param(wire, fault, id=f"{fault.name}-{name}")
        for fault in FAULTS
        for name, wire in wires.items()
        if wire.api in fault.apis
    ]


@pytest.mark.parametrize(("wire", "fault"), fault_cases(AZURE_WIRES))
async def test_fault(wire: Wire, fault: Fault, caplog: pytest.LogCaptureFixture) -> None:
    await run_fault(wire, fault, caplog)


# --- sessions ----------------------------------------------------------------------------------


def test_the_settings_a_session_stores_hold_no_credential() -> None:
    settings = AzureOpenAI(deployment=DEPLOYMENT, api_version=VERSION, token_provider=lambda: TOKEN)
    stored = cloud_to_json(settings)
    assert stored == {
        "kind": "azure-openai",
        "deployment": DEPLOYMENT,
        "api_version": VERSION,
        "responses_api_version": "preview",
    }
    assert cloud_from_json(json.loads(json.dumps(stored))) == AzureOpenAI(
        deployment=DEPLOYMENT, api_version=VERSION
    )
    assert "token_provider" not in repr(settings)
    assert cloud_from_json({"kind": "other"}) is None and cloud_from_json(None) is None


def test_a_session_stores_an_azure_model_without_its_credentials(tmp_path: Any) -> None:
    from agentcore.sessions import JsonlSessionStore, SessionState

    model = dataclasses.replace(
        Model(id="gpt-4o", api="openai-responses", provider="azure-openai"),
        cloud=AzureOpenAI(deployment=DEPLOYMENT, token_provider=lambda: TOKEN),
    )
    store = JsonlSessionStore(tmp_path)
    session = store.create(state=SessionState(model=model))
    text = "".join(p.read_text() for p in tmp_path.rglob("*") if p.is_file())
    assert DEPLOYMENT in text and TOKEN not in text
    loaded = store.load(session.id).state.model  # type: ignore[attr-defined]
    assert loaded is not None and loaded.cloud == AzureOpenAI(deployment=DEPLOYMENT)
