"""Argument validation never invents a value: `null` is "not given" for an optional parameter,
`None` where the schema allows null, an error anywhere else; strings that are not finite numbers
are not numbers. The same rules hold for JSON Schema dicts and Pydantic models, at every depth,
and an error text stays short however large the arguments."""

from __future__ import annotations

import json
import socket
import sys
import time
from pathlib import Path
from typing import Any

import pydantic
import pytest

from agentcore import (
    AgentContext,
    AgentTool,
    AgentToolResult,
    ConfigError,
    OutputSpec,
    ToolDefinitionError,
    ToolResultMessage,
    tool,
)
from agentcore._tools.validation import ArgumentsError, ArgumentsValidator
from agentcore.testing import FauxProvider, faux_text, faux_tool_call
from support import call_tool, make_tool, run, texts

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "min_age": {"type": "integer", "description": "no minimum when left out"},
        "ratio": {"type": "number"},
        "strict": {"type": "boolean"},
        "label": {"type": "string"},
        "maybe": {"type": ["integer", "null"]},
        "either": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "legacy": {"type": "integer", "nullable": True},  # OpenAPI's word: not JSON Schema
        "anything": {},
        "text_or_number": {"anyOf": [{"type": "string"}, {"type": "number"}]},
        "people": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"age": {"type": "integer"}, "nick": {"type": "string"}},
                "required": ["age"],
            },
        },
        "scores": {"type": "array", "items": {"type": "number"}},
        "filter": {"$ref": "#/$defs/Filter"},
    },
    "required": ["name"],
    "$defs": {
        "Filter": {
            "type": "object",
            "properties": {"limit": {"type": "integer"}, "exact": {"type": "boolean"}},
            "required": ["exact"],
        }
    },
}


def validate(arguments: dict[str, Any], schema: Any = SCHEMA) -> Any:
    return ArgumentsValidator("t", schema).validate(arguments)


def problems(arguments: dict[str, Any], schema: Any = SCHEMA) -> list[str]:
    """The problem lines of the error text."""
    with pytest.raises(ArgumentsError) as info:
        ArgumentsValidator("t", schema).validate(arguments)
    head = str(info.value).partition("\n\nReceived arguments:\n")[0]
    return [line.removeprefix("  - ") for line in head.splitlines()[1:]]


# --- null ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key", ["min_age", "ratio", "strict", "label", "people", "filter", "legacy"]
)
def test_null_for_an_optional_parameter_means_not_given(key: str) -> None:
    given = {"name": "x", key: None}
    assert validate(given) == {"name": "x"}
    assert given == {"name": "x", key: None}  # the model's arguments are untouched


@pytest.mark.parametrize("key", ["maybe", "either", "anything"])
def test_null_where_the_schema_allows_it_is_none(key: str) -> None:
    assert validate({"name": "x", key: None}) == {"name": "x", key: None}


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"name": None}, ["name: null is not of type 'string'"]),
        (
            {"name": "x", "people": [{"age": None}]},
            ["people[0].age: null is not of type 'integer'"],
        ),
        ({"name": "x", "scores": [1, None]}, ["scores[1]: null is not of type 'number'"]),
        ({"name": "x", "filter": {"exact": None}}, ["filter.exact: null is not of type 'boolean'"]),
    ],
)
def test_null_anywhere_else_is_an_error(arguments: dict[str, Any], expected: list[str]) -> None:
    assert problems(arguments) == expected


def test_null_is_dropped_at_every_depth() -> None:
    given = {
        "name": "x",
        "people": [{"age": "3", "nick": None}],
        "filter": {"exact": "true", "limit": None},
    }
    assert validate(given) == {
        "name": "x",
        "people": [{"age": 3}],
        "filter": {"exact": True},
    }


def test_null_is_never_turned_into_a_value_by_coercion() -> None:
    # every type that once coerced null (to 0, 0.0, False, "") is now an error
    schema = {
        "type": "object",
        "properties": {k: {"type": k} for k in ("integer", "number", "boolean", "string")},
        "required": ["integer", "number", "boolean", "string"],
    }
    lines = problems(dict.fromkeys(("integer", "number", "boolean", "string")), schema)
    assert lines == [
        "boolean: null is not of type 'boolean'",
        "integer: null is not of type 'integer'",
        "number: null is not of type 'number'",
        "string: null is not of type 'string'",
    ]


