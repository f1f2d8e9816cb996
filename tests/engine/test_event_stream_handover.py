"""How an `EventStream` hands events to its reader: what a run in flight keeps, and a reader
whose wait was cancelled.

Every run in flight is walked by each full garbage collection, so at thousands of runs at once
what a stream keeps per run is time (docs/benchmarks.md). The reader waits on a bare future
(under trio, an `anyio.Event`) made only when the buffer is empty, the end is awaited through an
event made only when somebody waits for it before it came, and the producer task has no done
callback that keeps a copy of the context (its callback runs in a shared empty one).
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

from agentcore import EventStream
from agentcore._engine.event_stream import _running_tasks

pytestmark = pytest.mark.anyio

Push = Callable[[Any], Awaitable[None] | None]
STREAMS = 200


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_a_reader_whose_wait_was_cancelled_reads_on() -> None:
    gate = anyio.Event()

    async def producer(push: Push) -> str:
        push("first")
        await gate.wait()
        push("second")
        return "done"

    stream: EventStream[str, str] = EventStream(producer)
    iterator = aiter(stream)
    assert await anext(iterator) == "first"
    with anyio.move_on_after(0.01) as scope:
        await anext(iterator)  # waits for an event that does not come in time
    assert scope.cancelled_caught
    gate.set()  # the producer now pushes to a reader that no longer waits
    assert [e async for e in stream] == ["second"]
    assert await stream.result() == "done"


async def test_a_stream_in_flight_keeps_few_objects() -> None:
    """A stream whose producer waits and whose reader waits for the next event: the objects
    the garbage collector tracks for it (the stream, its channel and buffer, the producer's
    task, coroutine, context and cancel scope, the reader's coroutine and future)."""
    gate = anyio.Event()

    async def producer(push: Push) -> str:
        await gate.wait()
        return "done"

    async def read(stream: EventStream[Any, str]) -> None:
        async for _ in stream:
            pass

    gc.collect()
    before = len(gc.get_objects())
    streams: list[EventStream[Any, str]] = [EventStream(producer) for _ in range(STREAMS)]
    readers = [asyncio.ensure_future(read(s)) for s in streams]
    await asyncio.sleep(0.01)  # every producer and every reader waits
    per_stream = (len(gc.get_objects()) - before) / STREAMS
    gate.set()
    await asyncio.gather(*readers)
    assert [await s.result() for s in streams] == ["done"] * STREAMS
    # 39 with an anyio.Event for each wait and for the end, and a done callback that kept a
    # copy of the context; 30 now
    # (the reader's task, coroutine and future here are the test's, and counted)
    assert per_stream <= 31, per_stream
    await asyncio.sleep(0)  # (done callbacks run soon after the tasks end)
    assert not _running_tasks  # every producer task let go of as it ended


async def test_result_after_the_end_does_not_wait() -> None:
    async def producer(push: Push) -> str:
        push(1)
        return "done"

    stream: EventStream[int, str] = EventStream(producer)
    assert [e async for e in stream] == [1]
    assert stream._channel.finished
    assert await stream.result() == "done"
    assert stream._channel.done is None  # nobody had to wait for the end: no event made
