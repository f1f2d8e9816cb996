"""The JSON form of messages: `to_json`, `from_json`, `encode_message`, custom message types.

Re-exported by `agentcore.messages`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import fields, is_dataclass
from typing import Any, get_args

from ..errors import MessageFormatError, clip
from ._types import (
    AgentMessage,
    AssistantMessage,
    Cost,
    ImageContent,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolCaller,
    ToolResultMessage,
    Usage,
    UserMessage,
)

__all__ = ["FORMAT_VERSION", "encode_message", "from_json", "register_message_type", "to_json"]

FORMAT_VERSION = 1
"""Version of the JSON form written by `to_json` (the `"v"` key of every message)."""

# --- valid Unicode ---------------------------------------------------------------------------
#
# A Python string may hold lone surrogates (U+D800-U+DFFF): from `\ud800` in a prompt, from a
# provider that split an emoji into its UTF-16 halves across two chunks, from bytes decoded with
# `surrogateescape`. UTF-8 cannot hold them, so every view that encodes the text (a terminal, a
# web page's JSON) would fail on it. The JSON form of a message never holds one: a pair of
# halves becomes the character it encodes, a lone half becomes U+FFFD (the replacement
# character), when a message is encoded (a session stores, and an Agent keeps, that form); when
# one is decoded, its text fields get the same (free-form values are left to the session stores,
# which check the record's JSON source for a surrogate escape first: `valid_json`).


def valid_text(text: str) -> str:
    """`text` as valid Unicode: surrogate pairs joined, lone surrogates replaced by U+FFFD
    (`text` itself when it holds none, the common case, checked fast)."""
    if text.isascii():
        return text
    try:
        text.encode()  # in C, about 2 ns a character: faster than searching for one
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def valid_json(value: Any) -> Any:
    """A decoded JSON value with every string (keys too) made `valid_text`."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, list):
        return [valid_json(v) for v in value]
    if isinstance(value, dict):
        return {valid_text(k): valid_json(v) for k, v in value.items()}
    return value


# --- JSON ------------------------------------------------------------------------------------
#
# Every field of agentcore's own types has a declared JSON type, checked in both directions:
# `to_json` refuses a message it could not read back (NaN, a datetime, a cycle), and `from_json`
# refuses a document that would build a message of the wrong shape (`"content": 5`), which would
# otherwise load fine and fail every later run deep inside the loop with a `TypeError`.

_BLOCKS: dict[str, type[Any]] = {
    "text": TextContent,
    "thinking": ThinkingContent,
    "image": ImageContent,
    "tool_call": ToolCall,
}
_MESSAGES: dict[str, type[Any]] = {
    "user": UserMessage,
    "assistant": AssistantMessage,
    "tool_result": ToolResultMessage,
}
_STOP_REASONS: tuple[str, ...] = get_args(StopReason)
_JSON_VALUE = "a JSON value (null, boolean, number, string, list or object)"

# The kinds of field, with the JSON type each holds (as error messages name it).
_EXPECTED: dict[str, str] = {
    "str": "a string",
    "opt_str": "a string or null",
    "int": "an integer",
    "timestamp": "an integer (ms since the epoch)",
    "bool": "a boolean",
    "num": "a finite number",
    "stop": "one of " + ", ".join(repr(r) for r in _STOP_REASONS),
    "names": "a list of strings or null",
    "object": "an object",
    "json": _JSON_VALUE,
    "usage": "an object (Usage)",
    "opt_usage": "an object (Usage) or null",
    "cost": "an object (Cost)",
    "opt_caller": "an object (ToolCaller) or null",
    "user_content": "a string or a list of text/image blocks",
    "assistant_content": "a list of text/thinking/tool_call blocks",
    "result_content": "a list of text/image blocks",
}
_NULLABLE = frozenset({"opt_str", "names", "opt_usage", "opt_caller", "json"})
_CONTENT_BLOCKS: dict[str, tuple[str, ...]] = {
    "user_content": ("text", "image"),
    "assistant_content": ("text", "thinking", "tool_call"),
    "result_content": ("text", "image"),
}

