"""Which recorded exchange answers a request, and, when none does, what differs.

A request matches a recorded one when the method, the URL's path and query (the host is left out:
a recording made against one server replays for the same API anywhere) and the body are equal.
When nothing unused matches, the nearest unused recorded request is compared with the one sent,
and the difference is named: the fields that differ (`model`, `messages`, `tools`, ...), the
first differing item of a list, and a short diff of the two.

The nearest is chosen by content alone, so that requests sent at once (an eval's cases, parallel
sub-agents) get the same report whatever order they arrive in: the same method first, then the
same path, then the most similar body (`similarity`: field by field, item by item, and for two
texts the share of their common beginning and end), the earliest in the file on a tie.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import unquote, urlsplit

__all__ = ["describe_drift", "match_key", "nearest", "similarity"]

_DIFF_LINES = 16  # lines of unified diff shown at most
_VALUE_CHARS = 120  # characters of a differing value shown
_MODEL_PATH = re.compile(
    r"/models?/([^/:]+)"
)  # Gemini's `models/<id>:...`, Bedrock's `model/<id>/`
_MISSING: Any = object()
_DEPTH = 64  # levels of a body compared item by item; below, values are equal or not


def _target(request: Mapping[str, Any]) -> str:
    parts = urlsplit(str(request.get("url", "")))
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _payload(request: Mapping[str, Any]) -> Any:
    for name in ("body", "text", "base64"):
        if name in request:
            return request[name]
    return None


def match_key(request: Mapping[str, Any]) -> str:
    """What must be equal for a recorded request to answer a sent one."""
    payload = json.dumps(_payload(request), sort_keys=True, ensure_ascii=False)
    return f"{request.get('method')} {_target(request)} {payload}"


def similarity(recorded: Any, sent: Any, depth: int = 0) -> float:
    """How alike two JSON values are, from 0 (nothing in common) to 1 (equal): objects by the
    share of their keys with alike values, lists item by item at the same positions (a longer
    list counts its extra items as different), texts by the share of the longer one that their
    common beginning and end cover. Linear in the size of the values."""
    if recorded == sent:
        return 1.0
    if depth >= _DEPTH:
        return 0.0
    if isinstance(recorded, dict) and isinstance(sent, dict):
        keys = recorded.keys() | sent.keys()
        same = sum(similarity(recorded[k], sent[k], depth + 1) for k in recorded if k in sent)
        return same / len(keys)
    if isinstance(recorded, list) and isinstance(sent, list):
        longest = max(len(recorded), len(sent))
        same = sum(similarity(a, b, depth + 1) for a, b in zip(recorded, sent, strict=False))
        return same / longest
    if isinstance(recorded, str) and isinstance(sent, str):
        return _text_similarity(recorded, sent)
    return 0.0


def _text_similarity(a: str, b: str) -> float:
    shortest = min(len(a), len(b))
    head = 0
    while head < shortest and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < shortest - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return (head + tail) / max(len(a), len(b))


def nearest(
    sent: Mapping[str, Any], candidates: Sequence[tuple[int, Mapping[str, Any]]]
) -> int | None:
    """The index of the recorded request closest to `sent` among `(index, request)` pairs: the
    same method, then the same path, then the most similar body (`similarity`), then the lowest
    index. It depends on the contents only, not on the order of `candidates`."""
    best: tuple[bool, bool, float, int] | None = None
    best_index: int | None = None
    sent_body = _payload(sent)
    sent_path = urlsplit(str(sent.get("url", ""))).path
    for index, recorded in candidates:
        rank = (
            recorded.get("method") == sent.get("method"),
            urlsplit(str(recorded.get("url", ""))).path == sent_path,
            similarity(_payload(recorded), sent_body),
            -index,
        )
        if best is None or rank > best:
            best, best_index = rank, index
    return best_index


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _VALUE_CHARS else text[: _VALUE_CHARS - 1] + "…"


def _first_difference(path: str, recorded: Any, sent: Any) -> tuple[str, Any, Any]:
    """The path of the first place two JSON values differ, and the values there."""
    if isinstance(recorded, dict) and isinstance(sent, dict):
        for key in sorted({*recorded, *sent}):
            if recorded.get(key, _MISSING) != sent.get(key, _MISSING):
                return _first_difference(
                    f"{path}.{key}", recorded.get(key, _MISSING), sent.get(key, _MISSING)
                )
    if isinstance(recorded, list) and isinstance(sent, list) and len(recorded) == len(sent):
        for index, (a, b) in enumerate(zip(recorded, sent, strict=True)):
            if a != b:
                return _first_difference(f"{path}[{index}]", a, b)
    return path, recorded, sent


def _field_difference(name: str, recorded: Any, sent: Any) -> str:
    if isinstance(recorded, list) and isinstance(sent, list) and len(recorded) != len(sent):
        return f"{name} has {len(sent)} items, the recording {len(recorded)}"
    where, a, b = _first_difference(name, recorded, sent)
    if a is _MISSING:
        return f"{where}: not in the recording, sent {_short(b)}"
    if b is _MISSING:
        return f"{where}: recorded {_short(a)}, not sent"
    return f"{where}: recorded {_short(a)}, sent {_short(b)}"


def _model_in_path(request: Mapping[str, Any]) -> str | None:
    match = _MODEL_PATH.search(urlsplit(str(request.get("url", ""))).path)
    return unquote(match.group(1)) if match else None


def _differences(recorded: Mapping[str, Any], sent: Mapping[str, Any]) -> list[str]:
    found: list[str] = []
    if recorded.get("method") != sent.get("method"):
        found.append(f"method: recorded {recorded.get('method')}, sent {sent.get('method')}")
    if _target(recorded) != _target(sent):
        a_model, b_model = _model_in_path(recorded), _model_in_path(sent)
        if a_model != b_model:  # Gemini and Bedrock name the model in the path
            found.append(f"model: recorded {_short(a_model)}, sent {_short(b_model)}")
        else:
            found.append(f"path: recorded {_target(recorded)}, sent {_target(sent)}")
    a, b = _payload(recorded), _payload(sent)
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted({*a, *b}):
            if key not in a:
                found.append(f"{key}: not in the recording, sent {_short(b[key])}")
            elif key not in b:
                found.append(f"{key}: recorded {_short(a[key])}, not sent")
            elif a[key] != b[key]:
                found.append(_field_difference(key, a[key], b[key]))
    elif a != b:
        found.append("body differs")
    return found


def _diff(recorded: Mapping[str, Any], sent: Mapping[str, Any]) -> list[str]:
    def lines(request: Mapping[str, Any]) -> list[str]:
        shown = {"target": f"{request.get('method')} {_target(request)}", "body": _payload(request)}
        return json.dumps(shown, indent=1, sort_keys=True, ensure_ascii=False).splitlines()

    diff = list(
        difflib.unified_diff(lines(recorded), lines(sent), "recorded", "sent", n=1, lineterm="")
    )
    if len(diff) > _DIFF_LINES:
        diff = [*diff[:_DIFF_LINES], f"… ({len(diff) - _DIFF_LINES} more diff lines)"]
    return diff


def describe_drift(
    number: int, sent: Mapping[str, Any], recorded: Mapping[str, Any] | None, recorded_number: int
) -> str:
    """The error text of request `number` (1-based) that no unused recorded exchange answers,
    compared with the nearest recorded request (exchange `recorded_number`, 1-based)."""
    head = f"request {number} ({sent.get('method')} {_target(sent)}) is not in the recording"
    if recorded is None:
        return head + ": every recorded exchange has been used"
    names = "; ".join(_differences(recorded, sent)) or "the requests differ"
    diff = "\n".join("    " + line for line in _diff(recorded, sent))
    return f"{head}; nearest is exchange {recorded_number}: {names}\n{diff}"
