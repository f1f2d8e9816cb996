"""Google Vertex AI: Gemini through the real `google-genai` client in Vertex mode and Claude
through the real `anthropic` SDK's `AsyncAnthropicVertex`, against a replay server on 127.0.0.1
serving Vertex's URL paths and checking the bearer token."""

from __future__ import annotations

import dataclasses
import json
import threading
from typing import Any

import anyio
import pytest

from agentcore.abort import AbortController
from agentcore.llm import (
    Context,
    Model,
    ModelCost,
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
from agentcore.llm.model import VertexAI
from agentcore.messages import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    UserMessage,
    to_json,
)

from .fault_server import AnthropicWire, GeminiWire, Wire
from .helpers import abort_after, collect, collect_aborting
from .replay_server import ReplayServer, ScriptedResponse, load_fixture
from .test_azure import fault_cases
from .test_faults import run_fault

pytestmark = pytest.mark.anyio

TOKEN = "ya29.vertex-access-token-0123456789"
PROJECT = "proj-1"
GEMINI = "gemini-2.5-flash"
CLAUDE = "claude-sonnet-4-5@20250929"
GEMINI_PATH = (
    f"/v1/projects/{PROJECT}/locations/us-central1/publishers/google/models/{GEMINI}"
    ":streamGenerateContent?alt=sse"
)
CLAUDE_PATH = (
    f"/v1/projects/{PROJECT}/locations/us-east5/publishers/anthropic/models/{CLAUDE}"
    ":streamRawPredict"
)
COST = ModelCost(input=0.3, output=2.5, cache_read=0.075)
WEATHER = Tool(
    name="get_weather",
    description="The weather in a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)


def gemini(server: ReplayServer, **settings: Any) -> Model:
    return Model(
        id=GEMINI,
        api="google-generative-ai",
        provider="google-vertex",
        base_url=server.url,
        reasoning=True,
        cost=COST,
        max_tokens=8192,
        cloud=VertexAI(**{"project": PROJECT, "location": "us-central1", **settings}),
    )


def claude(server: ReplayServer, **settings: Any) -> Model:
    return Model(
        id=CLAUDE,
        api="anthropic-messages",
        provider="google-vertex-anthropic",
        base_url=server.base_url("/v1"),
        reasoning=True,
        cost=ModelCost(input=3.0, output=15.0),
        max_tokens=32_000,
        cloud=VertexAI(**{"project": PROJECT, "location": "us-east5", **settings}),
    )


def ask(text: str = "Hi") -> Context:
    return Context(system_prompt="Be terse.", messages=[UserMessage(content=text)])


def sse(kind: str, name: str, **kwargs: Any) -> ScriptedResponse:
    return ScriptedResponse.sse(load_fixture(kind, name), **kwargs)


async def run(
    model: Model, options: StreamOptions | None = None, context: Context | None = None
) -> AssistantMessage:
    options = options or StreamOptions(api_key=TOKEN)
    _, message = await collect(stream(model, context or ask(), options))
    return message


MAKERS = {"gemini": gemini, "claude": claude}
FIXTURES = {"gemini": "google-vertex", "claude": "google-vertex-anthropic"}
PATHS = {"gemini": GEMINI_PATH, "claude": CLAUDE_PATH}


# --- answers -----------------------------------------------------------------------------------


async def test_gemini_text_on_the_vertex_path(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("google-vertex", "text"))
    message = await run(gemini(replay_server))
    assert message.content == [TextContent(text="Hello, world!")]
    assert (message.stop_reason, message.provider, message.model) == (
        "stop",
        "google-vertex",
        GEMINI,
    )
    assert (message.usage.input, message.usage.output) == (12, 4)
    assert message.usage.cost.input == pytest.approx(12 * 0.3 / 1e6)
    (request,) = replay_server.requests
    assert (request.method, request.path) == ("POST", GEMINI_PATH)
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert "x-goog-api-key" not in request.headers
    assert request.json["systemInstruction"]["parts"] == [{"text": "Be terse."}]


async def test_claude_text_on_the_vertex_path(replay_server: ReplayServer) -> None:
    replay_server.enqueue(sse("google-vertex-anthropic", "text"))
    message = await run(claude(replay_server))
    assert message.stop_reason == "stop" and message.text
    assert (message.api, message.provider) == ("anthropic-messages", "google-vertex-anthropic")
    assert message.usage.input == 25
    (request,) = replay_server.requests
    assert (request.method, request.path) == ("POST", CLAUDE_PATH)
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert "x-api-key" not in request.headers
    body = request.json
    # the SDK moves the model into the path and names the API version in the body
    assert body["anthropic_version"] and "model" not in body
    assert body["stream"] is True


@pytest.mark.parametrize("kind", ["gemini", "claude"])
async def test_thinking(replay_server: ReplayServer, kind: str) -> None:
    replay_server.enqueue(sse(FIXTURES[kind], "thinking"))
    options = SimpleStreamOptions(api_key=TOKEN, reasoning="medium")
    _, message = await collect(stream_simple(MAKERS[kind](replay_server), ask(), options))
    assert message.stop_reason == "stop", message.error_message
    assert isinstance(message.content[0], ThinkingContent) and message.text
    body = replay_server.requests[0].json
    if kind == "gemini":
        # as the SDK writes it in Vertex mode (Vertex's JSON parser takes either spelling)
        assert body["generationConfig"]["thinkingConfig"] == {
            "include_thoughts": True,
            "thinking_budget": 8192,
        }
    else:
        assert body["thinking"]["type"] == "enabled"


@pytest.mark.parametrize("kind", ["gemini", "claude"])
async def test_tool_call(replay_server: ReplayServer, kind: str) -> None:
    replay_server.enqueue(sse(FIXTURES[kind], "tool_call"))
    context = dataclasses.replace(ask("Weather in Paris?"), tools=[WEATHER])
    message = await run(MAKERS[kind](replay_server), context=context)
    assert message.stop_reason == "tool_use", message.error_message
    (call,) = message.tool_calls
    assert call.name == "get_weather" and call.arguments


@pytest.mark.parametrize("kind", ["gemini", "claude"])
async def test_hooks_see_the_body_and_the_response(replay_server: ReplayServer, kind: str) -> None:
    replay_server.enqueue(
        sse(FIXTURES[kind], "text", headers={"x-vertex-ai-llm-request-type": "1"})
    )
    seen: list[Any] = []

    def on_payload(payload: Any, model: Model) -> None:
        seen.append(model.provider)

    async def on_response(info: ResponseInfo, model: Model) -> None:
        seen.append((info.status, info.headers.get("x-vertex-ai-llm-request-type")))

    options = StreamOptions(api_key=TOKEN, on_payload=on_payload, on_response=on_response)
    assert (await run(MAKERS[kind](replay_server), options)).stop_reason == "stop"
    assert seen == [MAKERS[kind](replay_server).provider, (200, "1")]


# --- where the token comes from ----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["gemini", "claude"])
async def test_a_token_provider_runs_off_the_event_loop(
    replay_server: ReplayServer, kind: str
) -> None:
    threads: list[int] = []

    def provider() -> str:
        threads.append(threading.get_ident())
        return TOKEN

    replay_server.enqueue(sse(FIXTURES[kind], "text"))
    message = await run(MAKERS[kind](replay_server, token_provider=provider), StreamOptions())
    assert message.stop_reason == "stop", message.error_message
    assert threads and threads[0] != threading.get_ident()
    assert replay_server.requests[0].headers["authorization"] == f"Bearer {TOKEN}"


async def test_explicit_credentials(replay_server: ReplayServer) -> None:
    from google.oauth2.credentials import Credentials

    replay_server.enqueue(sse("google-vertex", "text"), sse("google-vertex-anthropic", "text"))
    credentials = Credentials(token=TOKEN)
    for model in (
        gemini(replay_server, credentials=credentials),
        claude(replay_server, credentials=credentials),
    ):
        assert (await run(model, StreamOptions())).stop_reason == "stop"
    for request in replay_server.requests:
        assert request.headers["authorization"] == f"Bearer {TOKEN}"


def _user_credentials(server: ReplayServer) -> Any:
    """A user's credentials without a token, refreshed at the replay server (real google-auth:
    the refresh is a blocking `requests` call)."""
    from google.oauth2.credentials import Credentials

    return Credentials(
        token=None,
        refresh_token="refresh-token-0123456789",
        client_id="client-id.apps.googleusercontent.com",
        client_secret="client-secret-0123456789",
        token_uri=server.url + "/token",
    )


async def test_application_default_credentials(
    replay_server: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A catalogue model of the `google-vertex` provider: the application-default credentials,
    refreshed in a worker thread at their token endpoint; project and location from the
    environment. (google-auth's own discovery is replaced: it would read this machine's gcloud
    configuration, and a credentials file cannot name a token endpoint.)"""
    import google.auth

    credentials = _user_credentials(replay_server)
    threads: list[int] = []

    def default(scopes: Any = None, **_: Any) -> tuple[Any, str | None]:
        threads.append(threading.get_ident())
        assert scopes == ["https://www.googleapis.com/auth/cloud-platform"]
        return credentials, None

    monkeypatch.setattr(google.auth, "default", default)
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", PROJECT)
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    register_model(
        Model(
            id=GEMINI,
            api="google-generative-ai",
            provider="google-vertex",
            base_url=replay_server.url,
        )
    )
    replay_server.enqueue(
        ScriptedResponse.json({"access_token": TOKEN, "expires_in": 3599, "token_type": "Bearer"}),
        sse("google-vertex", "text"),
    )
    message = await run(get_model("google-vertex", GEMINI), StreamOptions())
    assert message.stop_reason == "stop", message.error_message
    assert threads and threads[0] != threading.get_ident()
    refresh, generate = replay_server.requests
    assert refresh.path == "/token" and b"refresh_token=refresh-token-0123456789" in refresh.body
    assert generate.path == GEMINI_PATH
    assert generate.headers["authorization"] == f"Bearer {TOKEN}"


async def test_a_failed_refresh_is_an_error_text(replay_server: ReplayServer) -> None:
    body = {"error": "invalid_grant", "error_description": "Token has been expired or revoked."}
    replay_server.enqueue(ScriptedResponse.json(body, status=400))
    model = claude(replay_server, credentials=_user_credentials(replay_server))
    message = await run(model, StreamOptions())
    assert message.stop_reason == "error" and message.error_message is not None
    assert "RefreshError" in message.error_message and "invalid_grant" in message.error_message
    assert "refresh-token-0123456789" not in message.error_message
    assert [r.path for r in replay_server.requests] == ["/token"]


@pytest.mark.parametrize("kind", ["gemini", "claude"])
async def test_no_project_names_the_variables(
    replay_server: ReplayServer, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("GOOGLE_CLOUD_PROJECT", "ANTHROPIC_VERTEX_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)
    message = await run(MAKERS[kind](replay_server, project=""))
    assert message.stop_reason == "error" and message.error_message is not None
    assert "GOOGLE_CLOUD_PROJECT" in message.error_message
    assert TOKEN not in message.error_message and replay_server.requests == []


# --- failures ----------------------------------------------------------------------------------


def _google_error(status: int, name: str, message: str) -> ScriptedResponse:
    body = {"error": {"code": status, "message": message, "status": name}}
    return ScriptedResponse.json(body, status=status, headers={"retry-after": "0"})


def _claude_error(status: int, kind: str, message: str) -> ScriptedResponse:
    body = {"type": "error", "error": {"type": kind, "message": message}}
    return ScriptedResponse.json(body, status=status, headers={"retry-after": "0"})


ERRORS = {
    "gemini": {
        429: _google_error(
            429, "RESOURCE_EXHAUSTED", "Resource exhausted. Please try again later."
        ),
        400: _google_error(400, "INVALID_ARGUMENT", "Request contains an invalid argument."),
        "overflow": _google_error(
            400,
            "INVALID_ARGUMENT",
            "The input token count (1200000) exceeds the maximum number of tokens allowed "
            "(1048576).",
        ),
    },
    "claude": {
        429: _claude_error(429, "rate_limit_error", "Quota exceeded for aiplatform.googleapis.com"),
        400: _claude_error(400, "invalid_request_error", "max_tokens: Field required"),
        "overflow": _claude_error(
            400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"
        ),
    },
}


@pytest.mark.parametrize("kind", ["gemini", "claude"])
async def test_429_is_retried(replay_server: ReplayServer, kind: str) -> None:
    replay_server.enqueue(ERRORS[kind][429], sse(FIXTURES[kind], "text"))
    message = await run(MAKERS[kind](replay_server))
    assert message.stop_reason == "stop", message.error_message
    assert len(replay_server.requests) == 2


@pytest.mark.parametrize("kind", ["gemini", "claude"])
async def test_validation_error_and_overflow(replay_server: ReplayServer, kind: str) -> None:
    replay_server.enqueue(ERRORS[kind][400], ERRORS[kind]["overflow"])
    invalid = await run(MAKERS[kind](replay_server))
    overflow = await run(MAKERS[kind](replay_server))
    assert invalid.stop_reason == "error" and invalid.error_message is not None
    assert "400" in invalid.error_message and not is_context_overflow(invalid)
    assert ("invalid argument" in invalid.error_message) == (kind == "gemini")
    assert overflow.stop_reason == "error" and is_context_overflow(overflow)
    assert len(replay_server.requests) == 2  # not retried


@pytest.mark.parametrize("kind", ["gemini", "claude"])
async def test_dropped_connection_mid_stream(replay_server: ReplayServer, kind: str) -> None:
    replay_server.enqueue(sse(FIXTURES[kind], "text", drop_after=2 if kind == "gemini" else 5))
    message = await run(MAKERS[kind](replay_server))
    assert message.stop_reason == "error", message.text
    assert message.text and message.error_message is not None
    assert "connection" in message.error_message


@pytest.mark.parametrize("kind", ["gemini", "claude"])
async def test_abort_mid_stream(replay_server: ReplayServer, kind: str) -> None:
    replay_server.enqueue(sse(FIXTURES[kind], "text", delay=0.5))
    controller = AbortController()
    options = StreamOptions(api_key=TOKEN, signal=controller.signal)
    _, message = await collect_aborting(
        stream(MAKERS[kind](replay_server), ask(), options), controller
    )
    assert (message.stop_reason, message.error_message) == ("aborted", "request was aborted")
    assert message.text == "Hello"


@pytest.mark.parametrize("kind", ["gemini", "claude"])
async def test_the_token_appears_in_no_text(replay_server: ReplayServer, kind: str) -> None:
    """A gateway quoting the token it refused, from a token provider (the request has no key):
    the token is redacted from the error text, the events and the message as stored."""
    quoted = f"Authorization: Bearer {TOKEN}"
    replay_server.enqueue(
        _google_error(401, "UNAUTHENTICATED", quoted)
        if kind == "gemini"
        else _claude_error(401, "authentication_error", quoted)
    )
    model = MAKERS[kind](replay_server, token_provider=lambda: TOKEN)
    events, message = await collect(stream(model, ask(), StreamOptions()))
    assert message.stop_reason == "error" and message.error_message is not None
    assert "[redacted]" in message.error_message
    for text in [repr(e) for e in events] + [json.dumps(to_json(message))]:
        assert TOKEN not in text and "vertex-access-token" not in text, text


# --- the cross-provider faults -----------------------------------------------------------------


class VertexGeminiWire(GeminiWire):
    provider = "google-vertex"
    prefix = ""

    def model(self, server: ReplayServer) -> Model:
        base = super().model(server)
        return dataclasses.replace(base, cloud=VertexAI(project=PROJECT, location="us-central1"))


class VertexClaudeWire(AnthropicWire):
    provider = "google-vertex-anthropic"
    prefix = "/v1"
    endpoint = ":streamRawPredict"

    def model(self, server: ReplayServer) -> Model:
        base = super().model(server)
        return dataclasses.replace(base, cloud=VertexAI(project=PROJECT, location="us-east5"))


VERTEX_WIRES: dict[str, Wire] = {
    "vertex-gemini": VertexGeminiWire(),
    "vertex-claude": VertexClaudeWire(),
}


@pytest.mark.parametrize(("wire", "fault"), fault_cases(VERTEX_WIRES))
async def test_fault(wire: Wire, fault: Any, caplog: pytest.LogCaptureFixture) -> None:
    """The request's `api_key` (the fault suite's key) is the bearer token here, and the fault
    server quotes the `Authorization` header back: it must be redacted everywhere."""
    await run_fault(wire, fault, caplog)


@pytest.mark.parametrize("kind", ["gemini", "claude"])
async def test_a_stalled_token_fetch_is_bounded_and_abortable(
    replay_server: ReplayServer, kind: str
) -> None:
    """Fetching the token is part of the request: `request_timeout` bounds it, the abort
    signal ends it, and the server is never called."""
    never = threading.Event()

    def stalled() -> str:  # a token endpoint that does not answer (released at the end)
        never.wait(10)
        return TOKEN

    model = MAKERS[kind](replay_server, token_provider=stalled)
    try:
        timed_out = await run(model, StreamOptions(request_timeout=0.1))
        controller = AbortController()
        options = StreamOptions(signal=controller.signal)
        async with anyio.create_task_group() as tg:
            tg.start_soon(abort_after, controller, 0.1)
            aborted = await run(model, options)
    finally:
        never.set()
    assert timed_out.stop_reason == "error" and timed_out.error_message is not None
    assert "request_timeout" in timed_out.error_message
    assert (aborted.stop_reason, aborted.error_message) == ("aborted", "request was aborted")
    assert replay_server.requests == []
