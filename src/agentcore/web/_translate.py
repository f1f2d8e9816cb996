"""agentcore's run events as AG-UI events (the mapping is documented in docs/web.md).

- `agent_start`: `RUN_STARTED` (thread = the session id, a fresh run id).
- `turn_start` / `turn_end`: `STEP_STARTED` / `STEP_FINISHED` (`turn 1`, `turn 2`, ...).
- assistant text blocks: `TEXT_MESSAGE_START` (role assistant), `_CONTENT` per delta, `_END`.
- assistant thinking: `REASONING_START`, `REASONING_MESSAGE_START/_CONTENT/_END`,
  `REASONING_END`.
- assistant tool calls: `TOOL_CALL_START` (parent = the message), `TOOL_CALL_ARGS` per
  fragment, `TOOL_CALL_END`.
- assistant `message_end`: closes what is still open (sends whole what never streamed), then
  `CUSTOM agentcore.message_end` (model, stop reason, error, usage and cost).
- user `message_end` (prompts, steering): `TEXT_MESSAGE_START/_CONTENT/_END` (role user).
- tool result `message_end`: `TOOL_CALL_RESULT` (metadata `agentcore.isError`, `toolName`).
- other `message_end` (approval requests and decisions, your own): `CUSTOM agentcore.<role>`.
- `tool_execution_start/_update/_end`: `CUSTOM agentcore.tool_execution_start/_update/_end`
  (`parentToolCallId` in the value for a call a snippet made).
- a call a snippet made (code mode: the `tool_execution_*` events with `parent_tool_call_id`),
  which is no block of the model's: at its start `TOOL_CALL_START` (parent = the message of the
  snippet's call, `metadata.agentcore.parentToolCallId` = the snippet's call id), its arguments
  whole in one `TOOL_CALL_ARGS`, `TOOL_CALL_END`; at its end `TOOL_CALL_RESULT` (message id
  `<call id>.result`: no transcript message holds it). The CUSTOM events follow as for any call.
- `agent_end`: `CUSTOM agentcore.run_usage`, then `RUN_FINISHED` (outcome `success`,
  `cancelled` when aborted, `interrupt` with pending approvals) or `RUN_ERROR`.
- `memory_update` (an Agent's memory extractor, after the run's `agent_end`): `CUSTOM
  agentcore.memory_update` (`extractionId`, `sessionId`, `model`, `records` as
  `MemoryRecord.to_dict`, `rejected`, `error`), outside any run's `RUN_STARTED`/`RUN_FINISHED`.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from ..events import (
    AgentEndEvent,
    AgentEvent,
    AgentStartEvent,
    AgentSwitchEvent,
    MemoryUpdateEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from ..messages import (
    AgentMessage,
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolCaller,
)
from ..messages import Usage as Usage
from ._convert import (
    assistant_metadata,
    block_text,
    custom_message_json,
    message_id,
    reasoning_id,
    text_id,
    token_usage,
    usage_json,
)
from ._deps import ag_ui

__all__ = ["AgUiTranslator"]


@dataclass(slots=True)
class _Open:
    """The blocks of the assistant message being streamed: which opened, which closed."""

    mid: str
    opened: dict[int, str] = field(default_factory=dict)  # content index -> kind
    closed: set[int] = field(default_factory=set)
    first_text: int | None = None


def _sum(messages: list[AgentMessage]) -> tuple[Usage, str, str]:
    total = Usage()
    provider = model = ""
    for m in messages:
        if isinstance(m, AssistantMessage):
            u = m.usage
            total = Usage(
                input=total.input + u.input,
                output=total.output + u.output,
                cache_read=total.cache_read + u.cache_read,
                cache_write=total.cache_write + u.cache_write,
                cost=type(u.cost)(
                    input=total.cost.input + u.cost.input,
                    output=total.cost.output + u.cost.output,
                    cache_read=total.cost.cache_read + u.cost.cache_read,
                    cache_write=total.cost.cache_write + u.cost.cache_write,
                ),
            )
            provider, model = m.provider, m.model
    return total, provider, model


class AgUiTranslator:
    """Turns the events of one conversation's runs into AG-UI events.

    ```python
    translator = AgUiTranslator(thread_id="my-chat")
    translator.begin(len(agent.state.messages))  # before each run
    agent.subscribe(lambda event: send_all(translator.translate(event)))
    ```

    Args:
        thread_id: the AG-UI thread id (the session id).
    """

    def __init__(self, thread_id: str) -> None:
        self.thread_id = thread_id
        self.run_id = ""
        self.index = 0
        self._step = 0
        self._open: _Open | None = None
        # tool call id -> the AG-UI id of the message holding it (the parent of the calls its
        # snippet makes), until the call's result
        self._call_message: dict[str, str] = {}

    def begin(self, transcript_length: int, run_id: str | None = None) -> None:
        """Call before each run: message ids count from the transcript's current length."""
        self.index = transcript_length
        self.run_id = run_id or uuid.uuid4().hex
        self._step = 0
        self._open = None

    def translate(self, event: AgentEvent) -> list[ag_ui.BaseEvent]:
        """The AG-UI events for one agentcore event (often none or one)."""
        match event:
            case AgentStartEvent():
                return [ag_ui.RunStartedEvent(thread_id=self.thread_id, run_id=self.run_id)]
            case TurnStartEvent():
                self._step += 1
                return [ag_ui.StepStartedEvent(step_name=f"turn {self._step}")]
            case TurnEndEvent():
                return [ag_ui.StepFinishedEvent(step_name=f"turn {self._step}")]
            case MessageStartEvent(message=message):
                if isinstance(message, AssistantMessage):
                    self._open = _Open(mid=message_id(self.index))
                return []
            case MessageUpdateEvent():
                return self._update(event.assistant_message_event)
            case MessageEndEvent(message=message):
                out = self._message_end(message)
                self.index += 1
                return out
            case ToolExecutionStartEvent(parent_tool_call_id=parent):
                out = [] if parent is None else self._nested_start(event, parent)
                out.append(
                    self._custom(
                        event.type,
                        toolCallId=event.tool_call_id,
                        toolName=event.tool_name,
                        **_parent(parent),
                        **_caller(event.caller),
                    )
                )
                return out
            case ToolExecutionUpdateEvent(partial_result=partial):
                return [
                    self._custom(
                        event.type,
                        toolCallId=event.tool_call_id,
                        toolName=event.tool_name,
                        text=block_text(partial.content),
                        details=_jsonable(partial.details),
                        **_parent(event.parent_tool_call_id),
                        **_caller(event.caller),
                    )
                ]
            case ToolExecutionEndEvent(parent_tool_call_id=parent):
                out = [
                    self._custom(
                        event.type,
                        toolCallId=event.tool_call_id,
                        isError=event.is_error,
                        **_parent(parent),
                        **_caller(event.caller),
                    )
                ]
                if parent is not None:
                    out.append(self._nested_result(event))
                return out
            case AgentSwitchEvent():  # a handoff: a step of its own between two turns
                step = f"handoff {event.from_agent} -> {event.to_agent}"
                return [
                    ag_ui.StepStartedEvent(step_name=step),
                    self._custom(
                        event.type,
                        fromAgent=event.from_agent,
                        toAgent=event.to_agent,
                        toolCallId=event.tool_call_id,
                        returns=event.returns,
                    ),
                    ag_ui.StepFinishedEvent(step_name=step),
                ]
            case AgentEndEvent():
                return self._agent_end(event)
            case MemoryUpdateEvent():
                return [
                    self._custom(
                        event.type,
                        extractionId=event.extraction_id,
                        sessionId=event.session_id,
                        model=event.model,
                        records=[r.to_dict() for r in event.records],
                        rejected=list(event.rejected),
                        error=event.error,
                    )
                ]
        return []

    def _nested_start(self, event: ToolExecutionStartEvent, parent: str) -> list[ag_ui.BaseEvent]:
        """A call a snippet made, opened and closed at once (its arguments are complete)."""
        call_id = event.tool_call_id
        mid = self._call_message.get(parent)
        if mid is not None:
            self._call_message[call_id] = mid  # a call of a call (a nested code tool)
        return [
            ag_ui.ToolCallStartEvent(
                tool_call_id=call_id,
                tool_call_name=event.tool_name,
                parent_message_id=mid,
                metadata={"agentcore": {"parentToolCallId": parent}},
            ),
            ag_ui.ToolCallArgsEvent(tool_call_id=call_id, delta=_args_json(event.args)),
            ag_ui.ToolCallEndEvent(tool_call_id=call_id),
        ]

    def _nested_result(self, event: ToolExecutionEndEvent) -> ag_ui.BaseEvent:
        self._call_message.pop(event.tool_call_id, None)
        return ag_ui.ToolCallResultEvent(
            message_id=f"{event.tool_call_id}.result",
            tool_call_id=event.tool_call_id,
            content=block_text(event.result.content),
            role="tool",
            metadata={
                "agentcore": {
                    "isError": event.is_error,
                    "toolName": event.tool_name,
                    "parentToolCallId": event.parent_tool_call_id,
                }
            },
        )

    @staticmethod
    def _custom(name: str, **value: Any) -> ag_ui.BaseEvent:
        return ag_ui.CustomEvent(name=f"agentcore.{name}", value=value)

    # -- the assistant message as it streams ------------------------------------------------

    def _update(self, raw: Any) -> list[ag_ui.BaseEvent]:
        state = self._open
        if state is None:
            return []
        kind = raw.type
        if kind in ("start", "done", "error"):
            return []
        index: int = raw.content_index
        if kind.endswith("_start"):
            return self._open_block(state, index, raw.partial.content[index])
        if index not in state.opened or index in state.closed:
            return []
        if kind == "text_delta":
            return [
                ag_ui.TextMessageContentEvent(
                    message_id=self._text_id(state, index), delta=raw.delta
                )
            ]
        if kind == "thinking_delta":
            rid = reasoning_id(state.mid, index)
            return [ag_ui.ReasoningMessageContentEvent(message_id=rid, delta=raw.delta)]
        if kind == "toolcall_delta":
            call = raw.partial.content[index]
            return [ag_ui.ToolCallArgsEvent(tool_call_id=call.id, delta=raw.delta)]
        return self._close_block(state, index, raw.partial.content[index])

    def _text_id(self, state: _Open, index: int) -> str:
        return text_id(state.mid, index, first=state.first_text == index)

    def _open_block(self, state: _Open, index: int, block: Any) -> list[ag_ui.BaseEvent]:
        if index in state.opened:
            return []
        if isinstance(block, TextContent):
            state.opened[index] = "text"
            if state.first_text is None:
                state.first_text = index
            tid = self._text_id(state, index)
            return [ag_ui.TextMessageStartEvent(message_id=tid, role="assistant")]
        if isinstance(block, ThinkingContent):
            state.opened[index] = "thinking"
            rid = reasoning_id(state.mid, index)
            return [
                ag_ui.ReasoningStartEvent(message_id=rid),
                ag_ui.ReasoningMessageStartEvent(message_id=rid, role="reasoning"),
            ]
        if isinstance(block, ToolCall):
            state.opened[index] = "tool_call"
            self._call_message[block.id] = state.mid
            return [
                ag_ui.ToolCallStartEvent(
                    tool_call_id=block.id, tool_call_name=block.name, parent_message_id=state.mid
                )
            ]
        return []

    def _close_block(self, state: _Open, index: int, block: Any) -> list[ag_ui.BaseEvent]:
        kind = state.opened.get(index)
        if kind is None or index in state.closed:
            return []
        state.closed.add(index)
        if kind == "text":
            return [ag_ui.TextMessageEndEvent(message_id=self._text_id(state, index))]
        if kind == "thinking":
            rid = reasoning_id(state.mid, index)
            return [
                ag_ui.ReasoningMessageEndEvent(message_id=rid),
                ag_ui.ReasoningEndEvent(message_id=rid),
            ]
        return [ag_ui.ToolCallEndEvent(tool_call_id=block.id)]

    # -- complete messages -------------------------------------------------------------------

    def _message_end(self, message: AgentMessage) -> list[ag_ui.BaseEvent]:
        role = getattr(message, "role", None)
        mid = message_id(self.index)
        if isinstance(message, AssistantMessage):
            return self._assistant_end(message)
        if role == "user":
            text = block_text(getattr(message, "content", ""))
            return [
                ag_ui.TextMessageStartEvent(message_id=mid, role="user"),
                ag_ui.TextMessageContentEvent(message_id=mid, delta=text),
                ag_ui.TextMessageEndEvent(message_id=mid),
            ]
        if role == "tool_result":
            self._call_message.pop(str(getattr(message, "tool_call_id", "")), None)
            is_error = bool(getattr(message, "is_error", False))
            return [
                ag_ui.ToolCallResultEvent(
                    message_id=mid,
                    tool_call_id=str(getattr(message, "tool_call_id", "")),
                    content=block_text(getattr(message, "content", "")),
                    role="tool",
                    metadata={
                        "agentcore": {
                            "isError": is_error,
                            "toolName": str(getattr(message, "tool_name", "")),
                        }
                    },
                )
            ]
        return [self._custom(str(role), messageId=mid, message=custom_message_json(message))]

    def _assistant_end(self, message: AssistantMessage) -> list[ag_ui.BaseEvent]:
        state = self._open or _Open(mid=message_id(self.index))
        self._open = None
        out: list[ag_ui.BaseEvent] = []
        for index, block in enumerate(message.content):
            if index not in state.opened:  # never streamed: send it whole
                out.extend(self._open_block(state, index, block))
                if isinstance(block, TextContent) and block.text:
                    tid = self._text_id(state, index)
                    out.append(ag_ui.TextMessageContentEvent(message_id=tid, delta=block.text))
                elif isinstance(block, ThinkingContent) and block.thinking:
                    rid = reasoning_id(state.mid, index)
                    out.append(
                        ag_ui.ReasoningMessageContentEvent(message_id=rid, delta=block.thinking)
                    )
                elif isinstance(block, ToolCall):
                    args = json.dumps(block.arguments)
                    out.append(ag_ui.ToolCallArgsEvent(tool_call_id=block.id, delta=args))
            out.extend(self._close_block(state, index, block))
        value = {"messageId": state.mid, **assistant_metadata(message)["agentcore"]}
        out.append(self._custom("message_end", **value))
        return out

    def _agent_end(self, event: AgentEndEvent) -> list[ag_ui.BaseEvent]:
        messages: list[AgentMessage] = list(event.messages)
        usage, provider, model = _sum(messages)
        limit = event.limit
        out: list[ag_ui.BaseEvent] = [
            self._custom(
                "run_usage",
                runId=self.run_id,
                usage=usage_json(usage),
                limit=str(limit) if limit is not None else None,
                guardrail=event.guardrail.to_json() if event.guardrail is not None else None,
            )
        ]
        usages = [token_usage(usage, provider, model)] if provider else None
        last = next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)
        pending = list(event.pending_approvals)
        if pending:
            interrupts = [
                ag_ui.Interrupt(
                    id=p.tool_call_id,
                    # a question of the running tool (an MCP elicitation): the answer's schema
                    reason="tool_approval" if _input_schema(p) is None else "input_required",
                    tool_call_id=p.tool_call_id,
                    message=p.reason,
                    response_schema=_input_schema(p),
                )
                for p in pending
            ]
            outcome: Any = ag_ui.RunFinishedInterruptOutcome(interrupts=interrupts)
        elif last is not None and last.stop_reason == "error":
            out.append(
                ag_ui.RunErrorEvent(
                    message=last.error_message or "the run failed", code="error", usage=usages
                )
            )
            return out
        elif last is not None and last.stop_reason == "aborted":
            outcome = ag_ui.RunFinishedCancelledOutcome()
        else:
            outcome = ag_ui.RunFinishedSuccessOutcome()
        out.append(
            ag_ui.RunFinishedEvent(
                thread_id=self.thread_id, run_id=self.run_id, outcome=outcome, usage=usages
            )
        )
        return out


def _parent(parent: str | None) -> dict[str, str]:
    """`parentToolCallId` for the CUSTOM value of a call a snippet made; nothing otherwise."""
    return {} if parent is None else {"parentToolCallId": parent}


def _caller(caller: ToolCaller | None) -> dict[str, Any]:
    """`caller` for the CUSTOM value of a call made by code the provider runs (hosted code
    execution): its kind, the code run's id and its code when known; nothing otherwise."""
    if caller is None:
        return {}
    return {"caller": {"kind": caller.kind, "id": caller.id, "code": caller.code}}


def _args_json(args: Any) -> str:
    try:
        return json.dumps(args)
    except (TypeError, ValueError):
        return json.dumps(_jsonable(args))


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value


def _input_schema(request: Any) -> Any:
    """The schema of a request that asks the user for input (an MCP elicitation), or None."""
    return getattr(request, "input_schema", None)
