"""A session's write lease, held by the server only while it writes: any replica can continue any
session.

An open conversation (`Chat`) reads its session without the store's write lease. A request that
writes (a prompt, a decision, a model switch) takes it first (`Leases.writing`): when another
process holds it (a run going on another replica, `agentcore chat` in a terminal) the request is
answered 409 within `HANDOFF_SECONDS`, naming the holder, instead of waiting for the run.
Taking the lease reloads the agent from the store, since another replica may have continued the
session while this one was idle.
The lease is kept while the run goes and given back as soon as it ends, so the next prompt can
go to any replica.

With a store that can record a run in progress (`PostgresSessionStore.checkpoint`), a run says
where it is: when it starts, after each message, and (at most every `CHECKPOINT_SECONDS`) the
answer it is streaming. If the process dies mid-run (kill -9, a lost host), the store that takes
the session next stores that partial answer as an `aborted` assistant message.
"""

from __future__ import annotations

import contextlib
import logging
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import anyio.abc
import anyio.to_thread

from ... import AgentEvent
from ...events import MessageEndEvent, MessageUpdateEvent
from ...messages import AssistantMessage
from ...sessions import SessionLockedError, SessionStore
from .._chat import Chat

__all__ = ["CHECKPOINT_SECONDS", "HANDOFF_SECONDS", "Leases"]

CHECKPOINT_SECONDS = 0.5
"""The most often a run's streaming answer is checkpointed to a store that keeps it."""

HANDOFF_SECONDS = 1.0
"""How long a change waits for the lease before answering 409: a replica whose run just ended
gives it back within milliseconds of showing the run's end."""

_log = logging.getLogger("agentcore.web")


@dataclass(slots=True)
class _Lease:
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    held: bool = False


