"""Message content as the GenAI semantic conventions record it (only when the user opts in).

`gen_ai.input.messages` and `gen_ai.output.messages` are JSON arrays of `{"role", "parts"}`
objects; a part is `{"type": "text", "content"}`, `{"type": "reasoning", "content"}`,
`{"type": "tool_call", "id", "name", "arguments"}`, `{"type": "tool_call_response", "id",
"response"}` or `{"type": "blob", "mime_type"}` (image bytes are never recorded).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from agentcore import (
    AgentToolResult,
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

__all__ = ["messages_json", "result_text", "to_json_text"]


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "content": content}]
    parts: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, TextContent):
            parts.append({"type": "text", "content": block.text})
        elif isinstance(block, ThinkingContent):
            parts.append({"type": "reasoning", "content": block.thinking})
        elif isinstance(block, ToolCall):
            parts.append(
                {
                    "type": "tool_call",
                    "id": block.id,
                    "name": block.name,
                    "arguments": block.arguments,
                }
            )
        elif isinstance(block, ImageContent):
            parts.append({"type": "blob", "modality": "image", "mime_type": block.mime_type})
    return parts


def _message(message: Any) -> dict[str, Any] | None:
    if isinstance(message, UserMessage):
        return {"role": "user", "parts": _parts(message.content)}
    if isinstance(message, AssistantMessage):
        entry: dict[str, Any] = {"role": "assistant", "parts": _parts(message.content)}
        entry["finish_reason"] = message.stop_reason
        return entry
    if isinstance(message, ToolResultMessage):
        text = "".join(b.text for b in message.content if isinstance(b, TextContent))
        return {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": message.tool_call_id, "response": text}],
        }
    return None


def messages_json(messages: Iterable[Any]) -> str:
    """The messages in the conventions' JSON form (custom messages left out)."""
    return to_json_text([m for m in map(_message, messages) if m is not None])


def result_text(result: AgentToolResult) -> str:
    """The text of a tool result (its images left out)."""
    return "".join(b.text for b in result.content if isinstance(b, TextContent))


def to_json_text(value: Any) -> str:
    """Compact JSON; a value JSON cannot hold becomes its repr (content must never fail a run)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr)
