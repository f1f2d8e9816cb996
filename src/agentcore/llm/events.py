"""The events of the streaming protocol, one class per `type`.

Every event but the terminal ones carries `partial`: the assistant message as it stood when the
event was made. Building that snapshot eagerly would copy the whole text on every delta (quadratic
in the answer's length), so an event may hold a *lazy* snapshot that is materialised, once, on
first access of `partial`. Constructing an event with a ready `AssistantMessage` works the same.

The laziness stays private: `partial` is an ordinary dataclass field (keyword-only, left out of
`repr` and `==`), whose slot is read through a property that materialises a lazy source on first
access. So `dataclasses.replace`, `asdict`, `fields`, `==` and `match` behave as on any frozen
dataclass, and `asdict` or `replace` see the snapshot, never the source behind it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, TypeVar

from ..messages import AssistantMessage, ToolCall

__all__ = [
    "ABORTED_ERROR_MESSAGE",
    "AssistantMessageEvent",
    "DoneEvent",
    "ErrorEvent",
    "PartialSource",
    "StartEvent",
    "TextDeltaEvent",
    "TextEndEvent",
    "TextStartEvent",
    "ThinkingDeltaEvent",
    "ThinkingEndEvent",
    "ThinkingStartEvent",
    "ToolCallDeltaEvent",
    "ToolCallEndEvent",
    "ToolCallStartEvent",
]

ABORTED_ERROR_MESSAGE = "request was aborted"
"""The `error_message` of a request that its abort signal stopped (the `error` of its
`ErrorEvent(reason="aborted")`): every provider words it so."""


class PartialSource(Protocol):
    """Something that can build the partial message of one moment (see `MessageBuilder`)."""

    def message(self) -> AssistantMessage: ...


_E = TypeVar("_E")


def lazy_snapshot(name: str, resolve: Any) -> Any:
    """A class decorator for a slotted dataclass: read its field `name` through a property
    that calls `resolve(value)` when the slot holds something other than an `AssistantMessage`
    and stores the result in the slot, so it is resolved once. Writing goes straight to the
    slot (the dataclass's own `__init__` and `replace` use it; the frozen `__setattr__` still
    refuses assignment)."""

    def decorate(cls: type[_E]) -> type[_E]:
        slot = cls.__dict__[name]  # the member descriptor `slots=True` made for the field
        read, write = slot.__get__, slot.__set__

        def get(self: Any) -> AssistantMessage:
            value = read(self)
            if type(value) is AssistantMessage:
                return value
            message: AssistantMessage = resolve(self, value)
            write(self, message)
            return message

        setattr(cls, name, property(get, write, doc="The message as it stood at this event."))
        return cls

    return decorate


def _partial_of(event: object, value: AssistantMessage | PartialSource) -> AssistantMessage:
    return value if isinstance(value, AssistantMessage) else value.message()


def _check_type(given: str, expected: str) -> None:
    if given != expected:
        raise ValueError(f"type must be {expected!r}, got {given!r}")


_set = object.__setattr__


@lazy_snapshot("partial", _partial_of)
@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class StartEvent:
    """The stream began; `partial` is the empty message skeleton."""

    partial: AssistantMessage = field(repr=False, compare=False)
    type: Literal["start"] = "start"

    def __init__(self, *, partial: AssistantMessage | PartialSource, type: str = "start") -> None:
        if type != "start":
            _check_type(type, "start")
        _set(self, "partial", partial)
        _set(self, "type", "start")


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class _BlockEvent:
    content_index: int
    partial: AssistantMessage = field(repr=False, compare=False)


lazy_snapshot("partial", _partial_of)(_BlockEvent)


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class TextStartEvent(_BlockEvent):
    """A text block was opened at `content_index`."""

    type: Literal["text_start"] = "text_start"

    def __init__(
        self,
        *,
        content_index: int,
        partial: AssistantMessage | PartialSource,
        type: str = "text_start",
    ) -> None:
        if type != "text_start":
            _check_type(type, "text_start")
        _set(self, "content_index", content_index)
        _set(self, "partial", partial)
        _set(self, "type", "text_start")


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class TextDeltaEvent(_BlockEvent):
    """Text was appended to the block at `content_index`."""

    delta: str
    type: Literal["text_delta"] = "text_delta"

    def __init__(
        self,
        *,
        content_index: int,
        delta: str,
        partial: AssistantMessage | PartialSource,
        type: str = "text_delta",
    ) -> None:
        if type != "text_delta":
            _check_type(type, "text_delta")
        _set(self, "content_index", content_index)
        _set(self, "partial", partial)
        _set(self, "delta", delta)
        _set(self, "type", "text_delta")


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class TextEndEvent(_BlockEvent):
    """The text block at `content_index` is complete; `content` is its whole text."""

    content: str
    type: Literal["text_end"] = "text_end"

    def __init__(
        self,
        *,
        content_index: int,
        content: str,
        partial: AssistantMessage | PartialSource,
        type: str = "text_end",
    ) -> None:
        if type != "text_end":
            _check_type(type, "text_end")
        _set(self, "content_index", content_index)
        _set(self, "partial", partial)
        _set(self, "content", content)
        _set(self, "type", "text_end")


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class ThinkingStartEvent(_BlockEvent):
    """A thinking block was opened at `content_index`."""

    type: Literal["thinking_start"] = "thinking_start"

    def __init__(
        self,
        *,
        content_index: int,
        partial: AssistantMessage | PartialSource,
        type: str = "thinking_start",
    ) -> None:
        if type != "thinking_start":
            _check_type(type, "thinking_start")
        _set(self, "content_index", content_index)
        _set(self, "partial", partial)
        _set(self, "type", "thinking_start")


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class ThinkingDeltaEvent(_BlockEvent):
    """Reasoning text was appended to the block at `content_index`."""

    delta: str
    type: Literal["thinking_delta"] = "thinking_delta"

    def __init__(
        self,
        *,
        content_index: int,
        delta: str,
        partial: AssistantMessage | PartialSource,
        type: str = "thinking_delta",
    ) -> None:
        if type != "thinking_delta":
            _check_type(type, "thinking_delta")
        _set(self, "content_index", content_index)
        _set(self, "partial", partial)
        _set(self, "delta", delta)
        _set(self, "type", "thinking_delta")


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class ThinkingEndEvent(_BlockEvent):
    """The thinking block at `content_index` is complete; `content` is its whole text."""

    content: str
    type: Literal["thinking_end"] = "thinking_end"

    def __init__(
        self,
        *,
        content_index: int,
        content: str,
        partial: AssistantMessage | PartialSource,
        type: str = "thinking_end",
    ) -> None:
        if type != "thinking_end":
            _check_type(type, "thinking_end")
        _set(self, "content_index", content_index)
        _set(self, "partial", partial)
        _set(self, "content", content)
        _set(self, "type", "thinking_end")


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class ToolCallStartEvent(_BlockEvent):
    """A tool-call block (id and name known, arguments `{}`) was opened at `content_index`."""

    type: Literal["toolcall_start"] = "toolcall_start"

    def __init__(
        self,
        *,
        content_index: int,
        partial: AssistantMessage | PartialSource,
        type: str = "toolcall_start",
    ) -> None:
        if type != "toolcall_start":
            _check_type(type, "toolcall_start")
        _set(self, "content_index", content_index)
        _set(self, "partial", partial)
        _set(self, "type", "toolcall_start")


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class ToolCallDeltaEvent(_BlockEvent):
    """A raw JSON fragment of the arguments arrived; `partial` holds them parsed so far."""

    delta: str
    type: Literal["toolcall_delta"] = "toolcall_delta"

    def __init__(
        self,
        *,
        content_index: int,
        delta: str,
        partial: AssistantMessage | PartialSource,
        type: str = "toolcall_delta",
    ) -> None:
        if type != "toolcall_delta":
            _check_type(type, "toolcall_delta")
        _set(self, "content_index", content_index)
        _set(self, "partial", partial)
        _set(self, "delta", delta)
        _set(self, "type", "toolcall_delta")


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class ToolCallEndEvent(_BlockEvent):
    """The tool call at `content_index` is complete (arguments parsed, not yet validated)."""

    tool_call: ToolCall
    type: Literal["toolcall_end"] = "toolcall_end"

    def __init__(
        self,
        *,
        content_index: int,
        tool_call: ToolCall,
        partial: AssistantMessage | PartialSource,
        type: str = "toolcall_end",
    ) -> None:
        if type != "toolcall_end":
            _check_type(type, "toolcall_end")
        _set(self, "content_index", content_index)
        _set(self, "partial", partial)
        _set(self, "tool_call", tool_call)
        _set(self, "type", "toolcall_end")


@dataclass(frozen=True, slots=True, kw_only=True)
class DoneEvent:
    """Terminal success: `reason` is stop, length or tool_use; `message` is the final message."""

    reason: Literal["stop", "length", "tool_use"]
    message: AssistantMessage
    type: Literal["done"] = "done"


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorEvent:
    """Terminal failure: `reason` is error or aborted; `error` is the message so far, with usage
    and `error_message`."""

    reason: Literal["error", "aborted"]
    error: AssistantMessage
    type: Literal["error"] = "error"


AssistantMessageEvent: TypeAlias = (
    StartEvent
    | TextStartEvent
    | TextDeltaEvent
    | TextEndEvent
    | ThinkingStartEvent
    | ThinkingDeltaEvent
    | ThinkingEndEvent
    | ToolCallStartEvent
    | ToolCallDeltaEvent
    | ToolCallEndEvent
    | DoneEvent
    | ErrorEvent
)
"""One event of the streaming protocol: discriminate on `type`."""
