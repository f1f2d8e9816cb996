"""What crosses a durable run's boundary, as JSON: messages, tool results, agent events, and
the run's options (`RunOptions`), shared by the durable engines (`agentcore.temporal`,
`agentcore.dbos`).

A durable engine stores every step's input and result (Temporal in the workflow's history, DBOS
in its system database), so everything that crosses it is made JSON here, with agentcore's own
message format (`agentcore.messages.to_json`) for messages and content blocks. Events travel to
watchers in these forms.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal

from .agent import QueueMode
from .config import AgentLoopConfig
from .errors import ConfigError
from .events import (
    AgentEndEvent,
    AgentEvent,
    AgentStartEvent,
    AgentSwitchEvent,
    MemoryUpdateEvent,
    MessageEndEvent,
    MessageStartEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from .guardrails import GuardrailTrip
from .limits import LimitReached, UsageLimits
from .llm import Model, ThinkingLevel
from .memory import MemoryRecord
from .messages import (
    AgentMessage,
    AssistantMessage,
    ToolCaller,
    ToolResultMessage,
    from_json,
    to_json,
)
from .tools import AgentToolResult, ToolExecutionMode

__all__ = [
    "RunOptions",
    "event_from_json",
    "event_to_json",
    "messages_from_json",
    "messages_to_json",
    "result_from_json",
    "result_to_json",
]

_QUEUE_MODES = ("one-at-a-time", "all")


def messages_to_json(messages: list[AgentMessage]) -> list[dict[str, Any]]:
    """Messages in agentcore's JSON form."""
    return [to_json(m) for m in messages]


def messages_from_json(data: list[dict[str, Any]]) -> list[AgentMessage]:
    """Messages back from `messages_to_json`."""
    return [from_json(m) for m in data]


def result_to_json(result: AgentToolResult) -> dict[str, Any]:
    """A tool's result as JSON (through the tool-result message form, which checks it)."""
    message = ToolResultMessage(
        tool_call_id="",
        tool_name="",
        content=list(result.content),
        details=result.details,
        usage=result.usage,
        added_tool_names=result.added_tool_names,
        is_error=result.is_error,
        timestamp=0,
    )
    return {"message": to_json(message), "terminate": result.terminate}


def result_from_json(data: dict[str, Any]) -> AgentToolResult:
    """A tool's result back from `result_to_json`."""
    message = from_json(data["message"])
    assert isinstance(message, ToolResultMessage)
    return AgentToolResult(
        content=list(message.content),
        details=message.details,
        usage=message.usage,
        added_tool_names=message.added_tool_names,
        terminate=bool(data.get("terminate", False)),
        is_error=message.is_error,
    )


def _limit_to_json(limit: LimitReached | None) -> dict[str, Any] | None:
    if limit is None:
        return None
    return {"kind": limit.kind, "limit": limit.limit, "used": limit.used}


def _limit_from_json(data: dict[str, Any] | None) -> LimitReached | None:
    if data is None:
        return None
    return LimitReached(kind=data["kind"], limit=data["limit"], used=data["used"])


def _named(data: dict[str, Any], agent: str | None) -> dict[str, Any]:
    if agent is not None:  # (a run with handoffs) the agent the call belongs to
        data["agent"] = agent
    return data


def _caller_json(caller: ToolCaller | None) -> dict[str, Any]:
    if caller is None:
        return {}
    return {"caller": {"kind": caller.kind, "id": caller.id, "code": caller.code}}


def _caller_from_json(data: Any) -> ToolCaller | None:
    if data is None:
        return None
    return ToolCaller(kind=data["kind"], id=data["id"], code=data.get("code"))