class Leases:
    """The write leases of a hub's chats.

    Args:
        store: the hub's store.
        reload: brings a chat's agent up to date with the store (called with the lease held).
        group: the task group of background work (the hub's).
    """

    def __init__(
        self,
        store: SessionStore,
        reload: Callable[[Chat], Awaitable[None]],
        group: Callable[[], anyio.abc.TaskGroup],
    ) -> None:
        self.store = store
        self._reload = reload
        self._group = group
        # by chat, not by id: a chat closed and opened again is another one
        self._leases: weakref.WeakKeyDictionary[Chat, _Lease] = weakref.WeakKeyDictionary()
        self._checkpoint = getattr(store, "checkpoint", None)

    def _of(self, chat: Chat) -> _Lease:
        lease = self._leases.get(chat)
        if lease is None:
            lease = self._leases[chat] = _Lease()
        return lease

    def held(self, chat: Chat) -> bool:
        """Whether this server holds the chat's write lease."""
        lease = self._leases.get(chat)
        return lease is not None and lease.held

    def busy(self, chat: Chat) -> bool:
        """Whether the chat holds its lease or is taking it (it must not be closed now)."""
        lease = self._leases.get(chat)
        return lease is not None and (lease.held or lease.lock.locked())

    def adopt(self, chat: Chat) -> None:
        """Note that the chat's session was opened for writing (created, branched here)."""
        self._of(chat).held = True

    @asynccontextmanager
    async def writing(self, chat: Chat, *, wait: bool = True) -> AsyncIterator[Chat]:
        """Hold the chat's write lease for a change (taking it, and reloading the chat, unless a
        run of this server holds it); given back at the end unless a run started meanwhile.
        `wait=False` tries once, without waiting `HANDOFF_SECONDS` for a holder giving it back.

        Raises:
            SessionLockedError: another process holds it: "running on another replica".
        """
        lease = self._of(chat)
        async with lease.lock:
            if not lease.held and not chat.running:
                await self._take(chat, HANDOFF_SECONDS if wait else 0.0)
                lease.held = True
                try:
                    await self._reload(chat)
                except BaseException:
                    await self._give_back(chat, lease)
                    raise
            was_running = chat.running
            try:
                yield chat
            finally:
                if chat.running and not was_running:
                    self._started(chat)
                elif not chat.running:
                    with anyio.CancelScope(shield=True):
                        await self._give_back(chat, lease)

    async def _take(self, chat: Chat, patience: float) -> None:
        """Open the chat's session for writing, waiting up to `patience` seconds for a holder
        that is giving it back (a run that just ended elsewhere shows idle a moment before)."""
        deadline = anyio.current_time() + patience
        while True:
            try:
                await anyio.to_thread.run_sync(self.store.open, chat.id)
                return
            except SessionLockedError as exc:
                if anyio.current_time() >= deadline:
                    raise SessionLockedError(
                        f"session {chat.id!r} is running on another replica or process: try "
                        f"again when its run has ended ({exc})"
                    ) from exc
            await anyio.sleep(0.05)

    async def refresh(self, chat: Chat) -> None:
        """Reload an idle chat that no run of this server or another writes (what a new reader is
        shown then is the store's)."""
        lease = self._of(chat)
        async with lease.lock:
            if not lease.held and not chat.running and chat.remote_start is None:
                await self._reload(chat)

    def ended(self, chat: Chat) -> None:
        """A run of the chat ended: give the lease back (in the background)."""
        if self.held(chat):
            try:
                group = self._group()
            except RuntimeError:  # shutting down: closing the chat gives the lease back
                return
            group.start_soon(self.release, chat)

    async def _release_after(self, writer: _Checkpointer, chat: Chat) -> None:
        await writer.finished.wait()
        await self.release(chat)

    async def release(self, chat: Chat) -> None:
        """Give the chat's lease back if no run holds it."""
        lease = self._of(chat)
        async with lease.lock:
            if not chat.running:
                await self._give_back(chat, lease)

    async def _give_back(self, chat: Chat, lease: _Lease) -> None:
        if not lease.held:
            return
        lease.held = False
        try:
            await anyio.to_thread.run_sync(self.store.release, chat.id)
        except Exception:
            _log.exception("giving back the write lease of session %s", chat.id)

    # -- checkpoints ---------------------------------------------------------------------------

    def _started(self, chat: Chat) -> None:
        if self._checkpoint is None:
            return
        writer = _Checkpointer(self._checkpoint, chat)
        unsubscribe = chat.agent.subscribe(writer.on_event)
        writer.put(len(chat.agent.state.messages), None)

        def stop(done: Chat) -> None:
            done.on_idle = self.ended
            unsubscribe()
            writer.stop()
            if self.held(done):  # once no checkpoint is being written: none outlives the lease
                # (shutting down, there is no group: closing the chat gives the lease back)
                with contextlib.suppress(RuntimeError):
                    self._group().start_soon(self._release_after, writer, done)

        chat.on_idle = stop
        self._group().start_soon(writer.run)


class _Checkpointer:
    """Writes a run's checkpoints one at a time, the newest only, at most every
    `CHECKPOINT_SECONDS` for a streaming answer."""

    def __init__(self, checkpoint: Callable[..., None], chat: Chat) -> None:
        self.checkpoint = checkpoint
        self.chat = chat
        self.pending: tuple[int, AssistantMessage | None] | None = None
        self.wake = anyio.Event()
        self.stopped = False
        self.last_partial = 0.0
        self.finished = anyio.Event()

    def on_event(self, event: AgentEvent) -> None:
        messages = self.chat.agent.state.messages
        if isinstance(event, MessageEndEvent):
            self.put(len(messages), None)
        elif isinstance(event, MessageUpdateEvent):
            now = anyio.current_time()
            if now - self.last_partial >= CHECKPOINT_SECONDS:
                self.last_partial = now
                self.put(len(messages), event.message)

    def put(self, at: int, partial: AssistantMessage | None) -> None:
        self.pending = (at, partial)
        self.wake.set()

    def stop(self) -> None:
        self.stopped = True
        self.pending = None
        self.wake.set()

    async def run(self) -> None:
        try:
            while not self.stopped:
                await self.wake.wait()
                self.wake = anyio.Event()
                value, self.pending = self.pending, None
                if value is None or self.stopped:
                    continue
                try:
                    await anyio.to_thread.run_sync(self.checkpoint, self.chat.id, *value)
                except Exception as exc:  # a checkpoint is a precaution: the run goes on
                    _log.warning("checkpointing session %s: %s", self.chat.id, exc)
        finally:
            self.finished.set()
