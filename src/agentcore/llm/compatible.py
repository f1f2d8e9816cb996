"""One line for any OpenAI-compatible server: Ollama, vLLM, LM Studio, llama.cpp, ...

```python
from agentcore.llm import openai_compatible_model

model = openai_compatible_model("http://localhost:11434/v1", "llama3.2", provider="ollama")
```

The result is an ordinary `Model` with `api="openai-completions"`, so it works anywhere a catalogue
model does (`AgentLoopConfig(model=...)`, `stream_simple`, ...). Pass `register=True` to also add it
to the catalogue, so `get_model(provider, model_id)` finds it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import get_args
from urllib.parse import urlsplit

from ..errors import ConfigError
from ._profiles import SERVER_PROFILES
from .model import InputKind, Model, ModelCost, OpenAICompletionsCompat, ThinkingControl
from .models import register_model

__all__ = ["openai_compatible_model"]

_INPUT_KINDS: frozenset[str] = frozenset({"text", "image"})


def openai_compatible_model(
    base_url: str,
    model_id: str,
    *,
    provider: str = "openai-compatible",
    name: str = "",
    context_window: int = 32_768,
    max_tokens: int = 4_096,
    reasoning: bool = False,
    input: Sequence[InputKind] = ("text",),
    cost: ModelCost | None = None,
    headers: Mapping[str, str] | None = None,
    compat: OpenAICompletionsCompat | None = None,
    thinking_control: ThinkingControl | None = None,
    supports_xhigh: bool | None = None,
    structured_output: bool | None = None,
    register: bool = False,
) -> Model:
    """A `Model` for an OpenAI Chat Completions server at `base_url`.

    Args:
        base_url: the API root the server documents, usually ending in `/v1` (Ollama:
            `http://localhost:11434/v1`, vLLM: `http://localhost:8000/v1`, LM Studio:
            `http://localhost:1234/v1`). Requests go to `<base_url>/chat/completions`.
        model_id: the model name the server expects in the request's `model` field.
        provider: the provider id. It picks the API-key environment variable (a catalogue
            provider such as `"groq"` reads `GROQ_API_KEY`); servers on localhost and the providers
            `ollama`, `vllm`, `lmstudio` and `llama.cpp` need no key. Otherwise pass `api_key` in
            the options or the `AgentLoopConfig`. For `"llama.cpp"` the server's profile fills
            in `compat` and `structured_output` when they are not given: native structured
            output, and several tool calls per answer.
        name: a display name (default: `model_id`).
        context_window: the server's context size in tokens, for overflow detection.
        max_tokens: the output limit sent when a request does not set its own.
        reasoning: the model thinks before answering (its reasoning is read from
            `reasoning_content` / `reasoning` deltas).
        input: the input kinds the model accepts (`"text"`, `"image"`).
        cost: prices per million tokens (default: free).
        headers: extra HTTP headers for every request.
        compat: the server's quirks; the defaults suit llama.cpp, vLLM, Ollama and LM Studio.
            For a server that rejects `stream_options`, pass
            `OpenAICompletionsCompat(supports_usage_in_streaming=False)`; for one that allows a
            single tool call per answer unless asked, `supports_parallel_tool_calls=True`.
        thinking_control: what a thinking level becomes for the model: `"effort"` (the server
            takes `reasoning_effort`; set `compat.supports_reasoning_effort` too) or `"fixed"`
            (it always thinks); None: not stated.
        supports_xhigh: the server takes the `xhigh` effort (None: decided from the model id).
        structured_output: the server can constrain answers to a JSON schema (None: not known);
            typed outputs of a run without tools then use it (`OutputSpec` mode `auto`).
        register: also add the model to the catalogue (replacing an entry with the same
            provider and id).

    Raises:
        ConfigError: `base_url` is not an http(s) URL, `model_id` or `provider` is empty, a
            limit is not positive, an input kind or a thinking control is unknown.
    """
    url = base_url.strip() if isinstance(base_url, str) else ""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"base_url must be an http(s) URL such as 'http://localhost:11434/v1', got {base_url!r}"
        )
    if not isinstance(model_id, str) or not model_id.strip():
        raise ConfigError("model_id must be the model name the server expects, e.g. 'llama3.2'")
    if not isinstance(provider, str) or not provider.strip():
        raise ConfigError("provider must be a non-empty string, e.g. 'ollama'")
    if context_window <= 0 or max_tokens <= 0:
        raise ConfigError(
            f"context_window and max_tokens must be positive, got {context_window} and {max_tokens}"
        )
    kinds = list(input)
    unknown = [k for k in kinds if k not in _INPUT_KINDS]
    if unknown or not kinds:
        raise ConfigError(f"input must list 'text' and/or 'image', got {kinds!r}")
    if thinking_control is not None and thinking_control not in get_args(ThinkingControl):
        raise ConfigError(
            f"thinking_control must be one of {', '.join(get_args(ThinkingControl))} or None, "
            f"got {thinking_control!r}"
        )
    profile = SERVER_PROFILES.get(provider)
    if profile is not None:
        compat = compat if compat is not None else profile.compat
        if structured_output is None:
            structured_output = profile.structured_output
    model = Model(
        id=model_id,
        name=name,
        api="openai-completions",
        provider=provider,
        base_url=url.rstrip("/"),
        reasoning=reasoning,
        input=kinds,
        cost=cost if cost is not None else ModelCost(),
        context_window=context_window,
        max_tokens=max_tokens,
        headers=dict(headers or {}),
        compat=compat if compat is not None else OpenAICompletionsCompat(),
        thinking_control=thinking_control,
        supports_xhigh=supports_xhigh,
        structured_output=structured_output,
    )
    return register_model(model) if register else model
