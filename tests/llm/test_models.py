"""The model catalogue: every entry loads and is served by an adapter; lookups; cost."""

from __future__ import annotations

import importlib.util
import json
from importlib import resources

import pytest

from agentcore.errors import ModelNotFoundError
from agentcore.llm import (
    Model,
    ModelCost,
    OpenAICompletionsCompat,
    calculate_cost,
    get_model,
    get_models,
    get_providers,
    register_model,
    unregister_model,
)
from agentcore.llm._env import ENV_KEYS
from agentcore.llm.model import BedrockCompat
from agentcore.llm.registry import _BUILTIN
from agentcore.messages import Usage

CLOUD_PROVIDERS = ("amazon-bedrock", "azure-openai", "google-vertex", "google-vertex-anthropic")
# Providers without an API-key variable: Bedrock signs requests with the AWS credential chain,
# Vertex sends a Google access token (application-default credentials).
KEYLESS_CLOUD_PROVIDERS = ("amazon-bedrock", "google-vertex", "google-vertex-anthropic")

RAW = json.loads(resources.files("agentcore.llm").joinpath("models.json").read_text("utf-8"))
ALL = [m for p in get_providers() if p in RAW["providers"] for m in get_models(p)]


def test_catalogue_covers_the_main_providers() -> None:
    providers = set(RAW["providers"])
    assert {"openai", "anthropic", "google", "groq", "openrouter", "deepseek", "xai"} <= providers
    assert {"mistral", "cerebras", "together", "local"} <= providers
    assert len(ALL) == sum(len(p["models"]) for p in RAW["providers"].values())
    assert get_model("openai", "gpt-5").api == "openai-responses"
    assert get_model("anthropic", "claude-sonnet-4-5").api == "anthropic-messages"
    assert get_model("google", "gemini-2.5-flash").api == "google-generative-ai"


@pytest.mark.parametrize("model", ALL, ids=lambda m: f"{m.provider}/{m.id}")
def test_entry_is_sound(model: Model) -> None:
    assert model.api in _BUILTIN
    assert importlib.util.find_spec(_BUILTIN[model.api]) is not None, model.api
    if model.provider in CLOUD_PROVIDERS:
        # The endpoint of a cloud provider is not one URL: Bedrock's follows the region of the
        # AWS credential chain, Azure's is the resource in AZURE_OPENAI_ENDPOINT, Vertex's
        # follows the location. An empty base_url tells the adapter to resolve it.
        assert model.base_url == ""
    else:
        assert model.base_url.startswith(("https://", "http://127.0.0.1"))
    assert model.name and model.context_window > 0 and model.max_tokens > 0
    assert model.max_tokens <= model.context_window
    assert set(model.input) <= {"text", "image"} and "text" in model.input
    cost = model.cost
    assert min(cost.input, cost.output, cost.cache_read, cost.cache_write) >= 0
    if model.api == "openai-completions":
        assert isinstance(model.compat, OpenAICompletionsCompat)
    if model.api == "bedrock-converse-stream":
        assert isinstance(model.compat, BedrockCompat)  # per-model facts as data, not sniffed
    if model.provider != "local":
        assert cost.output > 0
    if model.provider not in ("local", *KEYLESS_CLOUD_PROVIDERS):
        assert model.provider in ENV_KEYS


def test_ids_are_unique_per_provider() -> None:
    for provider, entry in RAW["providers"].items():
        ids = [m["id"] for m in entry["models"]]
        assert len(ids) == len(set(ids)), provider


def test_local_model() -> None:
    local = get_model("local", "qwen2.5-coder-1.5b")
    assert local.context_window == 8192
    assert local.base_url == "http://127.0.0.1:18080/v1"


def test_unknown_ids_name_the_known_ones() -> None:
    with pytest.raises(ModelNotFoundError, match="gpt-4o") as info:
        get_model("openai", "gpt-nope")
    assert "gpt-nope" in str(info.value)
    with pytest.raises(ModelNotFoundError, match="anthropic"):
        get_model("nobody", "x")
    with pytest.raises(ModelNotFoundError, match="openai"):
        get_models("nobody")


