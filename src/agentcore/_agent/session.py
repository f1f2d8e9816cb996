"""Keeping a session in step with an `Agent`.

The binding knows which messages the store holds (`stored`, compared by identity with the
Agent's transcript) and the state last written. Its methods block and are serialised by one lock.

When things are written:
- each message at its `message_end`, before the listeners hear of it and before the run goes on,
  in one record with the state if the state changed (so a steering message leaves the stored
  queue in the same write that adds it to the transcript);
- at the start and end of each run: whatever differs (edits of `state.messages`, a new system
  prompt or model, the repair of a transcript loaded with unanswered tool calls);
- queue changes at once when made from another thread or while idle; from the event loop's own
  thread during a run, with the next message or at the end of the run, and at once from a worker
  thread for whoever awaits it (`_agent/queue_writes.py`): never on the loop thread there and then.

What is written: exactly what the Agent keeps. `prepare` gives the form of a message the store
can hold — the message itself, nearly always — and the Agent keeps that form in its transcript, so
memory and disk are equal after every write (whatever a tool returned) and nothing is left that a
later run would fail to store:
- a message whose JSON reads back differently (a tuple in `details` becomes a list) is kept as
  it reads back;
- a tool result that cannot be stored (NaN, a datetime, bytes, a cycle in `details`) is kept with
  `details` replaced by a note saying why; if its content cannot be stored either, as an error
  result saying so (a warning is logged in both cases);
- any other message that cannot be stored (an unregistered application message type, a field of
  the wrong type) is not kept: `prepare` raises `MessageFormatError`, and the run ends with an
  error message naming it.
A message given to `append` or `sync` without `prepare` is stored in that same form, which the
binding remembers, so it is written once and the next run does not trip on it. A store that fails
for another reason (a full disk) raises; the Agent writes what is missing at the next occasion.

Where writes run: a store whose writes may wait (`SessionStore.blocking_writes`: SQLite, which may
wait for another process's transaction or a checkpoint; any store with `fsync=True`) is written
from a worker thread, so the event loop never waits on a disk. A JSONL store without fsync
appends one line to the page cache — a few microseconds, less than handing the work to a thread —
and is written inline.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from ..errors import ConfigError, MessageFormatError, clip
from ..messages import (
    AgentMessage,
    TextContent,
    ToolResultMessage,
    encode_message,
    from_json,
    now_ms,
)
from ..sessions import Session, SessionData, SessionState, repair_transcript

if TYPE_CHECKING:
    from .state import AgentState, Queues

__all__ = ["SessionBinding", "resume", "storable"]

_log = logging.getLogger("agentcore.sessions")


def storable(message: AgentMessage) -> AgentMessage:
    """The form of `message` a session holds exactly (see the module docstring).

    Raises:
        MessageFormatError: the message cannot be stored in any form.
    """
    try:
        doc, exact = encode_message(message)
    except MessageFormatError as exc:
        if not isinstance(message, ToolResultMessage):
            role = getattr(message, "role", None)
            raise MessageFormatError(
                f"cannot store the {role!r} message ({type(message).__name__}) in the "
                f"session: {exc}"
            ) from exc
        return _stored_result(message, str(exc))
    return message if exact else from_json(doc)


def _stored_result(message: ToolResultMessage, reason: str) -> ToolResultMessage:
    """A tool result that can be stored in place of one that cannot."""
    note = f"details not stored: {clip(reason, 500)}"
    substitute = replace(message, details=note)
    try:
        encode_message(substitute)
    except MessageFormatError as exc:
        timestamp = message.timestamp
        substitute = ToolResultMessage(
            tool_call_id=str(message.tool_call_id),
            tool_name=str(message.tool_name),
            content=[
                TextContent(text=f"The tool's result could not be stored: {clip(str(exc), 500)}")
            ],
            is_error=True,
            timestamp=timestamp if isinstance(timestamp, int) else now_ms(),
        )
        note = f"result not stored: {exc}"
    _log.warning("tool result %s (%s): %s", message.tool_call_id, message.tool_name, note)
    return substitute


def _key(state: SessionState) -> tuple[object, ...]:
    return (
        state.system_prompt,
        state.model,
        state.thinking_level,
        list(state.steering),
        list(state.follow_up),
    )


def _same(a: tuple[object, ...] | None, b: tuple[object, ...]) -> bool:
    """Fingerprints are compared by identity, element by element: cheap, and never wrong in
    the direction that matters (different objects only cost a full comparison)."""
    return a is not None and len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


class SessionBinding:
    """The link between one Agent and one open `Session`.

    Args:
        session: the open session.
        snapshot: builds the Agent's `SessionState` (thread-safe).
        fingerprint: a cheap tuple that changes whenever the snapshot may have.
    """

    __slots__ = (
        "data",
        "fingerprint",
        "inline",
        "lock",
        "messages",
        "prepared",
        "saved",
        "saved_print",
        "session",
        "snapshot",
        "stored",
        "substitutes",
        "warned",
    )

    def __init__(
        self,
        session: Session,
        snapshot: Callable[[], SessionState],
        fingerprint: Callable[[], tuple[object, ...]],
    ) -> None:
        data = session.load(repair=False)
        self.session = session
        self.snapshot = snapshot
        self.fingerprint = fingerprint
        self.inline = not session.store.blocking_writes
        self.data: SessionData = data
        self.stored: list[AgentMessage] = list(data.messages)
        self.saved = _key(data.state)
        self.saved_print: tuple[object, ...] | None = None
        self.messages, _added = repair_transcript(data.messages)
        self.lock = threading.Lock()
        self.prepared: AgentMessage | None = None  # the last message `prepare` kept as it is
        # id(original) -> (original, stored form), for messages kept in memory as they were
        # although the store holds another form (when the Agent did not call `prepare` first)
        self.substitutes: dict[int, tuple[AgentMessage, AgentMessage]] = {}
        self.warned = False

    def prepare(self, message: AgentMessage) -> AgentMessage:
        """The form of `message` to keep in memory, the one the store will hold; call it before
        the message joins the transcript, then `append` what it returned.

        Raises:
            MessageFormatError: the message cannot be stored in any form: do not keep it.
        """
        form = storable(message)
        self.prepared = form
        return form

    def _form(self, message: AgentMessage) -> AgentMessage:
        """What the store holds for a message of the transcript (itself, or its stored form)."""
        if message is self.prepared:
            return message
        entry = self.substitutes.get(id(message))
        if entry is not None and entry[0] is message:
            return entry[1]
        form = storable(message)
        if form is not message:
            self.substitutes[id(message)] = (message, form)
        return form

    def _is_stored(self, stored: AgentMessage, message: AgentMessage) -> bool:
        if stored is message:
            return True
        entry = self.substitutes.get(id(message))
        return entry is not None and entry[0] is message and entry[1] is stored

    async def run(self, fn: Callable[..., None], *args: Any) -> None:
        """Call a writing method inline or in a worker thread, per the store."""
        if self.inline:
            fn(*args)
        else:
            await anyio.to_thread.run_sync(fn, *args)

    def _changed_state(self) -> SessionState | None:
        """The state to write, or None if it equals the saved one. Caller holds the lock."""
        fingerprint = self.fingerprint()  # before the snapshot: a change in between is re-checked
        if _same(self.saved_print, fingerprint):
            return None
        snapshot = self.snapshot()
        loaded = self.data.state
        if loaded.withheld_headers and loaded.model is not None and snapshot.model is loaded.model:
            # the stored model, still in use: its header names stay stored, and say what is missing
            snapshot = replace(snapshot, withheld_headers=loaded.withheld_headers)
            self._warn_headers(loaded)
        key = _key(snapshot)
        self.saved_print = fingerprint
        if key == self.saved:
            return None
        self.saved = key
        return snapshot

    def _warn_headers(self, loaded: SessionState) -> None:
        if self.warned or loaded.model is None:
            return
        self.warned = True
        model = loaded.model
        _log.warning(
            "session %s: the stored model %s/%s had headers (%s) whose values sessions never "
            "store; it is used without them. Pass the model again, "
            "Agent(initial_state={'model': model}, session=...), or the headers, "
            "Agent(headers=...), to supply them",
            self.session.id,
            model.provider,
            model.id,
            ", ".join(loaded.withheld_headers),
        )

    def _forget(self) -> None:
        """A write failed: what is stored is unknown, so the state is written next time."""
        self.saved_print = None
        self.saved = ()

    def in_step(self, messages: Sequence[AgentMessage]) -> bool:
        """Whether the store already holds exactly `messages` and the current state (cheap)."""
        stored = self.stored
        return (
            len(stored) == len(messages)
            and all(self._is_stored(a, b) for a, b in zip(stored, messages, strict=True))
            and _same(self.saved_print, self.fingerprint())
        )

    def sync(self, messages: Sequence[AgentMessage]) -> None:
        """Make the stored transcript and state equal to the given ones (each message in the
        form `storable` gives).

        Raises:
            MessageFormatError: a message cannot be stored in any form (nothing is written).
        """
        with self.lock:
            stored = self.stored
            limit = min(len(stored), len(messages))
            n = 0
            while n < limit and self._is_stored(stored[n], messages[n]):
                n += 1
            truncate = n if n < len(stored) else None
            new = [self._form(m) for m in messages[n:]]
            if self.substitutes:  # forget the forms of messages no longer in the transcript
                present = {id(m) for m in messages}
                self.substitutes = {k: v for k, v in self.substitutes.items() if k in present}
            state = self._changed_state()
            if truncate is None and not new and state is None:
                return
            try:
                self.session.update(truncate_to=truncate, messages=new, state=state)
            except BaseException:
                self._forget()
                raise
            self.stored = stored[:n] + new

    def append(self, message: AgentMessage) -> None:
        """Store one message that reached the transcript, with the state if it changed (the
        message as `prepare` returned it; any other is stored in the form `storable` gives).

        Raises:
            MessageFormatError: the message cannot be stored in any form (nothing is written).
        """
        with self.lock:
            form = self._form(message)
            state = self._changed_state()
            try:
                if state is None:
                    self.session.append(form)
                else:
                    self.session.update(messages=[form], state=state)
            except BaseException:
                self._forget()
                raise
            self.stored.append(form)

    def save_state(self) -> None:
        """Store the state if it changed."""
        with self.lock:
            state = self._changed_state()
            if state is not None:
                try:
                    self.session.update(state=state)
                except BaseException:
                    self._forget()
                    raise


def resume(
    binding: SessionBinding, given: Mapping[str, Any], state: AgentState, queues: Queues
) -> SessionBinding:
    """Load what a new Agent's session holds into its state and queues: its messages
    (repaired), system prompt, thinking level, model and queues. Returns the binding.

    Raises:
        ConfigError: initial messages given for a session that has messages already.
    """
    session = binding.session
    data = binding.data
    if given.get("messages") and binding.stored:
        raise ConfigError(
            f"session {session.id!r} already has {len(binding.stored)} messages; "
            "do not pass initial messages with it"
        )
    state.messages = binding.messages
    state.system_prompt = data.state.system_prompt
    state.thinking_level = data.state.thinking_level
    if data.state.model is not None:
        state.model = data.state.model
    queues.extend("steering", list(data.state.steering))
    queues.extend("follow_up", list(data.state.follow_up))
    logging.getLogger("agentcore").info(
        "resumed session %r: %d messages, %d steering and %d follow-up messages queued",
        session.id,
        len(state.messages),
        len(data.state.steering),
        len(data.state.follow_up),
    )
    return binding
