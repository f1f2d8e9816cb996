"""Tool-argument validation: JSON Schema with lenient scalar coercion, or a Pydantic model.

A validator is built once per tool. Validation never touches the model's arguments: it works on a
deep copy, which is what the tool receives. The rules, the same for a JSON Schema dict and for a
Pydantic model (read through its JSON Schema), at every depth of nested objects and arrays:

* Lenient scalars, as AJV coerces them: `"5"` to 5, `"2.5"` to 2.5, `"true"` to True, 5 to
  `"5"`. A string is a number only when it reads as a finite decimal number: `"nan"`, `"inf"`,
  `"-Infinity"` and `"1e999"` are not numbers, and no number is ever infinite or NaN.
* Coercion never invents a value. `null` for an optional property (one not in `required`) whose
  schema does not allow null means "not given": the key is dropped, so the tool's own default
  applies. `null` where the schema allows it (`"type": ["integer", "null"]`, an `anyOf` with
  null, `Optional[int]`, or no type at all) is passed as `None`. Anywhere else `null` is a
  validation error, never 0, False or "".

A failure raises `ArgumentsError` whose text names each failing path and shows the arguments
received (clipped to the first 2,000 characters), so the model can correct its call.

Schemas may come from elsewhere (an MCP server's tools), so a validator built here never reaches
outside its schema: `$ref`s resolve only within the schema itself (a reference to a URL or a file
is refused when the validator is built, naming the reference, and nothing is ever fetched or
read), and regular expressions (`pattern`, `patternProperties`) are matched by the `regex`
engine within a time budget (`PATTERN_BUDGET` seconds per validation), so a pattern that
backtracks catastrophically gives a validation error instead of stalling the event loop. The
validator that keeps these promises is built in `schema_guard`.
"""

from __future__ import annotations

import copy
import json
import math
import re
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ToolDefinitionError, clip
from .schema_guard import PATTERN_BUDGET as PATTERN_BUDGET
from .schema_guard import SchemaProblem as SchemaProblem
from .schema_guard import _deadline, schema_validator
from .schema_guard import path_text as _path
from .schema_guard import pattern_budget as pattern_budget

if TYPE_CHECKING:
    import pydantic

# pydantic and jsonschema are imported when the first tool needs them, not with agentcore.

__all__ = [
    "PATTERN_BUDGET",
    "ArgumentsError",
    "ArgumentsValidator",
    "SchemaProblem",
    "json_schema_of",
    "pattern_budget",
    "schema_validator",
]

_MAX_COERCION_ROUNDS = 8
_MAX_PROBLEMS = 50  # lines listed in one error text; the rest are counted
_PROBLEM_LIMIT = 500  # characters of one line (a message may quote a huge value)
_MAX_SCHEMA_DEPTH = 32  # $ref/anyOf hops followed when reading a type (schemas may be recursive)

_DECIMAL = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", re.ASCII)
_INTEGER = re.compile(r"[+-]?\d+", re.ASCII)


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


# --- scalars -----------------------------------------------------------------------------------


def _non_finite_text(text: str) -> bool:
    """Whether `text` is what Python would read as an infinite or NaN float."""
    try:
        return not math.isfinite(float(text))
    except ValueError:
        return False


def _number_from(text: str, kind: str) -> int | float | None:
    """The finite number a string spells in decimal, as `kind` wants it; None if it is not one."""
    if not _DECIMAL.fullmatch(text):
        return None
    try:
        if _INTEGER.fullmatch(text):
            return int(text)  # exact, however many digits
        number = float(text)
    except ValueError:  # an integer too long to convert
        return None
    if not math.isfinite(number):  # "1e999"
        return None
    if number.is_integer() and (kind == "integer" or "." not in text):
        return int(number)
    return None if kind == "integer" else number