# --- finite numbers -----------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["nan", "NaN", "inf", "-inf", "Infinity", "-Infinity", "1e999"])
@pytest.mark.parametrize("key", ["ratio", "min_age"])
def test_strings_that_are_not_finite_numbers_are_not_numbers(text: str, key: str) -> None:
    assert problems({"name": "x", key: text}) == [f"{key}: {text!r} is not a finite number"]


def test_an_infinite_number_is_refused_everywhere() -> None:
    # `1e999` is valid JSON syntax, but overflows to infinity: no tool receives it, not even as
    # the string "inf"
    assert problems({"name": "x", "ratio": float("inf"), "label": float("-inf")}) == [
        "label: -Infinity is not a finite number",
        "ratio: Infinity is not a finite number",
    ]
    assert problems({"name": "x", "scores": [1.5, float("inf")]}) == [
        "scores[1]: Infinity is not a finite number"
    ]


def test_a_string_stays_a_string_where_a_string_is_allowed() -> None:
    assert validate({"name": "nan", "text_or_number": "inf"}) == {
        "name": "nan",
        "text_or_number": "inf",
    }


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"min_age": "5"}, {"min_age": 5}),
        ({"min_age": " 7 "}, {"min_age": 7}),
        ({"min_age": "5.0"}, {"min_age": 5}),
        (
            {"min_age": "123456789012345678901234567890"},
            {"min_age": 123456789012345678901234567890},
        ),
        ({"ratio": "2.5"}, {"ratio": 2.5}),
        ({"ratio": "-.5"}, {"ratio": -0.5}),
        ({"ratio": "1e3"}, {"ratio": 1000}),
        ({"strict": "true"}, {"strict": True}),
        ({"label": 5}, {"label": "5"}),
        ({"maybe": "4"}, {"maybe": 4}),
        ({"scores": ["1", "2.5"]}, {"scores": [1, 2.5]}),
    ],
)
def test_lenient_coercion_still_holds(given: dict[str, Any], expected: dict[str, Any]) -> None:
    assert validate({"name": "x", **given}) == {"name": "x", **expected}


@pytest.mark.parametrize("text", ["1_000", "١٢", "0x10", "5 apples", ""])
def test_only_decimal_numbers_are_read_as_numbers(text: str) -> None:
    (line,) = problems({"name": "x", "min_age": text})
    assert line == f"min_age: {text!r} is not of type 'integer'"


# --- Pydantic models and @tool ----------------------------------------------------------------


class Filter(pydantic.BaseModel):
    exact: bool
    limit: int = 10


class Search(pydantic.BaseModel):
    query: str
    min_age: int = 18
    max_age: int | None = None
    maybe: int | None = 7
    ratio: float = 1.0
    filter: Filter | None = None
    scores: list[float] = []


def test_pydantic_null_rules() -> None:
    validator = ArgumentsValidator("search", Search)
    got = validator.validate({"query": "q", "min_age": None, "ratio": None, "max_age": None})
    assert (got.min_age, got.ratio, got.max_age) == (18, 1.0, None)  # the field defaults apply
    assert validator.validate({"query": "q", "maybe": None}).maybe is None  # null allowed: None
    nested = validator.validate({"query": "q", "filter": {"exact": "true", "limit": None}})
    assert nested.filter == Filter(exact=True, limit=10)
    with pytest.raises(ArgumentsError, match=r"query: Input should be a valid string"):
        validator.validate({"query": None})
    with pytest.raises(ArgumentsError, match=r"filter\.exact: Input should be a valid boolean"):
        validator.validate({"query": "q", "filter": {"exact": None}})


