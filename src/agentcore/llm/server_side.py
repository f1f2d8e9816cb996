"""Blocks a provider ran on its own side, kept in an answer for replay (one mechanism for all).

Some APIs run tools themselves inside one answer (Anthropic: the code execution of programmatic
tool calling, the tool search over `defer_loading` tools) and need those blocks back verbatim in
the next request. They are not text, thinking or tool calls of ours, so the adapter keeps each
one, whole, as an empty `TextContent` whose `text_signature` is a versioned JSON object: the
adapter's own key holds the block (`{"v": 1, "anthropic_block": {...}}`), and `"loads"`, when
present, names the deferred tools the block made available (a tool search's finds).

* The adapter that wrote a record reads it back when it builds a request to the same model;
  `transform_messages` drops signature-only text blocks for every other model, as it drops
  other signatures, so no other provider ever sees them.
* The agent layer reads only `"loads"` (`found_tool_names`): the tools a provider's own search
  found join the run from that answer on, as the names of a `search_tools` result's
  `added_tool_names` do.
"""

from __future__ import annotations

import json
from typing import Any

from ..messages import AssistantMessage, TextContent

__all__ = ["encode_record", "found_tool_names", "read_record"]

_PREFIX = '{"v":1,'


def encode_record(key: str, value: Any, loads: list[str] | None = None) -> str:
    """The `text_signature` of a kept server-side record: `value` under the adapter's `key`,
    and the deferred tools it made available (`loads`) when there are any."""
    data: dict[str, Any] = {"v": 1, key: value}
    if loads:
        data["loads"] = loads
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def read_record(block: TextContent) -> dict[str, Any] | None:
    """The record a signature-only text block keeps (the JSON object of `encode_record`), or
    None for any other block (text, or a signature of another form)."""
    signature = block.text_signature
    if block.text or not signature or not signature.startswith(_PREFIX):
        return None
    try:
        data = json.loads(signature)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def found_tool_names(message: AssistantMessage) -> list[str]:
    """The deferred tools the provider's own tool search found in this answer, in order (the
    `"loads"` of its kept records; empty for an answer without any)."""
    names: list[str] = []
    for block in message.content:
        if not isinstance(block, TextContent) or block.text:
            continue
        data = read_record(block)
        loads = data.get("loads") if data is not None else None
        if isinstance(loads, list):
            names.extend(name for name in loads if isinstance(name, str) and name not in names)
    return names
