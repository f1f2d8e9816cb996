"""Quoting what a model sent back to it, without echoing megabytes."""

from __future__ import annotations

__all__ = ["QUOTE_LIMIT", "clip"]

QUOTE_LIMIT = 2000
"""Characters of received text quoted in an error result before it is cut."""


def clip(text: str, limit: int = QUOTE_LIMIT) -> str:
    """`text`, or its first `limit` characters followed by "… N more characters"."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… {len(text) - limit} more characters"
