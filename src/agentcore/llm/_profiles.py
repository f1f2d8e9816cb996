"""Provider and model capabilities as data, and the one place their fallbacks are derived.

Adapters never look at a URL or a model id to decide what to send. They read:

* per API, `API_SERVICES`: the host of the API's own service. Some request fields only the
  vendor's own service accepts (OpenAI's `prompt_cache_key` on Chat Completions and its 24-hour
  `prompt_cache_retention`, Anthropic's one-hour cache TTL); a compatible server or a proxy gets
  the portable request. `on_api_service(model)` is the only host check in the model layer's
  request code; `on_local_server(model)` (a server on this machine needs no API key) the only
  other one.
* per model, the catalogue's facts: `Model.thinking_control`, `Model.supports_xhigh` and the
  API's compat object (`OpenAICompletionsCompat`, `BedrockCompat`, `GoogleCompat`). A model
  built by hand may leave them out; `thinking_control`, `google_compat` and `bedrock_compat` then
  derive them from the model's id, here and nowhere else, by the rules the catalogue's entries
  were written from.
* per OpenAI-compatible server, `SERVER_PROFILES`: what a kind of server is known to do (native
  structured output, several tool calls per answer), for `openai_compatible_model` to fill in
  what its caller did not state. Only what was verified against the server itself is listed.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from .model import BedrockCompat, GoogleCompat, Model, OpenAICompletionsCompat, ThinkingControl
from .types import ThinkingBudgets

__all__ = [
    "API_SERVICES",
    "LOCAL_HOSTS",
    "SERVER_PROFILES",
    "ServerProfile",
    "bedrock_compat",
    "google_compat",
    "on_api_service",
    "on_local_server",
    "thinking_control",
]

API_SERVICES: Mapping[str, str] = {
    "openai-completions": "api.openai.com",
    "openai-responses": "api.openai.com",
    "anthropic-messages": "api.anthropic.com",
}
"""The host of each API's own service (an empty `base_url` means the SDK's default: that one)."""

LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})
"""Hosts of this machine: a server there needs no API key (llama.cpp, vLLM, Ollama, ...)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerProfile:
    """What a kind of OpenAI-compatible server does, for models its caller describes no further.

    Attributes:
        compat: the server's Chat Completions quirks.
        structured_output: the server constrains an answer to the JSON schema of
            `response_format` (`Model.structured_output`).
    """

    compat: OpenAICompletionsCompat
    structured_output: bool | None = None


SERVER_PROFILES: Mapping[str, ServerProfile] = {
    # llama-server: `response_format` json_schema becomes a grammar the sampler must follow;
    # `parallel_tool_calls` defaults to what the chat template shows, so it is asked for.
    # Verified against scripts/local-model's server (tests/e2e/test_local_model_native.py).
    "llama.cpp": ServerProfile(
        compat=OpenAICompletionsCompat(supports_parallel_tool_calls=True),
        structured_output=True,
    ),
}
"""Known OpenAI-compatible servers by provider id (`openai_compatible_model(provider=...)`)."""

_GEMINI_3 = re.compile(r"gemini-3(?:[.\-]|$)")
_CLAUDE_VERSION = re.compile(r"claude-([a-z]+)-(\d+)(?:[-.](\d{1,2}))?(?:-\d{8})?(?:$|[-@:])")

# The Gemini 2.5 models' budget ranges (minimal, low, medium, high), by a marker in their id;
# the most specific marker first.
_GEMINI_25_BUDGETS: tuple[tuple[str, ThinkingBudgets, int], ...] = (
    ("2.5-flash-lite", ThinkingBudgets(minimal=512, low=2048, medium=8192, high=24576), 0),
    ("2.5-pro", ThinkingBudgets(minimal=128, low=2048, medium=8192, high=32768), 128),
    ("2.5-flash", ThinkingBudgets(minimal=128, low=2048, medium=8192, high=24576), 0),
)


def on_api_service(model: Model) -> bool:
    """Whether `model` is reached at its API's own service, not a compatible server or proxy."""
    host = API_SERVICES.get(model.api)
    if host is None:
        return False
    return not model.base_url or urlsplit(model.base_url).hostname == host


def on_local_server(model: Model) -> bool:
    """Whether `model`'s `base_url` points at this machine."""
    host = urlsplit(model.base_url).hostname if model.base_url else None
    return host is not None and host.lower() in LOCAL_HOSTS


def thinking_control(model: Model) -> ThinkingControl | None:
    """What a thinking level becomes for `model`: the catalogue's `thinking_control`, else, for a
    model built by hand, the rule of its API (Gemini 3 takes a level and other Gemini models a
    budget; Claude Opus/Sonnet 4.6 and later and every Claude 5 model adaptive thinking, older
    Claude models a budget). None: no rule applies (the adapter's default)."""
    if model.thinking_control is not None:
        return model.thinking_control
    model_id = model.id.lower()
    if model.api == "google-generative-ai":
        return "level" if _GEMINI_3.search(model_id) else "budget"
    match = _CLAUDE_VERSION.search(model_id)
    if match is None:
        return None
    family, major, minor = match.group(1), int(match.group(2)), int(match.group(3) or 0)
    adaptive = major >= 5 or (family in ("opus", "sonnet") and (major, minor) >= (4, 6))
    return "adaptive" if adaptive else "budget"


def google_compat(model: Model) -> GoogleCompat:
    """The model's `GoogleCompat`: the catalogue's, else derived from a hand-built model's id."""
    if isinstance(model.compat, GoogleCompat):
        return model.compat
    return _google_compat_by_id(model.id.lower(), thinking_control(model) == "level")


@functools.lru_cache(maxsize=64)
def _google_compat_by_id(model_id: str, takes_level: bool) -> GoogleCompat:
    gemini3 = _GEMINI_3.search(model_id) is not None
    budgets, least = next(
        ((b, least) for marker, b, least in _GEMINI_25_BUDGETS if marker in model_id),
        (None, 0),
    )
    return GoogleCompat(
        thinking_budgets=budgets,
        min_thinking_budget=least,
        thinking_levels="low_high" if takes_level and "pro" in model_id else "all",
        requires_thought_signatures=gemini3,
        images_in_function_response=gemini3,
        requires_tool_call_id=model_id.startswith(("claude-", "gpt-oss-")),
    )


def bedrock_compat(model: Model) -> BedrockCompat:
    """The model's `BedrockCompat`: the catalogue's, else for a model built by hand: cache points
    when its prices include prompt caching, Anthropic's thinking settings for a reasoning model
    with `anthropic.` in its id (as every Bedrock id or inference profile of Claude has)."""
    if isinstance(model.compat, BedrockCompat):
        return model.compat
    anthropic = model.reasoning and "anthropic." in model.id
    return BedrockCompat(
        thinking="anthropic" if anthropic else "none",
        cache_points=model.cost.cache_read > 0 or model.cost.cache_write > 0,
    )
