"""Sessions: what a store keeps (the data types), their JSON, repair, and the errors.

A session is an Agent's transcript plus what is needed to resume it (`SessionState`: system
prompt, model, thinking level, the steering and follow-up queues), written as it happens. No
secret is stored: of a model's headers (`Authorization`, `api-key`, ...) only the names are kept
(`SessionState.withheld_headers`), user info in its `base_url` (`https://user:password@host`) is
dropped, and API keys are never part of the state.

Stores are synchronous and thread-safe, like `sqlite3`: the Agent calls them from worker threads
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

A `SessionCorruptError` is raised for any record that cannot be read as written (invalid JSON or
UTF-8, a checksum that does not match, a field of the wrong type, a damaged SQLite file); the
store is left as it is, so nothing is lost by reading it.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import uuid
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any, get_args
from urllib.parse import urlsplit, urlunsplit

from ..approvals import (
    APPROVAL_ROLES,
    INTERRUPTED_APPROVED_CALL,
    ApprovalRequest,
    ApprovedCallStarted,
)
from ..errors import AgentCoreError, MessageFormatError, ModelNotFoundError
from ..llm.model import (
    BedrockCompat,
    GoogleCompat,
    Model,
    ModelCost,
    OpenAICompletionsCompat,
    cloud_from_json,
    cloud_to_json,
)
from ..llm.types import ThinkingLevel
from ..messages import (
    AgentMessage,
    AssistantMessage,
    TextContent,
    ToolResultMessage,
    from_json,
    now_ms,
    to_json,
    valid_json,
    valid_text,
)

__all__ = [
    "INTERRUPTED_TOOL_RESULT",
    "PRIVATE_DIR",
    "PRIVATE_FILE",
    "load_json",
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

SESSION_FORMAT_VERSION = 2
"""Version of the session container (JSONL header `format`; the SQLite schema has its own
version, `_sqlite_schema.SQLITE_SCHEMA_VERSION`, 3 since it keeps titles).

2 added a CRC-32 to every record (JSONL line, SQLite message row and session row) and stopped
storing header values. Messages inside carry their own version
(`agentcore.messages.FORMAT_VERSION`)."""

INTERRUPTED_TOOL_RESULT = (
    "Tool call was not completed: the run was interrupted before its result was recorded."
)
"""The text of the synthetic error result `repair_transcript` gives an unanswered tool call."""

_BATCH_ROLES = frozenset({"tool_result", *APPROVAL_ROLES})

_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")  # matched whole (fullmatch): no trailing newline
_LEVELS: tuple[str, ...] = get_args(ThinkingLevel)
_log = logging.getLogger("agentcore.sessions")


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
    """A torn last JSONL record — an unterminated last line that is not a complete record, what
    a write cut short by a crash leaves — was dropped on load (or cut off before appending)."""


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
        withheld_headers: names of the stored model's headers whose values were not stored
            (they are often credentials): a loaded `model` has no such headers. Pass the model
            again (`Agent(initial_state={"model": model}, session=...)`) to supply them.
    """

    system_prompt: str = ""
    model: Model | None = None
    thinking_level: ThinkingLevel = "off"
    steering: Sequence[AgentMessage] = ()
    follow_up: Sequence[AgentMessage] = ()
    withheld_headers: Sequence[str] = ()

    def __post_init__(self) -> None:
        # lists whatever was given, so states compare equal however they were built
        object.__setattr__(self, "steering", list(self.steering))
        object.__setattr__(self, "follow_up", list(self.follow_up))
        object.__setattr__(self, "withheld_headers", tuple(self.withheld_headers))


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionParent:
    """Where a branched session came from: the first `index` messages of `session_id`."""

    session_id: str
    index: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionInfo:
    """One entry of `SessionStore.list()`: what a list of sessions shows, read without loading
    any session. Times are milliseconds since the epoch.

    Attributes:
        id: the session's id.
        created_at: when it was created.
        updated_at: its last activity: the last change (SQL stores), the file's modification
            time (JSONL).
        parent: where a branch came from (None for a root session).
        metadata: the application data given at creation.
        title: the text of the first user message stored in the session (`session_title`: on
            one line, at most `TITLE_LENGTH` characters, valid Unicode); `""` while it has none.
            It is kept when a later change cuts the transcript (compaction, say). Stores keep it
            as messages are appended, so listing never reads a transcript.
        message_count: how many messages the session holds, or None when the store cannot tell
            without reading the transcript (`JsonlSessionStore`).
    """

    id: str
    created_at: int
    updated_at: int
    parent: SessionParent | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    title: str = ""
    message_count: int | None = None


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
    all) results. Each missing result is inserted right after the results that did arrive (and
    the approval messages among them), saying the run was interrupted. Calls of an `error` or
    `aborted` message were never run and are not sent to models again, so they are left alone.
    So are calls with an `ApprovalRequest` (see `agentcore.approvals`): waiting for a decision,
    or decided, their next run answers them. But an approved call that had started
    (`ApprovedCallStarted`) gets a result saying it may or may not have completed: it is never
    run twice. The repair is deterministic: the synthetic results carry the assistant message's
    timestamp.
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
        requested: set[str] = set()
        started: set[str] = set()
        while i < n and getattr(messages[i], "role", None) in _BATCH_ROLES:
            follower = messages[i]
            call_id = getattr(follower, "tool_call_id", "")
            if isinstance(follower, ApprovalRequest):  # (a nested call's: its caller waits)
                target = follower.parent_tool_call_id or call_id
                requested.add(target)
                started.discard(target)  # asked again after it started: it waits again
            elif isinstance(follower, ApprovedCallStarted):
                started.add(call_id)
            elif follower.role == "tool_result":
                answered.add(call_id)
            out.append(follower)
            i += 1
        for call in calls:
            if call.id in answered or (call.id in requested and call.id not in started):
                continue
            text = INTERRUPTED_APPROVED_CALL if call.id in started else INTERRUPTED_TOOL_RESULT
            out.append(
                ToolResultMessage(
                    tool_call_id=call.id,
                    tool_name=call.name,
                    content=[TextContent(text=text)],
                    is_error=True,
                    timestamp=message.timestamp,
                )
            )
            added += 1
    return out, added