@pytest.mark.parametrize("text", ["nan", "inf", "-Infinity", "1e999"])
def test_pydantic_finite_numbers(text: str) -> None:
    validator = ArgumentsValidator("search", Search)
    with pytest.raises(ArgumentsError) as info:
        validator.validate({"query": "q", "ratio": text, "scores": [1, text]})
    head = str(info.value).partition("\n\nReceived")[0].splitlines()
    assert head[1:] == [
        f"  - ratio: {text!r} is not a finite number",
        f"  - scores[1]: {text!r} is not a finite number",
    ]
    assert validator.validate({"query": "q", "ratio": "2.5"}).ratio == 2.5


@pytest.mark.anyio
async def test_a_tool_gets_its_own_default_for_null() -> None:
    received: list[Any] = []

    @tool
    def people(min_age: int = 18, city: str | None = "Paris", limit: int | None = None) -> str:
        """Find people."""
        received.append((min_age, city, limit))
        return "found"

    result = await call_tool(people, {"min_age": None, "city": None, "limit": None})
    assert not result.is_error, texts(result)
    assert received == [(18, None, None)]  # never min_age=0


@pytest.mark.anyio
async def test_a_required_null_reaches_the_model_as_an_error() -> None:
    executed: list[Any] = []

    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        executed.append(args)
        return AgentToolResult.text("ok")

    faux = FauxProvider([faux_tool_call("t", {"name": None}), faux_text("sorry")])
    r = await run("go", AgentContext(tools=[make_tool("t", execute, SCHEMA)]), faux=faux)
    assert executed == []
    result = r.result[2]
    assert isinstance(result, ToolResultMessage) and result.is_error
    assert "  - name: null is not of type 'string'" in texts(result)


# --- the error text stays short -------------------------------------------------------------------


def test_a_huge_argument_gives_a_short_error() -> None:
    huge = "x" * 10_000_000
    with pytest.raises(ArgumentsError) as info:
        validate({"name": "x", "min_age": huge})
    text = str(info.value)
    assert len(text) < 5_000
    assert "more characters" in text
    shown = text.partition("\n\nReceived arguments:\n")[2]
    assert shown.startswith('{\n  "name": "x",\n  "min_age": "xxx')
    assert shown.endswith(
        f"… {len(json.dumps({'name': 'x', 'min_age': huge}, indent=2)) - 2000} more characters"
    )


def test_many_problems_are_counted_not_all_listed() -> None:
    lines = problems({"name": "x", "scores": ["a"] * 1000})
    assert len(lines) == 51
    assert lines[-1] == "… and 950 more problems"


def test_nesting_too_deep_is_an_error_not_a_crash() -> None:
    deep: Any = 1
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(ArgumentsError, match="nested too deeply"):
        validate({"name": "x", "anything": deep})


# --- schemas from elsewhere: nothing outside the schema, patterns in bounded time ---------------


def _bare_tool(parameters: Any) -> Any:
    async def execute(*args: Any) -> AgentToolResult:
        return AgentToolResult()

    return AgentTool(name="t", description="", parameters=parameters, execute=execute)


_opened: list[str] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" and args and isinstance(args[0], str) and "never-read" in args[0]:
        _opened.append(args[0])


sys.addaudithook(_audit)  # hooks stay for the process; this one only notes the files below


def test_a_remote_reference_is_refused_without_a_connection() -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)  # it would accept and never answer
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/schema.json"
    try:
        for schema in (
            {"type": "object", "properties": {"a": {"$ref": url}}},
            {"type": "object", "$id": url, "properties": {"a": {"$ref": "other.json"}}},
            {"type": "object", "properties": {"a": {"$dynamicRef": url}}},
        ):
            started = time.monotonic()
            with pytest.raises(ToolDefinitionError, match="points outside the schema") as info:
                _bare_tool(schema)
            assert time.monotonic() - started < 2
            assert "'t'" in str(info.value) and "refused: the reference" in str(info.value)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing connected
    finally:
        listener.close()