def event_to_json(event: AgentEvent) -> dict[str, Any]:
    """An agent event as JSON (`message_update` events are never produced by a durable run)."""
    match event:
        case AgentStartEvent() | TurnStartEvent():
            return {"type": event.type}
        case MessageStartEvent() | MessageEndEvent():
            return {"type": event.type, "message": to_json(event.message)}
        case ToolExecutionStartEvent():
            return _named(
                {
                    "type": event.type,
                    "tool_call_id": event.tool_call_id,
                    "tool_name": event.tool_name,
                    "args": event.args,
                    **_caller_json(event.caller),
                },
                event.agent,
            )
        case ToolExecutionUpdateEvent():
            return _named(
                {
                    "type": event.type,
                    "tool_call_id": event.tool_call_id,
                    "tool_name": event.tool_name,
                    "args": event.args,
                    "partial_result": result_to_json(event.partial_result),
                    **_caller_json(event.caller),
                },
                event.agent,
            )
        case ToolExecutionEndEvent():
            return _named(
                {
                    "type": event.type,
                    "tool_call_id": event.tool_call_id,
                    "tool_name": event.tool_name,
                    "result": result_to_json(event.result),
                    "is_error": event.is_error,
                    **_caller_json(event.caller),
                },
                event.agent,
            )
        case AgentSwitchEvent():
            return {
                "type": event.type,
                "from_agent": event.from_agent,
                "to_agent": event.to_agent,
                "tool_call_id": event.tool_call_id,
                "returns": event.returns,
            }
        case MemoryUpdateEvent():  # an Agent's, after a run: sent to watchers in this form
            return {
                "type": event.type,
                "extraction_id": event.extraction_id,
                "session_id": event.session_id,
                "model": event.model,
                "records": [r.to_dict() for r in event.records],
                "rejected": list(event.rejected),
                "error": event.error,
            }
        case TurnEndEvent():
            return {
                "type": event.type,
                "message": to_json(event.message),
                "tool_results": [to_json(m) for m in event.tool_results],
            }
        case AgentEndEvent():
            return {
                "type": event.type,
                "messages": messages_to_json(list(event.messages)),
                "limit": _limit_to_json(event.limit),
                "pending_approvals": [to_json(m) for m in event.pending_approvals],
                "guardrail": None if event.guardrail is None else event.guardrail.to_json(),
                "last_agent": event.last_agent,
            }
    raise ConfigError(f"a durable run does not publish {event.type!r} events")


def event_from_json(data: dict[str, Any]) -> AgentEvent:
    """An agent event back from `event_to_json`."""
    kind = data.get("type")
    if kind == "agent_start":
        return AgentStartEvent()
    if kind == "turn_start":
        return TurnStartEvent()
    if kind == "message_start":
        return MessageStartEvent(message=from_json(data["message"]))
    if kind == "message_end":
        return MessageEndEvent(message=from_json(data["message"]))
    if kind == "tool_execution_start":
        return ToolExecutionStartEvent(
            tool_call_id=data["tool_call_id"],
            tool_name=data["tool_name"],
            args=data["args"],
            caller=_caller_from_json(data.get("caller")),
            agent=data.get("agent"),
        )
    if kind == "tool_execution_update":
        return ToolExecutionUpdateEvent(
            tool_call_id=data["tool_call_id"],
            tool_name=data["tool_name"],
            args=data["args"],
            partial_result=result_from_json(data["partial_result"]),
            caller=_caller_from_json(data.get("caller")),
            agent=data.get("agent"),
        )
    if kind == "tool_execution_end":
        return ToolExecutionEndEvent(
            tool_call_id=data["tool_call_id"],
            tool_name=data["tool_name"],
            result=result_from_json(data["result"]),
            is_error=data["is_error"],
            caller=_caller_from_json(data.get("caller")),
            agent=data.get("agent"),
        )
    if kind == "agent_switch":
        return AgentSwitchEvent(
            from_agent=data["from_agent"],
            to_agent=data["to_agent"],
            tool_call_id=data["tool_call_id"],
            returns=bool(data.get("returns")),
        )
    if kind == "memory_update":
        return MemoryUpdateEvent(
            extraction_id=data["extraction_id"],
            session_id=data.get("session_id"),
            model=data["model"],
            records=tuple(MemoryRecord.from_dict(r) for r in data.get("records", ())),
            rejected=tuple(data.get("rejected", ())),
            error=data.get("error"),
        )
    if kind == "turn_end":
        message = from_json(data["message"])
        assert isinstance(message, AssistantMessage)
        results = [from_json(m) for m in data["tool_results"]]
        return TurnEndEvent(message=message, tool_results=results)  # type: ignore[arg-type]
    if kind == "agent_end":
        return AgentEndEvent(
            messages=messages_from_json(data["messages"]),
            limit=_limit_from_json(data.get("limit")),
            pending_approvals=tuple(from_json(m) for m in data.get("pending_approvals", ())),
            guardrail=None
            if not data.get("guardrail")
            else GuardrailTrip.from_json(data["guardrail"]),
            last_agent=data.get("last_agent"),
        )
    raise ConfigError(f"unknown durable event type {kind!r}")