# (field, kind, required) of each type, in field order (the order `to_json` writes them).
_SPECS: dict[type[Any], tuple[tuple[str, str, bool], ...]] = {
    TextContent: (("text", "str", True), ("text_signature", "opt_str", False)),
    ThinkingContent: (
        ("thinking", "str", True),
        ("thinking_signature", "opt_str", False),
        ("redacted", "bool", False),
    ),
    ImageContent: (("data", "str", True), ("mime_type", "str", True)),
    ToolCall: (
        ("id", "str", True),
        ("name", "str", True),
        ("arguments", "object", False),
        ("thought_signature", "opt_str", False),
        ("invalid_arguments", "opt_str", False),
        ("caller", "opt_caller", False),
    ),
    ToolCaller: (("kind", "str", True), ("id", "str", True), ("code", "opt_str", False)),
    Cost: tuple((name, "num", False) for name in ("input", "output", "cache_read", "cache_write")),
    Usage: (
        *((name, "int", False) for name in ("input", "output", "cache_read", "cache_write")),
        ("cost", "cost", False),
    ),
    UserMessage: (("content", "user_content", True), ("timestamp", "timestamp", False)),
    AssistantMessage: (
        ("content", "assistant_content", False),
        ("api", "str", False),
        ("provider", "str", False),
        ("model", "str", False),
        ("usage", "usage", False),
        ("stop_reason", "stop", False),
        ("error_message", "opt_str", False),
        ("agent", "opt_str", False),
        ("timestamp", "timestamp", False),
    ),
    ToolResultMessage: (
        ("tool_call_id", "str", True),
        ("tool_name", "str", True),
        ("content", "result_content", False),
        ("details", "json", False),
        ("usage", "opt_usage", False),
        ("added_tool_names", "names", False),
        ("is_error", "bool", False),
        ("agent", "opt_str", False),
        ("timestamp", "timestamp", False),
    ),
}
_KINDS: dict[type[Any], dict[str, str]] = {
    cls: {name: kind for name, kind, _ in spec} for cls, spec in _SPECS.items()
}
_DERIVED: dict[type[Any], str] = {Cost: "total", Usage: "total_tokens"}
_RECORDS: dict[str, type[Any]] = {
    "cost": Cost,
    "usage": Usage,
    "opt_usage": Usage,
    "opt_caller": ToolCaller,
}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


_SIMPLE: dict[str, Callable[[Any], bool]] = {
    "str": lambda v: isinstance(v, str),
    "opt_str": lambda v: v is None or isinstance(v, str),
    "int": _is_int,
    "timestamp": _is_int,
    "bool": lambda v: isinstance(v, bool),
    "num": _is_number,
    "stop": lambda v: isinstance(v, str) and v in _STOP_REASONS,
}


