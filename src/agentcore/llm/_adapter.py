"""What every provider adapter does the same way around its stream.

The four adapters differ in their wire formats, not in how they treat the caller: the request
hooks (`on_payload` may be sync or async and may replace the body; `on_response` sees each
response's status and headers), the message a stream falls back to, usage priced from the
catalogue, the words of the errors that are not the vendor's own (an abort, a lost connection, a
hook that returned nonsense), and the edges of a request's life. They live here once:

* `Request` holds a request's model, options and secrets; `open_stream` builds its event stream
  so that every terminal error text is redacted (`_redact`) on its way out.
* `send_with_retries` makes the attempts, up to the first event: each bounded by
  `request_timeout`, retried up to `max_retries` times, each failure logged.
* `next_item` reads every later event under the abort signal and `idle_timeout`. The timer sits
  where events come out of the SSE parser, so keep-alive comments and blank lines never reset
  it.
* `open_event_stream` turns a response of the openai or anthropic SDK into parsed events: it
  reports the response, refuses a body that is not an event stream, and reads the first event.

Log records go to the `agentcore.llm` logger: each failed attempt (INFO, WARNING for timeouts and
for giving up), each idle timeout (WARNING); their texts are redacted too.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from ..abort import cancel_on_abort
from ..messages import AssistantMessage, Usage
from ._http import (
    EmptyStream,
    FailureText,
    MalformedEvent,
    NotEventStream,
    check_event_stream,
    finish_iterator,
    is_transport_error,
    json_events,
    sse_data,
)
from ._redact import redact, secret_values
from ._retry import RequestAborted, RequestTimedOut, RetryInfo, retry_request, seconds
from .models import calculate_cost
from .stream import AssistantMessageEventStream
from .types import ResponseInfo, StreamOptions

if TYPE_CHECKING:
    from ..abort import AbortSignal
    from .events import AssistantMessageEvent
    from .model import Model

__all__ = [
    "ABORTED",
    "InvalidPayload",
    "OpenedStream",
    "Request",
    "StreamIdle",
    "apply_on_payload",
    "as_int",
    "call_hook",
    "connection_text",
    "exception_text",
    "fallback_message",
    "finish_iterator",
    "get_field",
    "is_aborted",
    "logger",
    "merged_headers",
    "next_item",
    "open_event_stream",
    "open_stream",
    "priced_usage",
    "report_response",
    "send_with_retries",
    "stream_option_fields",
    "truncated_text",
]

T = TypeVar("T")

ABORTED = "request was aborted"
"""The `error_message` of a request that its abort signal stopped."""

logger = logging.getLogger("agentcore.llm")
"""Where retries and timeouts are logged."""
# a library's records reach the application's handlers, never Python's last-resort stderr one
logger.addHandler(logging.NullHandler())

_CONNECT_ERRORS = frozenset({"ConnectError", "ConnectTimeout"})
_NO_ITEM: Any = object()


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


def truncated_text(missing: str) -> str:
    """The error text of a stream that ended before its final event, naming what never came."""
    return f"the stream ended before the response finished (no {missing})"


def exception_text(exc: BaseException) -> str:
    """The error text of a failure no adapter has words for: our own errors as they are, anything
    else with its type name."""
    if isinstance(exc, FailureText | InvalidPayload):
        return str(exc)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


# --- one request's life -----------------------------------------------------------------------


class Request:
    """One request as the shared helpers see it: its model and options, and the secrets to keep
    out of every text it produces (the API key, secret-looking header values)."""

    __slots__ = ("label", "model", "options", "secrets")

    def __init__(self, model: Model, options: StreamOptions, api_key: str | None) -> None:
        self.model = model
        self.options = options
        self.secrets = secret_values(api_key, model.headers, options.headers)
        self.label = f"{model.provider}/{model.id}"

    def redact(self, text: str) -> str:
        """`text` with the request's secrets replaced by a marker."""
        return redact(text, self.secrets)

    def log(self, level: int, text: str) -> None:
        """Log `text` (redacted) about this request to the `agentcore.llm` logger."""
        if logger.isEnabledFor(level):
            logger.log(level, "%s: %s", self.label, self.redact(text))


def open_stream(
    request: Request, events: AsyncIterator[AssistantMessageEvent]
) -> AssistantMessageEventStream:
    """The stream of a provider's events for `request`: its terminal error text redacted,
    whatever produced it."""
    return AssistantMessageEventStream(
        events,
        fallback=fallback_message(request.model),
        redact=request.redact if request.secrets else None,
    )


