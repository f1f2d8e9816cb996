"""The message and content types (re-exported by `agentcore.messages`, which documents them)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

__all__ = [
    "message_clock",
    "now_ms",
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
    "ToolCaller",
    "ToolResultContent",
    "ToolResultMessage",
    "Usage",
    "UserContent",
    "UserMessage",
]

StopReason: TypeAlias = Literal["stop", "length", "tool_use", "error", "aborted"]
"""Why an answer ended: finished, hit the output limit, called tools, failed, or was aborted."""


_clock: ContextVar[Callable[[], int] | None] = ContextVar("agentcore_message_clock", default=None)


def now_ms() -> int:
    """The current time as integer milliseconds since the epoch (the clock of `message_clock`
    when one is in effect)."""
    clock = _clock.get()
    if clock is not None:
        return clock()
    return time.time_ns() // 1_000_000


@contextmanager
def message_clock(clock: Callable[[], int]) -> Iterator[None]:
    """Within the block (in this task and the tasks it starts), `now_ms` and so the default
    `timestamp` of every new message read `clock()` (integer milliseconds since the epoch)
    instead of the system clock.

    A durable workflow replays its code and must build the same messages every time: it sets
    the workflow's deterministic clock here (see `agentcore.temporal`). A workflow evicted from
    a worker's cache is closed by the garbage collector, in another context than the one the
    clock was set in: there is nothing to restore then, and the block ends quietly.
    """
    token = _clock.set(clock)
    try:
        yield
    finally:
        with suppress(ValueError):  # closed from another context (below)
            _clock.reset(token)


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
class ToolCaller:
    """Who made a tool call when it was not the model itself: code the provider runs for it.

    With the providers' hosted code execution (Anthropic's programmatic tool calling; see
    docs/code-mode.md), the model writes code that the provider runs, and each call that code
    makes of one of your tools comes back as a `ToolCall` whose `caller` is this.

    Attributes:
        kind: the provider's name for the caller, as it sent it (Anthropic:
            `code_execution_20260120`).
        id: the id of the provider's code run that made the call (Anthropic: the `tool_id`, the
            id of its `server_tool_use` block); the calls of one run share it.
        code: the code that run executes, when the transcript holds it (for UIs to show), else
            None.
    """

    kind: str
    id: str
    code: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """A tool call requested by the model; `arguments` is the parsed JSON object.

    `invalid_arguments` holds the text the model sent when it was not one complete JSON object
    (cut off, trailing garbage, two objects, not an object): `arguments` is then `{}` and the call
    is never executed; it gets an error result quoting the parser's reason instead.

    `caller` is None for a call the model made itself, and a `ToolCaller` for one made by code
    the provider runs (hosted code execution): the call is run and answered as any other.
    """

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    thought_signature: str | None = None
    invalid_arguments: str | None = None
    caller: ToolCaller | None = None
    type: Literal["tool_call"] = "tool_call"


_INF = float("inf")
_PARTS = ("input", "output", "cache_read", "cache_write")


@dataclass(frozen=True, slots=True, kw_only=True)
class Cost:
    """Cost in USD. `total` is always the sum of the four parts.

    Every part is a finite number >= 0: a negative, NaN or infinite one raises `ValueError`
    naming the field (it would lower a run's totals or make `cost >= limit` never true)."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0
    total: float = field(init=False)

    def __post_init__(self) -> None:
        total = self.input + self.output + self.cache_read + self.cache_write
        # one comparison each, and the sum for NaN and infinity (either makes `total < inf` false)
        if not (
            self.input >= 0
            and self.output >= 0
            and self.cache_read >= 0
            and self.cache_write >= 0
            and total < _INF
        ):
            _refuse(self)
        object.__setattr__(self, "total", total)


_ZERO_COST = Cost()
"""The default cost of every usage, shared (frozen)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Token counts of one request. `total_tokens` is always the sum of the four counts.

    Every count is a finite number >= 0: a negative, NaN or infinite one raises `ValueError`
    naming the field, so that no tool or peer can switch off a run's usage limits."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: Cost = _ZERO_COST
    total_tokens: int = field(init=False)

    def __post_init__(self) -> None:
        total = self.input + self.output + self.cache_read + self.cache_write
        if not (
            self.input >= 0
            and self.output >= 0
            and self.cache_read >= 0
            and self.cache_write >= 0
            and total < _INF
        ):
            _refuse(self)
        object.__setattr__(self, "total_tokens", total)


def _refuse(record: Cost | Usage) -> None:
    """Raise `ValueError` naming the first part of `record` that is not a finite number >= 0."""
    for name in _PARTS:
        value = getattr(record, name)
        if not (value >= 0 and value < _INF):
            break
    else:  # each part is finite but the sum is not
        name, value = "total", sum(getattr(record, n) for n in _PARTS)
    raise ValueError(
        f"{type(record).__name__}.{name} must be a finite number >= 0, got {value!r:.40}"
    )


_ZERO_USAGE = Usage()
"""The default usage of every answer: one shared instance (frozen, so sharing is safe), instead of
a new one built for each `AssistantMessage`."""


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
    usage: Usage = _ZERO_USAGE
    stop_reason: StopReason = "stop"
    error_message: str | None = None
    agent: str | None = None  # the agent that answered, in a run with handoffs
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
    agent: str | None = None  # the agent whose call this answers, in a run with handoffs
    timestamp: int = field(default_factory=now_ms)
    role: Literal["tool_result"] = "tool_result"


Message: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage
"""A message a model understands."""


AgentMessage: TypeAlias = Message | Any
"""A `Message`, or an application-defined message object with a `role` attribute."""
