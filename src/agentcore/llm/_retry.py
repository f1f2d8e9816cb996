"""Retrying transient request failures, before any output was streamed.

Adapters turn the vendor SDKs' own retries off and send through `retry_request`, so every
provider retries alike: up to `max_retries` times on a retryable failure (HTTP 408/409/429/5xx,
connection errors, an attempt that got no first event within `request_timeout`; the adapter's
`classify` decides the rest), waiting the delay the server asked for (`Retry-After`, rate-limit
headers, "retry in Ns" in the body) or else an exponential backoff with jitter. A
server-requested wait longer than `max_retry_delay_ms` fails at once with `RetryDelayTooLong`, so
that an outer layer can retry visibly. The waits are abortable: an abort raises `RequestAborted`,
which the adapter turns into the `aborted` terminal.
"""

from __future__ import annotations

import math
import random
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

import anyio

from ..abort import AbortSignal, cancel_on_abort
from ._failures import FailureText, seconds

__all__ = [
    "OnFailure",
    "RequestAborted",
    "RequestTimedOut",
    "RetryDelayTooLong",
    "RetryInfo",
    "is_retryable_status",
    "parse_retry_after",
    "retry_request",
]

T = TypeVar("T")

_RETRYABLE = frozenset({408, 409, 425, 429})
_NOT_RETRYABLE_5XX = frozenset({501, 505})
_EPOCH_THRESHOLD = 1_000_000_000  # a reset "time" this large is a Unix timestamp, not seconds
_MAX_BACKOFF = 30.0


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryInfo:
    """How `classify` describes a retryable failure.

    Attributes:
        delay: the wait in seconds the server asked for, or None to back off exponentially.
    """

    delay: float | None = None


OnFailure = Callable[[int, BaseException, "float | None"], None]
"""Told of each failed attempt: its number (1 for the first), the failure, and the wait before
the next attempt (None when there is none)."""


class RetryDelayTooLong(FailureText):
    """The server asked for a longer wait than `max_retry_delay_ms` allows."""

    def __init__(self, requested: float, limit_ms: int) -> None:
        self.requested = requested
        self.limit_ms = limit_ms
        super().__init__(
            f"server asked to retry after {seconds(requested)} s, more than "
            f"max_retry_delay_ms ({seconds(limit_ms / 1000)} s)"
        )


