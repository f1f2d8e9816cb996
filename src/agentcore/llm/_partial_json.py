"""Tool-call arguments as JSON: a forgiving parse for the streaming preview, a strict one for use.

While a call streams, `parse_partial_json` shows what has arrived so far (``{"a": "hel`` gives
``{"a": "hel"}``). When the call is finished, only `parse_complete_json` counts: the text must be
exactly one JSON object, or the call carries the raw text as `ToolCall.invalid_arguments` and is
never executed; `describe_invalid_json` says what was wrong with it, for the error result.
"""

from __future__ import annotations

import json
import re
from typing import Any

import jiter

__all__ = ["describe_invalid_json", "parse_complete_json", "parse_partial_json"]


class _NotJson(ValueError):
    """A literal Python's json module would accept but JSON does not (`NaN`, `Infinity`)."""


def _reject_constant(name: str) -> Any:
    raise _NotJson(f"{name} is not a JSON value (numbers must be finite)")


# One decoder, built once: the stdlib's C scanner (linear in the text), minus NaN and Infinity.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def parse_partial_json(text: str) -> dict[str, Any]:
    """Parse a possibly incomplete JSON object; never raises, `{}` at worst.

    Incomplete trailing strings are kept (``{"a": "hel`` gives ``{"a": "hel"}``); an incomplete
    number or literal at the end is dropped. For previews only: what a tool runs on comes from
    `parse_complete_json`.
    """
    if not text or text.isspace():
        return {}
    try:
        value = jiter.from_json(text.encode(), partial_mode="trailing-strings")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def parse_complete_json(text: str) -> dict[str, Any] | None:
    """The arguments of a finished tool call, or None when they are not one JSON object.

    The whole text must be exactly one JSON object, with only whitespace around it. A blank text
    is a call without arguments (`{}`): many servers send ``""`` for one. Cut-off JSON, trailing
    garbage, two objects, a non-object and the `NaN`/`Infinity` literals all give None.
    """
    if not text.strip():
        return {}
    try:
        value = _DECODER.decode(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "null"


# What may be left at the error position of a text cut off in the middle of a token.
_TOKEN_START = re.compile(r"t(r(ue?)?)?|f(a(l(se?)?)?)?|n(u(ll?)?)?|-|\.|[eE][-+]?")


def _cut_off(error: json.JSONDecodeError) -> bool:
    """Whether the text ends before its JSON is complete (rather than being malformed).

    An unterminated string always runs to the end; otherwise the parser stopped at the end of
    the text, or at a token that the end of the text cut short (`tru`, `1.`, `-`).
    """
    if error.msg.startswith("Unterminated string"):
        return True
    rest = error.doc[error.pos :].rstrip()
    return not rest or _TOKEN_START.fullmatch(rest) is not None


def describe_invalid_json(text: str) -> str:
    """Why `text` is not one complete JSON object, in words for the model; "" when it is one.

    Examples: ``unterminated string starting at line 1 column 25 (the text ends before the JSON
    is complete)``, ``extra data after the object at line 1 column 9``, ``expected an object, got
    an array``, ``NaN is not a JSON value (numbers must be finite)``. Meant for the error result
    of a call whose `ToolCall.invalid_arguments` is set.
    """
    if not text.strip():
        return ""
    try:
        value = _DECODER.decode(text)
    except _NotJson as exc:
        return str(exc)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        if exc.msg == "Extra data":
            first = "the object" if text.lstrip().startswith("{") else "the JSON value"
            return f"extra data after {first} at {where}"
        message = exc.msg.removesuffix(" at")
        reason = f"{message[:1].lower()}{message[1:]} at {where}"
        if _cut_off(exc):
            reason += " (the text ends before the JSON is complete)"
        return reason
    except RecursionError:
        return "the JSON is nested too deeply"
    return "" if isinstance(value, dict) else f"expected an object, got {_kind(value)}"
