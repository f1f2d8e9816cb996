"""`EventStream`: a run's events as an iterator, with the run's result at the end.

The run (the producer) pushes events into a buffer; the consumer drains it. A push never blocks and
never switches tasks, and a consumer that finds events waiting takes them without suspending, so
a burst of deltas costs a deque append and a pop each.

Where the producer runs:
- Under a running event loop, in a task of its own, started on first use (iteration, `result()`
  or `async with`). It cannot be a child of the consumer's task group: `async for` over a stream
  gives the stream no scope to open one in, and an async generator that yields from inside a task
  group breaks cancellation. So the stream owns the task itself, through the event loop's native
  spawn (the only place in agentcore that does so), with a copy of the consumer's context
  variables, under trio as under asyncio. `aclose()` and leaving `async with` cancel it
  and wait for it; a stream dropped without either is cancelled when garbage-collected. The
  producer never raises into the loop: its failures are stored and re-raised to the consumer.
- With no running event loop (plain synchronous code), on a background thread with its own event
  loop (and a copy of the caller's context variables); iterate with a plain `for`, get the result
  with `result_sync()`, and stop it early with `close()` or a `with` block. Events cross threads
  through a bounded hand-over (`_Handover`) with the same back-pressure as the async path, and
  `close()` waits for the thread by joining it (the run is told to stop through a flag its
  producer checks when it starts, so nothing polls).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from types import TracebackType
from typing import Any, Generic, Self, TypeVar

import anyio
import sniffio

from ..abort._eventloop import EventLoopRef, current_loop, threadsafe_caller
from ..events import AgentEndEvent
from ..guardrails._trip import GuardrailTrip
from ..limits import LimitReached
from ..messages import Usage
from .usage import run_usage

__all__ = ["EventStream"]

E = TypeVar("E")
R = TypeVar("R")

Push = Callable[[Any], Awaitable[None] | None]

Producer = Callable[[Push], Awaitable[Any]]
"""`async def producer(push) -> result`: pushes events, returns the stream's result."""

RunProducer = Callable[[Push, Callable[[AgentEndEvent], None]], Awaitable[Any]]
"""A run's producer (`EventStream._of_run`): `producer(push, ended)` also hands its `agent_end`
event to `ended` before pushing it; the stream reads how the run ended from that event."""

_END = object()
_HIGH_WATER = 1024  # a producer this far ahead of its consumer waits...
_LOW_WATER = 256  # ...until the consumer has caught up to here


class _Channel:
    """The buffer between producer and consumer, and the producer's outcome.

    Few objects per run, as every run in flight is walked by each full garbage collection: the
    consumer waits on a bare asyncio future (under trio, an `anyio.Event`), made only when it
    finds the buffer empty, and `done` is made only when somebody waits for the end before it
    came.
    """

    __slots__ = (
        "aio",
        "buffer",
        "closing",
        "done",
        "drained",
        "end",
        "error",
        "finished",
        "loop",
        "result",
        "scope",
        "unbounded",
        "waiter",
    )

    def __init__(self) -> None:
        self.buffer: deque[Any] = deque()
        self.aio: asyncio.AbstractEventLoop | None = None  # the consumer's, under asyncio
        self.waiter: Any = None  # the waiting consumer's future (anyio.Event under trio)
        self.finished = False
        self.result: Any = None
        self.error: BaseException | None = None
        self.done: anyio.Event | None = None  # made by a consumer that waits for the end
        self.loop: EventLoopRef | None = None  # the producer's, set with `scope`
        self.scope: anyio.CancelScope | None = None  # the producer's, while it runs
        self.closing = False  # set by a sync `close()`: the producer stops as soon as it starts
        self.drained: anyio.Event | None = None
        self.unbounded = False
        self.end: AgentEndEvent | None = None  # the run's `agent_end`, from `ended`

    def ended(self, event: AgentEndEvent) -> None:
        """The producer's `agent_end`, given before it is pushed (readable from then on)."""
        self.end = event

    def push(self, event: Any) -> Awaitable[None] | None:
        """Buffer an event; returns an awaitable when the producer should wait for the consumer
        (back-pressure), so that memory and garbage-collection work stay bounded."""
        self.buffer.append(event)
        waiter = self.waiter
        if waiter is not None:
            self.waiter = None
            if self.aio is None:
                waiter.set()
            elif not waiter.done():  # (a consumer cancelled while it waited cancelled it)
                waiter.set_result(None)
        if len(self.buffer) > _HIGH_WATER and not self.unbounded:
            if self.drained is None:  # one event for every producer task that waits meanwhile
                self.drained = anyio.Event()
            return self.drained.wait()
        return None

    def release(self) -> None:
        """Let a waiting producer go on (the consumer caught up, or stopped reading)."""
        drained = self.drained
        if drained is not None:
            self.drained = None
            drained.set()

    async def wait_finished(self) -> None:
        """Wait until the producer has finished (at once if it has)."""
        if not self.finished:
            if self.done is None:
                self.done = anyio.Event()
            await self.done.wait()


