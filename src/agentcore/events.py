"""The events of an agent run, one class per `type`.

A run is published as a well-nested sequence: `agent_start` first and `agent_end` last; turns
(`turn_start` … `turn_end`) never nest; every message's `message_start` and `message_end` sit inside
a turn; every `tool_execution_start` has one `tool_execution_end`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from .guardrails._trip import GuardrailTrip
from .limits import LimitReached
from .llm.events import AssistantMessageEvent, lazy_snapshot
from .messages import AgentMessage, AssistantMessage, ToolCaller, ToolResultMessage

if TYPE_CHECKING:
    from .memory._records import MemoryRecord
    from .tools import AgentToolResult

__all__ = [
    "AgentEndEvent",
    "AgentEvent",
    "AgentEventSink",
    "AgentStartEvent",
    "AgentSwitchEvent",
    "MemoryUpdateEvent",
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


def _snapshot_of(update: MessageUpdateEvent, given: AssistantMessage | None) -> AssistantMessage:
    event = update.assistant_message_event
    if event.type == "done":
        return event.message
    if event.type == "error":
        return event.error
    return event.partial


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class MessageUpdateEvent:
    """The assistant message grew: `message` is its snapshot, `assistant_message_event` the raw
    model event. Unless given, the snapshot is taken from the model event on first access of
    `message` (it is a plain dataclass field otherwise, left out of `repr` and `==`)."""

    assistant_message_event: AssistantMessageEvent
    message: AssistantMessage = field(repr=False, compare=False)
    type: Literal["message_update"] = "message_update"

    def __init__(
        self,
        *,
        assistant_message_event: AssistantMessageEvent,
        message: AssistantMessage | None = None,
        type: str = "message_update",
    ) -> None:
        if type != "message_update":
            raise ValueError(f"type must be 'message_update', got {type!r}")
        _write_event(self, assistant_message_event)
        _write_message(self, message)
        _write_type(self, "message_update")


_slots: Any = MessageUpdateEvent.__dict__  # the slot descriptors, before `message` is wrapped
_write_event = _slots["assistant_message_event"].__set__
_write_message = _slots["message"].__set__
_write_type = _slots["type"].__set__
lazy_snapshot("message", _snapshot_of)(MessageUpdateEvent)
_new = object.__new__


def message_update(event: AssistantMessageEvent) -> MessageUpdateEvent:
    """`MessageUpdateEvent(assistant_message_event=event)`, built without the keyword call:
    the loop makes one per streamed delta."""
    update: MessageUpdateEvent = _new(MessageUpdateEvent)
    _write_event(update, event)
    _write_message(update, None)
    _write_type(update, "message_update")
    return update


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
    parent_tool_call_id: str | None = None  # the call whose code made this call (code mode)
    caller: ToolCaller | None = None  # the provider's code run that made the call (hosted code)
    agent: str | None = None  # the agent whose call it is, in a run with handoffs
    type: Literal["tool_execution_start"] = "tool_execution_start"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolExecutionUpdateEvent:
    """A running tool reported progress through `on_update`."""

    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    partial_result: AgentToolResult
    parent_tool_call_id: str | None = None  # the call whose code made this call (code mode)
    caller: ToolCaller | None = None  # the provider's code run that made the call (hosted code)
    agent: str | None = None  # the agent whose call it is, in a run with handoffs
    type: Literal["tool_execution_update"] = "tool_execution_update"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolExecutionEndEvent:
    """A tool call finished (after hooks); its result message follows."""

    tool_call_id: str
    tool_name: str
    result: AgentToolResult
    is_error: bool
    parent_tool_call_id: str | None = None  # the call whose code made this call (code mode)
    caller: ToolCaller | None = None  # the provider's code run that made the call (hosted code)
    agent: str | None = None  # the agent whose call it is, in a run with handoffs
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
    without one); `pending_approvals` are the tool calls waiting for a decision; `guardrail` is
    the input or output guardrail that ended the run (a `GuardrailTrip`), or None;
    `last_agent` is the agent that had the conversation when the run ended, in a run with
    handoffs (None otherwise)."""

    messages: list[AgentMessage]
    limit: LimitReached | None = None
    output: Any = None
    pending_approvals: tuple[Any, ...] = ()
    guardrail: GuardrailTrip | None = None
    last_agent: str | None = None
    type: Literal["agent_end"] = "agent_end"


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentSwitchEvent:
    """The conversation moved to another agent (a handoff), or back to the agent that handed
    off (`returns`: the target was entered with `handoff(..., returns=True)` and has answered).
    Sent at the turn boundary: after the `turn_end` of the turn whose tool batch carried the
    handoff, before the next `turn_start`. `tool_call_id` is the handoff call's id (for a
    return, the id of the call that entered the returning agent)."""

    from_agent: str
    to_agent: str
    tool_call_id: str
    returns: bool = False
    type: Literal["agent_switch"] = "agent_switch"


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryUpdateEvent:
    """The memory extractor wrote memories (`Memory(extract=...)`, see docs/memory.md). An
    Agent sends it to its listeners after the `agent_end` of the run it read, outside of any
    run's sequence (the loop never emits it). `records` are the memories written (undo them
    with `Memory.undo(event)`), `rejected` says which proposals were refused and why (not
    grounded in a user message, already remembered), `error` why the extraction wrote nothing
    more (a bad answer, a failed request or store), else None. `extraction_id` names this
    extraction; `model` is the extractor's `provider/id`."""

    extraction_id: str
    session_id: str | None
    model: str
    records: tuple[MemoryRecord, ...] = ()
    rejected: tuple[str, ...] = ()
    error: str | None = None
    type: Literal["memory_update"] = "memory_update"


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
    | AgentSwitchEvent
    | AgentEndEvent
    | MemoryUpdateEvent
)
"""Any event of a run; match on `type` (or the class) to tell them apart."""

AgentEventSink: TypeAlias = Callable[[AgentEvent], Awaitable[None] | None]
"""Where a run's events go: the `emit` of `run_agent_loop`, a plain function or a coroutine
function taking one event. The loop awaits it for every event, in order, so a slow sink slows the
run instead of piling events up; if it raises, the run ends through its failure path."""