def test_a_file_reference_is_refused_and_the_file_never_read(tmp_path: Path) -> None:
    secret = tmp_path / "never-read.json"
    secret.write_text('{"type": "string", "description": "TOP-SECRET"}')
    _opened.clear()
    for ref in (f"file://{secret}", str(secret), "never-read.json"):
        with pytest.raises(ToolDefinitionError, match="points outside the schema") as info:
            _bare_tool({"type": "object", "properties": {"a": {"$ref": ref}}})
        assert ref in str(info.value) and "TOP-SECRET" not in str(info.value)
    with pytest.raises(ConfigError, match="output_type is refused: the reference"):
        OutputSpec({"$ref": f"file://{secret}"})
    assert _opened == []


def test_references_within_the_schema_still_resolve() -> None:
    tool = _bare_tool(
        {
            "type": "object",
            "$id": "https://example.invalid/tool.json",
            "properties": {
                "a": {"$ref": "#/$defs/word"},
                "b": {"$ref": "https://example.invalid/tool.json#/$defs/word"},
                "c": {"$ref": "#named"},
                "d": {
                    "$ref": "https://json-schema.org/draft/2020-12/schema"
                },  # ships with jsonschema
            },
            "$defs": {"word": {"type": "string"}, "n": {"$anchor": "named", "type": "integer"}},
        }
    )
    assert tool.validator.validate({"a": "x", "b": "y", "c": "5", "d": {}}) == {
        "a": "x",
        "b": "y",
        "c": 5,
        "d": {},
    }
    with pytest.raises(ToolDefinitionError, match="'#/nowhere' does not resolve within the schema"):
        _bare_tool({"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}})


@pytest.mark.timeout(20)
def test_patterns_that_backtrack_cannot_stall_validation() -> None:
    tool = _bare_tool(
        {
            "type": "object",
            "properties": {
                "nested": {"type": "string", "pattern": "^(a+)+$"},
                "alternation": {"type": "string", "pattern": "^(a|a)+$"},
                "keys": {
                    "type": "object",
                    "patternProperties": {"^(a|aa)+$": {"type": "integer"}},
                    "additionalProperties": False,
                },
            },
        }
    )
    hostile = "a" * 40 + "!"  # Python's `re` needs minutes for each of these
    started = time.monotonic()
    with pytest.raises(ArgumentsError, match=r"nested: 'a+!' does not match '\^\(a\+\)\+\$'"):
        tool.validator.validate({"nested": hostile})  # no trouble for the engine
    assert time.monotonic() - started < 0.5
    started = time.monotonic()
    with pytest.raises(ArgumentsError) as info:
        tool.validator.validate({"nested": hostile, "alternation": hostile, "keys": {hostile: 1}})
    took = time.monotonic() - started
    assert took < 2, f"validation took {took:.1f} s"
    text = str(info.value)
    # one budget for the whole call: what comes after the slow pattern is not checked either
    assert f"alternation: '{hostile}' could not be checked against the pattern" in text
    assert f"keys: property name '{hostile}' could not be checked" in text
    assert "more than 0.1 s of matching); send a shorter or simpler value" in text
    # ordinary values are checked as before
    assert tool.validator.validate({"nested": "aaa", "alternation": "aa", "keys": {"aa": "3"}}) == {
        "nested": "aaa",
        "alternation": "aa",
        "keys": {"aa": 3},
    }
    with pytest.raises(ArgumentsError, match=r"'b!' do not match any of the regexes"):
        tool.validator.validate({"keys": {"b!": 1}})
    with pytest.raises(ArgumentsError, match=r"nested: 'ab' does not match"):
        tool.validator.validate({"nested": "ab"})


@pytest.mark.timeout(20)
def test_an_output_schema_pattern_is_bounded_too() -> None:
    spec = OutputSpec({"type": "string", "pattern": "^(a|a)+$"})
    started = time.monotonic()
    with pytest.raises(Exception, match="could not be checked against the pattern"):
        spec.validate("a" * 40 + "!")
    assert time.monotonic() - started < 2
    assert spec.validate("aaa") == "aaa"


def test_unbounded_property_name_matching_is_refused() -> None:
    with pytest.raises(
        ToolDefinitionError, match="'patternProperties' with 'unevaluatedProperties'"
    ):
        _bare_tool(
            {
                "type": "object",
                "patternProperties": {"^x": {}},
                "unevaluatedProperties": False,
            }
        )
