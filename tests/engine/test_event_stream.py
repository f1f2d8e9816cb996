"""`EventStream`: async iteration, `result()`, early exit, sync use, back-pressure."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from agentcore import EventStream
from agentcore._engine.event_stream import _HIGH_WATER
from support import BACKENDS

pytestmark = pytest.mark.anyio

Push = Callable[[Any], Awaitable[None] | None]


async def _push(push: Push, event: Any) -> None:
    pending = push(event)
    if pending is not None:
        await pending


def counting(n: int, *, result: Any = "done", delay: float = 0.0) -> Any:
    async def producer(push: Push) -> Any:
        for i in range(n):
            await _push(push, i)
            if delay:
                await anyio.sleep(delay)
        return result

    return producer


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_async_for_then_result() -> None:
    stream: EventStream[int, str] = EventStream(counting(5, delay=0.001))
    seen = [e async for e in stream]
    assert seen == [0, 1, 2, 3, 4]
    assert await stream.result() == "done"
    assert await stream.result() == "done"  # again
    assert [e async for e in stream] == []  # exhausted stays exhausted


async def test_result_without_iterating() -> None:
    stream: EventStream[int, str] = EventStream(counting(3000))
    assert await stream.result() == "done"  # never blocks, even past the back-pressure mark
    assert [e async for e in stream] == list(range(3000))  # the events are all still there


async def test_producer_failure_is_raised_by_result() -> None:
    async def producer(push: Push) -> Any:
        await _push(push, "first")
        raise KeyError("broken producer")

    stream: EventStream[str, Any] = EventStream(producer)
    assert [e async for e in stream] == ["first"]
    with pytest.raises(KeyError, match="broken producer"):
        await stream.result()


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_async_with_early_exit_stops_the_producer() -> None:
    progress: list[str] = []

    async def producer(push: Push) -> Any:
        try:
            for i in range(1_000_000):
                await _push(push, i)
                await anyio.sleep(0.001)
        finally:
            progress.append("producer stopped")
        return "never"

    stream: EventStream[int, Any] = EventStream(producer)
    with anyio.fail_after(5):
        async with stream:
            async for event in stream:
                if event == 3:
                    break
    assert progress == ["producer stopped"]
    with pytest.raises(anyio.ClosedResourceError):
        await stream.result()


async def test_early_exit_leaves_no_task_running() -> None:
    before = asyncio.all_tasks()

    async def producer(push: Push) -> Any:
        await _push(push, "one")
        await anyio.sleep_forever()

    stream: EventStream[str, Any] = EventStream(producer)
    async with stream:
        async for _ in stream:
            break
    assert asyncio.all_tasks() == before


async def test_aclose_is_idempotent() -> None:
    stream: EventStream[int, Any] = EventStream(counting(10, delay=0.01))
    async for _ in stream:
        break
    await stream.aclose()
    await stream.aclose()
    with pytest.raises(anyio.ClosedResourceError):
        await stream.result()

    # after the run finished, closing changes nothing
    done: EventStream[int, Any] = EventStream(counting(2))
    assert await done.result() == "done"
    await done.aclose()
    await done.aclose()
    assert await done.result() == "done"


async def test_aclose_before_start() -> None:
    started: list[bool] = []

    async def producer(push: Push) -> Any:
        started.append(True)
        return "ran"

    stream: EventStream[int, Any] = EventStream(producer)
    await stream.aclose()
    await stream.aclose()
    with anyio.fail_after(1):
        assert [e async for e in stream] == []
        with pytest.raises(anyio.ClosedResourceError):
            await stream.result()
    await anyio.sleep(0.01)
    assert started == []


async def test_dropped_stream_is_cancelled() -> None:
    stopped = anyio.Event()

    async def producer(push: Push) -> Any:
        try:
            await _push(push, 1)
            await anyio.sleep_forever()
        finally:
            stopped.set()

    stream: EventStream[int, Any] = EventStream(producer)
    async for _ in stream:
        break
    del stream
    gc.collect()
    with anyio.fail_after(5):
        await stopped.wait()


async def test_cancelled_consumer_does_not_stop_the_producer() -> None:
    stream: EventStream[int, Any] = EventStream(counting(5, delay=0.01))
    with anyio.move_on_after(0.005):
        async for _ in stream:
            pass
    assert await stream.result() == "done"


async def test_back_pressure_bounds_the_buffer() -> None:
    pushed = 0

    async def producer(push: Push) -> Any:
        nonlocal pushed
        for i in range(5000):
            await _push(push, i)
            pushed += 1
        return "done"

    stream: EventStream[int, Any] = EventStream(producer)
    async with stream:
        first = await stream.__anext__()
        await anyio.sleep(0.05)  # a slow consumer
        assert pushed < 5000  # the producer waits for the consumer instead of racing ahead
        rest = [e async for e in stream]
    assert [first, *rest] == list(range(5000))
    assert pushed == 5000


# --- sync use ---------------------------------------------------------------------------------


def test_plain_for_from_sync_code() -> None:
    with pytest.raises(RuntimeError):
        asyncio.get_running_loop()
    threads: list[int] = []

    async def producer(push: Push) -> Any:
        threads.append(threading.get_ident())
        for i in range(3):
            await _push(push, i)
            await anyio.sleep(0.001)
        return "sync done"

    stream: EventStream[int, str] = EventStream(producer)
    assert list(stream) == [0, 1, 2]
    assert stream.result_sync() == "sync done"
    assert threads[0] != threading.get_ident()  # ran on a background thread

    stream = EventStream(counting(4))
    assert stream.result_sync() == "done"  # without iterating first


def test_sync_close_stops_the_run() -> None:
    stopped = threading.Event()

    async def producer(push: Push) -> Any:
        try:
            i = 0
            while True:
                await _push(push, i)
                i += 1
                await anyio.sleep(0.001)
        finally:
            stopped.set()

    stream: EventStream[int, Any] = EventStream(producer)
    started = time.monotonic()
    with stream:
        for event in stream:
            if event == 3:
                break
    assert stopped.is_set()
    assert time.monotonic() - started < 5
    with pytest.raises(anyio.ClosedResourceError):
        stream.result_sync()
    stream.close()  # again: harmless


def test_sync_producer_failure() -> None:
    async def producer(push: Push) -> Any:
        await _push(push, "x")
        raise ValueError("bad")

    stream: EventStream[str, Any] = EventStream(producer)
    assert list(stream) == ["x"]
    with pytest.raises(ValueError, match="bad"):
        stream.result_sync()


async def test_sync_and_async_use_do_not_mix() -> None:
    stream: EventStream[int, Any] = EventStream(counting(2))
    await stream.result()
    with pytest.raises(RuntimeError, match="asynchronously"):
        list(stream)

    other: EventStream[int, Any] = EventStream(counting(2))

    def read() -> list[int]:
        return list(other)

    assert await anyio.to_thread.run_sync(read) == [0, 1]
    with pytest.raises(RuntimeError, match="synchronously"):
        await other.result()


class Fatal(BaseException):
    """Not an Exception: like SystemExit or KeyboardInterrupt."""


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_producer_raising_a_base_exception_still_ends_the_stream() -> None:
    async def producer(push: Push) -> Any:
        await _push(push, "first")
        raise Fatal("out of here")

    stream: EventStream[str, Any] = EventStream(producer)
    with anyio.fail_after(5):
        async with stream:
            assert [e async for e in stream] == ["first"]
            with pytest.raises(Fatal, match="out of here"):
                await stream.result()


def test_sync_producer_raising_a_base_exception() -> None:
    async def producer(push: Push) -> Any:
        await _push(push, "first")
        raise Fatal("out of here")

    stream: EventStream[str, Any] = EventStream(producer)
    assert list(stream) == ["first"]
    with pytest.raises(Fatal, match="out of here"):
        stream.result_sync()


async def test_back_pressure_with_concurrent_producer_tasks() -> None:
    """Several tasks of one producer may wait for the consumer at once: all must resume."""
    finished: list[str] = []

    async def producer(push: Push) -> Any:
        async def pusher(name: str, n: int) -> None:
            for i in range(n):
                await _push(push, (name, i))
            finished.append(name)

        async with anyio.create_task_group() as tg:
            tg.start_soon(pusher, "a", 2000)
            tg.start_soon(pusher, "b", 2000)
        return "done"

    stream: EventStream[Any, Any] = EventStream(producer)
    with anyio.fail_after(5):
        async with stream:
            first = await stream.__anext__()
            await anyio.sleep(0.05)  # both pushers are now waiting for the consumer
            rest = [e async for e in stream]
            assert await stream.result() == "done"
    events = [first, *rest]
    assert sorted(finished) == ["a", "b"]
    assert [e for e in events if e[0] == "a"] == [("a", i) for i in range(2000)]
    assert len(events) == 4000


# --- sync use: back-pressure and close ---------------------------------------------------------


def test_sync_back_pressure_bounds_the_hand_over() -> None:
    """A slow synchronous reader holds the run back: the producer is never more than the
    hand-over's bound ahead of it, and every event still arrives, in order."""
    pushed = 0

    async def producer(push: Push) -> Any:
        nonlocal pushed
        for i in range(10_000):
            await _push(push, i)
            pushed += 1
        return "done"

    stream: EventStream[int, Any] = EventStream(producer)
    events = iter(stream)
    got = [next(events)]
    time.sleep(0.05)  # a slow reader (only makes an unbounded producer race ahead)
    ahead = [pushed - len(got)]
    for event in events:
        got.append(event)
        ahead.append(pushed - len(got))
    assert got == list(range(10_000))
    assert max(ahead) <= _HIGH_WATER + 1
    assert stream.result_sync() == "done"


