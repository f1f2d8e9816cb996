"""Aborting a run: `AbortController` fires, `AbortSignal` tells.

A controller can be fired from any thread (a UI thread, a signal handler, another event loop).
Listeners run synchronously in the thread that calls `abort()`; coroutines blocked in
`await signal.wait()` are woken on their own event loop, thread-safely.

Inside the library an abort is delivered as the cancellation of an anyio cancel scope
(`cancel_on_abort`). Only that scope's own cancellation is caught and turned into
`stop_reason="aborted"`: a cancellation coming from outside (a task group, a timeout) is never
swallowed and propagates as usual.

Two private modules of this package are shared with the other layers (a declared seam, see
`tests/test_layers.py`): `_eventloop` (the current event loop's reference and running a callback
on it from any thread) and `_no_signal` (the signal of a run given none).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

import anyio

from ._eventloop import threadsafe_caller

__all__ = ["AbortController", "AbortSignal", "cancel_on_abort"]


class AbortSignal:
    """Tells whether a run was aborted, and wakes whoever waits for it.

    Obtain one from `AbortController().signal`; it cannot be fired directly.
    """

    __slots__ = ("_aborted", "_listeners", "_lock", "_reason")

    def __init__(self) -> None:
        self._aborted = False
        self._reason: Any = None
        self._listeners: list[Callable[[Any], Any]] = []
        self._lock = threading.Lock()

    @property
    def aborted(self) -> bool:
        """True once the controller fired."""
        return self._aborted

    @property
    def reason(self) -> Any:
        """The value given to `AbortController.abort`, or None."""
        return self._reason

    def add_listener(self, listener: Callable[[Any], Any]) -> Callable[[], None]:
        """Call `listener(reason)` once when the signal fires (at once if it already has).

        The listener runs in the thread that calls `abort()`; it must be quick and must not
        block. If it raises, the other listeners still run and `abort()` then re-raises the
        first error. Returns a function that removes the listener.
        """
        with self._lock:
            fire_now = self._aborted
            if not fire_now:
                self._listeners.append(listener)
        if fire_now:
            listener(self._reason)

        def remove() -> None:
            with self._lock, _suppress_value_error():
                self._listeners.remove(listener)

        return remove

    async def wait(self) -> None:
        """Wait until the signal fires (returns at once if it already has)."""
        if self._aborted:
            return
        event = anyio.Event()
        call = threadsafe_caller()
        remove = self.add_listener(lambda _reason: call(event.set))
        try:
            await event.wait()
        finally:
            remove()

    def _fire(self, reason: Any) -> None:
        with self._lock:
            if self._aborted:
                return
            self._reason = reason
            self._aborted = True
            listeners, self._listeners = self._listeners, []
        error: Exception | None = None
        for listener in listeners:
            try:
                listener(reason)
            except Exception as exc:  # one broken listener must not keep the others unaware
                error = error or exc
        if error is not None:
            raise error

    def __repr__(self) -> str:
        return f"AbortSignal(aborted={self._aborted}, reason={self._reason!r})"


class AbortController:
    """Fires an `AbortSignal`. `abort()` is idempotent and safe from any thread."""

    __slots__ = ("_signal",)

    def __init__(self) -> None:
        self._signal = AbortSignal()

    @property
    def signal(self) -> AbortSignal:
        """The signal this controller fires."""
        return self._signal

    def abort(self, reason: Any = None) -> None:
        """Fire the signal with an optional reason; later calls do nothing."""
        self._signal._fire(reason)


@contextmanager
def _suppress_value_error() -> Iterator[None]:
    with suppress(ValueError):
        yield


class _NeverCancelled:
    """Stands in for a cancel scope when there is no signal: nothing can cancel it."""

    cancelled_caught = False
    cancel_called = False


_NEVER_CANCELLED: Any = _NeverCancelled()


@contextmanager
def cancel_on_abort(signal: AbortSignal | None) -> Iterator[anyio.CancelScope]:
    """A cancel scope that is cancelled when `signal` fires (also from another thread).

    After the block, `scope.cancelled_caught` tells whether the abort interrupted it. A
    cancellation from an enclosing scope is not caught here and propagates. With no signal,
    nothing is set up and the returned stand-in reports `cancelled_caught = False`.
    """
    if signal is None:
        yield _NEVER_CANCELLED
        return
    with anyio.CancelScope() as scope:
        if signal.aborted:
            scope.cancel()
            yield scope
            return
        call = threadsafe_caller()
        remove = signal.add_listener(lambda _reason: call(scope.cancel))
        try:
            yield scope
        finally:
            remove()
