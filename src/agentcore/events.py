"""The events of an agent run, one class per `type`.

A run is published as a well-nested sequence: `agent_start` first and `agent_end` last; turns
(`turn_start` … `turn_end`) never nest; every message's `message_start` and `message_end` sit inside
a turn; every `tool_execution_start` has one `tool_execution_end`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from .limits import LimitReached
from .llm.events import AssistantMessageEvent
from .messages import AgentMessage, AssistantMessage, ToolResultMessage

if TYPE_CHECKING:
    from .tools import AgentToolResult

__all__ = [
    "AgentEndEvent",
    "AgentEvent",
    "AgentStartEvent",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "TurnEndEvent",
    "TurnStartEvent",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentStartEvent:
    """The run began."""

    type: Literal["agent_start"] = "agent_start"


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnStartEvent:
    """A turn began: one model answer and the tool calls it requested."""

    type: Literal["turn_start"] = "turn_start"


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageStartEvent:
    """A message enters the transcript (for the assistant: the empty or partial message)."""

    message: AgentMessage
    type: Literal["message_start"] = "message_start"


@dataclass(frozen=True, slots=True, init=False)
class MessageUpdateEvent:
    """The assistant message grew: `message` is its snapshot, `assistant_message_event` the raw
    model event. The snapshot is built on first access of `message`."""

    assistant_message_event: AssistantMessageEvent
    _message: AssistantMessage | None = field(repr=False, compare=False)
    type: Literal["message_update"] = "message_update"

    def __init__(
        self,
        *,
        assistant_message_event: AssistantMessageEvent,
        message: AssistantMessage | None = None,
    ) -> None:
        object.__setattr__(self, "assistant_message_event", assistant_message_event)
        object.__setattr__(self, "_message", message)
        object.__setattr__(self, "type", "message_update")

    @property
    def message(self) -> AssistantMessage:
        """The assistant message as it stood at this event."""
        if self._message is not None:
            return self._message
        event = self.assistant_message_event
        if event.type == "done":
            message = event.message
        elif event.type == "error":
            message = event.error
        else:
            message = event.partial
        object.__setattr__(self, "_message", message)
        return message


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageEndEvent:
    """A message is complete and has joined the transcript."""

    message: AgentMessage
    type: Literal["message_end"] = "message_end"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolExecutionStartEvent:
    """A tool call is being processed; `args` are the raw arguments from the model."""

    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    type: Literal["tool_execution_start"] = "tool_execution_start"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolExecutionUpdateEvent:
    """A running tool reported progress through `on_update`."""

    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    partial_result: AgentToolResult
    type: Literal["tool_execution_update"] = "tool_execution_update"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolExecutionEndEvent:
    """A tool call finished (after hooks); its result message follows."""

    tool_call_id: str
    tool_name: str
    result: AgentToolResult
    is_error: bool
    type: Literal["tool_execution_end"] = "tool_execution_end"


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnEndEvent:
    """A turn ended: its assistant message and the results of its tool calls, in call order."""

    message: AssistantMessage
    tool_results: list[ToolResultMessage]
    type: Literal["turn_end"] = "turn_end"


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentEndEvent:
    """The run ended; `messages` are the messages it added, in transcript order. `limit` names
    the bound (`max_turns`, a usage limit) that ended the run, or is None. `output` is the
    validated final answer of a run with an `output_type` (None otherwise, or when it ended
    without one); `pending_approvals` are the tool calls waiting for a decision."""

    messages: list[AgentMessage]
    limit: LimitReached | None = None
    output: Any = None
    pending_approvals: tuple[Any, ...] = ()
    type: Literal["agent_end"] = "agent_end"


AgentEvent: TypeAlias = (
    AgentStartEvent
    | TurnStartEvent
    | MessageStartEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent
    | TurnEndEvent
    | AgentEndEvent
)
"""Any event of a run; match on `type` (or the class) to tell them apart."""