def test_sync_back_pressure_with_concurrent_producer_tasks() -> None:
    finished: list[str] = []

    async def producer(push: Push) -> Any:
        async def pusher(name: str, n: int) -> None:
            for i in range(n):
                await _push(push, (name, i))
            finished.append(name)

        async with anyio.create_task_group() as tg:
            tg.start_soon(pusher, "a", 3000)
            tg.start_soon(pusher, "b", 3000)
        return "done"

    stream: EventStream[Any, Any] = EventStream(producer)
    events = iter(stream)
    got = [next(events)]
    time.sleep(0.05)  # both pushers now wait for the reader
    got.extend(events)
    assert stream.result_sync() == "done"
    assert sorted(finished) == ["a", "b"]
    assert [e for e in got if e[0] == "b"] == [("b", i) for i in range(3000)]
    assert len(got) == 6000


def test_sync_close_stops_a_run_held_by_its_reader() -> None:
    """`close()` stops a run that waits for its reader (a bounded hand-over holds it) and
    returns once the run's thread has ended."""
    held = threading.Event()
    stopped = threading.Event()
    pushed = 0

    async def producer(push: Push) -> Any:
        nonlocal pushed
        try:
            while True:
                pending = push(pushed)
                if pending is not None:
                    held.set()
                    await pending
                pushed += 1
                await anyio.lowlevel.checkpoint()
        finally:
            stopped.set()

    stream: EventStream[int, Any] = EventStream(producer)
    events = iter(stream)
    assert next(events) == 0
    assert held.wait(timeout=30)  # the producer waits for the reader instead of racing on
    assert pushed <= _HIGH_WATER + 1
    stream.close()
    assert stopped.is_set()
    rest = list(events)  # what was handed over before the close is still there
    assert rest == list(range(1, len(rest) + 1))
    with pytest.raises(anyio.ClosedResourceError):
        stream.result_sync()