def _got(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _wrong(path: str, kind: str, value: Any) -> MessageFormatError:
    got = clip(repr(value), 200) if kind == "stop" and isinstance(value, str) else _got(value)
    return MessageFormatError(f"{path} must be {_EXPECTED[kind]}, got {got}")


def register_message_type(cls: type[Any]) -> type[Any]:
    """Register an application-defined message dataclass so `to_json`/`from_json` handle it.

    The class must be a dataclass whose `role` field has a default (the discriminator) and whose
    other fields hold JSON values (`to_json` refuses others, naming the field). Usable as a class
    decorator.
    """
    if not is_dataclass(cls):
        raise TypeError(f"register_message_type expects a dataclass, got {cls!r}")
    role = next((f.default for f in fields(cls) if f.name == "role"), None)
    if not isinstance(role, str):
        raise TypeError(f"{cls.__name__} needs a `role: str` field with a default value")
    if role in ("user", "assistant", "tool_result"):
        raise ValueError(f"role {role!r} is reserved for agentcore's own messages")
    _MESSAGES[role] = cls
    return cls


class _Encoder:
    """One `to_json` call. `exact` turns False when the JSON cannot give back an equal message
    (a tuple becomes a list, an int key a string, a dataclass inside `details` an object)."""

    __slots__ = ("_open", "exact")

    def __init__(self) -> None:
        self.exact = True
        self._open: set[int] = set()  # containers being encoded, to name a cycle

    def text(self, value: str) -> str:
        """A string as valid Unicode (see `valid_text`); not exact when it had to change."""
        fixed = valid_text(value)
        if fixed is not value:
            self.exact = False
        return fixed

    def value(self, value: Any, path: str) -> Any:
        """A free-form JSON value (`details`, `arguments`, fields of registered types)."""
        if isinstance(value, str):
            return self.text(value)
        if value is None or isinstance(value, int):  # bool is an int
            return value
        if isinstance(value, float):
            if math.isfinite(value):
                return value
            raise MessageFormatError(f"{path} must be a finite number, got {value!r}")
        is_mapping = isinstance(value, Mapping)
        is_record = not is_mapping and is_dataclass(value) and not isinstance(value, type)
        if not (is_mapping or is_record or isinstance(value, list | tuple)):
            raise MessageFormatError(f"{path} must be {_JSON_VALUE}, got {_got(value)}")
        key = id(value)
        if key in self._open:
            raise MessageFormatError(f"{path} contains itself (a cycle): not {_JSON_VALUE}")
        self._open.add(key)
        try:
            if is_record:
                self.exact = False
                return {
                    f.name: self.value(getattr(value, f.name), f"{path}.{f.name}")
                    for f in fields(value)
                }
            if not is_mapping:
                if not isinstance(value, list):
                    self.exact = False
                return [self.value(v, f"{path}[{i}]") for i, v in enumerate(value)]
            if not isinstance(value, dict):
                self.exact = False
            out: dict[str, Any] = {}
            for k, v in value.items():
                if not isinstance(k, str):
                    if not _is_int(k):
                        raise MessageFormatError(
                            f"{path} has a key {clip(repr(k), 200)} of type {_got(k)}: object "
                            "keys must be strings"
                        )
                    self.exact = False
                    k = str(k)
                out[self.text(k)] = self.value(v, f"{path}[{k!r}]")
            return out
        finally:
            self._open.discard(key)

    def field(self, kind: str, value: Any, path: str) -> Any:
        check = _SIMPLE.get(kind)
        if check is not None:
            if not check(value):
                raise _wrong(path, kind, value)
            return self.text(value) if isinstance(value, str) else value
        if kind == "json":
            return self.value(value, path)
        if kind in _CONTENT_BLOCKS:
            if kind == "user_content" and isinstance(value, str):
                return self.text(value)
            if not isinstance(value, list | tuple):
                raise _wrong(path, kind, value)
            if not isinstance(value, list):
                self.exact = False
            allowed = _CONTENT_BLOCKS[kind]
            out = []
            for i, block in enumerate(value):
                kind_of = getattr(block, "type", None)
                if kind_of not in allowed or not isinstance(block, _BLOCKS[kind_of]):
                    raise MessageFormatError(
                        f"{path}[{i}] must be a content block of type {_names(allowed)}, "
                        f"got {_got(block)}"
                    )
                out.append(self.record(block, f"{path}[{i}]", "type"))
            return out
        if kind == "object":
            if not isinstance(value, Mapping):
                raise _wrong(path, kind, value)
            return self.value(value, path)
        if kind == "names":
            _check_names(value, path)
            if not isinstance(value, list):
                self.exact = False
            return list(value)
        cls = _RECORDS[kind]
        if not isinstance(value, cls):
            raise _wrong(path, kind, value)
        return self.record(value, path, None)

    def record(self, obj: Any, path: str, discriminator: str | None) -> dict[str, Any]:
        cls = type(obj)
        out: dict[str, Any] = {}
        for name, kind, _ in _SPECS[cls]:
            value = getattr(obj, name)
            if value is None and kind != "json":
                if kind in _NULLABLE:
                    continue  # optional and absent: not written, so old readers are unaffected
                raise _wrong(f"{path}.{name}", kind, value)
            out[name] = self.field(kind, value, f"{path}.{name}")
        derived = _DERIVED.get(cls)
        if derived is not None:
            out[derived] = getattr(obj, derived)
        if discriminator is not None:
            out[discriminator] = getattr(obj, discriminator)
        return out


def _check_names(value: Any, path: str) -> None:
    if not isinstance(value, list | tuple):
        raise _wrong(path, "names", value)
    for i, name in enumerate(value):
        if not isinstance(name, str):
            raise MessageFormatError(f"{path}[{i}] must be a string, got {_got(name)}")


def _names(kinds: tuple[str, ...]) -> str:
    quoted = [repr(k) for k in kinds]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def encode_message(message: AgentMessage) -> tuple[dict[str, Any], bool]:
    """`to_json`, and whether `from_json` of the result gives back an equal message (False when
    a tuple became a list, say). For stores that must keep memory and disk equal."""
    role = getattr(message, "role", None)
    cls = _MESSAGES.get(role) if isinstance(role, str) else None
    if cls is None or not isinstance(message, cls):
        raise MessageFormatError(
            f"cannot encode {type(message).__name__}: expected an agentcore message or a type "
            "registered with register_message_type()"
        )
    encoder = _Encoder()
    data: dict[str, Any] = {"v": FORMAT_VERSION}
    try:
        if cls in _SPECS:
            data.update(encoder.record(message, cls.__name__, "role"))
        else:
            for f in fields(cls):
                value = getattr(message, f.name)
                if value is not None:
                    data[f.name] = encoder.value(value, f"{cls.__name__}.{f.name}")
    except RecursionError:
        raise MessageFormatError(
            f"cannot encode {cls.__name__}: its values are nested too deeply"
        ) from None
    return data, encoder.exact


def to_json(message: AgentMessage) -> dict[str, Any]:
    """Encode a message as a JSON-compatible dict with a format version (`"v"`).

    Every field is checked against its declared type, and free-form values (`details`, tool
    `arguments`, fields of registered types) must be JSON: null, booleans, finite numbers,
    strings, lists (tuples become lists) and objects with string keys (int keys become strings).

    Raises:
        MessageFormatError: naming the field and what it must be (`ToolResultMessage.details
            ['when'] must be a JSON value ..., got datetime`), or for an object that is neither
            a built-in message nor a registered one.
    """
    return encode_message(message)[0]


def _decode_field(kind: str, value: Any, path: str) -> Any:
    check = _SIMPLE.get(kind)
    if check is not None:
        if not check(value):
            raise _wrong(path, kind, value)
        return valid_text(value) if isinstance(value, str) else value
    if kind == "json":
        return value
    if kind in _CONTENT_BLOCKS:
        if kind == "user_content" and isinstance(value, str):
            return valid_text(value)
        if not isinstance(value, list):
            raise _wrong(path, kind, value)
        allowed = _CONTENT_BLOCKS[kind]
        blocks = []
        for i, block in enumerate(value):
            kind_of = block.get("type") if isinstance(block, Mapping) else None
            if kind_of not in allowed:
                got = f"type {kind_of!r}" if isinstance(block, Mapping) else _got(block)
                raise MessageFormatError(
                    f"{path}[{i}]: expected a content block of type {_names(allowed)}, got {got}"
                )
            blocks.append(_decode_record(_BLOCKS[kind_of], block, f"{path}[{i}]"))
        return blocks
    if kind == "object":
        if not isinstance(value, dict):
            raise _wrong(path, kind, value)
        return value
    if kind == "names":
        if value is not None:
            _check_names(value, path)
        return value
    if value is None and kind in ("opt_usage", "opt_caller"):
        return None
    if not isinstance(value, Mapping):
        raise _wrong(path, kind, value)
    return _decode_record(_RECORDS[kind], value, path)


def _decode_record(cls: type[Any], data: Mapping[str, Any], path: str) -> Any:
    kinds = _KINDS[cls]
    derived = _DERIVED.get(cls)
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        kind = kinds.get(key)
        if kind is None:
            if key in ("v", "type", "role") or key == derived:
                continue  # the discriminator (checked by the caller), or a derived total
            raise MessageFormatError(f"{path}: unknown field {key!r}")
        kwargs[key] = _decode_field(kind, value, f"{path}.{key}")
    for name, kind, required in _SPECS[cls]:
        if required and name not in kwargs:
            raise MessageFormatError(f"{path}.{name} is missing: expected {_EXPECTED[kind]}")
    if cls is Usage or cls is Cost:
        try:
            return cls(**kwargs)
        except ValueError as exc:  # a negative count or cost
            raise MessageFormatError(f"{path}: {exc}") from None
    return cls(**kwargs)


def _build(cls: type[Any], data: Mapping[str, Any], where: str) -> Any:
    """A registered application message: fields are passed as they are."""
    kwargs: dict[str, Any] = {}
    names = {f.name for f in fields(cls) if f.init}
    for key, value in data.items():
        if key == "v":
            continue
        if key not in names:
            raise MessageFormatError(f"{where}: unknown field {key!r}")
        kwargs[key] = value
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise MessageFormatError(f"{where}: {exc}") from exc


_MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}
"""Upgrades from version N to N+1, applied in order by `from_json`."""


