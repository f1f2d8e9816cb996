"""The shared retry helper and retry-delay parsing."""

from __future__ import annotations

import time
from email.utils import formatdate

import anyio
import pytest

from agentcore.abort import AbortController
from agentcore.llm._retry import (
    RequestAborted,
    RequestTimedOut,
    RetryDelayTooLong,
    RetryInfo,
    is_retryable_status,
    parse_retry_after,
    retry_request,
)

pytestmark = pytest.mark.anyio


class Transient(Exception):
    def __init__(self, delay: float | None = None) -> None:
        self.delay = delay


def classify(exc: BaseException) -> RetryInfo | None:
    return RetryInfo(delay=exc.delay) if isinstance(exc, Transient) else None


def test_parse_retry_after_headers() -> None:
    assert parse_retry_after({"Retry-After": "7"}) == 7
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    date = formatdate(time.time() + 30, usegmt=True)
    delay = parse_retry_after({"Retry-After": date})
    assert delay is not None and 28 <= delay <= 31
    assert parse_retry_after({"x-ratelimit-reset-after": "12"}) == 12
    reset = parse_retry_after({"x-ratelimit-reset": str(int(time.time()) + 20)})
    assert reset is not None and 18 <= reset <= 21
    assert parse_retry_after({"x-ratelimit-reset": "1m30s"}) == 90
    assert parse_retry_after({}) is None
    assert parse_retry_after({"retry-after": "soon"}) is None


def test_parse_retry_after_body() -> None:
    assert parse_retry_after({}, "Please retry in 5.5s.") == 5.5
    assert parse_retry_after({}, "Rate limit reached. Please try again in 20ms.") == 0.02
    assert parse_retry_after({}, '{"@type": "RetryInfo", "retryDelay": "30s"}') == 30
    assert parse_retry_after({}, "quota will reset after 1h2m3s") == 3723
    assert parse_retry_after({"retry-after": "2"}, "retry in 50s") == 2
    assert parse_retry_after({}, "nothing here") is None


def test_retryable_statuses() -> None:
    assert all(is_retryable_status(s) for s in (408, 409, 429, 500, 502, 503, 504, 529))
    assert not any(is_retryable_status(s) for s in (200, 400, 401, 403, 404, 422, 501))


async def test_retries_then_succeeds() -> None:
    attempts = 0

    async def send() -> str:
        nonlocal attempts
        attempts += 1
        if attempts < 3:
            raise Transient(0.01)
        return "ok"

    result = await retry_request(send, signal=None, max_retry_delay_ms=60_000, classify=classify)
    assert (result, attempts) == ("ok", 3)


async def test_backoff_without_server_delay_and_give_up() -> None:
    attempts = 0

    async def send() -> str:
        nonlocal attempts
        attempts += 1
        raise Transient()

    with pytest.raises(Transient):
        await retry_request(
            send, signal=None, max_retry_delay_ms=60_000, max_retries=2, base_delay=0.01,
            classify=classify,
        )  # fmt: skip
    assert attempts == 3


async def test_final_errors_are_not_retried() -> None:
    attempts = 0

    async def send() -> str:
        nonlocal attempts
        attempts += 1
        raise ValueError("bad request")

    with pytest.raises(ValueError):
        await retry_request(send, signal=None, max_retry_delay_ms=0, classify=classify)
    assert attempts == 1


async def test_too_long_delay_fails_at_once() -> None:
    async def send() -> str:
        raise Transient(120)

    with pytest.raises(RetryDelayTooLong) as info:
        await retry_request(send, signal=None, max_retry_delay_ms=60_000, classify=classify)
    assert str(info.value) == (
        "server asked to retry after 120 s, more than max_retry_delay_ms (60 s)"
    )
    assert isinstance(info.value.__cause__, Transient)


async def test_no_cap_when_zero() -> None:
    calls = 0

    async def send() -> str:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise Transient(0.01)
        return "ok"

    assert await retry_request(send, signal=None, max_retry_delay_ms=0, classify=classify) == "ok"


async def test_abort_during_the_wait() -> None:
    controller = AbortController()

    async def send() -> str:
        raise Transient(30)

    async def abort_soon() -> None:
        await anyio.sleep(0.05)
        controller.abort()

    start = time.monotonic()
    async with anyio.create_task_group() as tg:
        tg.start_soon(abort_soon)
        with pytest.raises(RequestAborted):
            await retry_request(
                send, signal=controller.signal, max_retry_delay_ms=60_000, classify=classify
            )
    assert time.monotonic() - start < 5


async def test_already_aborted_sends_nothing() -> None:
    controller = AbortController()
    controller.abort()

    async def send() -> str:
        raise AssertionError("must not be called")

    with pytest.raises(RequestAborted):
        await retry_request(send, signal=controller.signal, max_retry_delay_ms=0, classify=classify)


async def test_request_timeout_is_retried_then_named() -> None:
    attempts: list[int] = []
    failures: list[tuple[int, str, float | None]] = []

    async def send() -> str:
        attempts.append(len(attempts))
        await anyio.sleep(10)
        return "never"

    started = time.monotonic()
    with pytest.raises(RequestTimedOut, match=r"^no response within request_timeout \(0.05 s\)$"):
        await retry_request(
            send,
            signal=None,
            max_retry_delay_ms=1,
            max_retries=2,
            request_timeout=0.05,
            classify=classify,
            on_failure=lambda n, exc, delay: failures.append((n, str(exc), delay)),
        )
    assert time.monotonic() - started < 5
    assert len(attempts) == 3
    assert [(n, delay is None) for n, _, delay in failures] == [(1, False), (2, False), (3, True)]
    assert all(text.startswith("no response within request_timeout") for _, text, _ in failures)


async def test_request_timeout_lets_a_quick_attempt_through() -> None:
    calls = 0

    async def send() -> str:
        nonlocal calls
        calls += 1
        if calls == 1:
            await anyio.sleep(10)
        return "ok"

    result = await retry_request(
        send, signal=None, max_retry_delay_ms=1, request_timeout=0.05, classify=classify
    )
    assert result == "ok" and calls == 2


async def test_no_retries_with_max_retries_zero() -> None:
    calls = 0

    async def send() -> str:
        nonlocal calls
        calls += 1
        raise Transient(0.0)

    with pytest.raises(Transient):
        await retry_request(
            send, signal=None, max_retry_delay_ms=0, max_retries=0, classify=classify
        )
    assert calls == 1
