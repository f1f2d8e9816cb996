"""`AbortController`/`AbortSignal` and `cancel_on_abort`."""

from __future__ import annotations

import threading
import time
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import pytest

from agentcore import AbortController, AbortSignal, cancel_on_abort
from support import BACKENDS

pytestmark = pytest.mark.anyio


def test_initial_state_and_reason() -> None:
    controller = AbortController()
    signal = controller.signal
    assert isinstance(signal, AbortSignal)
    assert controller.signal is signal
    assert not signal.aborted and signal.reason is None
    controller.abort("user pressed escape")
    assert signal.aborted and signal.reason == "user pressed escape"
    controller.abort("second time")  # idempotent: the first reason stays
    assert signal.reason == "user pressed escape"
    assert "aborted=True" in repr(signal)


def test_listeners() -> None:
    controller = AbortController()
    calls: list[tuple[str, Any]] = []
    controller.signal.add_listener(lambda reason: calls.append(("a", reason)))
    remove_b = controller.signal.add_listener(lambda reason: calls.append(("b", reason)))
    remove_b()
    remove_b()  # removing twice is harmless
    controller.abort(42)
    controller.abort(43)
    assert calls == [("a", 42)]  # once, in order, not the removed one
    # a listener added after the abort runs at once
    controller.signal.add_listener(lambda reason: calls.append(("late", reason)))
    assert calls[-1] == ("late", 42)


def test_raising_listener_does_not_stop_the_abort() -> None:
    controller = AbortController()
    calls: list[str] = []

    def broken(reason: Any) -> None:
        raise RuntimeError("listener bug")

    controller.signal.add_listener(lambda reason: calls.append("first"))
    controller.signal.add_listener(broken)
    controller.signal.add_listener(lambda reason: calls.append("third"))
    with pytest.raises(RuntimeError, match="listener bug"):
        controller.abort()
    assert controller.signal.aborted
    assert calls == ["first", "third"]  # every listener ran


async def test_raising_listener_does_not_keep_a_run_alive() -> None:
    controller = AbortController()
    controller.signal.add_listener(lambda reason: 1 / 0)  # registered before the scope's own
    with anyio.fail_after(5), cancel_on_abort(controller.signal) as scope:
        with pytest.raises(ZeroDivisionError):
            controller.abort()
        await anyio.sleep_forever()
    assert scope.cancelled_caught


def test_abort_from_many_threads() -> None:
    controller = AbortController()
    calls: list[Any] = []
    controller.signal.add_listener(calls.append)
    threads = [threading.Thread(target=controller.abort, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and calls[0] == controller.signal.reason


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_abort_from_another_thread_wakes_wait() -> None:
    controller = AbortController()

    def fire_later() -> None:
        time.sleep(0.05)
        controller.abort("from a thread")

    thread = threading.Thread(target=fire_later)
    with anyio.fail_after(5):
        thread.start()
        await controller.signal.wait()
    thread.join()
    assert controller.signal.reason == "from a thread"


async def test_wait_returns_at_once_when_already_aborted() -> None:
    controller = AbortController()
    controller.abort()
    with anyio.fail_after(1):
        await controller.signal.wait()


async def test_wait_is_cancellable_and_cleans_up() -> None:
    controller = AbortController()
    with anyio.move_on_after(0.01) as scope:
        await controller.signal.wait()
    assert scope.cancelled_caught
    assert controller.signal._listeners == []  # the waiter's listener was removed
    controller.abort()


async def test_many_waiters() -> None:
    controller = AbortController()
    woken: list[int] = []

    async def waiter(i: int) -> None:
        await controller.signal.wait()
        woken.append(i)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            for i in range(5):
                tg.start_soon(waiter, i)
            await anyio.sleep(0.01)
            await anyio.to_thread.run_sync(controller.abort)
    assert sorted(woken) == [0, 1, 2, 3, 4]


# --- cancel_on_abort ---------------------------------------------------------------------------


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_cancel_on_abort_catches_its_own_abort() -> None:
    controller = AbortController()
    reached: list[str] = []

    async def abort_soon() -> None:
        await anyio.sleep(0.01)
        controller.abort()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(abort_soon)
            with cancel_on_abort(controller.signal) as scope:
                await anyio.sleep_forever()
                reached.append("never")
            reached.append("after")
    assert scope.cancelled_caught and reached == ["after"]


async def test_cancel_on_abort_from_another_thread() -> None:
    controller = AbortController()
    threading.Timer(0.02, controller.abort).start()
    with anyio.fail_after(5), cancel_on_abort(controller.signal) as scope:
        await anyio.sleep_forever()
    assert scope.cancelled_caught


async def test_cancel_on_abort_already_aborted() -> None:
    controller = AbortController()
    controller.abort()
    with cancel_on_abort(controller.signal) as scope:
        await anyio.sleep(5)
    assert scope.cancelled_caught


async def test_cancel_on_abort_without_abort_or_signal() -> None:
    controller = AbortController()
    with cancel_on_abort(controller.signal) as scope:
        await anyio.lowlevel.checkpoint()
    assert not scope.cancelled_caught
    assert controller.signal._listeners == []  # no listener left behind
    controller.abort()  # after the block: harmless
    with cancel_on_abort(None) as scope:
        await anyio.lowlevel.checkpoint()
    assert not scope.cancelled_caught


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_outer_cancellation_propagates_through_cancel_on_abort() -> None:
    controller = AbortController()
    reached: list[str] = []
    with anyio.CancelScope() as outer:
        with cancel_on_abort(controller.signal) as inner:
            outer.cancel()
            await anyio.sleep(5)
        reached.append("after inner")  # must not run: the cancellation is not ours
    assert outer.cancelled_caught
    assert not inner.cancelled_caught
    assert reached == []


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_timeout_propagates_through_cancel_on_abort() -> None:
    controller = AbortController()
    with (
        pytest.raises(TimeoutError),
        anyio.fail_after(0.02),
        cancel_on_abort(controller.signal) as inner,
    ):
        await anyio.sleep(5)
    assert not inner.cancelled_caught
    assert not controller.signal.aborted


async def test_abort_and_outer_cancel_together() -> None:
    """When both fire, the outer cancellation still wins: it is never swallowed."""
    controller = AbortController()
    reached: list[str] = []
    with anyio.CancelScope() as outer:
        with cancel_on_abort(controller.signal):
            controller.abort()
            outer.cancel()
            await anyio.sleep(5)
        reached.append("after inner")
        await anyio.sleep(5)  # outer still cancelled
        reached.append("never")
    assert outer.cancelled_caught
    assert "never" not in reached
