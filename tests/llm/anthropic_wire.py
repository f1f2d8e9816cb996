"""Anthropic Messages streams written from the documented event format, block by block, for the
tests of the server-side blocks (hosted code execution, native tool search): each block is a
list of event bodies, its `content_block_start` block first, then its deltas."""

from __future__ import annotations

import json
from typing import Any

from .replay_server import ScriptedResponse

Block = list[dict[str, Any]]


def answer(
    *blocks: Block, stop: str, container: str | None = None, model: str = "claude-sonnet-4-5"
) -> ScriptedResponse:
    """A streamed answer of these blocks ending with `stop`; `container`: the id of the code
    execution container the answer reports (in its `message_delta`, as the API sends it)."""
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": model,
                "container": None,
                "usage": {"input_tokens": 50, "output_tokens": 1},
            },
        }
    ]
    for index, block in enumerate(blocks):
        start, *deltas = block
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        events.extend({"type": "content_block_delta", "index": index, "delta": d} for d in deltas)
        events.append({"type": "content_block_stop", "index": index})
    delta: dict[str, Any] = {"stop_reason": stop}
    if container is not None:
        delta["container"] = {"id": container, "expires_at": "2026-12-07T19:00:00Z"}
    events.append({"type": "message_delta", "delta": delta, "usage": {"output_tokens": 9}})
    events.append({"type": "message_stop"})
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    return ScriptedResponse.sse(body.encode())


def text(value: str) -> Block:
    """A text block."""
    return [{"type": "text", "text": ""}, {"type": "text_delta", "text": value}]


def call(
    id: str, name: str, arguments: dict[str, Any], caller: str | None = None, whole: bool = False
) -> Block:
    """A `tool_use` block; `caller`: the id of the code run that made it (programmatic tool
    calling); `whole`: its input given in the start block instead of streamed."""
    start: dict[str, Any] = {
        "type": "tool_use",
        "id": id,
        "name": name,
        "input": arguments if whole else {},
    }
    if caller is not None:
        start["caller"] = {"type": "code_execution_20260120", "tool_id": caller}
    if whole:
        return [start]
    return [start, {"type": "input_json_delta", "partial_json": json.dumps(arguments)}]


def server_use(id: str, name: str, arguments: dict[str, Any]) -> Block:
    """A `server_tool_use` block (a tool the server runs), its input streamed."""
    return [
        {"type": "server_tool_use", "id": id, "name": name, "input": {}},
        {"type": "input_json_delta", "partial_json": json.dumps(arguments)},
    ]


def whole(block: dict[str, Any]) -> Block:
    """A block sent complete in its start event (a server tool's result)."""
    return [block]
