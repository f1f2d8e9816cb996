"""What a server's question (an elicitation) may show the user: its texts cut, its size bounded.

A question reaches every surface that shows it (the terminal, the web page, an AG-UI client, a
durable Temporal run, an application's handler), so it is cut where it enters: the message after
2,000 characters, each title, description and choice label (`enumNames`) after 500, each with
a note saying how much was cut; a string default longer than 500 characters is left out. What
checks the answer (types, names, choices, bounds) is kept as sent, so the answer is checked as
the server asked. A schema whose JSON is still over 32 Ki characters after that, or nested
deeper than a flat form goes, is refused: the server is told why, and the user sees nothing.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MESSAGE_LIMIT", "SCHEMA_LIMIT", "TEXT_LIMIT", "shown_question"]

MESSAGE_LIMIT = 2_000
"""Characters of a question's message shown; the rest is replaced by a note."""

TEXT_LIMIT = 500
"""Characters of one title, description or choice label of a question's schema shown."""

SCHEMA_LIMIT = 32 * 1024
"""Characters of a question's schema as JSON (after its texts were cut) a client shows."""

_DEPTH_LIMIT = 8  # levels of a schema: a flat form needs four (object, property, items, choice)
_TEXTS = ("title", "description")


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters not shown)"


class _TooDeep(Exception):
    pass


def _shown(value: Any, depth: int) -> Any:
    if depth > _DEPTH_LIMIT:
        raise _TooDeep
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key in _TEXTS and isinstance(item, str):
                out[key] = _cut(item, TEXT_LIMIT)
            elif key == "enumNames" and isinstance(item, list):
                out[key] = [_cut(n, TEXT_LIMIT) if isinstance(n, str) else n for n in item]
            elif key == "default" and isinstance(item, str) and len(item) > TEXT_LIMIT:
                continue  # a suggestion too long to show: the field starts empty
            else:
                out[key] = _shown(item, depth + 1)
        return out
    if isinstance(value, list):
        return [_shown(item, depth + 1) for item in value]
    return value


def shown_question(server: str, message: str, schema: Any) -> tuple[str, dict[str, Any]] | str:
    """The question of MCP server `server` as it may be shown: `(message, schema)` with their
    texts cut (see the module docstring), or the text of the refusal when it is too large or too
    deep to show."""
    if not isinstance(schema, dict):
        return f"MCP server {server!r} asked a question whose schema is not an object"
    try:
        shown = _shown(schema, 0)
    except _TooDeep:
        return (
            f"MCP server {server!r} asked a question whose schema is nested deeper than "
            f"{_DEPTH_LIMIT} levels; a question is a flat form, and this one is not shown"
        )
    size = len(json.dumps(shown, ensure_ascii=False, default=str))
    if size > SCHEMA_LIMIT:
        return (
            f"MCP server {server!r} asked a question too large to show: its schema is {size:,} "
            f"characters of JSON after its texts were cut; this client shows at most "
            f"{SCHEMA_LIMIT:,}"
        )
    return _cut(message, MESSAGE_LIMIT), shown
