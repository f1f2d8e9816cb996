"""Fallback models: when a request fails before its first event, the same request goes to the
next model of a list.

`with_fallbacks(models)` wraps a stream function (`stream_simple` by default). The stream it
returns tries the model it was called with, then each fallback in order, and gives out the
events of the first attempt that gets going; the final message names the model that answered
(its `api`, `provider` and `model`).

What counts as "failed before its first event": the attempt's stream ended with an `error`
(stop reason "error") before any content arrived — a refused connection, a 5xx or a rate limit
after the adapter's own retries, an authentication failure, a context overflow, a missing API
key — or the stream function raised. A `start` event is held back until the next event shows
the attempt is answering, so that nothing of a failed attempt reaches the caller. Never a
fallback:

* once content has streamed (text, thinking or a tool call reached the caller);
* on an abort (the abort ends the request at once, whichever model it was at);
* after a context overflow, to a model whose `context_window` is known and not larger than the
  one that overflowed (it would overflow too).

Each failed attempt is logged to the `agentcore.llm` logger (WARNING). When every model fails,
the last failure is the answer, its `error_message` followed by the earlier failures.

API keys: the options' `api_key` is the key of the model the stream function was called with,
and of fallbacks of that same provider. A fallback of another provider gets
`get_api_key(provider)` if given, else no key (its adapter then reads the provider's
environment variable).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any

from ..errors import ConfigError
from ._adapter import fallback_message, is_aborted
from .events import AssistantMessageEvent, ErrorEvent
from .model import Model
from .overflow import is_context_overflow
from .registry import StreamFn, call_stream_fn
from .retries import current_retry_observer
from .stream import AssistantMessageEventStream
from .types import Context, SimpleStreamOptions

__all__ = ["check_fallback_models", "with_fallbacks"]

_log = logging.getLogger("agentcore.llm")

GetApiKey = Callable[[str], str | Awaitable[str | None] | None]


def check_fallback_models(models: Any, where: str = "fallback_models") -> tuple[Model, ...]:
    """`models` as a tuple of `Model`s.

    Raises:
        ConfigError: `models` is not a sequence of `Model`s.
    """
    if isinstance(models, Model | str | bytes) or not isinstance(models, Sequence):
        raise ConfigError(
            f"{where} must be a sequence of agentcore.llm.Model, got {type(models).__name__}"
        )
    for i, model in enumerate(models):
        if not isinstance(model, Model):
            raise ConfigError(
                f"{where}[{i}] must be an agentcore.llm.Model, got {type(model).__name__} "
                "(look one up with agentcore.llm.get_model)"
            )
    return tuple(models)


def with_fallbacks(
    models: Sequence[Model],
    *,
    stream_fn: StreamFn | None = None,
    get_api_key: GetApiKey | None = None,
) -> StreamFn:
    """A stream function that tries the model it is called with, then each of `models`.

    ```python
    stream_fn = with_fallbacks([get_model("anthropic", "claude-sonnet-4-5")])
    answer = await (await stream_fn(primary, context, options)).result()
    ```

    Args:
        models: the fallbacks, in order (one equal to the requested model is skipped).
        stream_fn: the stream function of every attempt (default `stream_simple`).
        get_api_key: the key of a fallback of another provider, `(provider) -> key | None`
            (sync or async); None: the provider's environment variable.

    Raises:
        ConfigError: `models` is not a sequence of `Model`s.
    """
    fallbacks = check_fallback_models(models)
    if stream_fn is None:
        from .registry import stream_simple

        stream_fn = stream_simple
    inner: StreamFn = stream_fn

    def fallback_stream(
        model: Model, context: Context, options: SimpleStreamOptions
    ) -> AssistantMessageEventStream:
        return AssistantMessageEventStream(
            _attempts(inner, model, fallbacks, context, options, get_api_key),
            fallback=fallback_message(model),
        )

    return fallback_stream


async def _key(model: Model, primary: Model, options: SimpleStreamOptions, hook: Any) -> Any:
    if model.provider == primary.provider and options.api_key:
        return options.api_key
    if hook is None:
        return None
    key = hook(model.provider)
    if inspect.isawaitable(key):
        key = await key
    return key or None


def _label(model: Model) -> str:
    return f"{model.provider}/{model.id}"


async def _attempts(
    stream_fn: StreamFn,
    primary: Model,
    fallbacks: tuple[Model, ...],
    context: Context,
    options: SimpleStreamOptions,
    get_api_key: GetApiKey | None,
) -> AsyncIterator[AssistantMessageEvent]:
    candidates = [primary] + [
        m
        for m in fallbacks
        if (m.provider, m.id, m.base_url) != (primary.provider, primary.id, primary.base_url)
    ]
    failures: list[str] = []
    overflowed: int | None = None  # the window that overflowed, if one did
    for index, model in enumerate(candidates):
        last = index == len(candidates) - 1
        if overflowed is not None and model.context_window and model.context_window <= overflowed:
            failures.append(f"{_label(model)}: skipped (its context window is not larger)")
            _log.warning("%s: skipped after a context overflow (window not larger)", _label(model))
            if last:
                break
            continue
        attempt_options = options
        if index:
            attempt_options = replace(
                options, api_key=await _key(model, primary, options, get_api_key)
            )
        try:
            stream = await call_stream_fn(stream_fn, model, context, attempt_options)
        except Exception as exc:
            text = f"{type(exc).__name__}: {exc}"
            if last:
                if not failures:
                    raise
                yield _failed(model, f"{text} (after {'; '.join(failures)})")
                return
            failures.append(f"{_label(model)}: {text}")
            _failed_attempt(model, text, len(failures))
            continue
        async with stream:
            held: AssistantMessageEvent | None = None
            async for event in stream:
                if event.type == "start" and held is None:
                    held = event
                    continue
                if (
                    event.type == "error"
                    and event.reason == "error"
                    and not event.error.content
                    and not is_aborted(options.signal)
                ):
                    error = event.error
                    text = error.error_message or "failed"
                    if not last:
                        failures.append(f"{_label(model)}: {text}")
                        _failed_attempt(model, text, len(failures))
                        if is_context_overflow(error, model.context_window):
                            window = model.context_window or 0
                            overflowed = max(overflowed or 0, window) if window else overflowed
                        break
                    if failures:
                        event = replace(
                            event,
                            error=replace(
                                error, error_message=f"{text} (after {'; '.join(failures)})"
                            ),
                        )
                if held is not None:
                    yield held
                    held = None
                yield event
                async for rest in stream:
                    yield rest
                return
    if failures:
        yield _failed(primary, "every model failed: " + "; ".join(failures))


def _failed_attempt(model: Model, text: str, count: int) -> None:
    """Log a failed attempt, and tell whoever watches the request's retries (the agent loop's
    instrumentation: a trace shows each fallback as a retry event naming the model)."""
    _log.warning("%s failed before its first event: %s; trying the next model", _label(model), text)
    observer = current_retry_observer()
    if observer is not None:
        observer.on_retry(count, f"{_label(model)}: {text}; falling back to the next model", 0.0)


def _failed(model: Model, text: str) -> ErrorEvent:
    message = replace(fallback_message(model), stop_reason="error", error_message=text)
    return ErrorEvent(reason="error", error=message)
