"""A small MCP server of notes, written with the official MCP SDK: what `mcp_agent.py` connects to.

    python examples/mcp_server_notes.py NOTES.json    # speaks MCP on stdin/stdout

It is an ordinary MCP server (the SDK's `MCPServer`, formerly FastMCP) and knows nothing of
agentcore: any MCP client can use it. It keeps notes in a JSON file (created when missing) and
offers three tools: `add_note(title, text, tags)`, `list_notes(tag)` and `find_notes(words)`.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("notes", instructions="A notebook: add notes, list them, search them.")
STORE = Path(sys.argv[1] if len(sys.argv) > 1 else "notes.json")
WRITING = threading.Lock()  # calls may run at once (the SDK runs sync tools in worker threads)


def load() -> list[dict[str, object]]:
    return json.loads(STORE.read_text(encoding="utf-8")) if STORE.exists() else []


@server.tool()
def add_note(title: str, text: str, tags: list[str] | None = None) -> str:
    """Add a note to the notebook.

    Args:
        title: a short title.
        text: the note.
        tags: words to find it by later.
    """
    with WRITING:
        notes = load()
        notes.append({"id": len(notes) + 1, "title": title, "text": text, "tags": tags or []})
        STORE.write_text(json.dumps(notes, indent=2), encoding="utf-8")
    return f"note {len(notes)} added: {title}"


@server.tool()
def list_notes(tag: str | None = None) -> list[dict[str, object]]:
    """List the notes (id and title), all of them or those with a tag.

    Args:
        tag: only the notes with this tag.
    """
    return [
        {"id": n["id"], "title": n["title"]}
        for n in load()
        if tag is None or tag in n["tags"]  # type: ignore[operator]
    ]


@server.tool()
def find_notes(words: str) -> list[dict[str, object]]:
    """The notes whose title or text contains every one of the words (case does not matter).

    Args:
        words: the words to look for, separated by spaces.
    """
    wanted = words.lower().split()
    return [n for n in load() if all(w in f"{n['title']} {n['text']}".lower() for w in wanted)]


if __name__ == "__main__":
    server.run("stdio")
