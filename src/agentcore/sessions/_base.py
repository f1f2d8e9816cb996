"""Sessions: what a store keeps (the data types), their JSON, repair, and the errors.

A session is an Agent's transcript plus what is needed to resume it (`SessionState`: system
prompt, model, thinking level, the steering and follow-up queues), written as it happens. Stores
are synchronous and thread-safe, like `sqlite3`: the Agent calls them from worker threads
(`anyio.to_thread`) so a write never blocks the event loop. In async code of your own, wrap slow
calls (`list()` of a large store, `load()` of a long session) in `anyio.to_thread.run_sync`.

```
AgentCoreError
└── SessionError                          a session store cannot do what was asked
    ├── SessionNotFoundError (LookupError) no session with that id in the store
    ├── SessionLockedError                another store or process is writing the session
    └── SessionCorruptError (ValueError)  a stored record cannot be read; names file/row and line
SessionRecoveryWarning (UserWarning)      a torn last JSONL record was dropped on load
```
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, get_args

from ..errors import AgentCoreError, MessageFormatError, ModelNotFoundError
from ..llm.model import Model, ModelCost, OpenAICompletionsCompat
from ..llm.types import ThinkingLevel
from ..messages import (
    AgentMessage,
    AssistantMessage,
    TextContent,
    ToolResultMessage,
    from_json,
    now_ms,
    to_json,
)

__all__ = [
    "INTERRUPTED_TOOL_RESULT",
    "SESSION_FORMAT_VERSION",
    "SessionCorruptError",
    "SessionData",
    "SessionError",
    "SessionInfo",
    "SessionLockedError",
    "SessionNotFoundError",
    "SessionParent",
    "SessionRecoveryWarning",
    "SessionState",
    "repair_transcript",
]

SESSION_FORMAT_VERSION = 1
"""Version of the session container (JSONL header `format`, SQLite `user_version`).

