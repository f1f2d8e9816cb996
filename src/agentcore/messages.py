"""Messages and content blocks: the transcript that the loop builds and the model reads.

Every type is a frozen, slotted, keyword-only dataclass with a discriminator (`type` for content
blocks, `role` for messages), so one object can be handed to many listeners and matched with
`match`. `to_json`/`from_json` give a lossless, versioned JSON form for saving transcripts.

`Usage.total_tokens` and `Cost.total` are derived from their parts and cannot disagree with them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, Literal, TypeAlias

from .errors import MessageFormatError

__all__ = [
    "FORMAT_VERSION",
    "AgentMessage",
    "AssistantContent",
    "AssistantMessage",
    "Cost",
    "ImageContent",
    "Message",
    "StopReason",
    "TextContent",
    "ThinkingContent",
    "ToolCall",
    "ToolResultContent",
    "ToolResultMessage",
    "Usage",
    "UserContent",
    "UserMessage",
    "from_json",
    "now_ms",
    "register_message_type",
    "to_json",
]

FORMAT_VERSION = 1
"""Version of the JSON form written by `to_json` (the `"v"` key of every message)."""

StopReason: TypeAlias = Literal["stop", "length", "tool_use", "error", "aborted"]
"""Why an answer ended: finished, hit the output limit, called tools, failed, or was aborted."""


def now_ms() -> int:
    """The current time as integer milliseconds since the epoch."""
    return time.time_ns() // 1_000_000


@dataclass(frozen=True, slots=True, kw_only=True)
class TextContent:
    """A block of text, optionally with a provider signature for replay."""

    text: str
    text_signature: str | None = None
    type: Literal["text"] = "text"


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingContent:
    """The model's reasoning. `redacted` blocks carry only an opaque signature."""

    thinking: str
    thinking_signature: str | None = None
    redacted: bool = False
    type: Literal["thinking"] = "thinking"


@dataclass(frozen=True, slots=True, kw_only=True)
class ImageContent:
    """An image as base64 `data` with its `mime_type` (e.g. ``image/png``)."""

    data: str
    mime_type: str
    type: Literal["image"] = "image"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """A tool call requested by the model; `arguments` is the parsed JSON object.

    `invalid_arguments` holds the text the model sent when it was not one complete JSON object
    (cut off, trailing garbage, two objects, not an object): `arguments` is then `{}` and the call
    is never executed; it gets an error result quoting the parser's reason instead.
    """

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    thought_signature: str | None = None
    invalid_arguments: str | None = None
    type: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True, slots=True, kw_only=True)