def test_calculate_cost() -> None:
    model = Model(
        id="m",
        api="openai-completions",
        provider="p",
        cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75),
    )
    usage = calculate_cost(
        model, Usage(input=1_000_000, output=200_000, cache_read=500_000, cache_write=100_000)
    )
    assert usage.cost.input == pytest.approx(3.0)
    assert usage.cost.output == pytest.approx(3.0)
    assert usage.cost.cache_read == pytest.approx(0.15)
    assert usage.cost.cache_write == pytest.approx(0.375)
    assert usage.cost.total == pytest.approx(6.525)
    assert usage.total_tokens == 1_800_000
    gpt = get_model("openai", "gpt-4o")
    assert calculate_cost(gpt, Usage(input=1000, output=1000)).cost.total == pytest.approx(0.0125)


def test_register_model() -> None:
    custom = register_model(
        Model(
            id="my-llama",
            api="openai-completions",
            provider="my-vllm-test",
            base_url="http://127.0.0.1:8000/v1",
            compat=OpenAICompletionsCompat(),
        )
    )
    assert get_model("my-vllm-test", "my-llama") is custom
    assert "my-vllm-test" in get_providers()
    assert custom in get_models("my-vllm-test")


def test_unregister_model_removes_a_registered_model_and_its_empty_provider() -> None:
    custom = register_model(Model(id="m1", api="faux", provider="my-unregister-test"))
    register_model(Model(id="m2", api="faux", provider="my-unregister-test"))
    assert unregister_model("my-unregister-test", "m1") is custom
    assert [m.id for m in get_models("my-unregister-test")] == ["m2"]
    unregister_model("my-unregister-test", "m2")
    assert "my-unregister-test" not in get_providers()
    with pytest.raises(ModelNotFoundError, match="my-unregister-test"):
        get_models("my-unregister-test")
    with pytest.raises(ModelNotFoundError, match="cannot unregister model 'm2'"):
        unregister_model("my-unregister-test", "m2")


def test_a_shipped_model_replaced_and_unregistered_can_be_put_back() -> None:
    shipped = get_model("openai", "gpt-4o")
    register_model(Model(id="gpt-4o", api="faux", provider="openai"))
    replaced = unregister_model("openai", "gpt-4o")
    assert replaced.api == "faux"
    with pytest.raises(ModelNotFoundError):
        get_model("openai", "gpt-4o")
    register_model(shipped)
    assert get_model("openai", "gpt-4o") is shipped


def test_a_reserved_adapter_whose_module_is_missing_is_an_unknown_api(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agentcore.errors import UnknownApiError
    from agentcore.llm import get_api_provider

    assert "bedrock-converse-stream" in _BUILTIN
    missing = "agentcore.llm.providers._not_built_yet"
    monkeypatch.setitem(_BUILTIN, "reserved-api", missing)
    with pytest.raises(UnknownApiError, match=f"reserved-api.*{missing}.*not part of this"):
        get_api_provider("reserved-api")


def test_an_openai_compatible_model_can_state_its_capabilities() -> None:
    from agentcore.errors import ConfigError
    from agentcore.llm import openai_compatible_model
    from agentcore.llm.thinking import supports_xhigh

    plain = openai_compatible_model("http://127.0.0.1:8000/v1", "gpt-9-local")
    assert (plain.thinking_control, plain.supports_xhigh, plain.structured_output) == (None,) * 3
    assert supports_xhigh(plain)  # not stated: the id rule decides, as before
    stated = openai_compatible_model(
        "http://127.0.0.1:8000/v1",
        "gpt-9-local",
        reasoning=True,
        compat=OpenAICompletionsCompat(supports_reasoning_effort=True),
        thinking_control="effort",
        supports_xhigh=False,
        structured_output=True,
    )
    assert (stated.thinking_control, stated.structured_output) == ("effort", True)
    assert not supports_xhigh(stated)
    with pytest.raises(ConfigError, match="thinking_control must be one of effort, budget"):
        openai_compatible_model(
            "http://127.0.0.1:8000/v1",
            "m",
            thinking_control="lots",  # type: ignore[arg-type]
        )
