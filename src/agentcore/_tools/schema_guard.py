"""Schemas from elsewhere, made safe to use: the validators `validation` builds never reach
outside their schema and never stall the event loop.

A tool's JSON Schema may come from another program (an MCP server's `tools/list`), so:

* `$ref`s resolve only within the schema itself (and to the meta-schemas that ship with
  `jsonschema`): a reference to a URL or a file is refused when the validator is built
  (`SchemaProblem`, naming the reference), and nothing is ever fetched or read;
* regular expressions (`pattern`, `patternProperties`, and the property names
  `additionalProperties` checks against them) are matched by the `regex` engine within a time
  budget (`PATTERN_BUDGET` seconds per validation, all patterns together, `pattern_budget`), so
  a pattern that backtracks catastrophically fails the value instead of stalling the loop.

See docs/security.md ("MCP and tool schemas").
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, NoReturn

from ..errors import clip

__all__ = ["PATTERN_BUDGET", "SchemaProblem", "path_text", "pattern_budget", "schema_validator"]


def path_text(parts: list[Any]) -> str:
    """A JSON path as validation errors spell it: `root`, `items[0].name`."""
    if not parts:
        return "root"
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


# --- the bounded validator --------------------------------------------------------------------

PATTERN_BUDGET = 0.1
"""Seconds of regular-expression matching that one validation may spend, all patterns together."""

_REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})  # values, not schemas
# [seconds, deadline]: the budget of the `pattern_budget` block, and when it ends (set by the
# first pattern matched in it)
_deadline: ContextVar[list[Any] | None] = ContextVar("agentcore_pattern_budget", default=None)
_bounded_classes: dict[type, type] = {}
_compiled: dict[str, Any] = {}  # patterns compiled by `regex` (its own cache is slow to ask)


class SchemaProblem(ValueError):
    """A schema that cannot be used (invalid, or reaching outside itself); the text says why.

    `invalid` is (message, where) when the schema breaks its meta-schema, else None."""

    def __init__(self, text: str, *, invalid: tuple[str, str] | None = None) -> None:
        super().__init__(text)
        self.invalid = invalid


class _Refused(Exception):
    """Raised by the registry's retrieve: no reference is resolved outside the schema."""

    def __init__(self, uri: str) -> None:
        super().__init__(uri)
        self.uri = uri


def _refuse(uri: str) -> NoReturn:
    raise _Refused(uri)


@contextmanager
def pattern_budget(seconds: float = PATTERN_BUDGET) -> Iterator[None]:
    """Within this block, the patterns of every `schema_validator` share `seconds` of matching;
    what runs out of time fails validation with a message saying so. The clock starts at the
    first pattern matched (a validation without patterns never reads it)."""
    token = _deadline.set([seconds, None])
    try:
        yield
    finally:
        _deadline.reset(token)


def _search(pattern: str, text: str) -> bool | str:
    """Whether `pattern` matches somewhere in `text`, in bounded time; a text saying why not
    when it could not be checked (out of time, or a pattern the engine refuses)."""
    import regex

    budget = _deadline.get()
    if budget is None:  # outside `pattern_budget`: this match alone
        remaining = PATTERN_BUDGET
    else:
        if budget[1] is None:
            budget[1] = time.monotonic() + budget[0]
        remaining = budget[1] - time.monotonic()
    slow = (
        f"could not be checked against the pattern {clip(pattern, 200)!r} in time (more than "
        f"{PATTERN_BUDGET:g} s of matching); send a shorter or simpler value"
    )
    if remaining <= 0:
        return slow
    try:
        compiled = _compiled.get(pattern)
        if compiled is None:
            if len(_compiled) >= 1024:
                _compiled.clear()
            compiled = _compiled[pattern] = regex.compile(pattern)
        return compiled.search(text, timeout=remaining) is not None
    except TimeoutError:
        return slow
    except regex.error as exc:
        shown = clip(pattern, 200)
        return f"could not be checked: the schema's pattern {shown!r} is not usable ({exc})"


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and isinstance(pattern, str):
        found = _search(pattern, instance)
        if isinstance(found, str):
            yield ValidationError(f"{clip(instance, 200)!r} {found}")
        elif not found:
            yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            found = _search(pattern, key)
            if isinstance(found, str):
                yield ValidationError(f"property name {clip(key, 200)!r} {found}")
            elif found:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, other: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras: list[Any] = []
    for key in instance:
        if key in properties:
            continue
        matched = False
        for pattern in patterns:
            found = _search(pattern, key)
            if isinstance(found, str):
                yield ValidationError(f"property name {clip(key, 200)!r} {found}")
                matched = True  # reported already
                break
            if found:
                matched = True
                break
        if not matched:
            extras.append(key)
    if validator.is_type(other, "object"):
        for key in extras:
            yield from validator.descend(instance[key], other, path=key)
    elif other is False and extras:
        names = ", ".join(repr(k) for k in sorted(extras, key=str))
        if patterns:
            shown = ", ".join(repr(p) for p in sorted(patterns))
            yield ValidationError(f"{names} do not match any of the regexes: {shown}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(
                f"Additional properties are not allowed ({names} {verb} unexpected)"
            )