Messages inside carry their own version (`agentcore.messages.FORMAT_VERSION`)."""

INTERRUPTED_TOOL_RESULT = (
    "Tool call was not completed: the run was interrupted before its result was recorded."
)
"""The text of the synthetic error result `repair_transcript` gives an unanswered tool call."""

_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_LEVELS: tuple[str, ...] = get_args(ThinkingLevel)


# --- errors ------------------------------------------------------------------------------------


class SessionError(AgentCoreError):
    """A session store cannot do what was asked."""


class SessionNotFoundError(SessionError, LookupError):
    """No session with that id exists in the store."""


class SessionLockedError(SessionError):
    """Another store (in this or another process) is writing the session."""


class SessionCorruptError(SessionError, ValueError):
    """A stored record cannot be read; the message names the file or row and the line."""


class SessionRecoveryWarning(UserWarning):
    """A torn or corrupt last JSONL record (a write cut short by a crash) was dropped on load."""


# --- data --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionState:
    """What an Agent needs besides the transcript to resume a session.

    Attributes:
        system_prompt: the system prompt.
        model: the model (None: not recorded; the Agent keeps its own).
        thinking_level: the thinking level.
        steering: queued steering messages, oldest first.
        follow_up: queued follow-up messages, oldest first.
    """

    system_prompt: str = ""
    model: Model | None = None
    thinking_level: ThinkingLevel = "off"
    steering: Sequence[AgentMessage] = ()
    follow_up: Sequence[AgentMessage] = ()

    def __post_init__(self) -> None:
        # lists whatever was given, so states compare equal however they were built
        object.__setattr__(self, "steering", list(self.steering))
        object.__setattr__(self, "follow_up", list(self.follow_up))


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionParent:
    """Where a branched session came from: the first `index` messages of `session_id`."""

    session_id: str
    index: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionInfo:
    """One entry of `SessionStore.list()`; times are milliseconds since the epoch."""

    id: str
    created_at: int
    updated_at: int
    parent: SessionParent | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionData:
    """A loaded session.

    Attributes:
        messages: the transcript (repaired unless loaded with `repair=False`).
        state: system prompt, model, thinking level and queues.
        repaired: how many synthetic tool results the repair added.
    """

    id: str
    created_at: int
    updated_at: int
    parent: SessionParent | None
    metadata: Mapping[str, Any]
    state: SessionState
    messages: list[AgentMessage]
    repaired: int = 0


# --- transcript repair -------------------------------------------------------------------------


def repair_transcript(messages: Sequence[AgentMessage]) -> tuple[list[AgentMessage], int]:
    """Give every unanswered tool call a synthetic error result, so the transcript can be sent to
    a model again. Returns the repaired list and the number of results added.

    A process killed while tools ran leaves an assistant message whose tool calls have no (or not
    all) results. Each missing result is inserted right after the results that did arrive, saying
    the run was interrupted. Calls of an `error` or `aborted` message were never run and are not
    sent to models again, so they are left alone. The repair is deterministic: the synthetic
    results carry the assistant message's timestamp.
    """
    out: list[AgentMessage] = []
    added = 0
    i = 0
    n = len(messages)
    while i < n:
        message = messages[i]
        out.append(message)
        i += 1
        if not isinstance(message, AssistantMessage) or message.stop_reason in ("error", "aborted"):
            continue
        calls = message.tool_calls
        if not calls:
            continue
        answered: set[str] = set()
        while i < n and getattr(messages[i], "role", None) == "tool_result":
            answered.add(getattr(messages[i], "tool_call_id", ""))
            out.append(messages[i])
            i += 1
        for call in calls:
            if call.id not in answered:
                out.append(
                    ToolResultMessage(
                        tool_call_id=call.id,
                        tool_name=call.name,
                        content=[TextContent(text=INTERRUPTED_TOOL_RESULT)],
                        is_error=True,
                        timestamp=message.timestamp,
                    )
                )
                added += 1
    return out, added


# --- JSON of states and models -----------------------------------------------------------------


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def model_to_json(model: Model) -> dict[str, Any]:
    """A model as JSON: its fields, and its `compat` flags when it has known ones."""
    data: dict[str, Any] = {}
    for f in fields(Model):
        value = getattr(model, f.name)
        if f.name == "cost":
            data["cost"] = {c.name: getattr(value, c.name) for c in fields(ModelCost)}
        elif f.name == "compat":
            if isinstance(value, OpenAICompletionsCompat):
                data["compat"] = {
                    "kind": "openai-completions",
                    **{c.name: _plain(getattr(value, c.name)) for c in fields(value)},
                }
        else:
            data[f.name] = _plain(value)
    return data


def model_from_json(data: Any, where: str) -> Model:
    """The model rebuilt from its stored fields (a custom `base_url` or headers survive); quirk
    flags the store could not keep come from the catalogue's entry for the same provider and id.
    """
    if not isinstance(data, Mapping) or not isinstance(data.get("id"), str):
        raise SessionCorruptError(f"{where}: model must be an object with an 'id'")
    known = {f.name for f in fields(Model)}
    kwargs = {k: v for k, v in data.items() if k in known and k not in ("cost", "compat")}
    try:
        cost = data.get("cost") or {}
        kwargs["cost"] = ModelCost(**{k: v for k, v in cost.items() if k != "kind"})
        compat = data.get("compat")
        if isinstance(compat, Mapping) and compat.get("kind") == "openai-completions":
            names = {f.name for f in fields(OpenAICompletionsCompat)}
            kwargs["compat"] = OpenAICompletionsCompat(
                **{k: v for k, v in compat.items() if k in names}
            )
        model = Model(**kwargs)
    except (TypeError, AttributeError) as exc:
        raise SessionCorruptError(f"{where}: invalid model: {exc}") from exc
    if model.compat is None:
        from ..llm.models import get_model

        try:
            listed = get_model(model.provider, model.id)
        except ModelNotFoundError:
            return model
        if listed.compat is not None and listed.api == model.api:
            model = replace(model, compat=listed.compat)
    return model


def _messages_from_json(items: Any, where: str) -> list[AgentMessage]:
    if not isinstance(items, list):
        raise SessionCorruptError(f"{where}: expected a list of messages")
    return [message_from_json(m, f"{where}[{i}]") for i, m in enumerate(items)]


def message_from_json(data: Any, where: str) -> AgentMessage:
    """`agentcore.messages.from_json`, with errors that say where the record is."""
    try:
        return from_json(data)
    except MessageFormatError as exc:
        hint = ""
        if "unknown message role" in str(exc):
            hint = " (register application message types with register_message_type())"
        raise SessionCorruptError(f"{where}: {exc}{hint}") from exc


def state_to_json(state: SessionState) -> dict[str, Any]:
    """A `SessionState` as JSON (messages in their versioned JSON form)."""
    return {
        "system_prompt": state.system_prompt,
        "model": model_to_json(state.model) if state.model is not None else None,
        "thinking_level": state.thinking_level,
        "steering": [to_json(m) for m in state.steering],
        "follow_up": [to_json(m) for m in state.follow_up],
    }


def state_from_json(data: Any, where: str) -> SessionState:
    """Decode `state_to_json` output; missing keys take their defaults."""
    if not isinstance(data, Mapping):
        raise SessionCorruptError(f"{where}: state must be an object")
    level = data.get("thinking_level", "off")
    if level not in _LEVELS:
        raise SessionCorruptError(f"{where}: unknown thinking level {level!r}")
    prompt = data.get("system_prompt", "")
    if not isinstance(prompt, str):
        raise SessionCorruptError(f"{where}: system_prompt must be a string")
    model = data.get("model")
    return SessionState(
        system_prompt=prompt,
        model=model_from_json(model, f"{where}.model") if model is not None else None,
        thinking_level=level,
        steering=_messages_from_json(data.get("steering", []), f"{where}.steering"),
        follow_up=_messages_from_json(data.get("follow_up", []), f"{where}.follow_up"),
    )


def parent_to_json(parent: SessionParent | None) -> dict[str, Any] | None:
    return None if parent is None else {"session_id": parent.session_id, "index": parent.index}


def parent_from_json(data: Any, where: str) -> SessionParent | None:
    if data is None:
        return None
    if (
        not isinstance(data, Mapping)
        or not isinstance(data.get("session_id"), str)
        or not isinstance(data.get("index"), int)
    ):
        raise SessionCorruptError(f"{where}: parent must be {{'session_id': str, 'index': int}}")
    return SessionParent(session_id=data["session_id"], index=data["index"])


def check_session_id(session_id: Any) -> str:
    """Session ids are 1-128 characters of letters, digits, `_` and `-` (safe as file names)."""
    if not isinstance(session_id, str) or not _ID.match(session_id):
        raise SessionNotFoundError(
            f"invalid session id {session_id!r}: expected 1-128 letters, digits, '_' or '-'"
        )
    return session_id


_clock_lock = threading.Lock()
_last_ms = 0


def creation_time() -> int:
    """Milliseconds since the epoch, strictly increasing within the process (so sessions created
    in the same millisecond still list in creation order)."""
    global _last_ms
    with _clock_lock:
        _last_ms = max(now_ms(), _last_ms + 1)
        return _last_ms


def fresh_session_id(created_at: int) -> str:
    """A fresh id: the creation time in hex (so ids sort by creation) and 64 random bits."""
    return f"{created_at:012x}-{uuid.uuid4().hex[:16]}"
