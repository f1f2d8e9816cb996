"""Builders of scripted answers and checks of event sequences (see `agentcore.testing`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..events import AgentEvent
from ..messages import (
    AssistantContent,
    AssistantMessage,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
)

__all__ = [
    "check_well_formed",
    "event_types",
    "faux_error",
    "faux_message",
    "faux_text",
    "faux_thinking",
    "faux_tool_call",
]

_call_ids = iter(range(1, 1 << 62))


def faux_message(
    *blocks: AssistantContent | str, stop_reason: StopReason = "stop"
) -> AssistantMessage:
    """An assistant message from blocks (a `str` is a text block). With tool calls and the
    default stop reason, the faux provider reports `tool_use`."""
    content: list[AssistantContent] = [
        TextContent(text=b) if isinstance(b, str) else b for b in blocks
    ]
    return AssistantMessage(content=content, stop_reason=stop_reason)


def faux_text(text: str, *, stop_reason: StopReason = "stop") -> AssistantMessage:
    """An answer of one text block."""
    return faux_message(text, stop_reason=stop_reason)


def faux_thinking(thinking: str, text: str = "") -> AssistantMessage:
    """An answer that thinks, then (optionally) says `text`."""
    blocks: list[AssistantContent | str] = [ThinkingContent(thinking=thinking)]
    if text:
        blocks.append(text)
    return faux_message(*blocks)


def faux_tool_call(
    name: str,
    arguments: dict[str, Any] | str | None = None,
    *,
    id: str | None = None,
    text: str = "",
    stop_reason: StopReason = "stop",
) -> AssistantMessage:
    """An answer that calls one tool (optionally after some text).

    `arguments` may be a raw JSON text instead of a dict: it is streamed as it is, so malformed
    arguments (`'{"a": 1'`) reach the loop the way a real model's would.
    """
    call_id = id or f"call_{next(_call_ids)}"
    if isinstance(arguments, str):
        call = ToolCall(id=call_id, name=name, invalid_arguments=arguments)
    else:
        call = ToolCall(id=call_id, name=name, arguments=arguments or {})
    blocks: list[AssistantContent | str] = [text, call] if text else [call]
    return faux_message(*blocks, stop_reason=stop_reason)


def faux_error(message: str = "faux failure", *, aborted: bool = False) -> AssistantMessage:
    """An answer that fails with `stop_reason` error (or aborted)."""
    return AssistantMessage(
        content=[], stop_reason="aborted" if aborted else "error", error_message=message
    )


def event_types(events: Iterable[AgentEvent]) -> list[str]:
    """The `type` of each event."""
    return [e.type for e in events]


def check_well_formed(events: Sequence[AgentEvent]) -> None:
    """Assert the invariants of a run's event sequence.

    One `agent_start` first and one `agent_end` last; turns paired and never nested; every
    message's start and end inside a turn, with nothing but its own updates between them (only an
    assistant message has updates); one `tool_execution_end` per start, inside a turn;
    `agent_end.messages` are the messages ended during the run, in order (the messages of the
    initial context get no events).

    Raises:
        AssertionError: naming the first violation and its position.
    """
    types = event_types(events)
    assert types, "no events"
    assert types[0] == "agent_start", f"first event is {types[0]}, expected agent_start"
    assert types[-1] == "agent_end", f"last event is {types[-1]}, expected agent_end"
    assert types.count("agent_start") == 1 and types.count("agent_end") == 1
    in_turn = False
    open_message: Any = None
    running: set[str] = set()
    ended: list[Any] = []
    for i, kind in enumerate(types[1:-1], start=1):
        where = f"event {i} ({kind})"
        event: Any = events[i]
        if open_message is not None and kind not in ("message_update", "message_end"):
            raise AssertionError(f"{where}: inside the open message {open_message.role!r}")
        if kind == "turn_start":
            assert not in_turn, f"{where}: turn_start inside a turn"
            in_turn = True
        elif kind == "turn_end":
            assert in_turn, f"{where}: turn_end outside a turn"
            assert not running, f"{where}: turn ended with tools still running: {running}"
            in_turn = False
        elif kind == "agent_switch":  # at the boundary: after turn_end, before the next turn
            assert not in_turn, f"{where}: agent_switch inside a turn"
        elif kind == "message_start":
            assert in_turn, f"{where}: message_start outside a turn"
            open_message = event.message
        elif kind == "message_update":
            assert open_message is not None, f"{where}: message_update without an open message"
            assert open_message.role == "assistant", f"{where}: update of a {open_message.role}"
        elif kind == "message_end":
            assert open_message is not None, f"{where}: message_end without message_start"
            assert event.message.role == open_message.role, f"{where}: ends another message"
            ended.append(event.message)
            open_message = None
        elif kind == "tool_execution_start":
            assert in_turn, f"{where}: tool_execution_start outside a turn"
            assert event.tool_call_id not in running, f"{where}: {event.tool_call_id} twice"
            running.add(event.tool_call_id)
        elif kind == "tool_execution_update":
            assert event.tool_call_id in running, f"{where}: update for a tool not running"
        elif kind == "tool_execution_end":
            assert event.tool_call_id in running, f"{where}: end without start"
            running.discard(event.tool_call_id)
        else:
            raise AssertionError(f"{where}: unexpected event inside the run")
    assert not in_turn, "the run ended inside a turn (no turn_end)"
    assert open_message is None, "the run ended with a message open"
    final: Any = events[-1]
    assert len(final.messages) == len(ended) and all(
        a is b or a == b for a, b in zip(final.messages, ended, strict=True)
    ), "agent_end.messages are not the messages the run ended, in order"