def _bounded(cls: Any) -> Any:
    """`cls` with its pattern keywords matched by `_search`."""
    bounded = _bounded_classes.get(cls)
    if bounded is None:
        from jsonschema import validators

        own = {
            "pattern": _pattern,
            "patternProperties": _pattern_properties,
            "additionalProperties": _additional_properties,
        }
        bounded = validators.extend(cls, {k: v for k, v in own.items() if k in cls.VALIDATORS})
        _bounded_classes[cls] = bounded
    return bounded


def _walk(node: Any, depth: int = 0) -> Iterator[tuple[str, Any]]:
    """Every (keyword, value) pair of a schema, at any depth."""
    if depth > 200:
        raise SchemaProblem("refused: the schema is nested more than 200 levels deep")
    if isinstance(node, Mapping):
        for key, value in node.items():
            yield key, value
            if key not in _DATA_KEYWORDS:
                yield from _walk(value, depth + 1)
    elif isinstance(node, list):
        for item in node:
            yield from _walk(item, depth + 1)


def schema_validator(schema: Mapping[str, Any]) -> Any:
    """A `jsonschema` validator for `schema` that never reaches outside it.

    Its references resolve only within `schema` (and the JSON Schema meta-schemas, which ship
    with jsonschema); its patterns are matched in bounded time (`pattern_budget`).

    Raises:
        SchemaProblem: `schema` is not valid JSON Schema, or a reference points outside it
            (a URL, a file, another document), or it combines `patternProperties` with
            `unevaluatedProperties` (whose property-name matching cannot be bounded).
    """
    import referencing
    import referencing.exceptions
    import referencing.jsonschema
    from jsonschema import exceptions, validators
    from jsonschema_specifications import REGISTRY

    cls = validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except exceptions.SchemaError as exc:
        where = path_text(list(exc.absolute_path))
        raise SchemaProblem(
            f"not a valid JSON Schema: {exc.message} (at {where})", invalid=(exc.message, where)
        ) from None
    registry: Any = referencing.Registry(retrieve=_refuse)  # type: ignore[call-arg]
    keywords = list(_walk(schema))
    used = {key for key, _ in keywords}
    if "patternProperties" in used and "unevaluatedProperties" in used:
        raise SchemaProblem(
            "refused: 'patternProperties' with 'unevaluatedProperties' is not supported (its "
            "property names could not be matched in bounded time)"
        )
    specification = referencing.jsonschema.specification_with(
        cls.ID_OF(cls.META_SCHEMA) or "urn:unknown-dialect",
        default=referencing.Specification.OPAQUE,
    )
    resolver = REGISTRY.combine(registry).resolver_with_root(specification.create_resource(schema))
    for key, value in keywords:
        if key not in _REF_KEYWORDS or not isinstance(value, str):
            continue
        try:
            resolver.lookup(value)
        except referencing.exceptions.Unresolvable as exc:
            if isinstance(exc.__cause__, _Refused) or not value.startswith("#"):
                raise SchemaProblem(
                    f"refused: the reference {clip(value, 200)!r} points outside the schema; only "
                    "references within the schema itself are followed ('#/$defs/...', or an "
                    "'$id' inside it), nothing is fetched or read from files"
                ) from None
            raise SchemaProblem(
                f"refused: the reference {clip(value, 200)!r} does not resolve within the schema"
            ) from None
    return _bounded(cls)(schema, registry=registry)
