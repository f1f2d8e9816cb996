"""agentcore's messages and usage as AG-UI values: the transcript snapshot and the JSON pieces the
event mapping (`_translate.py`) shares with it.

Message ids: AG-UI needs one per message, agentcore messages have none. A message's id is its
position in the session's transcript (`m0`, `m1`, ...), which is stable because a transcript
only grows (a branch is another session). Parts of an assistant message get derived ids: its
first text block is the message id itself, a later text block `m3.2` (its content index), a
thinking block `m3.r0`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..messages import (
    AgentMessage,
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    to_json,
    valid_json,
)
from ._deps import ag_ui


def event_json(event: ag_ui.BaseEvent) -> str:
    """The AG-UI JSON of an event, valid UTF-8 whatever text it holds (see `valid_text`)."""
    try:
        return event.model_dump_json(by_alias=True)
    except ValueError:  # a lone surrogate somewhere: pydantic cannot encode it
        data = valid_json(event.model_dump(mode="json", by_alias=True))
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


__all__ = [
    "block_text",
    "message_id",
    "messages_snapshot",
    "reasoning_id",
    "text_id",
    "token_usage",
    "usage_json",
]


def message_id(index: int) -> str:
    """The AG-UI id of the transcript's message at `index`."""
    return f"m{index}"


def text_id(mid: str, content_index: int, first: bool) -> str:
    """The id of a text block: the message's own for its first text block."""
    return mid if first else f"{mid}.{content_index}"


def reasoning_id(mid: str, content_index: int) -> str:
    """The id of a thinking block."""
    return f"{mid}.r{content_index}"


def block_text(content: Any) -> str:
    """The text of a message's content: a string, or its text blocks joined (an image as
    `[image]`)."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content or ():
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ImageContent):
            parts.append("[image]")
    return "".join(parts)


def usage_json(usage: Usage) -> dict[str, Any]:
    """Token counts and cost (USD) of a `Usage`, camelCased like the rest of the wire."""
    return {
        "input": usage.input,
        "output": usage.output,
        "cacheRead": usage.cache_read,
        "cacheWrite": usage.cache_write,
        "totalTokens": usage.total_tokens,
        "cost": usage.cost.total,
    }


def token_usage(usage: Usage, provider: str, model: str) -> ag_ui.TokenUsage:
    """A `Usage` in AG-UI's accounting, where input counts include the cached parts."""
    return ag_ui.TokenUsage(
        provider=provider or None,
        model=model or None,
        input_tokens=usage.input + usage.cache_read + usage.cache_write,
        output_tokens=usage.output,
        total_tokens=usage.total_tokens,
        cached_input_tokens=usage.cache_read,
        cache_write_input_tokens=usage.cache_write,
    )


def assistant_metadata(message: AssistantMessage) -> dict[str, Any]:
    """What the page shows under an answer: the model, how it stopped, usage and cost, and in
    a run with handoffs the agent that answered (`agent`)."""
    meta: dict[str, Any] = {
        "model": f"{message.provider}/{message.model}",
        "stopReason": message.stop_reason,
        "errorMessage": message.error_message,
        "usage": usage_json(message.usage),
    }
    if message.agent is not None:
        meta["agent"] = message.agent
    return {"agentcore": meta}


def _user(mid: str, message: UserMessage) -> ag_ui.Message:
    content = message.content
    if isinstance(content, str) or not any(isinstance(b, ImageContent) for b in content):
        return ag_ui.UserMessage(id=mid, content=block_text(content))
    parts: list[Any] = []
    for block in content:
        if isinstance(block, TextContent):
            parts.append(ag_ui.TextPart(text=block.text))
        elif isinstance(block, ImageContent):
            source = ag_ui.DataSource(value=block.data, mime_type=block.mime_type)
            parts.append(ag_ui.ImagePart(source=source))
    return ag_ui.UserMessage(id=mid, content=parts)


def _assistant(mid: str, message: AssistantMessage) -> list[ag_ui.Message]:
    out: list[ag_ui.Message] = []
    calls = []
    for i, block in enumerate(message.content):
        if isinstance(block, ThinkingContent) and block.thinking:
            out.append(ag_ui.ReasoningMessage(id=reasoning_id(mid, i), content=block.thinking))
        elif isinstance(block, ToolCall):
            function = ag_ui.FunctionCall(name=block.name, arguments=json.dumps(block.arguments))
            calls.append(ag_ui.ToolCall(id=block.id, function=function))
    text = message.text
    out.append(
        ag_ui.AssistantMessage(
            id=mid,
            content=text or None,
            tool_calls=calls or None,
            metadata=assistant_metadata(message),
        )
    )
    return out


def _tool_result(mid: str, message: ToolResultMessage) -> ag_ui.Message:
    text = block_text(message.content)
    return ag_ui.ToolMessage(
        id=mid,
        content=text,
        tool_call_id=message.tool_call_id,
        error=(text or "error") if message.is_error else None,
        metadata={"agentcore": {"toolName": message.tool_name, "isError": message.is_error}},
    )


def custom_message_json(message: AgentMessage) -> dict[str, Any]:
    """An application-defined message (an approval request, say) as plain JSON."""
    try:
        return to_json(message)
    except Exception:  # not registered: show what can be shown
        return {"role": str(getattr(message, "role", "unknown"))}


def messages_snapshot(messages: Sequence[AgentMessage]) -> list[ag_ui.Message]:
    """A transcript as AG-UI messages. Application-defined messages (approval requests and
    decisions, your own) become activity messages of type `agentcore.<role>`."""
    out: list[ag_ui.Message] = []
    for index, message in enumerate(messages):
        mid = message_id(index)
        if isinstance(message, UserMessage):
            out.append(_user(mid, message))
        elif isinstance(message, AssistantMessage):
            out.extend(_assistant(mid, message))
        elif isinstance(message, ToolResultMessage):
            out.append(_tool_result(mid, message))
        else:
            role = str(getattr(message, "role", "unknown"))
            out.append(
                ag_ui.ActivityMessage(
                    id=mid, activity_type=f"agentcore.{role}", content=custom_message_json(message)
                )
            )
    return out