class _Handover:
    """The bounded buffer between a producer on its own thread and a synchronous consumer.

    `push` runs on the producer's event loop: it never blocks the thread, but returns an
    awaitable once the consumer is `_HIGH_WATER` events behind, done when the consumer has read
    down to `_LOW_WATER` (so a slow consumer slows the run instead of events piling up). `get`
    blocks the consumer's thread on a condition until an event is there.
    """

    __slots__ = ("buffer", "call", "cond", "drained", "reading", "unbounded")

    def __init__(self) -> None:
        self.buffer: deque[Any] = deque()
        self.cond = threading.Condition()  # re-entrant: a finalizer may run inside `push`
        self.reading = False  # the consumer waits on `cond`
        self.drained: anyio.Event | None = None  # producer tasks wait on it (on their loop)
        self.call: Callable[[Callable[[], Any]], None] | None = None  # runs on their loop
        self.unbounded = False  # nobody reads on: keep every event, never hold the run

    def push(self, event: Any) -> Awaitable[None] | None:
        with self.cond:
            self.buffer.append(event)
            if self.reading:
                self.cond.notify()
            if len(self.buffer) <= _HIGH_WATER or self.unbounded:
                return None
            if self.drained is None:  # one event for every producer task that waits meanwhile
                self.call = threadsafe_caller()
                self.drained = anyio.Event()
            return self.drained.wait()

    def finish(self) -> None:
        """Mark the end (from the producer's thread, after its event loop has stopped)."""
        with self.cond:
            self.buffer.append(_END)
            self.cond.notify_all()

    def get(self) -> Any:
        """The next event, or `_END` (which stays, for any later read)."""
        with self.cond:
            while not self.buffer:
                self.reading = True
                self.cond.wait()
                self.reading = False
            if self.buffer[0] is _END:
                return _END
            event = self.buffer.popleft()
            if self.drained is not None and len(self.buffer) <= _LOW_WATER:
                self._release()
            return event

    def stop_holding(self) -> None:
        """Nobody reads on (closed, or dropped): never hold the run back again."""
        with self.cond:
            self.unbounded = True
            self._release()

    def _release(self) -> None:
        drained, call = self.drained, self.call
        if drained is not None and call is not None:
            self.drained = None
            call(drained.set)  # the event belongs to the producer's loop: set it there


async def _run_producer(channel: _Channel, producer: Producer, push: Any, reader: bool) -> None:
    """Run the producer in a cancel scope that `_cancel(channel)` fires, keeping its outcome,
    then mark the stream finished (and, for an async `reader` on this loop, wake it with the
    end). One frame, as it waits for the whole run.

    Whatever the producer raises (also `SystemExit` and the like) is kept for `result()`, so
    that the consumer always sees the stream end; a cancellation still propagates.
    """
    try:
        channel.loop = current_loop()
        with anyio.CancelScope() as scope:
            channel.scope = scope
            # A sync `close()` sets `closing` and then reads `scope`; this sets `scope` and
            # then reads `closing`: whichever comes second sees the other's write, so one of
            # them cancels.
            if channel.closing:
                scope.cancel()
            try:
                channel.result = await producer(push)
            except anyio.get_cancelled_exc_class():
                channel.error = anyio.ClosedResourceError("the run was stopped before it finished")
                raise
            except BaseException as exc:
                channel.error = exc
    finally:  # the consumer must learn that the stream ended, however it ended
        channel.scope = None
        channel.finished = True
        if reader:
            channel.push(_END)
        if channel.done is not None:
            channel.done.set()


