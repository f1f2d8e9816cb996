"""Anthropic's programmatic tool calling (hosted code execution), for the `anthropic-messages`
adapter.

A tool with `"hosted_code"` in its `allowed_callers` is sent with
`allowed_callers: ["code_execution_20260120", ...]`, and the request then carries the code
execution tool (`{"type": "code_execution_20260120", "name": "code_execution"}`). The model may
then write Python that Anthropic runs in a container; each call that code makes of one of the
tools comes back as a `tool_use` block with a `caller` naming the code run (the id of its
`server_tool_use` block), which becomes the `ToolCall.caller`.

The code execution's own blocks (`server_tool_use` of `code_execution` and its sub-tools, and
their `*_tool_result` blocks) are not tool calls of ours, but the API needs them again in the
transcript: each is kept, whole, as an empty `TextContent` whose `text_signature` holds it
(`{"v": 1, "anthropic_block": {...}}`), replayed only to the same model (the cross-provider
transform drops signatures for others). The container the code runs in is reported once per
answer (`message_start` / `message_delta`); it is kept the same way, as an empty text block at the
end of the answer (`{"v": 1, "anthropic_container": "<id>"}`), and sent as the request's
`container` while the last answer has calls from code waiting for their results (the API refuses
the continuation without it).

The rules for answering a call from code (platform.claude.com, "Programmatic tool calling",
message formatting restrictions): the user message holds only `tool_result` blocks, and the
content of each result answering a call from code is text only: images are left out, with a note.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from ...messages import AssistantMessage, Message, TextContent, ToolCall, ToolCaller
from ..types import Tool

__all__ = [
    "CODE_EXECUTION",
    "KEPT_BLOCKS",
    "TEXT_ONLY_NOTE",
    "callers_of",
    "container_block",
    "decode_block",
    "encode_block",
    "hosted_codes",
    "keeps",
    "pending_container",
    "tool_caller",
    "tools_payload",
]

CODE_EXECUTION = "code_execution_20260120"
"""The code execution tool version that programmatic tool calling needs (or a later one)."""

KEPT_BLOCKS = frozenset(
    {
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
    }
)
"""The server result blocks of the code execution, kept for replay."""

TEXT_ONLY_NOTE = "(an image was left out: code running on the provider receives text only)"
"""Said in place of the images of a result answering a call from code."""

_CODE_TOOLS = frozenset({"code_execution", "bash_code_execution", "text_editor_code_execution"})
_BLOCK = "anthropic_block"
_CONTAINER = "anthropic_container"


def keeps(block_type: Any, name: Any) -> bool:
    """Whether a content block of this type (and server tool name) is kept for replay."""
    if block_type == "server_tool_use":
        return name in _CODE_TOOLS
    return block_type in KEPT_BLOCKS


def encode_block(block: dict[str, Any]) -> str:
    """The `text_signature` that keeps a code-execution block."""
    return json.dumps({"v": 1, _BLOCK: block}, ensure_ascii=False, separators=(",", ":"))


def container_block(container_id: str) -> str:
    """The `text_signature` that keeps the answer's container id."""
    return json.dumps({"v": 1, _CONTAINER: container_id}, separators=(",", ":"))


def _decode(signature: str | None) -> dict[str, Any] | None:
    if not signature or not signature.startswith('{"v":1,"anthropic_'):
        return None
    try:
        data = json.loads(signature)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def decode_block(block: TextContent) -> tuple[dict[str, Any] | None, bool]:
    """`(kept block or None, whether the text block only carries hosted-code data)`."""
    data = _decode(block.text_signature)
    if data is None or block.text:
        return None, False
    kept = data.get(_BLOCK)
    return (kept if isinstance(kept, dict) else None), True


def _container(message: AssistantMessage) -> str | None:
    for block in reversed(message.content):
        if isinstance(block, TextContent) and not block.text:
            data = _decode(block.text_signature)
            if data is not None and isinstance(data.get(_CONTAINER), str):
                return str(data[_CONTAINER])
    return None


def pending_container(messages: Sequence[Message]) -> str | None:
    """The container to send: the last answer's, when it has calls from code (then waiting for
    their results); None otherwise."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            if any(c.caller is not None for c in message.tool_calls):
                return _container(message)
            return None
    return None


def hosted_codes(messages: Iterable[Message]) -> dict[str, str]:
    """The code of each code run kept in the transcript, by the id of its `server_tool_use`."""
    codes: dict[str, str] = {}
    for message in messages:
        if not isinstance(message, AssistantMessage):
            continue
        for block in message.content:
            if not isinstance(block, TextContent):
                continue
            kept, _ = decode_block(block)
            if kept is None or kept.get("type") != "server_tool_use":
                continue
            given = kept.get("input")
            if isinstance(given, dict) and isinstance(given.get("code"), str):
                codes[str(kept.get("id"))] = given["code"]
    return codes


def tool_caller(caller: Any, codes: dict[str, str]) -> ToolCaller | None:
    """A `tool_use` block's `caller` as a `ToolCaller` (None for `direct` or no caller)."""
    if not isinstance(caller, dict):
        return None
    kind, run = caller.get("type"), caller.get("tool_id")
    if not isinstance(kind, str) or kind == "direct" or not isinstance(run, str):
        return None
    return ToolCaller(kind=kind, id=run, code=codes.get(run))


def callers_of(messages: Iterable[Message]) -> dict[str, ToolCaller]:
    """The caller of each call from code in the transcript, by call id."""
    return {
        block.id: block.caller
        for message in messages
        if isinstance(message, AssistantMessage)
        for block in message.content
        if isinstance(block, ToolCall) and block.caller is not None
    }


def tools_payload(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """The request's `tools`: each tool, with `allowed_callers` when code may call it, and the
    code execution tool after them when any may."""
    out: list[dict[str, Any]] = []
    hosted = False
    for tool in tools:
        entry: dict[str, Any] = {
            "name": tool.name,
            "description": tool.description,
            "input_schema": {"type": "object", **tool.parameters},
        }
        if "hosted_code" in tool.allowed_callers:
            hosted = True
            entry["allowed_callers"] = [
                "direct" if c == "direct" else CODE_EXECUTION for c in tool.allowed_callers
            ]
        out.append(entry)
    if hosted:
        out.append({"type": CODE_EXECUTION, "name": "code_execution"})
    return out
