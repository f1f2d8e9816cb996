"""Steering and follow-up messages sent to a replica that is not running the session: forwarded
to the one running it, which answers what the message became.

Sending (the replica the client reached): the message is stored as a row of its own in the
`relay` table (`["msg", {...}]`, addressed to the replica known to run the session, or to any
replica running it when none is known yet) and announced like events. The sender then waits up
to `ACK_SECONDS` for the acknowledgement, which comes back in the running replica's next
relay row for the session, after the events the message caused (`CUSTOM
agentcore.steering_queued`, ...): when the sender answers, its own readers have seen them.

Taking it (the running replica): the row is claimed by deleting it (`DELETE ... RETURNING`), so
exactly one replica ever takes a message. Then, with no await in between, it is sent to the
conversation as a local one would be (`Chat.send`: queued into the run, or held while the run is
being stopped). If the run ended meanwhile, the replica takes the session's lease and starts
the next run with it; if it cannot, the acknowledgement carries the error.

Never lost, never taken twice:

- no acknowledgement within `ACK_SECONDS` (the running replica died, or is stuck): the sender
  claims the row back. If it gets it, nobody took the message: the sender takes the session's
  lease itself (free once a killed replica's connection closed, or once the run ended) and starts
  the next run with it (`became: "started"`), or, when the lease is still held, answers 409
  saying the message was not delivered (send it again).
- the row was claimed by the running replica but no acknowledgement came within another
  `ACK_SECONDS`: the sender answers 504 saying the message was taken and may have been queued
  (look at the session before sending it again): the one case where the sender cannot know.
- once acknowledged, the message is the running replica's, exactly as one sent to it directly: a
  queued one is acknowledged only once it is in the session's store (`_steering.stored`), so if
  that replica dies before its run took it, the replica taking the session over finds it queued
  and its next run takes it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import anyio.to_thread

from ..sessions import SessionLockedError
from ._chat import Chat
from ._steering import KINDS, Delivery, MessageKind, stored

if TYPE_CHECKING:
    from ._hub import Hub

Row = tuple[int, str, str, bool, str]
"""A `relay` row: id, session id, origin (the replica's id), whether a run starts, entries."""

__all__ = ["ACK_SECONDS", "Forwards", "ForwardTimeoutError", "send_anywhere"]

ACK_SECONDS = 3.0
"""How long a replica waits for the running replica to take a forwarded message (and then, if
it was claimed, for its answer) before deciding on its own."""


class RelayLink(Protocol):
    """What forwarding needs of the relay (`_replicas.relay.Relay`)."""

    origin: str
    hub: Hub

    def publisher(self, sid: str) -> str | None: ...
    def insert(self, sid: str, entry: list[Any]) -> int: ...
    def reclaim(self, row_id: int) -> bool: ...
    def send_entry(self, sid: str, entry: str) -> None: ...


class ForwardTimeoutError(Exception):
    """The running replica took a forwarded message but did not say what it became in time."""


@dataclass(slots=True)
class _Waiter:
    done: anyio.Event = field(default_factory=anyio.Event)
    answer: dict[str, Any] | None = None


class Forwards:
    """The forwarded messages of one relay: those this replica sent and waits for, and those it
    takes for the runs going here."""

    def __init__(self, relay: RelayLink) -> None:
        self.relay = relay
        self._waiting: dict[str, _Waiter] = {}

    # -- sending ------------------------------------------------------------------------------

    async def send(self, chat: Chat, kind: MessageKind, text: str) -> Delivery:
        """Forward a message to the replica running `chat`'s session; what it became there (or
        here, when that replica did not take it and the session's lease is free).

        Raises:
            SessionLockedError: not delivered (the session is still held elsewhere): send again.
            ForwardTimeoutError: taken, but not acknowledged in time.
        """
        relay = self.relay
        mid = uuid.uuid4().hex
        known = relay.publisher(chat.id)
        message = {"id": mid, "to": known, "from": relay.origin, "kind": kind, "text": text}
        waiter = self._waiting[mid] = _Waiter()
        try:
            try:
                row_id = await anyio.to_thread.run_sync(relay.insert, chat.id, ["msg", message])
            except Exception as exc:  # the database is away: nothing was sent
                raise SessionLockedError(
                    f"session {chat.id!r} runs on another replica, and the message could not be "
                    f"forwarded to it ({exc}): it was not delivered; send it again"
                ) from exc
            with anyio.move_on_after(ACK_SECONDS):
                await waiter.done.wait()
            if waiter.answer is None:
                try:
                    reclaimed = await anyio.to_thread.run_sync(relay.reclaim, row_id)
                except Exception:  # the database is away: whether it was taken is unknown
                    reclaimed = False
                if reclaimed:
                    return await self._here(chat, kind, text)
                with anyio.move_on_after(ACK_SECONDS):
                    await waiter.done.wait()
            answer = waiter.answer
        finally:
            del self._waiting[mid]
        if answer is None:
            raise ForwardTimeoutError(
                f"session {chat.id!r}: the message was forwarded to the replica running it, which "
                f"did not say within {2 * ACK_SECONDS:g} s what it became (it may have died after "
                "taking it): look at the session before sending it again"
            )
        if "error" in answer:
            raise SessionLockedError(
                f"session {chat.id!r}: the message was not delivered ({answer['error']}): send it "
                "again"
            )
        return Delivery(answer["became"], kind, str(answer["runId"]))

    async def _here(self, chat: Chat, kind: MessageKind, text: str) -> Delivery:
        hub = self.relay.hub
        try:
            async with hub.leases.writing(chat):
                delivery = chat.send(hub.task_group(), kind, text)
        except SessionLockedError as exc:
            raise SessionLockedError(
                f"session {chat.id!r}: the replica running it did not take the message within "
                f"{ACK_SECONDS:g} s, and it still holds the session: the message was not "
                f"delivered; send it again ({exc})"
            ) from exc
        return await stored(chat.agent, delivery)

    def answered(self, rows: Sequence[Row]) -> None:
        """Acknowledgements addressed here, in rows from other replicas."""
        for row in rows:
            if '["ack"' not in row[4]:
                continue
            for entry in json.loads(row[4]):
                if entry[0] == "ack" and entry[1].get("to") == self.relay.origin:
                    waiter = self._waiting.get(entry[1].get("id"))
                    if waiter is not None:
                        waiter.answer = entry[1]
                        waiter.done.set()

    # -- taking -------------------------------------------------------------------------------

    def ours(self, rows: Sequence[Row]) -> list[int]:
        """The ids of the message rows this replica should claim: for a session whose run goes
        here, or addressed here (its run just ended here: the next run starts with it)."""
        out = []
        for row in rows:
            message = _message(row)
            if message is None:
                continue
            chat = self.relay.hub.opened(row[1])
            if chat is not None and (chat.running or message.get("to") == self.relay.origin):
                out.append(row[0])
        return out

    def take(self, chat: Chat | None, row: Row) -> None:
        """A message row claimed here: send it to the conversation, and answer the sender."""
        message = _message(row)
        if message is None:
            return
        sid = row[1]
        kind = message.get("kind")
        text = message.get("text")
        if kind not in KINDS or not isinstance(text, str) or not text.strip():
            self._answer(sid, message, {"error": f"expected a steer or follow-up, got {kind!r}"})
            return
        hub = self.relay.hub
        if chat is not None and chat.running:  # no await since the claim: the run takes it
            delivery = chat.send(hub.task_group(), kind, text)
            hub.task_group().start_soon(self._acknowledge, chat, sid, message, delivery)
        elif hub.group is not None:
            hub.group.start_soon(self._start, sid, message, kind, text)
        else:
            self._answer(sid, message, {"error": "the replica is shutting down"})

    async def _start(self, sid: str, message: dict[str, Any], kind: MessageKind, text: str) -> None:
        """The run ended before the message was taken: it starts the next one, here."""
        hub = self.relay.hub
        try:
            chat = await hub.get(sid)
            async with hub.leases.writing(chat):
                delivery = chat.send(hub.task_group(), kind, text)
        except Exception as exc:
            self._answer(sid, message, {"error": str(exc) or type(exc).__name__})
            return
        await self._acknowledge(chat, sid, message, delivery)

    async def _acknowledge(
        self, chat: Chat, sid: str, message: dict[str, Any], delivery: Delivery
    ) -> None:
        """Answer the sender once what the message became is stored (`_steering.stored`)."""
        try:
            delivery = await stored(chat.agent, delivery)
        except Exception as exc:
            self._answer(sid, message, {"error": str(exc)})
            return
        self._answer(sid, message, delivery.json())

    def _answer(self, sid: str, message: dict[str, Any], answer: dict[str, Any]) -> None:
        ack = {**answer, "id": message.get("id"), "to": message.get("from")}
        self.relay.send_entry(sid, json.dumps(["ack", ack], ensure_ascii=False))


def _message(row: Row) -> dict[str, Any] | None:
    """The forwarded message a row holds (None: not a message row)."""
    if not row[4].startswith('[["msg"'):
        return None
    try:
        entries = json.loads(row[4])
        message = entries[0][1]
    except (ValueError, IndexError, TypeError):
        return None
    return message if isinstance(message, dict) else None


async def send_anywhere(
    hub: Hub, chat: Chat, kind: MessageKind, text: str, *, run_id: str | None = None
) -> Delivery:
    """Send a message to the conversation here, or forward it to the replica running its session
    (`hub.forward`, set by the relay: None on one server). `run_id` names a run it starts here
    (one started elsewhere gets that replica's id).

    Raises:
        SessionLockedError: the session is held elsewhere and the message was not delivered.
        ForwardTimeoutError: forwarded and taken, but not acknowledged in time.
        NotStoredError: queued here, but the store could not store it.
    """
    forward = hub.forward
    # a run known to go elsewhere: forward at once unless the lease is free (that run ended, or
    # its replica died: the message starts the next run here)
    elsewhere = forward is not None and chat.remote_start is not None and not chat.running
    try:
        async with hub.leases.writing(chat, wait=not elsewhere):
            delivery = chat.send(hub.task_group(), kind, text, run_id=run_id)
    except SessionLockedError:
        if forward is None:
            raise
    else:
        return await stored(chat.agent, delivery)
    # held elsewhere (by a run seen or not yet seen here): whoever runs it takes it
    return await forward(chat, kind, text)