class StreamIdle(FailureText):
    """Nothing arrived for longer than `idle_timeout` once the answer streamed."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        super().__init__(
            f"the stream was silent for longer than idle_timeout ({seconds(timeout)} s)"
        )


def _retry_info(
    exc: BaseException, classify: Callable[[BaseException], RetryInfo | None]
) -> RetryInfo | None:
    """The shared part of deciding a retry: a body that is not an event stream or is malformed
    is final; a lost connection or an empty stream backs off; the adapter decides the rest."""
    if isinstance(exc, NotEventStream | MalformedEvent):
        return None
    if isinstance(exc, EmptyStream) or is_transport_error(exc):
        return RetryInfo()
    return classify(exc)


async def send_with_retries(
    send: Callable[[], Awaitable[T]],
    request: Request,
    classify: Callable[[BaseException], RetryInfo | None],
    describe: Callable[[BaseException], str],
) -> T:
    """Make the attempts of `request` up to its first event, as the options say: each within
    `request_timeout`, up to `max_retries` retries, abortable at any point (an abort while
    sending, waiting for the response or waiting to retry raises `RequestAborted`).

    The caller still checks the signal afterwards: it may fire just as `send` succeeds, and the
    caller then owns (and closes) what `send` returned.

    Args:
        send: one attempt; it must release what it opened when it fails or is cancelled.
        request: the request.
        classify: the adapter's retry decision for failures the shared rules leave open.
        describe: the error text of a failure, for the log.
    """
    options = request.options
    attempts = max(0, options.max_retries) + 1

    def on_failure(attempt: int, exc: BaseException, delay: float | None) -> None:
        timed_out = isinstance(exc, RequestTimedOut)
        if delay is not None:
            outcome, level = f"retrying in {seconds(round(delay, 3))} s", logging.INFO
        elif attempt > 1 or timed_out:
            outcome, level = "giving up", logging.WARNING
        else:
            outcome, level = "not retried", logging.INFO
        if timed_out:
            level = logging.WARNING
        request.log(level, f"attempt {attempt} of {attempts} failed: {describe(exc)}; {outcome}")

    with cancel_on_abort(options.signal):
        return await retry_request(
            send,
            signal=options.signal,
            max_retry_delay_ms=options.max_retry_delay_ms,
            max_retries=attempts - 1,
            request_timeout=options.request_timeout,
            classify=lambda exc: _retry_info(exc, classify),
            on_failure=on_failure,
        )
    raise RequestAborted()  # the abort cancelled the send


async def next_item(iterator: AsyncIterator[T], request: Request) -> T | None:
    """The next event of an answer that is streaming, or None at its end.

    Raises:
        RequestAborted: the abort signal fired (also when an item arrived at the same moment).
        StreamIdle: nothing arrived within `idle_timeout`.
        Exception: what reading raised (a lost connection, malformed data).
    """
    options = request.options
    signal = options.signal
    idle = anyio.CancelScope(
        deadline=anyio.current_time() + options.idle_timeout
        if options.idle_timeout is not None
        else float("inf")
    )
    item: Any = _NO_ITEM
    with cancel_on_abort(signal) as abort_scope:
        try:
            with idle:
                item = await anext(iterator)
        except StopAsyncIteration:
            item = None
        except Exception:
            if not idle.cancel_called:
                raise  # a failure of its own, not one the timer caused
    if abort_scope.cancelled_caught or is_aborted(signal):
        raise RequestAborted()
    if item is _NO_ITEM:
        timeout = options.idle_timeout or 0.0
        failure = StreamIdle(timeout)
        request.log(logging.WARNING, f"{failure}; ending the answer")
        raise failure
    return item  # type: ignore[no-any-return]


@dataclass(slots=True)
class OpenedStream:
    """A response being read as parsed JSON events, its first event already read."""

    response: Any
    events: AsyncIterator[Any]
    first: Any = None

    async def aclose(self) -> None:
        """Close the response and finish the generators that read it."""
        await self.response.aclose()
        await finish_iterator(self.events)


async def open_event_stream(
    response: Any, request: Request, skip: Callable[[Any], bool] | None = None
) -> OpenedStream:
    """Start reading an httpx (or httpx2) response of the openai or anthropic SDK: show it to
    `on_response`, check that it is an event stream, and read its first event (leaving out those
    `skip` says to), so that whatever fails before any output can be retried.

    The response is closed when this fails or is cancelled.

    Raises:
        NotEventStream: the body is something else (a proxy's page, a JSON document).
        EmptyStream: the stream ended before its first event.
        MalformedEvent: the first event's data is not JSON.
        Exception: what `on_response` or reading raised.
    """
    opened = OpenedStream(response=response, events=json_events(sse_data(response), skip))
    try:
        await report_response(
            request.options, request.model, response.status_code, response.headers
        )
        await check_event_stream(response)
        first = await anext(opened.events, _NO_ITEM)
        if first is _NO_ITEM:
            raise EmptyStream()
    except BaseException:
        with anyio.CancelScope(shield=True):
            await opened.aclose()
        raise
    opened.first = first
    return opened
