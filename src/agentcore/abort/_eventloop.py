"""The current event loop's reference, and running a callback on it from any thread: the
plumbing behind `AbortSignal.wait` and `cancel_on_abort`, shared with the model layer (a request's
abort listener) and the engine (the event stream, tool execution). Private to agentcore: a
declared seam of the shared layer (see `tests/test_layers.py`), not public API.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from contextlib import suppress
from typing import Any

import sniffio

__all__ = ["EventLoopRef", "current_loop", "threadsafe_caller"]


class EventLoopRef:
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


_last_ref: EventLoopRef | None = None  # of the asyncio loop that asked last


def current_loop() -> EventLoopRef:
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
    ref = EventLoopRef()
    if ref._loop is not None:
        _last_ref = ref
    return ref


def threadsafe_caller() -> Callable[[Callable[[], Any]], None]:
    """A function that runs a callback on the current event loop, from any thread."""
    return current_loop().call_soon


def _run_as_asyncio(fn: Callable[[], Any]) -> None:
    token = sniffio.current_async_library_cvar.set("asyncio")
    try:
        fn()
    finally:
        sniffio.current_async_library_cvar.reset(token)
