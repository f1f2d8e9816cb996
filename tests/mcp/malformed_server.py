"""An MCP server over stdio written by hand (JSON-RPC lines), because the SDK's own server cannot
send what it sends: a tool listing in which one tool's `inputSchema` is not an object at all.

The SDK's client refuses such a listing as a whole; `MCPClient` leaves that one tool out.
"""

from __future__ import annotations

import json
import sys

TOOLS = [
    {"name": "good", "description": "works", "inputSchema": {"type": "object"}},
    {"name": "bad", "inputSchema": "not a schema"},
    {"description": "a tool without a name", "inputSchema": {"type": "object"}},
]


def answer(message: dict[str, object]) -> dict[str, object]:
    method = message["method"]
    if method == "initialize":
        params = message["params"]
        assert isinstance(params, dict)
        return {
            "protocolVersion": params["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "malformed", "version": "1"},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": "good answered"}]}
    return {}


for line in sys.stdin:
    message = json.loads(line)
    if "id" in message:
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": answer(message)}
        print(json.dumps(reply), flush=True)
