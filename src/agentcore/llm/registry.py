"""The API registry and the entry points `stream`, `stream_simple`, `complete`, `complete_simple`.

Each wire protocol (`Model.api`) has one adapter. The built-in adapters are imported lazily, on the
first request to a model of their API, so `import agentcore` never imports a provider SDK.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeAlias

from ..errors import UnknownApiError
from ..messages import AssistantMessage
from .model import Model
from .stream import AssistantMessageEventStream
from .types import Context, SimpleStreamOptions, StreamOptions

__all__ = [
    "ApiProvider",
    "StreamFn",
    "complete",
    "complete_simple",
    "get_api_provider",
    "register_api_provider",
    "stream",
    "stream_simple",
    "unregister_api_providers",
]

StreamFunction: TypeAlias = Callable[[Model, Context, StreamOptions], AssistantMessageEventStream]
SimpleStreamFunction: TypeAlias = Callable[
    [Model, Context, SimpleStreamOptions], AssistantMessageEventStream
]
StreamFn: TypeAlias = Callable[
    [Model, Context, SimpleStreamOptions],
    AssistantMessageEventStream | Awaitable[AssistantMessageEventStream],
]
"""The signature of `stream_simple`: what the agent loop calls for each model request."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiProvider:
    """An adapter for one wire protocol.

    Attributes:
        api: the `Model.api` value it serves.
        stream: takes `StreamOptions` (provider-specific knobs left to the caller).
        stream_simple: takes `SimpleStreamOptions` (a thinking level mapped per API).
        source: an optional owner id, for removing a group with `unregister_api_providers`.
    """

    api: str
    stream: StreamFunction
    stream_simple: SimpleStreamFunction
    source: str | None = None


_BUILTIN: dict[str, str] = {
    "faux": "agentcore.llm.providers.faux",
    "openai-completions": "agentcore.llm.providers.openai_completions",
    "openai-responses": "agentcore.llm.providers.openai_responses",
    "anthropic-messages": "agentcore.llm.providers.anthropic",
    "google-generative-ai": "agentcore.llm.providers.google",
    "bedrock-converse-stream": "agentcore.llm.providers.bedrock",
}
_providers: dict[str, ApiProvider] = {}


def register_api_provider(provider: ApiProvider) -> None:
    """Register (or replace) the adapter for `provider.api`."""
    _providers[provider.api] = provider


def unregister_api_providers(source: str) -> None:
    """Remove every adapter registered with this `source`."""
    for api in [a for a, p in _providers.items() if p.source == source]:
        del _providers[api]


def get_api_provider(api: str) -> ApiProvider:
    """The adapter for `api`, importing a built-in one on first use.

    Raises:
        UnknownApiError: no adapter serves this api.
    """
    provider = _providers.get(api)
    if provider is None and api in _BUILTIN:
        path = _BUILTIN[api]
        try:
            module = importlib.import_module(path)
        except ModuleNotFoundError as exc:
            if exc.name != path:  # the module exists, something it imports does not
                raise
            raise UnknownApiError(
                f"the adapter for api {api!r} ({path}) is not part of this installation; "
                "register one with agentcore.llm.register_api_provider"
            ) from exc
        provider = _providers.get(api) or module.PROVIDER
        _providers[api] = provider
    if provider is None:
        known = sorted(set(_providers) | set(_BUILTIN))
        raise UnknownApiError(
            f"no adapter is registered for api {api!r}; known apis: {', '.join(known)} "
            "(register one with agentcore.llm.register_api_provider)"
        )
    return provider


def stream(
    model: Model, context: Context, options: StreamOptions | None = None
) -> AssistantMessageEventStream:
    """Send one request and stream the answer with the model's adapter.

    Raises (before anything is sent):
        UnknownApiError: no adapter for `model.api`.
        MissingApiKeyError, MissingExtraError: from the adapter.
    """
    return get_api_provider(model.api).stream(model, context, options or StreamOptions())


def stream_simple(
    model: Model, context: Context, options: SimpleStreamOptions | None = None
) -> AssistantMessageEventStream:
    """Like `stream`, with a provider-neutral thinking level (`options.reasoning`)."""
    return get_api_provider(model.api).stream_simple(
        model, context, options or SimpleStreamOptions()
    )


async def complete(
    model: Model, context: Context, options: StreamOptions | None = None
) -> AssistantMessage:
    """`stream` and wait for the final message."""
    return await stream(model, context, options).result()


async def complete_simple(
    model: Model, context: Context, options: SimpleStreamOptions | None = None
) -> AssistantMessage:
    """`stream_simple` and wait for the final message."""
    return await stream_simple(model, context, options).result()


async def call_stream_fn(
    fn: StreamFn, model: Model, context: Context, options: SimpleStreamOptions
) -> AssistantMessageEventStream:
    """Call a `StreamFn`, awaiting its result if it returned an awaitable."""
    result = fn(model, context, options)
    if isinstance(result, AssistantMessageEventStream):
        return result
    if inspect.isawaitable(result):
        result = await result
    if not isinstance(result, AssistantMessageEventStream):
        raise TypeError(
            f"the stream function returned {type(result).__name__}; expected an "
            "AssistantMessageEventStream (or an awaitable of one)"
        )
    return result