class Cost:
    """Cost in USD. `total` is always the sum of the four parts."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0
    total: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "total", self.input + self.output + self.cache_read + self.cache_write
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Token counts of one request. `total_tokens` is always the sum of the four counts."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: Cost = field(default_factory=Cost)
    total_tokens: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "total_tokens", self.input + self.output + self.cache_read + self.cache_write
        )


UserContent: TypeAlias = TextContent | ImageContent
"""A block of a user message."""

AssistantContent: TypeAlias = TextContent | ThinkingContent | ToolCall
"""A block of an assistant message."""

ToolResultContent: TypeAlias = TextContent | ImageContent
"""A block of a tool result."""


@dataclass(frozen=True, slots=True, kw_only=True)
class UserMessage:
    """A message from the user: a plain string or a list of text and image blocks."""

    content: str | list[UserContent]
    timestamp: int = field(default_factory=now_ms)
    role: Literal["user"] = "user"


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantMessage:
    """A model's answer, with the API, provider and model that produced it."""

    content: list[AssistantContent] = field(default_factory=list)
    api: str = ""
    provider: str = ""
    model: str = ""
    usage: Usage = field(default_factory=Usage)
    stop_reason: StopReason = "stop"
    error_message: str | None = None
    timestamp: int = field(default_factory=now_ms)
    role: Literal["assistant"] = "assistant"

    @property
    def text(self) -> str:
        """The concatenated text blocks (no thinking, no tool calls)."""
        return "".join(b.text for b in self.content if isinstance(b, TextContent))

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The tool-call blocks, in order."""
        return [b for b in self.content if isinstance(b, ToolCall)]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultMessage:
    """The result of one tool call, fed back to the model."""

    tool_call_id: str
    tool_name: str
    content: list[ToolResultContent] = field(default_factory=list)
    details: Any = None
    usage: Usage | None = None
    added_tool_names: list[str] | None = None
    is_error: bool = False
    timestamp: int = field(default_factory=now_ms)
    role: Literal["tool_result"] = "tool_result"


Message: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage
"""A message a model understands."""


AgentMessage: TypeAlias = Message | Any
"""A `Message`, or an application-defined message object with a `role` attribute."""


# --- JSON ------------------------------------------------------------------------------------

_BLOCKS: dict[str, type[Any]] = {
    "text": TextContent,
    "thinking": ThinkingContent,
    "image": ImageContent,
    "tool_call": ToolCall,
}
_MESSAGES: dict[str, type[Any]] = {
    "user": UserMessage,
    "assistant": AssistantMessage,
    "tool_result": ToolResultMessage,
}
_DERIVED = frozenset({"total", "total_tokens"})


def register_message_type(cls: type[Any]) -> type[Any]:
    """Register an application-defined message dataclass so `to_json`/`from_json` handle it.

    The class must be a dataclass whose `role` field has a default (the discriminator) and whose
    other fields hold JSON values. Usable as a class decorator.
    """
    if not is_dataclass(cls):
        raise TypeError(f"register_message_type expects a dataclass, got {cls!r}")
    role = next((f.default for f in fields(cls) if f.name == "role"), None)
    if not isinstance(role, str):
        raise TypeError(f"{cls.__name__} needs a `role: str` field with a default value")
    if role in ("user", "assistant", "tool_result"):
        raise ValueError(f"role {role!r} is reserved for agentcore's own messages")
    _MESSAGES[role] = cls
    return cls


def _encode(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for f in fields(value):
            v = getattr(value, f.name)
            if v is None and f.name not in ("details",):
                continue
            out[f.name] = _encode(v)
        return out
    if isinstance(value, list | tuple):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    return value


def to_json(message: AgentMessage) -> dict[str, Any]:
    """Encode a message as a JSON-compatible dict with a format version (`"v"`).

    Raises:
        MessageFormatError: for an object that is neither a built-in message nor a registered one.
    """
    role = getattr(message, "role", None)
    if role not in _MESSAGES or not isinstance(message, _MESSAGES[role]):
        raise MessageFormatError(
            f"cannot encode {type(message).__name__}: expected an agentcore message or a type "
            "registered with register_message_type()"
        )
    data: dict[str, Any] = {"v": FORMAT_VERSION}
    data.update(_encode(message))
    return data


def _decode_block(data: Any, where: str) -> Any:
    if not isinstance(data, Mapping) or data.get("type") not in _BLOCKS:
        raise MessageFormatError(f"{where}: expected a content block with a known 'type'")
    return _build(_BLOCKS[str(data["type"])], data, where)


def _build(cls: type[Any], data: Mapping[str, Any], where: str) -> Any:
    kwargs: dict[str, Any] = {}
    names = {f.name for f in fields(cls) if f.init}
    for key, value in data.items():
        if key == "v" or key in _DERIVED:
            continue
        if key not in names:
            raise MessageFormatError(f"{where}: unknown field {key!r} for {cls.__name__}")
        kwargs[key] = value
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise MessageFormatError(f"{where}: {exc}") from exc


def _decode_usage(data: Any, where: str) -> Usage:
    if not isinstance(data, Mapping):
        raise MessageFormatError(f"{where}: usage must be an object")
    cost = data.get("cost", {})
    if not isinstance(cost, Mapping):
        raise MessageFormatError(f"{where}: usage.cost must be an object")
    return _build(Usage, {**data, "cost": _build(Cost, cost, f"{where}.cost")}, where)  # type: ignore[no-any-return]


_MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}
"""Upgrades from version N to N+1, applied in order by `from_json`."""


def from_json(data: Mapping[str, Any]) -> AgentMessage:
    """Decode a message written by `to_json` (any format version up to `FORMAT_VERSION`).

    Raises:
        MessageFormatError: naming what was malformed (unknown role, field or block type,
            a newer format version).
    """
    if not isinstance(data, Mapping):
        raise MessageFormatError(f"expected a JSON object for a message, got {type(data).__name__}")
    version = data.get("v", 1)
    if not isinstance(version, int) or version < 1:
        raise MessageFormatError(f"invalid format version {version!r}")
    if version > FORMAT_VERSION:
        raise MessageFormatError(
            f"message format version {version} is newer than this agentcore "
            f"(reads up to {FORMAT_VERSION}); upgrade agentcore"
        )
    doc = dict(data)
    while version < FORMAT_VERSION:
        doc = _MIGRATIONS[version](doc)
        version += 1
    role = doc.get("role")
    cls = _MESSAGES.get(role) if isinstance(role, str) else None
    if cls is None:
        raise MessageFormatError(
            f"unknown message role {role!r}: expected one of {sorted(_MESSAGES)}"
        )
    where = f"{role} message"
    content = doc.get("content")
    if (cls is UserMessage and isinstance(content, list)) or cls in (
        AssistantMessage,
        ToolResultMessage,
    ):
        if not isinstance(content, list):
            raise MessageFormatError(f"{where}: content must be a list")
        doc["content"] = [_decode_block(b, f"{where}.content[{i}]") for i, b in enumerate(content)]
    if cls in (AssistantMessage, ToolResultMessage) and doc.get("usage") is not None:
        doc["usage"] = _decode_usage(doc["usage"], f"{where}.usage")
    return _build(cls, doc, where)
