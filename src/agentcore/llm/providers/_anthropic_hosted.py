"""Anthropic's server-side blocks, for the `anthropic-messages` adapter: programmatic tool
calling (hosted code execution) and the tool search over deferred tools.

A tool with `"hosted_code"` in its `allowed_callers` is sent with
`allowed_callers: ["code_execution_20260120", ...]`, and the request then carries the code
execution tool (`{"type": "code_execution_20260120", "name": "code_execution"}`). The model may
then write Python that Anthropic runs in a container; each call that code makes of one of the
tools comes back as a `tool_use` block with a `caller` naming the code run (the id of its
`server_tool_use` block), which becomes the `ToolCall.caller`.

A tool marked `deferred` (`Tool.deferred`: the loop marks them only for a model whose
`Model.tool_search` is true) is sent with `defer_loading: true`, and the request then carries
the server's BM25 tool search tool (`tool_search_tool_bm25_20251119`). The model searches with it
inside its answer; the `tool_search_tool_result` names the tools found (`tool_reference`s).

The server's own blocks (`server_tool_use` of the code execution, its sub-tools and the tool
search, and their `*_tool_result` blocks) are not tool calls of ours, but the API needs them again
in the transcript: each is kept, whole, as an empty `TextContent` whose `text_signature` holds it
(`agentcore.llm.server_side`: `{"v": 1, "anthropic_block": {...}}`, with `"loads"` naming the
tools a search found, which the loop then loads), replayed only to the same model (the
cross-provider transform drops such blocks for others). The container the code runs in is
reported once per answer (`message_start` / `message_delta`); it is kept the same way, as an
empty text block at the end of the answer (`{"v": 1, "anthropic_container": "<id>"}`), and sent
as the request's `container` while the last answer has calls from code waiting for their results
(the API refuses the continuation without it).

The rules for answering a call from code (platform.claude.com, "Programmatic tool calling",
message formatting restrictions): the user message holds only `tool_result` blocks, and the
content of each result answering a call from code is text only: images are left out, with a note.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ...messages import AssistantMessage, Message, TextContent, ToolCall, ToolCaller
from ..server_side import encode_record, read_record
from ..types import Tool

__all__ = [
    "CODE_EXECUTION",
    "KEPT_BLOCKS",
    "TEXT_ONLY_NOTE",
    "TOOL_SEARCH_TOOL",
    "callers_of",
    "container_block",
    "decode_block",
    "encode_block",
    "found_tools",
    "hosted_codes",
    "keeps",
    "pending_container",
    "tool_caller",
    "tools_payload",
]

CODE_EXECUTION = "code_execution_20260120"
"""The code execution tool version that programmatic tool calling needs (or a later one)."""

TOOL_SEARCH_TOOL = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
"""The server's tool search tool, sent with the deferred tools (natural-language queries, as the
loop's own `search_tools` takes)."""

KEPT_BLOCKS = frozenset(
    {
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "tool_search_tool_result",
    }
)
"""The server result blocks of the code execution and the tool search, kept for replay."""

TEXT_ONLY_NOTE = "(an image was left out: code running on the provider receives text only)"
"""Said in place of the images of a result answering a call from code."""

_CODE_TOOLS = frozenset({"code_execution", "bash_code_execution", "text_editor_code_execution"})
_SEARCH = "tool_search_tool"  # the server tool search's names: tool_search_tool_bm25, _regex
_BLOCK = "anthropic_block"
_CONTAINER = "anthropic_container"


def keeps(block_type: Any, name: Any) -> bool:
    """Whether a content block of this type (and server tool name) is kept for replay."""
    if block_type == "server_tool_use":
        return name in _CODE_TOOLS or (isinstance(name, str) and name.startswith(_SEARCH))
    return block_type in KEPT_BLOCKS


def found_tools(block: dict[str, Any]) -> list[str]:
    """The tools a `tool_search_tool_result` block names (its `tool_reference`s); none for an
    error result or another block."""
    content = block.get("content") if block.get("type") == "tool_search_tool_result" else None
    if not isinstance(content, dict) or content.get("type") != "tool_search_tool_search_result":
        return []
    references = content.get("tool_references")
    return [
        r["tool_name"]
        for r in (references if isinstance(references, list) else [])
        if isinstance(r, dict) and r.get("type") == "tool_reference"
        if isinstance(r.get("tool_name"), str)
    ]


def encode_block(block: dict[str, Any]) -> str:
    """The `text_signature` that keeps a server block (with the tools a search found)."""
    return encode_record(_BLOCK, block, found_tools(block))


def container_block(container_id: str) -> str:
    """The `text_signature` that keeps the answer's container id."""
    return encode_record(_CONTAINER, container_id)


def decode_block(block: TextContent) -> tuple[dict[str, Any] | None, bool]:
    """`(kept block or None, whether the text block only carries a server-side record)`."""
    data = read_record(block)
    if data is None:
        return None, False
    kept = data.get(_BLOCK)
    return (kept if isinstance(kept, dict) else None), True


def _container(message: AssistantMessage) -> str | None:
    for block in reversed(message.content):
        if isinstance(block, TextContent):
            data = read_record(block)
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
    """The request's `tools`: each tool, with `allowed_callers` when code may call it and
    `defer_loading` when it is deferred; the code execution tool after them when any may be
    called from code, the tool search tool when any is deferred."""
    out: list[dict[str, Any]] = []
    hosted = deferred = False
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
        if tool.deferred:
            deferred = True
            entry["defer_loading"] = True
        out.append(entry)
    if hosted:
        out.append({"type": CODE_EXECUTION, "name": "code_execution"})
    if deferred:
        out.append(dict(TOOL_SEARCH_TOOL))
    return out
