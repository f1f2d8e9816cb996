"""The life of one request, alike in every adapter: its attempts, its timeouts, its log, and
the secrets kept out of its texts.

* `Request` holds a request's model, options and secrets (kept out of every text: `_redact`).
* `send_with_retries` makes the attempts, up to the first event: each bounded by
  `request_timeout`, retried up to `max_retries` times, each failure logged.
* `open_event_stream` reads a response of the openai or anthropic SDK raw, as parsed events
  (`_http.EventSource`): it reports the response, refuses a body that is not an event stream,
  and reads the first event.
* `release` closes what a request opened, within one bounded wait (`CLOSE_TIMEOUT`).

The driver (`_driver`) runs these in the same order for every adapter, and reads the events after
the first under the abort signal and `idle_timeout`: the timer sits where events come out of the
SSE parser, so keep-alive comments and blank lines never reset it; events that arrived together
are read without a timer (`_driver._Reader`).

Log records go to the `agentcore.llm` logger: each failed attempt (INFO; WARNING for a timeout and
for giving up) and each idle timeout (WARNING); their texts are redacted too.

Whoever reads a request's stream may watch its retries (`agentcore.llm.retries.watch_retries`):
each failed attempt that is retried is reported to `current_retry_observer()`, in the reading
task (the agent loop uses it for its instrumentation seam; the model layer knows nothing of
agents).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from ..abort import cancel_on_abort
from ._adapter import report_response
from ._failures import EmptyStream, MalformedEvent, NotEventStream, seconds
from ._http import END, EventSource, check_event_stream, is_transport_error
from ._redact import redact, secret_values
from ._retry import RequestAborted, RequestTimedOut, RetryInfo, retry_request
from .retries import current_retry_observer

if TYPE_CHECKING:
    from .model import Model
    from .types import StreamOptions

__all__ = [
    "CLOSE_TIMEOUT",
    "OpenedStream",
    "Request",
    "logger",
    "open_event_stream",
    "release",
    "send_with_retries",
]

T = TypeVar("T")

logger = logging.getLogger("agentcore.llm")
"""Where retries and timeouts are logged (the `agentcore` logger's NullHandler keeps them off
stderr unless the application configures logging)."""

CLOSE_TIMEOUT = 5.0
"""Seconds the release of a request's response and client may take in all, however it ended: a
server or proxy that never lets go of the connection cannot hang the caller."""


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
        if delay is not None:
            observer = current_retry_observer()
            if observer is not None:
                observer.on_retry(attempt, request.redact(describe(exc)), delay)

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


async def release(
    request: Request,
    closers: Iterable[Callable[[], Awaitable[None]] | None],
    *,
    timeout: float = CLOSE_TIMEOUT,  # noqa: ASYNC109 (bounds a teardown)
) -> None:
    """Call each closer in turn (None is skipped), shielded from cancellation, all within ONE
    bounded wait: `timeout` seconds from now for all of them together.

    A closer still running at the deadline is abandoned, and a later one gets only its
    synchronous part (it is cancelled at its first wait); a closer's failure is logged and does
    not stop the others. Nothing is raised: the answer is already decided.
    """
    deadline = anyio.current_time() + timeout
    for close in closers:
        if close is None:
            continue
        with anyio.CancelScope(shield=True, deadline=deadline) as scope:
            try:
                await close()
            except Exception as exc:
                request.log(logging.INFO, f"releasing the connection failed: {exc!r}")
        if scope.cancelled_caught:
            request.log(
                logging.WARNING,
                f"releasing the connection took longer than {seconds(timeout)} s; abandoned",
            )


@dataclass(slots=True)
class OpenedStream:
    """A response being read as parsed JSON events, its first event already read."""

    response: Any
    events: EventSource
    first: Any = None

    async def aclose(self) -> None:
        """Close the response and finish the generators that read it."""
        await self.events.aclose()


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
    opened = OpenedStream(response=response, events=EventSource(response, skip))
    try:
        await report_response(
            request.options, request.model, response.status_code, response.headers
        )
        await check_event_stream(response)
        first = await opened.events.wait()
        if first is END:
            raise EmptyStream()
    except BaseException:
        await release(request, (opened.aclose,))
        raise
    opened.first = first
    return opened