# --- JSON of states and models -----------------------------------------------------------------


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):  # e.g. GoogleCompat's budgets
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def without_credentials(url: str) -> str:
    """`url` without user info (`https://user:secret@host/v1` → `https://host/v1`): a token is
    as often the user name as the password."""
    if "@" not in url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


# The compat classes a session stores, by the `kind` it writes for each.
_COMPAT_CLASSES: dict[
    object, type[OpenAICompletionsCompat] | type[BedrockCompat] | type[GoogleCompat]
] = {
    "openai-completions": OpenAICompletionsCompat,
    "bedrock-converse-stream": BedrockCompat,
    "google-generative-ai": GoogleCompat,
}
_COMPAT_KINDS = {cls: kind for kind, cls in _COMPAT_CLASSES.items()}


def model_to_json(model: Model, withheld_headers: Sequence[str] = ()) -> dict[str, Any]:
    """A model as JSON: its fields, and its `compat` flags when it has known ones.

    Secrets are left out: of `headers` only the names are kept (`header_names`, with
    `withheld_headers` added), and user info (`user:password@`) in `base_url` is dropped.
    """
    data: dict[str, Any] = {}
    for f in fields(Model):
        value = getattr(model, f.name)
        if f.name == "headers":
            names = sorted({str(k) for k in value} | set(withheld_headers))
            if names:
                data["header_names"] = names
        elif f.name == "base_url":
            data["base_url"] = without_credentials(value)
        elif f.name == "cost":
            data["cost"] = {c.name: getattr(value, c.name) for c in fields(ModelCost)}
        elif f.name == "cloud":
            cloud = cloud_to_json(value)  # its settings, never its credentials
            if cloud is not None:
                data["cloud"] = cloud
        elif f.name == "compat":
            kind = _COMPAT_KINDS.get(type(value))
            if kind is not None:
                data["compat"] = {
                    "kind": kind,
                    **{c.name: _plain(getattr(value, c.name)) for c in fields(value)},
                }
        else:
            data[f.name] = _plain(value)
    return data


