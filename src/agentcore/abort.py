"""Aborting a run: `AbortController` fires, `AbortSignal` tells.

A controller can be fired from any thread (a UI thread, a signal handler, another event loop).
Listeners run synchronously in the thread that calls `abort()`; coroutines blocked in
`await signal.wait()` are woken on their own event loop, thread-safely.

Inside the library an abort is delivered as the cancellation of an anyio cancel scope
(`cancel_on_abort`). Only that scope's own cancellation is caught and turned into
`stop_reason="aborted"`: a cancellation coming from outside (a task group, a timeout) is never
swallowed and propagates as usual.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

import anyio
import sniffio

__all__ = ["AbortController", "AbortSignal", "cancel_on_abort"]


class _EventLoopRef:
    """The current event loop, for code that may run on another thread: whether a caller is
    on that loop now, and running a callback on it from anywhere. One small object (no closures),
    as a run may keep one for its whole life.

    Under asyncio "on the loop" means "this thread is running that loop now", not "this is the
    thread that made the reference": a loop may move between threads (Temporal runs each
    activation of a workflow's loop on a thread of a pool). Under asyncio a callback runs outside
    any task, so it is told which async library it is in (as trio does by itself); it may then
    use anyio, e.g. start a task in a task group.
    """

    __slots__ = ("_loop", "_thread", "_token")

    def __init__(self) -> None:
        self._thread = threading.get_ident()
        self._token: Any = None  # trio's token, under trio
        self._loop: Any = None  # the asyncio loop, under asyncio
        if sniffio.current_async_library() == "trio":
            import trio

            self._token = trio.lowlevel.current_trio_token()
        else:
            self._loop = asyncio.get_running_loop()

    def on_loop(self) -> bool:
        """Whether the caller runs on this event loop now."""
        if self._loop is None:
            return threading.get_ident() == self._thread
        try:
            return asyncio.get_running_loop() is self._loop
        except RuntimeError:
            return False

    def call_soon(self, fn: Callable[[], Any]) -> None:
        """Run `fn` on the loop: at once when called on it, else as soon as the loop can (and
        not at all once the loop is closed or its run finished)."""
        if self.on_loop():
            fn()
        elif self._loop is None:
            import trio

            with suppress(trio.RunFinishedError):
                self._token.run_sync_soon(fn)
        elif not self._loop.is_closed():
            self._loop.call_soon_threadsafe(_run_as_asyncio, fn)


_last_ref: _EventLoopRef | None = None  # of the asyncio loop that asked last


def _current_loop() -> _EventLoopRef:
    """The reference of the current event loop: under asyncio one per loop, shared by every
    run on it (no sniffio lookup, nothing allocated per run), under trio a new one."""
    global _last_ref
    ref = _last_ref
    if ref is not None:
        try:
            if asyncio.get_running_loop() is ref._loop:
                return ref
        except RuntimeError:  # no asyncio loop in this thread: trio, or another library
            pass
    ref = _EventLoopRef()
    if ref._loop is not None:
        _last_ref = ref
    return ref


def _threadsafe_caller() -> Callable[[Callable[[], Any]], None]:
    """A function that runs a callback on the current event loop, from any thread."""
    return _current_loop().call_soon


def _loop_check() -> Callable[[], bool]:
    """A function telling whether its caller runs on the current event loop."""
    return _current_loop().on_loop


def _run_as_asyncio(fn: Callable[[], Any]) -> None:
    token = sniffio.current_async_library_cvar.set("asyncio")
    try:
        fn()
    finally:
        sniffio.current_async_library_cvar.reset(token)


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
        call = _threadsafe_caller()
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


def _no_listener() -> None:
    """Removes a listener that was never kept."""


class _NeverAborted(AbortSignal):
    """The signal of a run that nothing can abort (no signal was given): it never fires, so a
    listener is never kept and nothing is allocated for one. One instance serves every such run.
    """

    __slots__ = ()

    def add_listener(self, listener: Callable[[Any], Any]) -> Callable[[], None]:
        """Never calls `listener`: this signal never fires."""
        return _no_listener

    async def wait(self) -> None:
        """Wait forever (until cancelled): this signal never fires."""
        await anyio.sleep_forever()

    def _fire(self, reason: Any) -> None:
        raise RuntimeError("this signal has no controller and cannot fire")


_NEVER_ABORTED: AbortSignal = _NeverAborted()
"""The run's signal when the caller gave none (tools, hooks and requests still get a signal)."""


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
        call = _threadsafe_caller()
        remove = signal.add_listener(lambda _reason: call(scope.cancel))
        try:
            yield scope
        finally:
            remove()
