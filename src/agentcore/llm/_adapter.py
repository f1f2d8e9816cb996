"""What every provider adapter does the same way around its stream.

The four adapters differ in their wire formats, not in how they treat the caller: the request
hooks (`on_payload` may be sync or async and may replace the body; `on_response` sees each
response's status and headers), the message a stream falls back to, usage priced from the
catalogue, and the words of the errors that are not the vendor's own (an abort, a lost
connection, a hook that returned nonsense). They live here once; the life of a request (its
attempts, timeouts, log and redaction) is in `_request`.
"""

from __future__ import annotations

import dataclasses
import inspect
import socket
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..messages import AssistantMessage, Usage
from ._failures import FailureText
from .events import ABORTED_ERROR_MESSAGE
from .models import calculate_cost
from .types import ResponseInfo, StreamOptions

if TYPE_CHECKING:
    from ..abort import AbortSignal
    from .model import Model

__all__ = [
    "ABORTED",
    "InvalidPayload",
    "apply_on_payload",
    "as_int",
    "call_hook",
    "connection_text",
    "exception_text",
    "fallback_message",
    "get_field",
    "is_aborted",
    "merged_headers",
    "priced_usage",
    "report_response",
    "stream_option_fields",
]

ABORTED = ABORTED_ERROR_MESSAGE
"""The `error_message` of a request that its abort signal stopped (as the providers word it)."""

_CONNECT_ERRORS = frozenset({"ConnectError", "ConnectTimeout"})


class InvalidPayload(TypeError):
    """`on_payload` returned something that cannot be a request body."""


def is_aborted(signal: AbortSignal | None) -> bool:
    """Whether the request's abort signal has fired."""
    return signal is not None and signal.aborted


def fallback_message(model: Model) -> AssistantMessage:
    """The empty answer a stream reports if its producer ends without a terminal event."""
    return AssistantMessage(api=model.api, provider=model.provider, model=model.id)


def merged_headers(model: Model, options: StreamOptions) -> dict[str, str]:
    """The headers of a request: the model's, with the request's own `headers` taking over."""
    return {**model.headers, **(options.headers or {})}


def stream_option_fields(options: StreamOptions) -> dict[str, Any]:
    """The `StreamOptions` fields of `options` (a subclass instance included), by name, to build
    an adapter's own options class from the simple ones."""
    return {f.name: getattr(options, f.name) for f in dataclasses.fields(StreamOptions)}


async def call_hook(hook: Any, *args: Any) -> Any:
    """Call a sync or async hook and return its result."""
    result = hook(*args)
    if inspect.isawaitable(result):
        result = await result
    return result


async def apply_on_payload(payload: dict[str, Any], options: StreamOptions, model: Model) -> Any:
    """The request body after `options.on_payload` had its say (None keeps the body).

    Raises:
        InvalidPayload: the hook returned something other than a dict or None.
        Exception: whatever the hook raised.
    """
    if options.on_payload is None:
        return payload
    replaced = await call_hook(options.on_payload, payload, model)
    if replaced is None:
        return payload
    if not isinstance(replaced, Mapping):
        raise InvalidPayload(
            f"on_payload returned {type(replaced).__name__}; expected a dict or None"
        )
    return replaced


async def report_response(
    options: StreamOptions, model: Model, status: int, headers: Mapping[str, str]
) -> None:
    """Show a response's status and headers to `options.on_response`, if set."""
    if options.on_response is not None:
        info = ResponseInfo(status=status, headers=dict(headers.items()))
        await call_hook(options.on_response, info, model)


def get_field(obj: Any, name: str) -> Any:
    """A field of an SDK object, or of a plain dict (a chunk the SDK did not type), or None."""
    if type(obj) is dict:  # the common case (a parsed JSON event), without the ABC check
        return obj.get(name)
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def as_int(value: Any) -> int:
    """A token count from a server: `value` if it is an int (not a bool), else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def priced_usage(
    model: Model, *, input: int, output: int, cache_read: int = 0, cache_write: int = 0
) -> Usage:
    """A `Usage` with its cost from the model's prices; `input` counts the uncached prompt
    tokens only (an API that reports the whole prompt has the cached part taken off here, never
    below 0)."""
    usage = Usage(
        input=max(0, input),
        output=max(0, output),
        cache_read=max(0, cache_read),
        cache_write=max(0, cache_write),
    )
    return calculate_cost(model, usage)


def _is_connect_failure(cause: BaseException | None) -> bool:
    return cause is None or (
        type(cause).__name__ in _CONNECT_ERRORS
        or isinstance(cause, ConnectionRefusedError | socket.gaierror)
    )


def connection_text(cause: BaseException | None, *, started: bool, timeout: bool = False) -> str:
    """The error text of a network failure: whether it struck while connecting, before the first
    event or during the answer, and the underlying error."""
    detail = f" ({type(cause).__name__}: {cause})" if cause is not None and str(cause) else ""
    if cause is not None and not detail:
        detail = f" ({type(cause).__name__})"
    if timeout:
        return "the request timed out" + (" mid-stream" if started else "") + detail
    if started:
        return "the connection was lost mid-stream" + detail
    if _is_connect_failure(cause):
        return "could not connect" + detail
    return "the connection was lost before the first event" + detail


def exception_text(exc: BaseException) -> str:
    """The error text of a failure no adapter has words for: our own errors as they are, anything
    else with its type name."""
    if isinstance(exc, FailureText | InvalidPayload):
        return str(exc)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
