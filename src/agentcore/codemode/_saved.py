"""What a snippet keeps when it suspends on nested calls waiting for a decision: its Monty
snapshot and the host side of it, as the JSON object of its `SuspendedCall`, sealed with an
HMAC-SHA256 that covers the call's id (docs/security.md: a snapshot read back is checked
before Monty deserializes it)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from dataclasses import dataclass, field
from typing import Any

from ..messages import Cost, Usage

__all__ = ["DEFAULT_KEY", "Saved", "SavedStateError", "Waiter", "seal", "unseal"]

DEFAULT_KEY = b"agentcore.codemode snapshot v1"
"""The key without `snapshot_key`: it detects a damaged state, not a forged one."""

_VERSION = 1


class SavedStateError(Exception):
    """A suspended snippet's state that is not one this tool wrote (damaged, forged, for
    another call, too large): the snippet is not resumed."""


@dataclass(frozen=True, slots=True)
class Waiter:
    """A nested call the snippet waits for: its id (the request's), function and arguments."""

    call_id: str
    function: str
    kwargs: dict[str, Any]


@dataclass(slots=True)
class Saved:
    """The host side of a suspended snippet, with its Monty snapshot."""

    snapshot: bytes
    calls: int  # calls the snippet made (its `tool_calls` limit goes on from there)
    printed: str  # what it had printed
    done: dict[int, dict[str, Any]] = field(default_factory=dict)  # settled, not yet delivered
    waiting: dict[int, Waiter] = field(default_factory=dict)  # Monty call id -> the call
    usage: Usage | None = None


def _mac(key: bytes, tool_call_id: str, body: dict[str, Any]) -> str:
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    message = tool_call_id.encode() + b"\0" + text.encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def _usage_json(usage: Usage | None) -> dict[str, Any] | None:
    if usage is None:
        return None
    cost = usage.cost
    return {
        "input": usage.input,
        "output": usage.output,
        "cache_read": usage.cache_read,
        "cache_write": usage.cache_write,
        "cost": [cost.input, cost.output, cost.cache_read, cost.cache_write],
    }


def seal(saved: Saved, tool_call_id: str, key: bytes) -> dict[str, Any]:
    """The JSON object of a `SuspendedCall` for `saved`, its HMAC over everything and the id."""
    body: dict[str, Any] = {
        "version": _VERSION,
        "snapshot": base64.b64encode(saved.snapshot).decode(),
        "calls": saved.calls,
        "printed": saved.printed,
        "done": {str(k): v for k, v in saved.done.items()},
        "waiting": {
            str(k): {"call_id": w.call_id, "function": w.function, "kwargs": w.kwargs}
            for k, w in saved.waiting.items()
        },
        "usage": _usage_json(saved.usage),
    }
    return {**body, "mac": _mac(key, tool_call_id, body)}


def _settled(value: Any) -> dict[str, Any]:
    if isinstance(value, dict) and set(value) == {"return_value"}:
        return value
    if (
        isinstance(value, dict)
        and set(value) == {"exc_type", "message"}
        and value["exc_type"] == "RuntimeError"
        and isinstance(value["message"], str)
    ):
        return value
    raise SavedStateError("a settled call is neither a value nor a RuntimeError")


def unseal(state: dict[str, Any], tool_call_id: str, key: bytes, limit: int) -> Saved:
    """The `Saved` of a `SuspendedCall`'s state, checked (its MAC first, then every field).

    Raises:
        SavedStateError: naming what is wrong.
    """
    body = dict(state)
    mac = body.pop("mac", None)
    if not isinstance(mac, str) or not hmac.compare_digest(mac, _mac(key, tool_call_id, body)):
        raise SavedStateError(
            "its check failed (damaged, written for another call, or sealed with another key)"
        )
    if body.get("version") != _VERSION:
        raise SavedStateError(f"version {body.get('version')!r}, expected {_VERSION}")
    try:
        snapshot = base64.b64decode(body["snapshot"], validate=True)
        calls, printed = body["calls"], body["printed"]
        if not isinstance(calls, int) or not isinstance(printed, str):
            raise SavedStateError("calls or printed output of the wrong type")
        done = {int(k): _settled(v) for k, v in body["done"].items()}
        waiting = {
            int(k): Waiter(str(w["call_id"]), str(w["function"]), dict(w["kwargs"]))
            for k, w in body["waiting"].items()
        }
        raw = body["usage"]
        usage = None
        if raw is not None:
            usage = Usage(
                input=raw["input"],
                output=raw["output"],
                cache_read=raw["cache_read"],
                cache_write=raw["cache_write"],
                cost=Cost(*raw["cost"]),
            )
    except SavedStateError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, binascii.Error) as exc:
        raise SavedStateError(f"a malformed field ({type(exc).__name__}: {exc})") from None
    if len(snapshot) > limit:
        raise SavedStateError(f"a snapshot of {len(snapshot):,} bytes, over {limit:,}")
    if not waiting:
        raise SavedStateError("no call it waited for")
    return Saved(snapshot, calls, printed, done, waiting, usage)