def model_from_json(data: Any, where: str) -> tuple[Model, tuple[str, ...]]:
    """The model rebuilt from its stored fields (a custom `base_url` survives), and the names of
    its headers whose values were not stored. Quirk flags the store could not keep come from the
    catalogue's entry for the same provider and id. (Sessions written before format 2 hold header
    values: they are restored, and dropped from the file when it is next written.)
    """
    if not isinstance(data, Mapping) or not isinstance(data.get("id"), str):
        raise SessionCorruptError(f"{where}: model must be an object with an 'id'")
    known = {f.name for f in fields(Model)}
    kwargs = {
        k: v
        for k, v in data.items()
        if k in known and k not in ("cost", "batch_cost", "compat", "cloud")
    }
    kwargs["cloud"] = cloud_from_json(data.get("cloud"))
    names = data.get("header_names", [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise SessionCorruptError(f"{where}: header_names must be a list of strings")
    headers = kwargs.get("headers", {})
    if not isinstance(headers, Mapping):
        raise SessionCorruptError(f"{where}: headers must be an object")
    withheld = tuple(n for n in names if n not in headers)
    try:
        cost = data.get("cost") or {}
        kwargs["cost"] = ModelCost(**{k: v for k, v in cost.items() if k != "kind"})
        batch_cost = data.get("batch_cost")
        if batch_cost is not None:
            kwargs["batch_cost"] = ModelCost(**batch_cost)
        compat = data.get("compat")
        if isinstance(compat, Mapping) and compat.get("kind") in _COMPAT_CLASSES:
            compat_type = _COMPAT_CLASSES[compat["kind"]]
            names = {f.name for f in fields(compat_type)}
            kwargs["compat"] = compat_type(**{k: v for k, v in compat.items() if k in names})
        model = Model(**kwargs)
    except (TypeError, AttributeError) as exc:
        raise SessionCorruptError(f"{where}: invalid model: {exc}") from exc
    if model.compat is None:
        from ..llm.models import get_model

        try:
            listed = get_model(model.provider, model.id)
        except ModelNotFoundError:
            return model, withheld
        if listed.compat is not None and listed.api == model.api:
            model = replace(model, compat=listed.compat)
    return model, withheld


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
    """A `SessionState` as JSON (messages in their versioned JSON form; no header values)."""
    model = state.model
    return {
        "system_prompt": state.system_prompt,
        "model": model_to_json(model, state.withheld_headers) if model is not None else None,
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
    stored = data.get("model")
    model, withheld = (None, ()) if stored is None else model_from_json(stored, f"{where}.model")
    return SessionState(
        system_prompt=prompt,
        model=model,
        thinking_level=level,
        steering=_messages_from_json(data.get("steering", []), f"{where}.steering"),
        follow_up=_messages_from_json(data.get("follow_up", []), f"{where}.follow_up"),
        withheld_headers=withheld,
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
    if not isinstance(session_id, str) or not _ID.fullmatch(session_id):
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


# --- permissions ----------------------------------------------------------------------------

PRIVATE_FILE = 0o600
"""The mode of every file a store creates: sessions hold conversations, for their owner only."""

PRIVATE_DIR = 0o700
"""The mode of a directory a store creates."""


# --- record encoding and checksums -------------------------------------------------------------


def encode_json(value: Any) -> tuple[str, bytes]:
    """A JSON value as compact text and its UTF-8 bytes (what both stores write).

    Nothing stored holds text that UTF-8 cannot hold (a lone surrogate, as a prompt with
    `\\ud800` or `surrogateescape` decoding leaves): messages are valid Unicode in their JSON form
    already (`encode_message`); any other record (state, metadata) with one is written with each
    surrogate pair joined and each lone surrogate replaced by U+FFFD.

    Raises:
        MessageFormatError: the value is not JSON (metadata of the wrong kind, say).
    """
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise MessageFormatError(f"cannot store the session record: {exc}") from exc
    try:
        return text, text.encode()
    except UnicodeEncodeError:
        text = valid_text(text)  # the surrogates are in strings: JSON escaped nothing else
        return text, text.encode()


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def load_json(data: bytes) -> Any:
    """`json.loads` of a stored record, with text that UTF-8 cannot hold (a `\\ud800` escape, as
    earlier versions wrote a lone surrogate) made valid (`valid_json`): the bytes are searched
    first, so a record without one costs one search.

    Raises:
        ValueError: not JSON (`json.JSONDecodeError`, `UnicodeDecodeError`).
    """
    value = json.loads(data)
    if _SURROGATE_ESCAPE.search(data) is not None:
        value = valid_json(value)
    return value


def crc32(data: bytes | memoryview) -> int:
    """The checksum of every stored record: CRC-32 (the zlib/PNG polynomial) of its bytes."""
    return zlib.crc32(data)
