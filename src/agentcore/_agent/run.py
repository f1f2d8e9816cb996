"""The pieces of an `Agent` run: its book-keeping, listener subscriptions, prompt parsing and the
blocking facade. (What each event changes in the state is `AgentState._reduce`; a run that fails
is closed by the loop's own failure path.)"""

from __future__ import annotations

import contextlib
import inspect
import threading
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import TimeoutError as FutureTimeoutError
from typing import Any, Protocol, TypeAlias, TypeVar

import anyio
import anyio.from_thread
import sniffio

from ..abort import AbortController
from ..errors import ConfigError, MessageFormatError, UsageError
from ..messages import AgentMessage, ImageContent, TextContent, UserMessage

__all__ = [
    "BUSY_CONTINUE",
    "BUSY_PROMPT",
    "ActiveRun",
    "Listener",
    "Subscription",
    "deliver",
    "prompt_messages",
    "queued_message",
    "run_blocking",
]

_T = TypeVar("_T")

Listener: TypeAlias = Callable[..., Awaitable[None] | None]
"""What `Agent.subscribe` takes: `(event)` or `(event, signal)`, a plain function or a coroutine
function. Listeners are awaited in subscription order after the state has taken the event in;
`signal` is the run's `AbortSignal`. A listener that raises ends the run with an error message."""

BUSY_CONTINUE = "the agent is already running: await wait_for_idle() before continuing"
BUSY_PROMPT = (
    "the agent is already running: queue the message with steer() or follow_up(), "
    "or await wait_for_idle() first"
)


class Subscription:
    __slots__ = ("arity", "listener")

    def __init__(self, listener: Listener) -> None:
        if not callable(listener):
            raise ConfigError(f"a listener must be a function, got {type(listener).__name__}")
        self.listener = listener
        self.arity = listener_arity(listener)


def listener_arity(listener: Listener) -> int:
    try:
        sig = inspect.signature(listener)
    except (TypeError, ValueError):
        return 2
    for n in (2, 1):
        try:
            sig.bind(*range(n))
        except TypeError:
            continue
        return n
    raise ConfigError(f"a listener must take (event) or (event, signal), got {listener!r}{sig}")


class ActiveRun:
    """Book-keeping of the active run: its abort controller and how far its events got."""

    __slots__ = ("added", "closing", "controller", "done", "loop_thread", "skip_steering_poll")

    def __init__(self) -> None:
        self.controller = AbortController()
        self.done = anyio.Event()
        self.loop_thread = threading.get_ident()
        self.skip_steering_poll = False
        self.closing = False
        """The loop's last poll found nothing: it ends because the model is done (a message
        queued from now on is run by a next loop before the agent goes idle)."""
        self.added: list[AgentMessage] = []


async def deliver(
    subscriptions: Sequence[Subscription], event: Any, signal: Any
) -> Exception | None:
    """Await every listener in turn with `event` (and `signal`, if it takes two arguments);
    returns the first exception one raised (the others still get the event), else None."""
    failure: Exception | None = None
    for subscription in list(subscriptions):
        try:
            if subscription.arity == 2:
                result = subscription.listener(event, signal)
            else:
                result = subscription.listener(event)
            # Most listeners are plain functions: skip isawaitable's ABC check for None.
            if result is not None and inspect.isawaitable(result):
                await result
        except Exception as exc:
            if failure is None:
                failure = exc
    return failure


def prompt_messages(
    input: str | AgentMessage | Sequence[AgentMessage], images: Sequence[ImageContent] | None
) -> list[AgentMessage]:
    if isinstance(input, str):
        if not images:
            return [UserMessage(content=input)]
        for image in images:
            if not isinstance(image, ImageContent):
                raise MessageFormatError(
                    f"images must be ImageContent blocks, got {type(image).__name__}"
                )
        return [UserMessage(content=[TextContent(text=input), *images])]
    if images:
        raise UsageError("images can only be given with a text prompt")
    if isinstance(getattr(input, "role", None), str):
        return [input]
    if isinstance(input, Sequence) and not isinstance(input, bytes):
        messages = list(input)
        for i, message in enumerate(messages):
            if not isinstance(getattr(message, "role", None), str):
                raise MessageFormatError(
                    f"prompt messages[{i}] is not a message (no `role`): "
                    f"got {type(message).__name__}"
                )
        return messages
    raise MessageFormatError(
        f"prompt takes a string, a message or a list of messages, got {type(input).__name__}"
    )


def queued_message(message: str | AgentMessage) -> AgentMessage:
    if isinstance(message, str):
        return UserMessage(content=message)
    if not isinstance(getattr(message, "role", None), str):
        raise MessageFormatError(
            f"expected a message (an object with a `role`) or a string, "
            f"got {type(message).__name__}"
        )
    return message


class _Abortable(Protocol):
    def abort(self, reason: Any = None) -> None: ...


def run_blocking(agent: _Abortable, name: str, fn: Callable[..., Awaitable[_T]], *args: Any) -> _T:
    """Run `fn(*args)` on a background event loop (a blocking portal) and wait for it; Ctrl-C
    aborts the agent's run and waits (briefly) for it to end with an aborted message.

    Raises:
        UsageError: called from async code.
    """
    try:
        library: str | None = sniffio.current_async_library()
    except sniffio.AsyncLibraryNotFoundError:
        library = None
    if library is not None:
        raise UsageError(
            f"{name.rstrip('_')}_sync() blocks, and this is async code ({library}): "
            f"use `await agent.{name}(...)`"
        )
    with anyio.from_thread.start_blocking_portal() as portal:
        future = portal.start_task_soon(fn, *args)
        try:
            return future.result()
        except KeyboardInterrupt:
            agent.abort("interrupted")
            with contextlib.suppress(Exception, FutureTimeoutError):
                future.result(timeout=10)
            raise
