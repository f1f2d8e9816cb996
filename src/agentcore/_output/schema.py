"""The JSON side of typed outputs: the schema the model sees, the strict form OpenAI wants,
reading an answer's JSON text, and the problem lists of a failed validation.

The model always answers with an object (a tool's arguments are one, and OpenAI's native mode
needs one at the root): an answer whose schema is not an object (`int`, `list[str]`, a `Literal`,
a union) travels wrapped as `{"value": ...}`, with the schema's `$defs` lifted to the wrapper so
that its `$ref`s still resolve.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from typing import Any

import jiter

from .._tools.schema_guard import (
    SchemaProblem,
    path_text,  # one spelling of paths for every validation error
    pattern_budget,
    schema_validator,
)
from ..errors import ConfigError, OutputValidationError

__all__ = [
    "VALUE",
    "check_json_schema",
    "is_object_schema",
    "parse_answer_text",
    "parse_partial_answer",
    "path_text",
    "problems_of_pydantic",
    "problems_of_schema",
    "strict_form",
    "wrap",
]

VALUE = "value"
"""The property that holds an answer that is not an object."""

_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n(.*?)\n?\s*```\s*$", re.DOTALL)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value (numbers must be finite)")


_DECODER = json.JSONDecoder(parse_constant=_no_constant)


def is_object_schema(schema: Mapping[str, Any]) -> bool:
    """Whether answers of `schema` are JSON objects (then they are sent as they are)."""
    return schema.get("type") == "object"


def wrap(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The object schema `{"value": schema}`, with `$defs` moved to its root."""
    inner = dict(schema)
    defs = inner.pop("$defs", None)
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {VALUE: inner},
        "required": [VALUE],
        "additionalProperties": False,
    }
    if defs is not None:
        wrapped["$defs"] = defs
    return wrapped


def check_json_schema(schema: Mapping[str, Any]) -> Any:
    """A `jsonschema` validator for `schema`.

    Raises:
        ConfigError: `schema` is not valid JSON Schema (naming where).
    """
    try:
        return schema_validator(schema)  # no reference outside it, patterns in bounded time
    except SchemaProblem as exc:
        raise ConfigError(f"output_type is {exc}") from None


# --- the strict form -----------------------------------------------------------------------------


def strict_form(schema: Mapping[str, Any], *, complete: bool) -> dict[str, Any] | None:
    """`schema` as OpenAI's strict mode accepts it, or None when it cannot be.

    Strict mode wants every object closed (`additionalProperties: false`) with every property
    required. With `complete` (a schema generated from a Python type, validated by pydantic,
    which ignores extra keys anyway), an object whose properties are all required but that does
    not say `additionalProperties` is closed here; a schema given by hand is used only when it
    already says so itself.
    """
    form = copy.deepcopy(dict(schema))
    return form if _make_strict(form, complete) else None


def _make_strict(node: Any, complete: bool) -> bool:
    if isinstance(node, list):
        return all(_make_strict(item, complete) for item in node)
    if not isinstance(node, dict):
        return True
    is_object = node.get("type") == "object" or "properties" in node
    if is_object:
        properties = node.get("properties")
        if not isinstance(properties, dict):
            return False  # a free-form mapping (`dict[str, int]`) has no strict form
        required = node.get("required") or []
        if set(properties) != set(required):
            return False
        extra = node.get("additionalProperties", None)
        if extra is None and complete:
            node["additionalProperties"] = False
        elif extra is not False:
            return False
    for key, value in node.items():
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            if not all(_make_strict(v, complete) for v in value.values()):
                return False
        elif key not in ("enum", "const", "default", "examples", "required") and not (
            _make_strict(value, complete)
        ):
            return False
    return True


# --- reading answers -----------------------------------------------------------------------------


def _unfenced(text: str) -> str:
    """`text` without a Markdown code fence around it (models add one when not constrained)."""
    match = _FENCE.match(text)
    return match.group(1) if match is not None else text


def parse_answer_text(text: str) -> Any:
    """The JSON value of a native answer's text (one code fence around it is forgiven).

    Raises:
        OutputValidationError: the text is not exactly one JSON value.
    """
    from ..llm import describe_invalid_json

    body = _unfenced(text).strip()
    if not body:
        raise OutputValidationError(["root: the answer is empty; expected a JSON value"], text)
    try:
        return _DECODER.decode(body)
    except (ValueError, RecursionError):
        raise OutputValidationError(
            [f"root: the answer is not valid JSON ({describe_invalid_json(body)})"], text
        ) from None


def parse_partial_answer(text: str) -> Any:
    """What can be read of a native answer that is still streaming (None: nothing yet)."""
    match = re.match(r"^\s*```[A-Za-z0-9_-]*\s*\n", text)
    if match is None:
        body = text.strip()
    else:
        # The closing fence starts a line: JSON strings hold no raw newline, so a "```" inside
        # a string value is never taken for it.
        body = re.split(r"\n\s*```", text[match.end() :], maxsplit=1)[0].strip()
    if not body:
        return None
    try:
        return jiter.from_json(body.encode(), partial_mode="trailing-strings")
    except ValueError:
        return None


# --- problem lists -------------------------------------------------------------------------------


def problems_of_pydantic(error: Any, prefix: list[Any]) -> list[str]:
    """One line per failing path of a pydantic `ValidationError`."""
    return [
        f"{path_text([*prefix, *e['loc']])}: {e['msg']}" for e in error.errors(include_url=False)
    ]


def problems_of_schema(validator: Any, data: Any, prefix: list[Any]) -> list[str]:
    """One line per failing path of `data` against a `jsonschema` validator ([] when valid)."""
    problems: list[str] = []
    with pattern_budget():
        errors = list(validator.iter_errors(data))
    for error in sorted(errors, key=lambda e: list(map(str, e.path))):
        path = [*prefix, *error.absolute_path]
        if error.validator == "required" and isinstance(error.instance, Mapping):
            missing = [k for k in error.validator_value if k not in error.instance]
            problems.extend(
                f"{path_text([*path, k])}: required property is missing" for k in missing
            )
        else:
            problems.append(f"{path_text(path)}: {error.message}")
    return problems
