"""Text from outside (a model, a tool, a session file) made safe to show in a terminal.

A terminal obeys the control characters it is sent: `ESC[3D` moves the cursor back over what was
just written, `\\r` returns to the start of the line, `ESC]52;…` writes the clipboard, `ESC]0;…`
sets the window title, a bidi override (U+202E) reorders what follows. A model, a tool's output,
or a session file written by someone else can hold any of them, so every string of theirs that
the CLI writes to a terminal goes through `visible` first, and an approval line through `exact`
(the person decides on what they see: it must be the bytes that will run).

Made visible, as Python writes them in a string literal: the C0 controls but newline and tab
(`\\x1b`, `\\r`, `\\x07`, …), DEL (`\\x7f`), the C1 controls (`\\x9b`, …), the bidi embedding,
override and isolate marks (`\\u202e`, `\\u2066`, …) and lone surrogates (`\\ud800`, which a
UTF-8 terminal cannot even be sent). Everything else is shown as it is. JSON output is left
alone: JSON escapes control characters itself (`json_text` adds the few it lets through).

`exact` also escapes tabs and every character that shows as nothing or as a plain space while
being something else: the other format characters (zero-width spaces and joiners, the invisible
"tag" characters), line and paragraph separators, spaces other than U+0020 (a no-break space
looks like the space that separates a command's words), private-use and unassigned code points.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

__all__ = ["EXACT_NOTE", "exact", "json_text", "split_surrogate", "visible"]

_UNSAFE = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_CONTROL = re.compile(f"[{_UNSAFE}]")
_CONTROL_OR_TAB = re.compile(f"[\t{_UNSAFE}]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")

EXACT_NOTE = "(control characters shown as \\xNN escapes, backslashes doubled: exactly what runs)"
"""Said under an `exact` line that had to escape something."""


_SHORT = {"\t": "\\t", "\r": "\\r"}


def _escape(char: str) -> str:
    short = _SHORT.get(char)
    if short is not None:
        return short
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _escape_match(match: re.Match[str]) -> str:
    return _escape(match.group())


_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"})


def _hidden(char: str) -> bool:
    """For `exact`: a character that shows as nothing, as a plain space, or moves the cursor."""
    return char not in " \n" and unicodedata.category(char) in _HIDDEN


def visible(text: str) -> str:
    """`text` with its control characters (all but newline and tab) written as escapes; the two
    UTF-16 halves of a character (as a stream split across chunks leaves them) are joined first,
    a lone half is escaped."""
    if _CONTROL.search(text) is None:  # the common case: nothing to do
        return text
    if _SURROGATE.search(text) is not None:
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return _CONTROL.sub(_escape_match, text)


def split_surrogate(text: str) -> tuple[str, str]:
    """`text` split before a trailing first half of a UTF-16 pair (a streamed delta cut inside
    a character): what to show now, and what to hold until the next delta."""
    if text and "\ud800" <= text[-1] <= "\udbff":
        return text[:-1], text[-1]
    return text, ""


def exact(text: str) -> tuple[str, bool]:
    """`text` as it must show on an approval line: unchanged when it holds no control character,
    tab or invisible character; else with each of them escaped and each backslash doubled, so
    that what is shown reads back to exactly `text`. Newlines stay line breaks. Returns the
    shown text and whether it had to escape."""
    if text.isascii():  # the common case, checked with one regex
        if _CONTROL_OR_TAB.search(text) is None:
            return text, False
        return _CONTROL_OR_TAB.sub(_escape_match, text.replace("\\", "\\\\")), True
    if not any(_hidden(char) for char in text):
        return text, False
    doubled = text.replace("\\", "\\\\")
    return "".join(_escape(c) if _hidden(c) else c for c in doubled), True


def json_text(value: Any, *, separators: tuple[str, str] | None = None) -> str:
    """`value` as JSON with non-ASCII text kept readable, but DEL, the C1 controls, bidi marks
    and lone surrogates escaped as `\\uNNNN` (JSON itself escapes only the C0 controls; a lone
    surrogate could not even be written as UTF-8)."""
    text = json.dumps(value, ensure_ascii=False, separators=separators, default=repr)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
