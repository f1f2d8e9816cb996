"""`openai_compatible_model`: a Model for any OpenAI-compatible server, used for a real request."""

from __future__ import annotations

import pytest

from agentcore.errors import ConfigError, MissingApiKeyError, ModelNotFoundError
from agentcore.llm import (
    Context,
    ModelCost,
    OpenAICompletionsCompat,
    StreamOptions,
    get_model,
    openai_compatible_model,
    stream,
)
from agentcore.messages import TextContent, UserMessage

from .helpers import collect
from .replay_server import ReplayServer, ScriptedResponse, load_fixture

pytestmark = pytest.mark.anyio


def test_builds_an_openai_completions_model() -> None:
    model = openai_compatible_model("http://localhost:11434/v1/", "llama3.2", provider="ollama")
    assert (model.id, model.name, model.api, model.provider) == (
        "llama3.2",
        "llama3.2",
        "openai-completions",
        "ollama",
    )
    assert model.base_url == "http://localhost:11434/v1"  # trailing slash dropped
    assert model.input == ["text"] and model.reasoning is False
    assert model.cost == ModelCost()
    assert isinstance(model.compat, OpenAICompletionsCompat)
    assert (model.context_window, model.max_tokens) == (32_768, 4_096)


def test_options_are_passed_through() -> None:
    compat = OpenAICompletionsCompat(supports_usage_in_streaming=False)
    model = openai_compatible_model(
        "https://vllm.example.com/v1",
        "Qwen/Qwen3-8B",
        provider="vllm",
        name="Qwen3 8B",
        context_window=40_960,
        max_tokens=8_192,
        reasoning=True,
        input=["text", "image"],
        cost=ModelCost(input=0.1),
        headers={"x-team": "a"},
        compat=compat,
    )
    assert model.name == "Qwen3 8B" and model.reasoning is True
    assert model.input == ["text", "image"] and model.cost.input == 0.1
    assert (model.context_window, model.max_tokens) == (40_960, 8_192)
    assert model.headers == {"x-team": "a"} and model.compat is compat


def test_register_adds_it_to_the_catalogue() -> None:
    provider = "test-compatible-register"
    with pytest.raises(ModelNotFoundError):
        get_model(provider, "m1")
    model = openai_compatible_model("http://127.0.0.1:9/v1", "m1", provider=provider, register=True)
    assert get_model(provider, "m1") is model
    unregistered = openai_compatible_model("http://127.0.0.1:9/v1", "m2", provider=provider)
    with pytest.raises(ModelNotFoundError):
        get_model(provider, unregistered.id)


@pytest.mark.parametrize(
    ("base_url", "model_id", "kwargs", "needle"),
    [
        ("localhost:11434/v1", "m", {}, "http(s) URL"),
        ("ftp://host/v1", "m", {}, "http(s) URL"),
        ("http:///v1", "m", {}, "http(s) URL"),
        ("http://host/v1", " ", {}, "model_id"),
        ("http://host/v1", "m", {"provider": ""}, "provider"),
        ("http://host/v1", "m", {"max_tokens": 0}, "positive"),
        ("http://host/v1", "m", {"input": ["audio"]}, "input"),
    ],
)
def test_bad_arguments_raise_config_error(
    base_url: str, model_id: str, kwargs: dict[str, object], needle: str
) -> None:
    with pytest.raises(ConfigError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        openai_compatible_model(base_url, model_id, **kwargs)  # type: ignore[arg-type]


async def test_a_request_reaches_the_server_without_an_api_key(
    replay_server: ReplayServer,
) -> None:
    replay_server.enqueue(ScriptedResponse.sse(load_fixture("openai-completions", "text")))
    model = openai_compatible_model(replay_server.base_url(), "my-local-model")
    events, message = await collect(
        stream(model, Context(messages=[UserMessage(content="Hi")]), StreamOptions())
    )
    assert events[-1].type == "done"
    assert message.content == [TextContent(text="Hello, world!")]
    request = replay_server.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.json["model"] == "my-local-model"
    assert request.json["max_tokens"] == 4_096


def test_a_remote_server_needs_a_key_unless_given() -> None:
    model = openai_compatible_model("https://llm.example.com/v1", "m")
    with pytest.raises(MissingApiKeyError):
        stream(model, Context(messages=[UserMessage(content="Hi")]), StreamOptions())
