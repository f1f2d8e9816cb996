"""Argument validation never invents a value: `null` is "not given" for an optional parameter,
`None` where the schema allows null, an error anywhere else; strings that are not finite numbers
are not numbers. The same rules hold for JSON Schema dicts and Pydantic models, at every depth,
and an error text stays short however large the arguments."""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest

from agentcore import AgentContext, AgentToolResult, ToolResultMessage, tool
from agentcore._validation import ArgumentsError, ArgumentsValidator
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
