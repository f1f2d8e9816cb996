"""The events of the streaming protocol, one class per `type`.

Every event but the terminal ones carries `partial`: the assistant message as it stood when the
event was made. Building that snapshot eagerly would copy the whole text on every delta (quadratic
in the answer's length), so an event may hold a *lazy* snapshot that is materialised, once, on
first access of `partial`. Constructing an event with a ready `AssistantMessage` works the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeAlias

from ..messages import AssistantMessage, ToolCall

__all__ = [
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


class PartialSource(Protocol):
    """Something that can build the partial message of one moment (see `MessageBuilder`)."""

    def message(self) -> AssistantMessage: ...


def _resolve(event: object) -> AssistantMessage:
    value = event._partial  # type: ignore[attr-defined]
    if type(value) is AssistantMessage:
        return value
    message = value if isinstance(value, AssistantMessage) else value.message()
    object.__setattr__(event, "_partial", message)
    return message


@dataclass(frozen=True, slots=True, init=False)
class StartEvent:
    """The stream began; `partial` is the empty message skeleton."""

    _partial: AssistantMessage | PartialSource = field(repr=False, compare=False)
    type: Literal["start"] = "start"

    def __init__(self, *, partial: AssistantMessage | PartialSource) -> None:
        object.__setattr__(self, "_partial", partial)
        object.__setattr__(self, "type", "start")

    @property
    def partial(self) -> AssistantMessage:
        """The message as it stood at this event."""
        return _resolve(self)


@dataclass(frozen=True, slots=True, init=False)
class _BlockEvent:
    content_index: int
    _partial: AssistantMessage | PartialSource = field(repr=False, compare=False)

    def _init(self, content_index: int, partial: AssistantMessage | PartialSource) -> None:
        object.__setattr__(self, "content_index", content_index)
        object.__setattr__(self, "_partial", partial)

    @property
    def partial(self) -> AssistantMessage:
        """The message as it stood at this event."""
        return _resolve(self)


@dataclass(frozen=True, slots=True, init=False)
class TextStartEvent(_BlockEvent):
    """A text block was opened at `content_index`."""

    type: Literal["text_start"] = "text_start"

    def __init__(self, *, content_index: int, partial: AssistantMessage | PartialSource) -> None:
        self._init(content_index, partial)
        object.__setattr__(self, "type", "text_start")


@dataclass(frozen=True, slots=True, init=False)
class TextDeltaEvent(_BlockEvent):
    """Text was appended to the block at `content_index`."""

    delta: str
    type: Literal["text_delta"] = "text_delta"

    def __init__(
        self, *, content_index: int, delta: str, partial: AssistantMessage | PartialSource
    ) -> None:
        self._init(content_index, partial)
        object.__setattr__(self, "delta", delta)
        object.__setattr__(self, "type", "text_delta")


@dataclass(frozen=True, slots=True, init=False)
class TextEndEvent(_BlockEvent):
    """The text block at `content_index` is complete; `content` is its whole text."""

    content: str
    type: Literal["text_end"] = "text_end"

    def __init__(
        self, *, content_index: int, content: str, partial: AssistantMessage | PartialSource
    ) -> None:
        self._init(content_index, partial)
        object.__setattr__(self, "content", content)
        object.__setattr__(self, "type", "text_end")


@dataclass(frozen=True, slots=True, init=False)
class ThinkingStartEvent(_BlockEvent):
    """A thinking block was opened at `content_index`."""

    type: Literal["thinking_start"] = "thinking_start"

    def __init__(self, *, content_index: int, partial: AssistantMessage | PartialSource) -> None:
        self._init(content_index, partial)
        object.__setattr__(self, "type", "thinking_start")


@dataclass(frozen=True, slots=True, init=False)
class ThinkingDeltaEvent(_BlockEvent):
    """Reasoning text was appended to the block at `content_index`."""

    delta: str
    type: Literal["thinking_delta"] = "thinking_delta"

    def __init__(
        self, *, content_index: int, delta: str, partial: AssistantMessage | PartialSource
    ) -> None:
        self._init(content_index, partial)
        object.__setattr__(self, "delta", delta)
        object.__setattr__(self, "type", "thinking_delta")


@dataclass(frozen=True, slots=True, init=False)
class ThinkingEndEvent(_BlockEvent):
    """The thinking block at `content_index` is complete; `content` is its whole text."""

    content: str
    type: Literal["thinking_end"] = "thinking_end"

    def __init__(
        self, *, content_index: int, content: str, partial: AssistantMessage | PartialSource
    ) -> None:
        self._init(content_index, partial)
        object.__setattr__(self, "content", content)
        object.__setattr__(self, "type", "thinking_end")


@dataclass(frozen=True, slots=True, init=False)
class ToolCallStartEvent(_BlockEvent):
    """A tool-call block (id and name known, arguments `{}`) was opened at `content_index`."""

    type: Literal["toolcall_start"] = "toolcall_start"

    def __init__(self, *, content_index: int, partial: AssistantMessage | PartialSource) -> None:
        self._init(content_index, partial)
        object.__setattr__(self, "type", "toolcall_start")


@dataclass(frozen=True, slots=True, init=False)
class ToolCallDeltaEvent(_BlockEvent):
    """A raw JSON fragment of the arguments arrived; `partial` holds them parsed so far."""

    delta: str
    type: Literal["toolcall_delta"] = "toolcall_delta"

    def __init__(
        self, *, content_index: int, delta: str, partial: AssistantMessage | PartialSource
    ) -> None:
        self._init(content_index, partial)
        object.__setattr__(self, "delta", delta)
        object.__setattr__(self, "type", "toolcall_delta")


@dataclass(frozen=True, slots=True, init=False)
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
    ) -> None:
        self._init(content_index, partial)
        object.__setattr__(self, "tool_call", tool_call)
        object.__setattr__(self, "type", "toolcall_end")


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
