"""Agent events as JSON Lines: one JSON object per event, with its `type` and its fields.

Messages are written with `agentcore.messages.to_json` (so a transcript can be rebuilt with
`from_json`). A `message_update` carries only the raw model event's type and what it adds (the
delta, a finished block, the stop reason), never the whole partial message: that would make the
output quadratic in the answer's length, and the partial is the sum of the deltas anyway.

```
{"type":"message_update","assistant_message_event":{"type":"text_delta","content_index":0,
 "delta":"Hel"}}
```
(one line in the output)
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..events import AgentEvent
from ..llm.events import (
    AssistantMessageEvent,
    DoneEvent,
    ErrorEvent,
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
)
from ..messages import AgentMessage, to_json
from ..tools import AgentToolResult
from ._render import Writable
from ._safe import json_text

__all__ = ["JsonLinesWriter", "event_to_json"]


def _value(value: Any) -> Any:
    """A JSON-compatible form of a dataclass, container or scalar."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _value(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _value(v) for k, v in value.items()}
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return repr(value)


def _message(message: AgentMessage) -> Any:
    try:
        return to_json(message)
    except Exception:  # an application message to_json does not know: keep what we can
        return {"role": getattr(message, "role", None), "repr": repr(message)}


def _result(result: AgentToolResult) -> dict[str, Any]:
    return {
        "content": _value(result.content),
        "details": _value(result.details),
        "is_error": result.is_error,
        "terminate": result.terminate,
        "usage": _value(result.usage),
        "added_tool_names": result.added_tool_names,
    }


def _model_event(event: AssistantMessageEvent) -> dict[str, Any]:
    out: dict[str, Any] = {"type": event.type}
    if isinstance(event, DoneEvent):
        out["reason"] = event.reason
    elif isinstance(event, ErrorEvent):
        out["reason"] = event.reason
        out["error_message"] = event.error.error_message
    elif not isinstance(event, StartEvent):
        out["content_index"] = event.content_index
        if isinstance(event, TextDeltaEvent | ThinkingDeltaEvent | ToolCallDeltaEvent):
            out["delta"] = event.delta
        elif isinstance(event, TextEndEvent | ThinkingEndEvent):
            out["content"] = event.content
        elif isinstance(event, ToolCallEndEvent):
            out["tool_call"] = _value(event.tool_call)
    return out


def event_to_json(event: AgentEvent) -> dict[str, Any]:
    """The JSON object written for one agent event."""
    out: dict[str, Any] = {"type": event.type}
    match event.type:
        case "agent_start" | "turn_start":
            pass
        case "message_start" | "message_end":
            out["message"] = _message(event.message)
        case "message_update":
            out["assistant_message_event"] = _model_event(event.assistant_message_event)
        case "tool_execution_start":
            out.update(tool_call_id=event.tool_call_id, tool_name=event.tool_name)
            if event.parent_tool_call_id is not None:  # a call a snippet made (code mode)
                out["parent_tool_call_id"] = event.parent_tool_call_id
            out["args"] = _value(event.args)
        case "tool_execution_update":
            out.update(tool_call_id=event.tool_call_id, tool_name=event.tool_name)
            if event.parent_tool_call_id is not None:  # a call a snippet made (code mode)
                out["parent_tool_call_id"] = event.parent_tool_call_id
            out["args"] = _value(event.args)
            out["partial_result"] = _result(event.partial_result)
        case "tool_execution_end":
            out.update(tool_call_id=event.tool_call_id, tool_name=event.tool_name)
            if event.parent_tool_call_id is not None:  # a call a snippet made (code mode)
                out["parent_tool_call_id"] = event.parent_tool_call_id
            out["result"] = _result(event.result)
            out["is_error"] = event.is_error
        case "agent_switch":
            out.update(
                from_agent=event.from_agent,
                to_agent=event.to_agent,
                tool_call_id=event.tool_call_id,
                returns=event.returns,
            )
        case "memory_update":  # after the run's agent_end (Memory(extract=...))
            out.update(
                extraction_id=event.extraction_id,
                session_id=event.session_id,
                model=event.model,
                records=[r.to_dict() for r in event.records],
                rejected=list(event.rejected),
                error=event.error,
            )
        case "turn_end":
            out["message"] = _message(event.message)
            out["tool_results"] = [_message(m) for m in event.tool_results]
        case "agent_end":
            out["messages"] = [_message(m) for m in event.messages]
            limit = _value(event.limit)  # {"kind", "limit", "used"}, or null
            if isinstance(limit, dict) and not limit.get("errors"):
                del limit["errors"]  # only output_retries has errors to list
            out["limit"] = limit
            trip = event.guardrail  # {"guardrail", "kind", "reason", "failed"}, or null
            out["guardrail"] = trip.to_json() if trip is not None else None
            if event.output is not None:  # run --output-schema: the validated answer
                out["output"] = _value(event.output)
            if event.last_agent is not None:  # a run with handoffs
                out["last_agent"] = event.last_agent
    if event.type.startswith("tool_execution") and event.agent is not None:  # type: ignore[union-attr]
        out["agent"] = event.agent  # type: ignore[union-attr]
    return out


class JsonLinesWriter:
    """Writes each event as one line of JSON, flushing so a reader sees it at once."""

    def __init__(self, out: Writable) -> None:
        self._out = out

    def __call__(self, event: AgentEvent) -> None:
        # as JSON, with what JSON lets through raw (C1 controls, bidi marks, lone surrogates)
        # escaped: the line may reach a terminal
        line = json_text(event_to_json(event), separators=(",", ":"))
        self._out.write(line + "\n")
        self._out.flush()
