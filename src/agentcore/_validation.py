"""Tool-argument validation: JSON Schema with lenient scalar coercion, or a Pydantic model.

A validator is built once per tool. Validation never touches the model's arguments: coercion
(`"5"` to 5, `"true"` to True, 5 to `"5"`) happens on a deep copy, which is what the tool receives.
A failure raises `ArgumentsError` whose text names each failing path and shows the arguments
received, so the model can correct its call.
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .errors import ToolDefinitionError

if TYPE_CHECKING:
    import pydantic

# pydantic and jsonschema are imported when the first tool needs them, not with agentcore.

__all__ = ["ArgumentsError", "ArgumentsValidator", "json_schema_of"]

_MAX_COERCION_ROUNDS = 8


class ArgumentsError(Exception):
    """Arguments that do not match the tool's schema; the text is meant for the model."""


def is_pydantic_model(value: object) -> bool:
    """Whether `value` is a Pydantic model class (without importing pydantic needlessly)."""
    module = sys.modules.get("pydantic")
    return module is not None and isinstance(value, type) and issubclass(value, module.BaseModel)


def json_schema_of(parameters: Mapping[str, Any] | type[pydantic.BaseModel]) -> dict[str, Any]:
    """The JSON Schema the model sees for a tool's parameters."""
    if is_pydantic_model(parameters):
        return parameters.model_json_schema()  # type: ignore[union-attr]
    return dict(parameters)  # type: ignore[arg-type]


def _coerce(value: Any, expected: list[str]) -> tuple[bool, Any]:
    """AJV-style scalar coercion; returns (changed, new value)."""
    for kind in expected:
        if isinstance(value, str):
            text = value.strip()
            if kind == "integer":
                try:
                    return True, int(text)
                except ValueError:
                    try:
                        number = float(text)
                    except ValueError:
                        continue
                    if number.is_integer():
                        return True, int(number)
            elif kind == "number":
                try:
                    number = float(text)
                except ValueError:
                    continue
                return True, int(number) if number.is_integer() and "." not in text else number
            elif kind == "boolean" and text.lower() in ("true", "false"):
                return True, text.lower() == "true"
            elif kind == "null" and text == "":
                return True, None
        elif isinstance(value, bool):
            if kind == "string":
                return True, "true" if value else "false"
            if kind in ("integer", "number"):
                return True, int(value)
        elif isinstance(value, int | float):
            if kind == "string":
                return True, str(value)
            if kind == "integer" and isinstance(value, float) and value.is_integer():
                return True, int(value)
            if kind == "boolean" and value in (0, 1):
                return True, bool(value)
        elif value is None:
            if kind == "string":
                return True, ""
            if kind in ("integer", "number"):
                return True, 0
            if kind == "boolean":
                return True, False
    return False, value


def _set(document: Any, path: list[Any], value: Any) -> None:
    target = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value


def _path(parts: list[Any]) -> str:
    if not parts:
        return "root"
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _report(tool: str, problems: list[str], arguments: Any) -> str:
    try:
        shown = json.dumps(arguments, indent=2, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        shown = repr(arguments)
    lines = "\n".join(f"  - {p}" for p in problems)
    return f'Validation failed for tool "{tool}":\n{lines}\n\nReceived arguments:\n{shown}'


class ArgumentsValidator:
    """Validates the arguments of one tool against its parameters.

    Args:
        tool_name: used in error texts.
        parameters: a JSON Schema dict (checked here) or a Pydantic model class.

    Raises:
        ToolDefinitionError: the schema is not valid JSON Schema, or does not describe an object.
    """

    __slots__ = ("_model", "_tool", "_validator")

    def __init__(
        self, tool_name: str, parameters: Mapping[str, Any] | type[pydantic.BaseModel]
    ) -> None:
        self._tool = tool_name
        self._model: type[pydantic.BaseModel] | None = None
        self._validator: Any = None
        if is_pydantic_model(parameters):
            self._model = parameters  # type: ignore[assignment]
            return
        if not isinstance(parameters, Mapping):
            raise ToolDefinitionError(
                f"tool {tool_name!r}: parameters must be a JSON Schema dict or a Pydantic model "
                f"class, got {type(parameters).__name__}"
            )
        from jsonschema import exceptions as jsonschema_exceptions
        from jsonschema import validators

        schema = dict(parameters)
        cls = validators.validator_for(schema)
        try:
            cls.check_schema(schema)
        except jsonschema_exceptions.SchemaError as exc:
            where = _path(list(exc.absolute_path))
            raise ToolDefinitionError(
                f"tool {tool_name!r}: parameters are not valid JSON Schema ({exc.message} at "
                f"{where})"
            ) from exc
        kind = schema.get("type")
        if kind is not None and kind != "object":
            raise ToolDefinitionError(
                f"tool {tool_name!r}: parameters must describe an object (type 'object'), "
                f"got type {kind!r}"
            )
        self._validator = cls(schema)

    def validate(self, arguments: Any) -> Any:
        """The validated (and coerced) copy of `arguments`, or a Pydantic model instance.

        Raises:
            ArgumentsError: with one line per failing path and the received arguments.
        """
        if self._model is not None:
            try:
                return self._model.model_validate(arguments)
            except sys.modules["pydantic"].ValidationError as exc:
                problems = [
                    f"{_path(list(e['loc']))}: {e['msg']}" for e in exc.errors(include_url=False)
                ]
                raise ArgumentsError(_report(self._tool, problems, arguments)) from None
        document = copy.deepcopy(arguments)
        for _ in range(_MAX_COERCION_ROUNDS):
            errors = list(self._validator.iter_errors(document))
            if not errors:
                return document
            changed = False
            for error in errors:
                if error.validator != "type":
                    continue
                expected = error.validator_value
                kinds = [expected] if isinstance(expected, str) else list(expected)
                ok, value = _coerce(error.instance, kinds)
                path = list(error.absolute_path)
                if ok and path:
                    _set(document, path, value)
                    changed = True
            if not changed:
                break
        problems = []
        for error in self._validator.iter_errors(document):
            path = list(error.absolute_path)
            if error.validator == "required" and isinstance(error.instance, Mapping):
                missing = [k for k in error.validator_value if k not in error.instance]
                problems.extend(
                    f"{_path([*path, k])}: required property is missing" for k in missing
                )
            else:
                problems.append(f"{_path(path)}: {error.message}")
        problems = sorted(dict.fromkeys(problems))
        raise ArgumentsError(_report(self._tool, problems, arguments))
