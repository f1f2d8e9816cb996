"""Best-effort parsing of tool-call arguments while their JSON is still streaming."""

from __future__ import annotations

import json
from typing import Any

import jiter

__all__ = ["parse_partial_json", "parse_final_json"]


def parse_partial_json(text: str) -> dict[str, Any]:
    """Parse a possibly incomplete JSON object; never raises, `{}` at worst.

    Incomplete trailing strings are kept (``{"a": "hel`` gives ``{"a": "hel"}``); an incomplete
    number or literal at the end is dropped.
    """
    if not text or text.isspace():
        return {}
    try:
        value = jiter.from_json(text.encode(), partial_mode="trailing-strings")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def parse_final_json(text: str) -> dict[str, Any]:
    """Parse complete arguments; falls back to the partial parser for truncated JSON."""
    if not text or text.isspace():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return parse_partial_json(text)
    return value if isinstance(value, dict) else {}