class RequestTimedOut(FailureText):
    """An attempt got no first stream event within `request_timeout` (retried like a lost
    connection)."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        super().__init__(f"no response within request_timeout ({seconds(timeout)} s)")


class RequestAborted(Exception):
    """The abort signal fired while waiting to retry."""

    def __init__(self) -> None:
        super().__init__("request was aborted")


def is_retryable_status(status: int) -> bool:
    """Whether an HTTP status is worth retrying: 408, 409, 425, 429 and 5xx (not 501/505)."""
    return status in _RETRYABLE or (500 <= status <= 599 and status not in _NOT_RETRYABLE_5XX)


_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|h|m|s)", re.IGNORECASE)
_BODY_PATTERNS = (
    re.compile(r"retry[_ ]?delay\"?\s*[:=]\s*\"?(\d+(?:\.\d+)?\s*(?:ms|s)?)", re.IGNORECASE),
    re.compile(
        r"(?:retry|try again)\s+(?:in|after)\s+((?:\d+(?:\.\d+)?\s*(?:ms|h|m|s)\s*)+)",
        re.IGNORECASE,
    ),
    re.compile(
        r"reset(?:s)?\s+(?:in|after)\s+((?:\d+(?:\.\d+)?\s*(?:ms|h|m|s)\s*)+)", re.IGNORECASE
    ),
)


def _parse_duration(text: str) -> float | None:
    """Seconds in a duration such as `1h2m3s`, `20ms`, `5.5s` or a bare number of seconds."""
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        pass
    parts = _DURATION_PART.findall(text)
    if not parts:
        return None
    scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    return sum(float(number) * scale[unit.lower()] for number, unit in parts)


def _parse_reset(value: str) -> float | None:
    seconds = _parse_duration(value)
    if seconds is None:
        return None
    if seconds >= _EPOCH_THRESHOLD:  # a Unix timestamp
        return max(0.0, seconds - time.time())
    return seconds


def parse_retry_after(headers: Mapping[str, str], body: str | None = None) -> float | None:
    """The wait in seconds a server asked for, or None if it did not say.

    Read, in order: `retry-after-ms`; `Retry-After` (seconds or an HTTP date);
    `x-ratelimit-reset-after` (seconds); `x-ratelimit-reset` (seconds, a duration or a Unix
    time); then phrases in the body: a `retryDelay` field, "retry in 5s", "try again in 20ms",
    "reset after 1h2m3s".
    """
    lower = {k.lower(): v for k, v in headers.items()}
    value = lower.get("retry-after-ms")
    if value is not None:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = lower.get("retry-after")
    if value is not None:
        try:
            return max(0.0, float(value))
        except ValueError:
            from email.utils import parsedate_to_datetime  # 15 ms to import; rarely needed

            try:
                return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
            except (TypeError, ValueError, IndexError):
                pass
    for name in ("x-ratelimit-reset-after", "x-ratelimit-reset"):
        value = lower.get(name)
        if value is not None:
            seconds = _parse_reset(value)
            if seconds is not None:
                return seconds
    if body:
        for pattern in _BODY_PATTERNS:
            match = pattern.search(body)
            if match:
                seconds = _parse_duration(match.group(1))
                if seconds is not None:
                    return seconds
    return None


def _backoff(attempt: int, base_delay: float) -> float:
    delay: float = min(base_delay * 2**attempt, _MAX_BACKOFF)
    return delay * random.uniform(0.8, 1.2)


async def retry_request(
    send: Callable[[], Awaitable[T]],
    *,
    signal: AbortSignal | None,
    max_retry_delay_ms: int,
    max_retries: int = 3,
    request_timeout: float | None = None,
    base_delay: float = 1.0,
    classify: Callable[[BaseException], RetryInfo | None],
    on_failure: OnFailure | None = None,
) -> T:
    """`await send()`, retrying it while `classify` calls its failure retryable.

    Args:
        send: makes one attempt; must not have produced output when it fails, and must release
            what it opened when it is cancelled.
        signal: aborts the waits between attempts.
        max_retry_delay_ms: the longest server-requested wait to honour (0 = no cap); backoff
            waits are also capped by it.
        max_retries: retries after the first attempt (0: none).
        request_timeout: seconds an attempt may take (None: no limit); an attempt cut off by it
            fails with `RequestTimedOut`, which is retried with backoff.
        base_delay: the first backoff wait in seconds, doubled per attempt (with jitter).
        classify: `RetryInfo` for a retryable exception, None for a final one.
        on_failure: told of each failed attempt, before the wait or the final raise.

    Raises:
        RetryDelayTooLong: the server asked for a longer wait than allowed.
        RequestAborted: the signal fired before or between attempts.
        RequestTimedOut: the last attempt took longer than `request_timeout`.
        Exception: the last failure, when it is not retryable or the retries are spent.
    """
    attempt = 0
    while True:
        if signal is not None and signal.aborted:
            raise RequestAborted()
        deadline = math.inf if request_timeout is None else anyio.current_time() + request_timeout
        scope = anyio.CancelScope(deadline=deadline)
        failure: BaseException
        try:
            with scope:
                return await send()
            failure = RequestTimedOut(request_timeout or 0.0)  # only the deadline ends here
        except Exception as exc:  # a failure the deadline caused counts as the timeout
            failure = RequestTimedOut(request_timeout or 0.0) if scope.cancel_called else exc
        attempt += 1
        info = RetryInfo() if isinstance(failure, RequestTimedOut) else classify(failure)
        delay: float | None = None
        if info is not None and attempt <= max_retries:
            if info.delay is not None:
                if max_retry_delay_ms > 0 and info.delay * 1000 > max_retry_delay_ms:
                    too_long = RetryDelayTooLong(info.delay, max_retry_delay_ms)
                    if on_failure is not None:
                        on_failure(attempt, too_long, None)
                    raise too_long from failure
                delay = info.delay
            else:
                delay = _backoff(attempt - 1, base_delay)
                if max_retry_delay_ms > 0:
                    delay = min(delay, max_retry_delay_ms / 1000)
        if on_failure is not None:
            on_failure(attempt, failure, delay)
        if delay is None:
            raise failure
        with cancel_on_abort(signal) as waiting:
            await anyio.sleep(delay)
        if waiting.cancelled_caught or (signal is not None and signal.aborted):
            raise RequestAborted()
