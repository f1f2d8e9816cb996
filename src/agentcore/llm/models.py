"""The model catalogue: curated models shipped as package data, plus any you register.

`get_model("anthropic", "claude-sonnet-4-5")` looks a model up; `register_model(Model(...))` adds
your own (any OpenAI-compatible server) and `unregister_model(provider, id)` removes one again.
`calculate_cost(model, usage)` prices a usage.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import Any

from ..errors import ModelNotFoundError
from ..messages import Cost, Usage
from .model import BedrockCompat, GoogleCompat, Model, ModelCost, OpenAICompletionsCompat

__all__ = [
    "calculate_cost",
    "get_model",
    "get_models",
    "get_providers",
    "register_model",
    "unregister_model",
]

_lock = threading.Lock()
_catalogue: dict[str, dict[str, Model]] | None = None

_COMPAT_TYPES: dict[str, type[Any]] = {
    "openai-completions": OpenAICompletionsCompat,
    "bedrock-converse-stream": BedrockCompat,
    "google-generative-ai": GoogleCompat,
}


def model_from_json(provider: str, data: Mapping[str, Any]) -> Model:
    """Build a `Model` from one catalogue entry."""
    fields = dict(data)
    cost = ModelCost(**fields.pop("cost", {}))
    batch = fields.pop("batch_cost", None)
    batch_cost = ModelCost(**batch) if batch is not None else None
    compat_data = fields.pop("compat", None)
    compat_type = _COMPAT_TYPES.get(str(fields.get("api")))
    compat = compat_type(**compat_data) if compat_data is not None and compat_type else None
    if compat is None and compat_type is not None:
        compat = compat_type()
    return Model(provider=provider, cost=cost, batch_cost=batch_cost, compat=compat, **fields)


def _load() -> dict[str, dict[str, Model]]:
    global _catalogue
    with _lock:
        if _catalogue is None:
            # imported here: importlib.resources brings pathlib, tempfile, shutil, bz2 and lzma
            from importlib import resources

            text = resources.files("agentcore.llm").joinpath("models.json").read_text("utf-8")
            raw: dict[str, Any] = json.loads(text)
            catalogue: dict[str, dict[str, Model]] = {}
            for provider, entry in raw["providers"].items():
                catalogue[provider] = {
                    m["id"]: model_from_json(provider, m) for m in entry["models"]
                }
            _catalogue = catalogue
        return _catalogue


def get_providers() -> list[str]:
    """The provider ids of the catalogue (and of registered models), sorted."""
    return sorted(_load())


def get_models(provider: str) -> list[Model]:
    """Every model of a provider.

    Raises:
        ModelNotFoundError: the provider is unknown.
    """
    catalogue = _load()
    if provider not in catalogue:
        raise ModelNotFoundError(
            f"unknown provider {provider!r}; known providers: {', '.join(sorted(catalogue))}"
        )
    return list(catalogue[provider].values())


def get_model(provider: str, model_id: str) -> Model:
    """The catalogue entry for a provider and model id.

    Raises:
        ModelNotFoundError: naming the unknown provider, or the provider's known model ids.
    """
    models = {m.id: m for m in get_models(provider)}
    model = models.get(model_id)
    if model is None:
        raise ModelNotFoundError(
            f"unknown model {model_id!r} for provider {provider!r}; known: "
            f"{', '.join(sorted(models))}"
        )
    return model


def register_model(model: Model) -> Model:
    """Add (or replace) a model in the catalogue, under `model.provider`; returns it."""
    catalogue = _load()
    with _lock:
        catalogue.setdefault(model.provider, {})[model.id] = model
    return model


def unregister_model(provider: str, model_id: str) -> Model:
    """Remove a model from the catalogue (one you registered, or a shipped one) and return it; a
    provider left without models is no longer listed. To put back a shipped model you replaced,
    register the returned one again.

    Raises:
        ModelNotFoundError: the catalogue has no such model.
    """
    catalogue = _load()
    with _lock:
        models = catalogue.get(provider)
        model = models.pop(model_id, None) if models is not None else None
        if models is not None and not models:
            del catalogue[provider]
    if model is None:
        raise ModelNotFoundError(
            f"cannot unregister model {model_id!r} of provider {provider!r}: not in the catalogue"
        )
    return model


def calculate_cost(model: Model, usage: Usage) -> Usage:
    """`usage` with its cost computed from the model's prices (USD per million tokens)."""
    rates = model.cost
    cost = Cost(
        input=rates.input * usage.input / 1e6,
        output=rates.output * usage.output / 1e6,
        cache_read=rates.cache_read * usage.cache_read / 1e6,
        cache_write=rates.cache_write * usage.cache_write / 1e6,
    )
    return Usage(
        input=usage.input,
        output=usage.output,
        cache_read=usage.cache_read,
        cache_write=usage.cache_write,
        cost=cost,
    )
