"""What goes into and comes out of a tool, checked: the JSON rule for values, result checks.

One rule makes a tool's value JSON, for the text the model reads (`@tool`) and for
`AgentToolResult.details` (which sessions store), so that memory and disk always hold the same
thing. It is pydantic's JSON mode, made strict:

- `str`, `int`, `bool`, `None` and finite floats stay as they are; dicts with `str` keys and lists
  stay as they are (the same objects, when nothing inside needs converting).
- `int`, `float` and `bool` dict keys become their JSON text (`1` → `"1"`, `True` → `"true"`).
- Tuples, deques (and named tuples) become lists; sets and frozensets become sorted lists (by the
  values' own order where they have one, else by their JSON text), so the output is the same on
  every run.
- Enum members become their value; `str`/`int`/`float`/`dict`/`list` subclasses their base type.
- `datetime`, `date`, `time` (ISO 8601), `timedelta` (ISO 8601 duration), `UUID`, `Decimal` (a
  string, so no digit is lost), paths and IP addresses become strings, as in pydantic's JSON mode.
- Dataclass instances become an object of their fields; pydantic models their
  `model_dump(mode="json")` (so the model's own serialisers apply).

Anything else cannot be JSON and is reported, never turned into a repr: bytes, NaN and ±inf, a
value that contains itself, nesting deeper than `MAX_DEPTH`, dict keys of other types (a tuple),
two keys that become the same text, generators and iterators, other objects. `NotJsonError` names
what it found and where, as a JSON path (`$.stats.mean`, `$.rows[3]`).

The walk costs nothing for a `str` and little for a small dict: exact built-in types are checked
first and nothing is copied unless something inside changes; paths are only built on failure.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import reprlib
import sys
from collections import deque
from itertools import islice
from pathlib import PurePath as _PurePath
from typing import Any

from ..errors import clip

__all__ = ["MAX_DEPTH", "NotJsonError", "json_text", "to_json_value"]

MAX_DEPTH = 200
"""Levels of nesting a tool value may have (well below Python's recursion limit)."""


class NotJsonError(TypeError):
    """A value that cannot become JSON; `what` names it and `where` is its JSON path."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what
        self._segments: list[str] = []  # innermost first: added while the walk unwinds

    @property
    def where(self) -> str:
        """The JSON path of the offending value, e.g. `$.stats.mean`."""
        return clip("$" + "".join(reversed(self._segments)), 500)

    def __str__(self) -> str:
        return f"{self.what} at {self.where}"


def json_text(value: Any) -> str:
    """The JSON text of a value already made JSON by `to_json_value`."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def to_json_value(value: Any) -> Any:
    """`value` as JSON data (dicts, lists, str, int, float, bool, None), by the module's rule.

    Raises:
        NotJsonError: something in `value` cannot be JSON.
    """
    return _convert(value, set(), 0)


# --- the walk ----------------------------------------------------------------------------------


def _convert(value: Any, active: set[int], depth: int) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        if math.isfinite(value):
            return value
        raise NotJsonError(f"float({str(value)!r})")
    if kind is dict:
        return _dict(value, active, depth)
    if kind is list:
        return _list(value, active, depth)
    if kind is tuple:
        return _sequence(value, active, depth)
    return _other(value, active, depth)


def _enter(value: Any, active: set[int], depth: int) -> int:
    key = id(value)
    if key in active:
        raise NotJsonError(f"a {type(value).__name__} that contains itself")
    if depth >= MAX_DEPTH:
        raise NotJsonError(f"more than {MAX_DEPTH} levels of nesting")
    active.add(key)
    return key


def _dict(value: dict[Any, Any], active: set[int], depth: int) -> dict[str, Any]:
    key = _enter(value, active, depth)
    out: dict[str, Any] | None = None
    unchanged = 0
    try:
        for k, v in value.items():
            text = k if type(k) is str else _key(k)  # a bad key is reported at the dict's path
            try:
                item = _convert(v, active, depth + 1)
            except NotJsonError as exc:
                exc._segments.append(_key_segment(k))
                raise
            if out is None:
                if text is k and item is v:
                    unchanged += 1
                    continue
                out = dict(islice(value.items(), unchanged))
            if text in out:
                raise NotJsonError(f"two dict keys that both become {json.dumps(text)}")
            out[text] = item
    finally:
        active.discard(key)
    if out is not None:
        return out
    return value if type(value) is dict else dict(value)


def _list(value: list[Any], active: set[int], depth: int) -> list[Any]:
    key = _enter(value, active, depth)
    out: list[Any] | None = None
    try:
        for i, v in enumerate(value):
            try:
                item = _convert(v, active, depth + 1)
            except NotJsonError as exc:
                exc._segments.append(f"[{i}]")
                raise
            if out is None:
                if item is v:
                    continue
                out = value[:i]
            out.append(item)
    finally:
        active.discard(key)
    if out is not None:
        return out
    return value if type(value) is list else list(value)


def _sequence(value: Any, active: set[int], depth: int) -> list[Any]:
    key = _enter(value, active, depth)
    out = []
    try:
        for i, v in enumerate(value):
            try:
                out.append(_convert(v, active, depth + 1))
            except NotJsonError as exc:
                exc._segments.append(f"[{i}]")
                raise
    finally:
        active.discard(key)
    return out


def _set(value: set[Any] | frozenset[Any], active: set[int], depth: int) -> list[Any]:
    key = _enter(value, active, depth)
    out = []
    try:
        for v in value:
            try:
                out.append(_convert(v, active, depth + 1))
            except NotJsonError as exc:
                exc._segments.append("[*]")  # a set member has no position
                raise
    finally:
        active.discard(key)
    try:
        out.sort()
    except TypeError:  # no common order (mixed types, dicts): the JSON text gives one
        out.sort(key=lambda item: json.dumps(item, sort_keys=True))
    return out


def _key(key: Any) -> str:
    """A non-`str` dict key as JSON object text, as pydantic's JSON mode writes it."""
    if isinstance(key, enum.Enum) and isinstance(key.value, str | int | float):
        key = key.value
    if isinstance(key, str):
        return str.__str__(key)
    if key is True or key is False:
        return "true" if key else "false"
    if isinstance(key, int):
        return str(int(key))
    if isinstance(key, float) and math.isfinite(key):
        return repr(float(key))
    raise NotJsonError(f"a dict key {_short_repr(key)} of type {type(key).__name__}")


def _key_segment(key: Any) -> str:
    if type(key) is str and key.isidentifier():
        return f".{key}"
    if isinstance(key, str):
        return f"[{json.dumps(clip(key, 60), ensure_ascii=False)}]"
    return f"[{_short_repr(key)}]"


def _short_repr(value: Any) -> str:
    try:
        return reprlib.repr(value)
    except Exception:  # a broken __repr__ must not hide the real problem
        return type(value).__name__


_LEAF_TYPES: tuple[type, ...] | None = None


def _leaf_types() -> tuple[type, ...]:
    """Types pydantic's JSON mode makes a string; imported on first need, not with agentcore."""
    global _LEAF_TYPES
    if _LEAF_TYPES is None:
        import datetime
        import decimal
        import ipaddress
        import uuid

        _LEAF_TYPES = (
            datetime.date,  # datetime.datetime too
            datetime.time,
            datetime.timedelta,
            uuid.UUID,
            decimal.Decimal,
            _PurePath,
            ipaddress.IPv4Address,
            ipaddress.IPv6Address,
            ipaddress.IPv4Network,
            ipaddress.IPv6Network,
            ipaddress.IPv4Interface,
            ipaddress.IPv6Interface,
        )
    return _LEAF_TYPES


def _other(value: Any, active: set[int], depth: int) -> Any:
    """Everything that is not an exact built-in JSON type."""
    if isinstance(value, enum.Enum):
        return _convert(value.value, active, depth)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):  # bool cannot be subclassed, so this is an int subclass
        return int(value)
    if isinstance(value, float):
        return _convert(float(value), active, depth)
    if isinstance(value, dict):
        return _dict(value, active, depth)
    if isinstance(value, list):
        return _list(value, active, depth)
    if isinstance(value, tuple | deque):
        return _sequence(value, active, depth)
    if isinstance(value, set | frozenset):
        return _set(value, active, depth)
    if isinstance(value, _leaf_types()):
        if isinstance(value, _PurePath):
            return str(value)  # pydantic's JSON mode knows only concrete paths
        from pydantic_core import to_jsonable_python

        try:
            return to_jsonable_python(value)
        except Exception as exc:
            raise NotJsonError(
                f"{_type_name(value)} (pydantic cannot make it JSON: {clip(str(exc), 200)})"
            ) from None
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        key = _enter(value, active, depth)
        try:
            fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
            return _dict(fields, active, depth + 1)
        finally:
            active.discard(key)
    pydantic = sys.modules.get("pydantic")
    if pydantic is not None and isinstance(value, pydantic.BaseModel):
        try:
            dumped = value.model_dump(mode="json")
        except Exception as exc:
            raise NotJsonError(
                f"{_type_name(value)} (pydantic cannot make it JSON: {clip(str(exc), 200)})"
            ) from None
        return _convert(dumped, active, depth)
    raise NotJsonError(_type_name(value))


def _type_name(value: Any) -> str:
    kind = type(value)
    if kind.__module__ == "builtins":
        return kind.__qualname__
    return f"{kind.__module__}.{kind.__qualname__}"