def _coerce(value: Any, expected: list[str]) -> tuple[bool, Any]:
    """AJV-style scalar coercion; returns (changed, new value). `null` is never coerced."""
    for kind in expected:
        if isinstance(value, str):
            text = value.strip()
            if kind in ("integer", "number"):
                number = _number_from(text, kind)
                if number is not None:
                    return True, number
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
            if isinstance(value, float) and not math.isfinite(value):
                break
            if kind == "string":
                return True, str(value)
            if kind == "integer" and isinstance(value, float) and value.is_integer():
                return True, int(value)
            if kind == "boolean" and value in (0, 1):
                return True, bool(value)
    return False, value


# --- reading a schema --------------------------------------------------------------------------


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _both(a: set[str] | None, b: set[str] | None) -> set[str] | None:
    """The types allowed by two constraints at once (None: no constraint)."""
    if a is None or b is None:
        return b if a is None else a
    both = a & b
    if ("integer" in a and "number" in b) or ("number" in a and "integer" in b):
        both.add("integer")
    return both


class _Schema:
    """Reads one tool's JSON Schema: the types a place allows, the parts of an object or array."""

    __slots__ = ("_objects", "_root", "_types")

    def __init__(self, root: Mapping[str, Any]) -> None:
        self._root = root
        # What was read of a place, by the id of its schema node (the nodes live as long as
        # the root, and a schema is never changed once its tool is built).
        self._types: dict[int, set[str] | None] = {}
        self._objects: dict[int, tuple[dict[str, Any], set[str], Any]] = {}

    @property
    def root(self) -> Mapping[str, Any]:
        return self._root

    def resolve(self, schema: Any) -> Mapping[str, Any] | None:
        """`schema` with local `$ref`s followed; None for a boolean or unreadable schema."""
        for _ in range(_MAX_SCHEMA_DEPTH):
            if not isinstance(schema, Mapping):
                return None
            ref = schema.get("$ref")
            if not isinstance(ref, str) or not ref.startswith("#"):
                return schema
            target: Any = self._root
            for part in ref[1:].split("/")[1:]:
                part = part.replace("~1", "/").replace("~0", "~")
                target = target.get(part) if isinstance(target, Mapping) else None
            schema = target
        return None

    def types(self, schema: Any, depth: int = 0) -> set[str] | None:
        """The JSON types `schema` allows (None: any)."""
        if depth == 0:
            key = id(schema)
            if key not in self._types:
                self._types[key] = self._read_types(schema, 0)
            return self._types[key]
        return self._read_types(schema, depth)

    def _read_types(self, schema: Any, depth: int) -> set[str] | None:
        s = self.resolve(schema)
        if s is None or depth > _MAX_SCHEMA_DEPTH:
            return None
        kind = s.get("type")
        allowed: set[str] | None = None
        if isinstance(kind, str):
            allowed = {kind}
        elif isinstance(kind, list):
            allowed = {k for k in kind if isinstance(k, str)}
        if "const" in s:
            allowed = _both(allowed, {_json_type(s["const"])})
        if isinstance(s.get("enum"), list):
            allowed = _both(allowed, {_json_type(v) for v in s["enum"]})
        for key in ("anyOf", "oneOf"):
            branches = s.get(key)
            if isinstance(branches, list) and branches:
                union: set[str] | None = set()
                for branch in branches:
                    found = self.types(branch, depth + 1)
                    if found is None:
                        union = None
                        break
                    union |= found  # type: ignore[operator]
                allowed = _both(allowed, union)
        for branch in s.get("allOf") or ():
            allowed = _both(allowed, self.types(branch, depth + 1))
        return allowed

    def allows_null(self, schema: Any) -> bool:
        allowed = self.types(schema)
        return allowed is None or "null" in allowed

    def _parts(self, schema: Any, want: str) -> list[Mapping[str, Any]]:
        """`schema` and its `allOf` members, plus the one `anyOf`/`oneOf` branch of type `want`
        (several such branches are ambiguous: none is used)."""
        s = self.resolve(schema)
        if s is None:
            return []
        parts = [s]
        for member in s.get("allOf") or ():
            parts.extend(self._parts(member, want))
        for key in ("anyOf", "oneOf"):
            matching = [
                b
                for b in s.get(key) or ()
                if (found := self.types(b)) is not None and want in found
            ]
            if len(matching) == 1:
                parts.extend(self._parts(matching[0], want))
        return parts

    def object_parts(self, schema: Any) -> tuple[dict[str, Any], set[str], Any]:
        """The properties, the required names and the schema of other keys of an object."""
        key = id(schema)
        parts = self._objects.get(key)
        if parts is None:
            parts = self._objects[key] = self._read_object_parts(schema)
        return parts

    def _read_object_parts(self, schema: Any) -> tuple[dict[str, Any], set[str], Any]:
        properties: dict[str, Any] = {}
        required: set[str] = set()
        others: Any = None
        for part in self._parts(schema, "object"):
            if isinstance(part.get("properties"), Mapping):
                properties.update(part["properties"])
            if isinstance(part.get("required"), list):
                required.update(r for r in part["required"] if isinstance(r, str))
            if isinstance(part.get("additionalProperties"), Mapping):
                others = part["additionalProperties"]
        return properties, required, others

    def item(self, schema: Any, index: int) -> Any:
        """The schema of item `index` of an array."""
        for part in self._parts(schema, "array"):
            prefix = part.get("prefixItems")
            items = part.get("items")
            if isinstance(prefix, list) and index < len(prefix):
                return prefix[index]
            if isinstance(items, list):  # draft 4's tuples
                if index < len(items):
                    return items[index]
                return part.get("additionalItems")
            if isinstance(items, Mapping):
                return items
        return None