def _spawn(channel: _Channel, producer: Producer) -> None:
    if sniffio.current_async_library() == "trio":
        import trio

        # A system task starts from the system nursery's context: give it the consumer's, as
        # asyncio's create_task does, so context variables (an OpenTelemetry span) carry over.
        trio.lowlevel.spawn_system_task(
            _run_producer, channel, producer, channel.push, True, context=contextvars.copy_context()
        )
    else:
        loop = channel.aio = asyncio.get_running_loop()
        task = loop.create_task(_run_producer(channel, producer, channel.push, True))
        _running_tasks.add(task)
        # In an empty context of its own: by default a done callback keeps a copy of the
        # current one, an object more per run in flight for the garbage collector to walk.
        task.add_done_callback(_running_tasks.discard, context=_NO_CONTEXT)


_running_tasks: set[Any] = set()  # strong references, so running producers are not collected
_NO_CONTEXT = contextvars.Context()  # where their done callbacks run: they read no variable


def _cancel(channel: _Channel) -> None:
    """Stop the producer, from any thread (nothing to do once it has ended)."""
    scope, loop = channel.scope, channel.loop
    if scope is not None and loop is not None:
        loop.call_soon(scope.cancel)


class EventStream(Generic[E, R]):
    """Events of a run as they happen; `await result()` gives the run's result.

    Use `async for event in stream`, then `await stream.result()`; or `async with stream:` to be
    sure the run stops when you leave. From synchronous code, use `for` and `result_sync()`.
    After the run, `limit` says which bound ended it, if one did, `usage` what it cost, and
    `output` is a typed run's validated answer.
    """

    __slots__ = (
        "__weakref__",
        "_channel",
        "_handover",
        "_producer",
        "_started",
        "_thread",
    )

    def __init__(self, producer: Producer) -> None:
        self._producer = producer
        self._channel = _Channel()
        self._started = False
        self._thread: threading.Thread | None = None
        self._handover: _Handover | None = None  # the sync path's buffer

    @property
    def limit(self) -> LimitReached | None:
        """The bound that ended the run (`max_turns` or a usage limit), as in its `agent_end`
        event; None while the run is going, or when no bound ended it. Read it once the run is
        over (after the iteration ended, or `result()` returned)."""
        end = self._channel.end
        return end.limit if end is not None else None

    @property
    def guardrail(self) -> GuardrailTrip | None:
        """The input or output guardrail that ended the run (a `GuardrailTrip`), as in its
        `agent_end` event; None while the run is going, or when no guardrail ended it."""
        end = self._channel.end
        return end.guardrail if end is not None else None

    @property
    def output(self) -> Any:
        """The validated final answer of a run with an `output_type`, as in its `agent_end`
        event; None while the run is going, for a plain-text run, or when it ended without one
        (see `limit`). Read it once the run is over."""
        end = self._channel.end
        return end.output if end is not None else None

    @property
    def pending_approvals(self) -> tuple[Any, ...]:
        """The `ApprovalRequest`s of the tool calls waiting for a decision, as in the run's
        `agent_end` event (empty while the run is going, or when nothing waits)."""
        end = self._channel.end
        return end.pending_approvals if end is not None else ()

    @property
    def usage(self) -> Usage | None:
        """The total usage and cost of the run (`run_usage` of its messages: answers and the
        usage tool results report); None while the run is going. Readable from `agent_end` on.
        """
        end = self._channel.end
        if end is None:
            return None
        return run_usage(end.messages)

    @classmethod
    def _of_run(cls, producer: RunProducer) -> EventStream[Any, Any]:
        """The stream of an agent run: its `limit`, `output`, `pending_approvals`, `guardrail`
        and `usage` are read from the `agent_end` event the run hands to the stream's channel
        (the run never holds the stream itself, so that a stream its reader dropped can be
        collected, and its run stopped, mid-run)."""
        ended = _Channel.ended
        channel: _Channel | None = None

        def start(push: Push) -> Awaitable[Any]:
            assert channel is not None
            return producer(push, functools.partial(ended, channel))

        stream: EventStream[Any, Any] = cls(start)
        channel = stream._channel
        return stream

    # -- async use -------------------------------------------------------------------------

    def _start(self) -> None:
        if not self._started:
            if self._thread is not None:
                raise RuntimeError("this EventStream is being read synchronously")
            self._started = True
            _spawn(self._channel, self._producer)

    def __del__(self) -> None:
        # Dropped without `aclose()`, `close()` or a `with` block: a run read asynchronously is
        # stopped; one read synchronously goes on to its end, without waiting for a reader.
        # (No `weakref.finalize`: that would be two more objects for the collector per run.)
        try:
            if self._handover is not None:
                self._handover.stop_holding()
            elif self._started:
                _cancel(self._channel)
        except Exception:  # at interpreter exit, or a half-built stream: nothing to stop
            pass

    def __aiter__(self) -> Self:
        self._start()
        return self

    async def __anext__(self) -> E:
        channel = self._channel
        while True:
            if channel.buffer:
                event = channel.buffer.popleft()
                if event is _END:
                    channel.buffer.appendleft(_END)
                    raise StopAsyncIteration
                if channel.drained is not None and len(channel.buffer) <= _LOW_WATER:
                    channel.release()
                return event  # type: ignore[no-any-return]
            if channel.aio is not None:
                waiter = channel.waiter = channel.aio.create_future()
                await waiter
            else:
                event_ = channel.waiter = anyio.Event()
                await event_.wait()

    async def result(self) -> R:
        """Wait for the run to finish and return its result (the messages of `agent_end`).

        If the producer itself failed (agentcore's loop never does: its failures end the run
        with an error message), its exception is raised here.
        """
        self._start()
        self._channel.unbounded = True  # nobody may be reading: keep every event, never block
        self._channel.release()
        await self._channel.wait_finished()
        if self._channel.error is not None:
            raise self._channel.error
        return self._channel.result  # type: ignore[no-any-return]

    async def aclose(self) -> None:
        """Stop the run if it is still going, and wait until it has stopped."""
        if not self._started:  # closed before it started: it never will, and says so
            self._started = True
            channel = self._channel
            channel.finished = True
            channel.error = anyio.ClosedResourceError("the stream was closed before it started")
            channel.push(_END)
            return
        _cancel(self._channel)
        self._channel.unbounded = True
        self._channel.release()
        if not self._channel.finished:
            with anyio.CancelScope(shield=True):
                await self._channel.wait_finished()

    async def __aenter__(self) -> Self:
        self._start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- sync use --------------------------------------------------------------------------

    def _start_thread(self) -> _Handover:
        if self._handover is not None:
            return self._handover
        if self._started:
            raise RuntimeError("this EventStream is being read asynchronously")
        handover = self._handover = _Handover()
        channel, producer = self._channel, self._producer  # the thread must not keep `self`

        def run() -> None:
            try:
                anyio.run(_run_producer, channel, producer, handover.push, False)
            finally:
                handover.finish()

        # The caller's context variables go along (an OpenTelemetry span current here is the
        # run's parent), as they would into a task.
        context = contextvars.copy_context()
        self._thread = threading.Thread(
            target=context.run, args=(run,), name="agentcore-run", daemon=True
        )
        self._thread.start()
        return handover

    def __iter__(self) -> Iterator[E]:
        handover = self._start_thread()
        try:
            while True:
                event = handover.get()
                if event is _END:
                    return
                yield event
        except GeneratorExit:  # the reader left the loop: the run no longer waits for it
            handover.stop_holding()
            raise

    def result_sync(self) -> R:
        """From synchronous code: wait for the run (reading the rest) and return its result."""
        for _ in self:
            pass
        assert self._thread is not None
        self._thread.join()
        if self._channel.error is not None:
            raise self._channel.error
        return self._channel.result  # type: ignore[no-any-return]

    def close(self) -> None:
        """From synchronous code: stop the run if it is still going, and wait for its thread."""
        if self._thread is None or self._handover is None:
            return
        self._handover.stop_holding()  # a run waiting for its reader goes on to its end
        self._channel.closing = True  # a producer that has not started yet stops at once
        _cancel(self._channel)
        self._thread.join()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