def from_json(data: Mapping[str, Any]) -> AgentMessage:
    """Decode a message written by `to_json` (any format version up to `FORMAT_VERSION`).

    Every field is checked against its declared type (free-form values such as `details` are
    taken as they are).

    Raises:
        MessageFormatError: naming what was malformed: an unknown role, field or block type, a
            newer format version, or a field of the wrong type with the type it must have
            (`UserMessage.timestamp must be an integer (ms since the epoch), got str`).
    """
    if not isinstance(data, Mapping):
        raise MessageFormatError(f"expected a JSON object for a message, got {type(data).__name__}")
    version = data.get("v", 1)
    if not _is_int(version) or version < 1:
        raise MessageFormatError(f"invalid format version {version!r}")
    if version > FORMAT_VERSION:
        raise MessageFormatError(
            f"message format version {version} is newer than this agentcore "
            f"(reads up to {FORMAT_VERSION}); upgrade agentcore"
        )
    doc: Mapping[str, Any] = data
    while version < FORMAT_VERSION:
        doc = _MIGRATIONS[version](dict(doc))
        version += 1
    role = doc.get("role")
    cls = _MESSAGES.get(role) if isinstance(role, str) else None
    if cls is None:
        raise MessageFormatError(
            f"unknown message role {role!r}: expected one of {sorted(_MESSAGES)}"
        )
    if cls in _SPECS:
        return _decode_record(cls, doc, cls.__name__)
    return _build(cls, doc, f"{role} message")