# --- the rules ---------------------------------------------------------------------------------


def _float_text(value: float) -> str:
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


def _prepared(
    schema: _Schema, value: Any, where: Any, path: list[Any], problems: dict[str, str]
) -> Any:
    """A copy of `value` (part of the arguments) with the null and finite-number rules applied;
    what breaks them goes into `problems`, keyed by path. Copying and checking are one walk."""
    if isinstance(value, dict):
        properties, required, others = schema.object_parts(where)
        copied: dict[Any, Any] = {}
        for key, item in value.items():
            if item is None:
                if (
                    key in properties
                    and key not in required
                    and not schema.allows_null(properties[key])
                ):
                    continue  # an optional parameter sent as null was not given
                copied[key] = None
            else:
                copied[key] = _prepared(
                    schema, item, properties.get(key, others), [*path, key], problems
                )
        return copied
    if isinstance(value, list):
        return [
            _prepared(schema, item, schema.item(where, index), [*path, index], problems)
            for index, item in enumerate(value)
        ]
    if isinstance(value, str):
        allowed = schema.types(where)
        if (
            allowed is not None
            and allowed & {"integer", "number"}
            and "string" not in allowed
            and _non_finite_text(value.strip())
        ):
            problems[_path(path)] = f"{value!r} is not a finite number"
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            problems[_path(path)] = f"{_float_text(value)} is not a finite number"
        return value
    if value is None or isinstance(value, int):
        return value
    return copy.deepcopy(value)  # not JSON (a `prepare_arguments` may return anything)


def _report(tool: str, problems: list[str], arguments: Any) -> str:
    try:
        shown = json.dumps(arguments, indent=2, ensure_ascii=False, default=repr)
    except (TypeError, ValueError, RecursionError):
        try:
            shown = repr(arguments)
        except RecursionError:
            shown = "(too deeply nested to show)"
    listed = [f"  - {clip(p, _PROBLEM_LIMIT)}" for p in problems[:_MAX_PROBLEMS]]
    if len(problems) > _MAX_PROBLEMS:
        listed.append(f"  - … and {len(problems) - _MAX_PROBLEMS} more problems")
    lines = "\n".join(listed)
    return f'Validation failed for tool "{tool}":\n{lines}\n\nReceived arguments:\n{clip(shown)}'