def _positive(value: Any) -> bool:
    return (
        not isinstance(value, bool) and isinstance(value, int | float) and 0 < value < float("inf")
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOptions:
    """The options of a durable run: what `AgentLoopConfig` says, in a form the workflow's
    history can hold (no functions, no API keys), plus how its activities are scheduled.

    Attributes:
        reasoning: as in `AgentLoopConfig`.
        temperature: as in `AgentLoopConfig`.
        max_tokens: as in `AgentLoopConfig`.
        session_id: as in `AgentLoopConfig`.
        tool_execution: as in `AgentLoopConfig`.
        max_parallel_tools: as in `AgentLoopConfig`.
        max_turns: as in `AgentLoopConfig`.
        usage_limits: as in `AgentLoopConfig`.
        max_retries: as in `AgentLoopConfig`.
        tool_timeout: seconds a tool call may run (a tool's own `timeout` takes precedence);
            also bounds its activity (start-to-close, plus a margin).
        request_timeout: the model request's bound to its first event, applied by the provider
            in the model activity, as in-process.
        idle_timeout: the model request's bound on silence between events, applied the same
            way.
        heartbeat_timeout: seconds without a heartbeat after which a model request or tool call
            counts as lost (its worker died) and is retried on another worker. Running
            activities heartbeat every third of it.
        model_deadline: start-to-close bound of one model request activity (seconds).
        tool_deadline: start-to-close bound of one tool call activity when no timeout bounds
            it (seconds).
        steering_mode: how queued steering messages are taken, as in `Agent`.
        follow_up_mode: how queued follow-up messages are taken, as in `Agent`.
        history_limit: continue as new once the workflow's history holds this many events,
            at the end of a turn whose tool results need an answer (None: when the server
            suggests it, past its own limits).
        max_handoffs: as in `AgentLoopConfig` (a run started as an agent: `start_run(agent=)`).
        next_agent: as in `AgentLoopConfig`: who answers new prompts after an earlier handoff
            of the transcript the run continues.
    """

    reasoning: ThinkingLevel = "off"
    temperature: float | None = None
    max_tokens: int | None = None
    session_id: str | None = None
    tool_execution: ToolExecutionMode = ToolExecutionMode.PARALLEL
    max_parallel_tools: int | None = None
    max_turns: int | None = None
    usage_limits: UsageLimits | None = None
    max_retries: int = 3
    tool_timeout: float | None = None
    request_timeout: float | None = None
    idle_timeout: float | None = None
    heartbeat_timeout: float = 30.0
    model_deadline: float = 600.0
    tool_deadline: float = 3600.0
    steering_mode: QueueMode = "one-at-a-time"
    follow_up_mode: QueueMode = "one-at-a-time"
    history_limit: int | None = None
    max_handoffs: int | None = None
    next_agent: Literal["last", "first"] = "last"

    def __post_init__(self) -> None:
        # The loop's own checks, with a stand-in model: one place for the rules.
        self.loop_config(Model(id="check", name="check", api="temporal", provider="temporal"))
        for name in ("tool_timeout", "request_timeout", "idle_timeout"):
            value = getattr(self, name)
            if value is not None and not _positive(value):
                raise ConfigError(
                    f"RunOptions.{name} must be a positive number of seconds or None, got {value!r}"
                )
        for name in ("heartbeat_timeout", "model_deadline", "tool_deadline"):
            value = getattr(self, name)
            if not _positive(value):
                raise ConfigError(f"RunOptions.{name} must be a positive number, got {value!r}")
        for name in ("steering_mode", "follow_up_mode"):
            if getattr(self, name) not in _QUEUE_MODES:
                raise ConfigError(
                    f"RunOptions.{name} must be one of {_QUEUE_MODES}, got {getattr(self, name)!r}"
                )
        limit = self.history_limit
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise ConfigError(f"RunOptions.history_limit must be an int or None, got {limit!r}")
        if limit is not None and limit < 10:
            raise ConfigError(f"RunOptions.history_limit must be at least 10, got {limit!r}")

    def loop_config(self, model: Model, **overrides: Any) -> AgentLoopConfig:
        """The workflow side's loop configuration (`overrides`: hooks and other fields).
        Timeouts are left to the activities, which apply them as an in-process run does."""
        values: dict[str, Any] = {
            "model": model,
            "reasoning": self.reasoning,
            "tool_execution": self.tool_execution,
            "max_parallel_tools": self.max_parallel_tools,
            "max_turns": self.max_turns,
            "usage_limits": self.usage_limits,
            "max_retries": self.max_retries,
            "max_handoffs": self.max_handoffs,
            "next_agent": self.next_agent,
        }
        values.update(overrides)
        return AgentLoopConfig(**values)

    def to_json(self) -> dict[str, Any]:
        """The options as JSON."""
        data: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        data["tool_execution"] = self.tool_execution.value
        if self.usage_limits is not None:
            u = self.usage_limits
            data["usage_limits"] = {
                "input_tokens": u.input_tokens,
                "output_tokens": u.output_tokens,
                "cost": u.cost,
            }
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunOptions:
        """Options back from `to_json`."""
        values = dict(data)
        values["tool_execution"] = ToolExecutionMode(values.get("tool_execution", "parallel"))
        if values.get("usage_limits") is not None:
            values["usage_limits"] = UsageLimits(**values["usage_limits"])
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})
