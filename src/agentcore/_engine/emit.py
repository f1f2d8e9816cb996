"""How the loop delivers its events: the `Emitter` (the sink, its lock, the fast path of a plain
function sink, and the sink's failure), calling hooks of either colour, the FIFO lock that keeps
awaited deliveries in order, and the marker of a failed sink.

`emit` is awaited for every event, so a slow consumer slows the run instead of piling events up.
While tools run concurrently, several tasks emit at once: the lock serialises what the sink
returned to be awaited, in the order the events were made. A sink that raises does not raise into
the loop at once; the failure is remembered and the run then fails through its ordinary path
(`SinkError`), so events stay well nested.
"""

from __future__ import annotations

import inspect
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

__all__ = ["EmitLock", "Emitter", "SinkError", "call_hook", "error_text"]


async def call_hook(fn: Callable[..., Any], *args: Any) -> Any:
    """Call a sync or async hook and return its (awaited) result."""
    result = fn(*args)
    if inspect.isawaitable(result):
        result = await result
    return result


def error_text(exc: BaseException) -> str:
    """An exception's text, or its type's name when the text is empty or cannot be had (a
    raising `__str__`): the failure path that uses it must not raise."""
    try:
        text = str(exc)
    except Exception:
        text = ""
    return text if text else type(exc).__name__


class EmitLock:
    """A FIFO lock that, unlike anyio.Lock, does not yield to the event loop when it is free."""

    __slots__ = ("_locked", "_waiters")

    def __init__(self) -> None:
        self._locked = False
        self._waiters: deque[anyio.Event] = deque()

    async def __aenter__(self) -> None:
        if not self._locked:
            self._locked = True
            return
        event = anyio.Event()
        self._waiters.append(event)
        try:
            await event.wait()
        except BaseException:
            if event.is_set():
                self._release()  # ownership was handed to us as we were cancelled: pass it on
            else:
                self._waiters.remove(event)
            raise

    async def __aexit__(self, *exc_info: object) -> None:
        self._release()

    def _release(self) -> None:
        if self._waiters:
            self._waiters.popleft().set()  # hand ownership over
        else:
            self._locked = False


class SinkError(Exception):
    """Raised inside the run when `emit` failed, to end the run through the failure path."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(error_text(cause))
        self.cause = cause


class Emitter:
    """Delivers one run's events to its sink, and owns what that takes.

    `emit` never raises: a sink that raises is remembered in `error` (the first failure), and
    the run fails through its ordinary path when it next calls `check()` at a point where it can
    (between steps, so events stay well nested). `sync` tells that the sink is a plain function:
    the loop then calls `sink` itself for every delta (its hot path), without a coroutine.
    """

    __slots__ = ("error", "failing", "lock", "sink", "sync")

    def __init__(
        self, sink: Callable[[Any], Awaitable[None] | None], *, sync: bool | None = None
    ) -> None:
        self.sink = sink
        self.error: BaseException | None = None
        self.failing = False  # the run is failing: `check()` no longer raises
        self.lock = EmitLock()
        if sync is None:  # (an `EventStream`'s push is known to be a plain function)
            sync = not inspect.iscoroutinefunction(sink) and not inspect.iscoroutinefunction(
                getattr(sink, "__call__", None)  # noqa: B004
            )
        self.sync = sync

    def send(self, event: Any) -> Awaitable[None] | None:
        """Hand an event to the sink; returns what must be awaited before the next one (an
        async sink's work, or back-pressure), or None. A raising sink is remembered, and the
        run then fails. The loop's hot paths use this: no coroutine when nothing waits.
        """
        try:
            result = self.sink(event)
        except Exception as exc:
            if self.error is None:
                self.error = exc
            return None
        if result is not None and inspect.isawaitable(result):
            return self.wait(result)
        return None

    async def emit(self, event: Any) -> None:
        """Deliver an event (`send`, awaited); a raising sink is remembered, and the run then
        fails."""
        pending = self.send(event)
        if pending is not None:
            await pending

    async def wait(self, pending: Awaitable[None]) -> None:
        """Await what the sink returned (an async sink's coroutine, or the EventStream's
        back-pressure wait), one at a time even while tools run concurrently."""
        try:
            async with self.lock:
                await pending
        except Exception as exc:
            if self.error is None:
                self.error = exc
        except BaseException:
            if inspect.iscoroutine(pending):
                pending.close()  # cancelled before its turn: no "never awaited" warning
            raise

    def failed(self, exc: BaseException) -> None:
        """The sink raised (on the loop's hot path, which calls it itself): remembered, the
        first failure kept."""
        if self.error is None:
            self.error = exc

    def check(self) -> None:
        """Raise `SinkError` if the sink has failed (and the run is not failing already)."""
        if self.error is not None and not self.failing:
            raise SinkError(self.error)