class ArgumentsValidator:
    """Validates the arguments of one tool against its parameters (rules: see the module).

    Args:
        tool_name: used in error texts.
        parameters: a JSON Schema dict (checked here) or a Pydantic model class.

    Raises:
        ToolDefinitionError: the schema is not valid JSON Schema, does not describe an object,
            or reaches outside itself (see `schema_validator`).
    """

    __slots__ = ("_model", "_schema", "_tool", "_validator")

    def __init__(
        self, tool_name: str, parameters: Mapping[str, Any] | type[pydantic.BaseModel]
    ) -> None:
        self._tool = tool_name
        self._model: type[pydantic.BaseModel] | None = None
        self._validator: Any = None
        if is_pydantic_model(parameters):
            self._model = parameters  # type: ignore[assignment]
            try:
                schema = parameters.model_json_schema()  # type: ignore[union-attr]
            except Exception:  # a type without a JSON Schema: only the finite-number rule holds
                schema = {}
            self._schema = _Schema(schema)
            return
        if not isinstance(parameters, Mapping):
            raise ToolDefinitionError(
                f"tool {tool_name!r}: parameters must be a JSON Schema dict or a Pydantic model "
                f"class, got {type(parameters).__name__}"
            )
        # A copy: what is read of the schema is kept (`_Schema`), so later changes to the
        # caller's dict must not reach the validator.
        schema = copy.deepcopy(dict(parameters))
        kind = schema.get("type")
        try:
            self._validator = schema_validator(schema)
        except SchemaProblem as exc:
            if exc.invalid is not None:
                message, where = exc.invalid
                what = f"parameters are not valid JSON Schema ({message} at {where})"
            else:
                what = f"parameters {exc}"
            raise ToolDefinitionError(f"tool {tool_name!r}: {what}") from None
        if kind is not None and kind != "object":
            raise ToolDefinitionError(
                f"tool {tool_name!r}: parameters must describe an object (type 'object'), "
                f"got type {kind!r}"
            )
        self._schema = _Schema(schema)

    def validate(self, arguments: Any) -> Any:
        """The validated (and coerced) copy of `arguments`, or a Pydantic model instance.

        Raises:
            ArgumentsError: with one line per failing path and the received arguments.
        """
        budget = _deadline.set([PATTERN_BUDGET, None])  # `pattern_budget`, without its cost
        try:
            return self._validate(arguments)
        except RecursionError:
            raise ArgumentsError(
                _report(self._tool, ["root: the arguments are nested too deeply"], arguments)
            ) from None
        finally:
            _deadline.reset(budget)

    def _validate(self, arguments: Any) -> Any:
        found: dict[str, str] = {}
        document = _prepared(self._schema, arguments, self._schema.root, [], found)
        if self._model is not None:
            problems = [f"{where}: {what}" for where, what in found.items()]
            try:
                instance = self._model.model_validate(document)
            except sys.modules["pydantic"].ValidationError as exc:
                for e in exc.errors(include_url=False):
                    where = _path(list(e["loc"]))
                    if where not in found:
                        problems.append(f"{where}: {e['msg']}")
            else:
                if not problems:
                    return instance
            raise ArgumentsError(_report(self._tool, sorted(set(problems)), arguments))
        for _ in range(_MAX_COERCION_ROUNDS):
            errors = list(self._validator.iter_errors(document))
            if not errors and not found:
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
        problems = [f"{where}: {what}" for where, what in found.items()]
        for error in self._validator.iter_errors(document):
            path = list(error.absolute_path)
            if _path(path) in found:
                continue  # already named more precisely
            if error.validator == "required" and isinstance(error.instance, Mapping):
                missing = [k for k in error.validator_value if k not in error.instance]
                problems.extend(
                    f"{_path([*path, k])}: required property is missing" for k in missing
                )
            elif error.instance is None and error.message.startswith("None "):
                problems.append(f"{_path(path)}: null {error.message[5:]}")
            else:
                problems.append(f"{_path(path)}: {error.message}")
        raise ArgumentsError(_report(self._tool, sorted(set(problems)), arguments))


def _set(document: Any, path: list[Any], value: Any) -> None:
    target = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
