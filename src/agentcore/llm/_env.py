"""API keys from the environment: which variable each provider reads, and resolving a request's key.

A request's key is `options.api_key` when given, else the provider's usual environment variable.
Servers that need no key (the `local` provider, anything on localhost) get a placeholder, because
the vendor SDKs refuse to build a client without one.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..errors import MissingApiKeyError
from ._profiles import on_local_server
from .interception import replay_key

if TYPE_CHECKING:
    from .model import Model
    from .types import StreamOptions

__all__ = ["ENV_KEYS", "NO_KEY_PLACEHOLDER", "get_env_api_key", "resolve_api_key"]

ENV_KEYS: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "google": "GEMINI_API_KEY",
    "groq": "GROQ_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "xai": "XAI_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "together": "TOGETHER_API_KEY",
    "cerebras": "CEREBRAS_API_KEY",
    "azure-openai": "AZURE_OPENAI_API_KEY",
}
"""The environment variable holding each provider's API key."""

_FALLBACK_KEYS: dict[str, tuple[str, ...]] = {"google": ("GOOGLE_API_KEY",)}
"""Further variables read when the main one is unset."""

_KEYLESS_PROVIDERS = frozenset({"local", "faux", "ollama", "llama.cpp", "lmstudio", "vllm"})

NO_KEY_PLACEHOLDER = "not-needed"
"""The key sent to servers that need none (the SDKs insist on some value)."""


def get_env_api_key(provider: str) -> str | None:
    """The API key for `provider` from its environment variable, or None if unset or unknown."""
    names = (ENV_KEYS[provider], *_FALLBACK_KEYS.get(provider, ())) if provider in ENV_KEYS else ()
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    return None


def _needs_no_key(model: Model) -> bool:
    if model.provider in _KEYLESS_PROVIDERS:
        return True
    return on_local_server(model)


def resolve_api_key(model: Model, options: StreamOptions) -> str:
    """The key for a request: `options.api_key`, else the environment, else a placeholder for
    servers that need none.

    Raises:
        MissingApiKeyError: naming the environment variable to set.
    """
    if options.api_key:
        return options.api_key
    key = get_env_api_key(model.provider)
    if key:
        return key
    if _needs_no_key(model):
        return NO_KEY_PLACEHOLDER
    stand_in = replay_key()  # a recording replays: no key needed
    if stand_in is not None:
        return stand_in
    variable = ENV_KEYS.get(model.provider)
    if variable:  # the one fix every entry point has (the CLI, a script, a server)
        fallbacks = _FALLBACK_KEYS.get(model.provider)
        hint = f"set the environment variable {variable}" + (
            f" (or {' or '.join(fallbacks)})" if fallbacks else ""
        )
        hint += " (in code, api_key=... works too)"
    else:
        hint = "this provider has no known environment variable: pass api_key=... in code"
    raise MissingApiKeyError(
        f"no API key for provider {model.provider!r} (model {model.id!r}): {hint}"
    )