def test_sync_close_from_another_thread_wakes_the_reader() -> None:
    """A reader blocked waiting for the next event sees the stream end when another thread
    closes it."""
    first = threading.Event()

    async def producer(push: Push) -> Any:
        await _push(push, "only")
        await anyio.sleep_forever()

    stream: EventStream[str, Any] = EventStream(producer)
    got: list[str] = []

    def read() -> None:
        for event in stream:
            got.append(event)
            first.set()

    reader = threading.Thread(target=read)
    reader.start()
    assert first.wait(timeout=30)
    stream.close()
    reader.join(timeout=30)
    assert not reader.is_alive()
    assert got == ["only"]


def test_sync_reader_that_leaves_the_loop_no_longer_holds_the_run() -> None:
    """Leaving a `for` early (without `close()`) lets the run go on to its end, as before the
    hand-over was bounded."""
    done = threading.Event()

    async def producer(push: Push) -> Any:
        for i in range(5 * _HIGH_WATER):
            await _push(push, i)
        done.set()
        return "done"

    stream: EventStream[int, Any] = EventStream(producer)
    for event in stream:
        assert event == 0
        break
    assert done.wait(timeout=30)
    assert stream.result_sync() == "done"


def test_sync_close_right_after_the_start_stops_the_run() -> None:
    """`close()` as the run's thread is starting, before or after the producer got going:
    either way the run stops, and `close()` returns once its thread has ended."""
    for _ in range(30):

        async def producer(push: Push) -> Any:
            await anyio.sleep_forever()

        stream: EventStream[Any, Any] = EventStream(producer)
        stream._start_thread()  # what the first `next()` does, without waiting for an event
        stream.close()
        assert stream._thread is not None and not stream._thread.is_alive()
        assert list(stream) == []
        with pytest.raises(anyio.ClosedResourceError):
            stream.result_sync()
