"""Typed outputs through the loop and the Agent, with the faux provider: the final-answer tool,
the native mode, corrections, the `output_retries` limit, and the partial answer while it streams.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict  # pydantic needs this one on Python < 3.12

from agentcore import (
    Agent,
    AgentContext,
    AgentLoopConfig,
    AssistantMessage,
    ConfigError,
    LimitReached,
    OutputSpec,
    ToolResultMessage,
    UserMessage,
    agent_loop,
    tool,
)
from agentcore.messages import ToolCall
from agentcore.testing import (
    FauxProvider,
    check_well_formed,
    faux_message,
    faux_text,
    faux_tool_call,
)
from support import Run, collect, texts, user

pytestmark = pytest.mark.anyio


class City(BaseModel):
    """A city and how many live there."""

    name: str
    population: int


@dataclasses.dataclass
class Point:
    x: float
    y: float


class Movie(TypedDict):
    title: str
    year: int


async def typed_run(
    faux: FauxProvider,
    output_type: Any,
    *,
    retries: int = 2,
    tools: list[Any] | None = None,
    model: Any = None,
    **config: Any,
) -> Run:
    cfg = AgentLoopConfig(
        model=model or faux.model, output_type=output_type, output_retries=retries, **config
    )
    stream = agent_loop([user("answer")], AgentContext(tools=tools or []), cfg)
    done = await collect(stream)
    assert stream.output is done.end.output
    assert stream.limit == done.end.limit
    return done


def results(r: Run) -> list[ToolResultMessage]:
    return [m for m in r.result if isinstance(m, ToolResultMessage)]


def assert_one_result_per_call(r: Run) -> None:
    calls = [c.id for m in r.result if isinstance(m, AssistantMessage) for c in m.tool_calls]
    assert sorted(calls) == sorted(m.tool_call_id for m in results(r))


# --- tool mode --------------------------------------------------------------------------------


async def test_a_valid_final_answer_ends_the_run_with_the_value() -> None:
    faux = FauxProvider([faux_tool_call("final_answer", {"name": "Lyon", "population": 522000})])
    r = await typed_run(faux, City)
    assert r.end.output == City(name="Lyon", population=522000)
    assert r.end.limit is None
    assert [m.role for m in r.result] == ["user", "assistant", "tool_result"]
    assert texts(results(r)[0]) == "Final answer received." and not results(r)[0].is_error
    (call,) = faux.calls
    assert call.options.output_schema is None  # faux has no native mode: the tool
    (answer_tool,) = call.context.tools
    assert answer_tool.name == "final_answer"
    assert answer_tool.parameters["required"] == ["name", "population"]
    assert [e.tool_name for e in r.of("tool_execution_end")] == ["final_answer"]


async def test_an_invalid_call_gets_an_error_naming_each_path_then_the_model_corrects_it() -> None:
    faux = FauxProvider(
        [
            faux_tool_call("final_answer", {"name": 5, "population": "many"}),
            faux_tool_call("final_answer", {"name": "Lyon", "population": "522000"}),
        ]
    )
    r = await typed_run(faux, City)
    assert r.end.output == City(name="Lyon", population=522000)  # lax: "522000" is an int
    first = results(r)[0]
    assert first.is_error
    error = texts(first)
    assert "name: Input should be a valid string" in error
    assert "population: Input should be a valid integer" in error
    assert '"population": "many"' in error  # what was received is quoted
    assert "Call final_answer again" in error
    # the model saw the error result, nothing else was added
    assert [m.role for m in r.result] == [
        "user", "assistant", "tool_result", "assistant", "tool_result",
    ]  # fmt: skip


async def test_a_plain_text_answer_gets_a_correction_message() -> None:
    faux = FauxProvider(
        [
            faux_text("Lyon, about half a million people."),
            faux_tool_call("final_answer", {"name": "Lyon", "population": 522000}),
        ]
    )
    r = await typed_run(faux, City)
    assert r.end.output == City(name="Lyon", population=522000)
    roles = [m.role for m in r.result]
    assert roles == ["user", "assistant", "user", "assistant", "tool_result"]
    correction = r.result[2]
    assert isinstance(correction, UserMessage)
    assert "calling the final_answer tool" in texts(correction)
    assert texts(faux.calls[1].context.messages[-1]) == texts(correction)  # the model saw it
    assert r.types.count("turn_start") == 2


async def test_never_valid_ends_the_run_with_the_output_retries_limit() -> None:
    faux = FauxProvider(
        [
            faux_tool_call("final_answer", {"name": "Lyon"}),
            faux_text("I think it is Lyon."),
            faux_tool_call("final_answer", {"name": "Lyon", "population": "lots"}),
            faux_text("never asked"),
        ]
    )
    r = await typed_run(faux, City, retries=2)
    assert r.end.output is None
    limit = r.end.limit
    assert isinstance(limit, LimitReached)
    assert (limit.kind, limit.limit, limit.used) == ("output_retries", 2, 3)
    assert len(limit.errors) == 3
    assert "population: Field required" in limit.errors[0]
    assert "plain text" in limit.errors[1]
    assert "population: Input should be a valid integer" in limit.errors[2]
    text = str(limit)
    assert text.startswith("output_retries reached: 3 invalid final answers, 2 retries allowed")
    assert "population: Input should be a valid integer" in text
    assert faux.call_count == 3 and faux.pending == 1
    assert isinstance(r.result[-1], ToolResultMessage)  # every call has its result
    assert_one_result_per_call(r)


async def test_zero_retries_ends_at_the_first_invalid_answer() -> None:
    faux = FauxProvider([faux_text("Lyon"), faux_text("never asked")])
    r = await typed_run(faux, City, retries=0)
    assert r.end.limit is not None and r.end.limit.used == 1
    assert "1 invalid final answers, 0 retries allowed" in str(r.end.limit)
    assert [m.role for m in r.result] == ["user", "assistant"]  # no correction after the end


async def test_other_calls_of_the_batch_still_get_one_result_each() -> None:
    log: list[str] = []

    @tool
    def note(text: str) -> str:
        """Write a note."""
        log.append(text)
        return "noted"

    answer = faux_message(
        ToolCall(id="a", name="note", arguments={"text": "first"}),
        ToolCall(id="b", name="final_answer", arguments={"name": "Lyon", "population": 1}),
        ToolCall(id="c", name="note", arguments={"text": "second"}),
    )
    faux = FauxProvider([answer, faux_text("never asked")])
    r = await typed_run(faux, City, tools=[note])
    assert r.end.output == City(name="Lyon", population=1)
    assert sorted(log) == ["first", "second"]
    assert [m.tool_call_id for m in results(r)] == ["a", "b", "c"]
    assert faux.call_count == 1
    assert [t.name for t in faux.calls[0].context.tools] == ["note", "final_answer"]


async def test_a_final_answer_cut_off_by_the_token_limit_is_a_failed_attempt() -> None:
    faux = FauxProvider(
        [
            faux_tool_call("final_answer", {"name": "Lyon"}, stop_reason="length"),
            faux_tool_call("final_answer", {"name": "Lyon", "population": 3}),
        ]
    )
    r = await typed_run(faux, City)
    assert r.end.output == City(name="Lyon", population=3)
    assert "output token limit" in texts(results(r)[0])


async def test_a_tool_with_the_answer_tools_name_fails_the_run_clearly() -> None:
    @tool
    def final_answer(text: str) -> str:
        """A tool that takes the answer tool's name."""
        return text

    faux = FauxProvider([faux_text("never asked")])
    r = await typed_run(faux, City, tools=[final_answer])
    last = r.result[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason == "error"
    assert "OutputSpec(..., name=...)" in (last.error_message or "")
    assert faux.call_count == 0
    # another name for the answer tool works
    faux.set_responses([faux_tool_call("answer", {"name": "Lyon", "population": 1})])
    r = await typed_run(faux, OutputSpec(City, name="answer"), tools=[final_answer])
    assert r.end.output == City(name="Lyon", population=1)


# --- every kind of output type ------------------------------------------------------------------

KINDS: list[tuple[Any, Any, Any]] = [
    (City, {"name": "Lyon", "population": 1}, City(name="Lyon", population=1)),
    (Point, {"x": 1, "y": 2.5}, Point(x=1.0, y=2.5)),
    (Movie, {"title": "Alien", "year": 1979}, {"title": "Alien", "year": 1979}),
    (int, {"value": 42}, 42),
    (list[str], {"value": ["a", "b"]}, ["a", "b"]),
    (Literal["yes", "no"], {"value": "no"}, "no"),
    (City | None, {"value": None}, None),
    (list[City], {"value": [{"name": "A", "population": 2}]}, [City(name="A", population=2)]),
    (
        {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        {"n": 3},
        {"n": 3},
    ),
    ({"type": "array", "items": {"type": "string"}}, {"value": ["x"]}, ["x"]),
]


@pytest.mark.parametrize(("output_type", "arguments", "expected"), KINDS)
async def test_every_kind_of_output_type(output_type: Any, arguments: Any, expected: Any) -> None:
    faux = FauxProvider([faux_tool_call("final_answer", arguments)])
    r = await typed_run(faux, output_type)
    assert r.end.limit is None
    assert r.end.output == expected
    (answer_tool,) = faux.calls[0].context.tools
    assert answer_tool.parameters["type"] == "object"
    wrapped = "value" in arguments and OutputSpec(output_type).wrapped
    assert ("value" in answer_tool.parameters.get("properties", {})) == wrapped


@pytest.mark.parametrize(("output_type", "arguments", "expected"), KINDS)
async def test_every_kind_of_output_type_natively(
    output_type: Any, arguments: Any, expected: Any
) -> None:
    faux = FauxProvider([faux_text(json.dumps(arguments))], structured_output=True)
    r = await typed_run(faux, output_type)
    assert r.end.output == expected
    schema = faux.calls[0].options.output_schema
    assert schema is not None and schema.name == "final_answer"
    assert schema.schema["type"] == "object"
    assert faux.calls[0].context.tools == []


# --- native mode --------------------------------------------------------------------------------


async def test_native_mode_is_chosen_by_the_models_data() -> None:
    faux = FauxProvider(
        [faux_text('{"name": "Lyon", "population": 522000}')], structured_output=True
    )
    r = await typed_run(faux, City)
    assert r.end.output == City(name="Lyon", population=522000)
    options = faux.calls[0].options
    assert options.output_schema is not None
    assert options.output_schema.strict is True  # closed: every property required
    assert options.output_schema.schema["additionalProperties"] is False
    assert [m.role for m in r.result] == ["user", "assistant"]


async def test_native_invalid_json_then_corrected() -> None:
    faux = FauxProvider(
        [
            faux_text('{"name": "Lyon", "population": '),
            faux_text('{"name": "Lyon"}'),
            faux_text('```json\n{"name": "Lyon", "population": 7}\n```'),
        ],
        structured_output=True,
    )
    r = await typed_run(faux, City)
    assert r.end.output == City(name="Lyon", population=7)  # a code fence is forgiven
    roles = [m.role for m in r.result]
    assert roles == ["user", "assistant", "user", "assistant", "user", "assistant"]
    first, second = texts(r.result[2]), texts(r.result[4])
    assert "not valid JSON" in first and "JSON Schema" in first
    assert "population: Field required" in second


async def test_native_never_valid_ends_with_the_limit() -> None:
    faux = FauxProvider([faux_text("no JSON here"), faux_text("[1, 2]")], structured_output=True)
    r = await typed_run(faux, City, retries=1)
    assert r.end.limit is not None and r.end.limit.kind == "output_retries"
    assert "root: Input should be a valid dictionary" in str(r.end.limit)
    assert r.result[-1].role == "assistant"


async def test_auto_uses_the_tool_when_the_request_offers_tools() -> None:
    @tool
    def lookup(city: str) -> int:
        """Look a population up."""
        return 522000

    faux = FauxProvider(
        [
            faux_tool_call("lookup", {"city": "Lyon"}),
            faux_tool_call("final_answer", {"name": "Lyon", "population": 522000}),
        ],
        structured_output=True,
    )
    r = await typed_run(faux, City, tools=[lookup])
    assert r.end.output == City(name="Lyon", population=522000)
    assert all(c.options.output_schema is None for c in faux.calls)
    # forced native: the schema is sent next to the tools, and the answer is text
    faux.set_responses(
        [faux_tool_call("lookup", {"city": "Lyon"}), faux_text('{"name":"Lyon","population":5}')]
    )
    r = await typed_run(faux, OutputSpec(City, mode="native"), tools=[lookup])
    assert r.end.output == City(name="Lyon", population=5)
    assert all(c.options.output_schema is not None for c in faux.calls[2:])
    assert [t.name for t in faux.calls[2].context.tools] == ["lookup"]


async def test_tool_mode_can_be_forced_on_a_native_model() -> None:
    faux = FauxProvider([faux_tool_call("final_answer", {"value": 3})], structured_output=True)
    r = await typed_run(faux, OutputSpec(int, mode="tool"))
    assert r.end.output == 3 and faux.calls[0].options.output_schema is None


# --- partial answers ----------------------------------------------------------------------------


@pytest.mark.parametrize("native", [False, True])
async def test_partial_answer_while_streaming(native: bool) -> None:
    spec = OutputSpec(list[City])
    answer = {"value": [{"name": "Lyon", "population": 1}, {"name": "Paris", "population": 2}]}
    scripted = (
        faux_text(json.dumps(answer))
        if native
        else faux_tool_call("final_answer", answer, text="Here it is.")
    )
    faux = FauxProvider([scripted], chunk_chars=4, structured_output=native)
    seen: list[Any] = []
    r = await typed_run(faux, spec)
    for event in r.of("message_update"):
        value = spec.partial(event.message)
        if value is not None and (not seen or value != seen[-1]):
            seen.append(value)
    assert seen[-1] == answer["value"]
    assert len(seen) > 3  # it grew while streaming
    assert seen[0] == [] or seen[0] == [{}] or isinstance(seen[0][0], dict)
    names = [v[0].get("name") for v in seen if v and isinstance(v[0], dict)]
    assert "Ly" in names or "L" in names or "Lyo" in names  # a string arrives piece by piece
    assert r.end.output == [City(name="Lyon", population=1), City(name="Paris", population=2)]


def test_partial_of_messages_without_an_answer() -> None:
    spec = OutputSpec(City)
    assert spec.partial(None) is None
    assert spec.partial(AssistantMessage()) is None
    assert spec.partial(faux_text("Thinking about it")) is None
    assert spec.partial(faux_text('{"name": "Ly')) == {"name": "Ly"}
    assert OutputSpec(City, mode="tool").partial(faux_text('{"name": "Ly')) is None
    call = faux_tool_call("final_answer", {"name": "Lyon"})
    assert spec.partial(call) == {"name": "Lyon"}
    assert OutputSpec(int).partial(faux_text('{"val')) is None


# --- the Agent ----------------------------------------------------------------------------------


async def test_agent_state_output() -> None:
    faux = FauxProvider(
        [
            faux_tool_call("final_answer", {"name": "Lyon", "population": 522000}),
            faux_text("plain"),
        ]
    )
    agent = Agent(initial_state={"model": faux.model}, output_type=City)
    seen: list[Any] = []
    agent.subscribe(lambda e: seen.append(e))
    agent.follow_up("queued for later")
    await agent.prompt("Which city?")
    assert agent.state.output == City(name="Lyon", population=522000)
    assert agent.state.limit is None
    check_well_formed(seen)
    assert seen[-1].output == agent.state.output
    assert [m.content for m in agent.follow_up_queue] == ["queued for later"]  # not taken
    # a plain-text run: no output, and the last one's is gone
    agent.output_type = None
    agent.clear_all_queues()
    await agent.prompt("And now?")
    assert agent.state.output is None


async def test_agent_reset_clears_the_output() -> None:
    faux = FauxProvider([faux_tool_call("final_answer", {"value": 4})])
    agent = Agent(initial_state={"model": faux.model}, output_type=int)
    await agent.prompt("2+2?")
    assert agent.state.output == 4
    agent.reset()
    assert agent.state.output is None


def test_agent_prompt_sync_gives_the_output() -> None:
    faux = FauxProvider([faux_text('{"value": ["a"]}')], structured_output=True)
    agent = Agent(initial_state={"model": faux.model}, output_type=list[str])
    agent.prompt_sync("letters?")
    assert agent.state.output == ["a"]


# --- configuration ------------------------------------------------------------------------------


def test_bad_options_fail_when_the_config_is_built() -> None:
    faux = FauxProvider()
    with pytest.raises(ConfigError, match="output_retries must be a non-negative integer"):
        AgentLoopConfig(model=faux.model, output_type=int, output_retries=-1)
    with pytest.raises(ConfigError, match="cannot be used"):
        AgentLoopConfig(model=faux.model, output_type=object())
    with pytest.raises(ConfigError, match=r"json\.loads"):
        Agent(output_type='{"type": "object"}')
    config = AgentLoopConfig(model=faux.model, output_type=City)
    assert isinstance(config.output_type, OutputSpec) and config.output_type.type is City
    assert AgentLoopConfig(model=faux.model, output_type=City).output_type is config.output_type


async def test_a_plain_run_is_unchanged() -> None:
    faux = FauxProvider([faux_text("hello")])
    r = await typed_run(faux, None)
    assert r.end.output is None and r.end.limit is None
    assert faux.calls[0].context.tools == [] and faux.calls[0].options.output_schema is None


async def test_malformed_arguments_to_the_answer_tool_are_a_failed_attempt() -> None:
    faux = FauxProvider(
        [
            faux_tool_call("final_answer", '{"name": "Lyon", "population": 5'),
            faux_tool_call("final_answer", {"name": "Lyon", "population": 5}),
        ]
    )
    r = await typed_run(faux, City, retries=1)
    assert r.end.output == City(name="Lyon", population=5)
    assert "not valid JSON" in texts(results(r)[0])


async def test_in_native_mode_a_tool_of_the_run_may_be_called_final_answer() -> None:
    calls: list[str] = []

    @tool
    def final_answer(text: str) -> str:
        """A tool of the run's own that happens to have the answer tool's name."""
        calls.append(text)
        return "stored"

    faux = FauxProvider(
        [faux_tool_call("final_answer", {"text": "draft"}), faux_text('{"value": 9}')],
        structured_output=True,
    )
    r = await typed_run(faux, OutputSpec(int, mode="native"), tools=[final_answer])
    assert calls == ["draft"]  # the run's own tool ran: it was not taken for the answer
    assert r.end.output == 9 and r.end.limit is None


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_typed_runs_under_both_backends(anyio_backend: str) -> None:
    faux = FauxProvider([faux_text("no tool"), faux_tool_call("final_answer", {"value": [1, 2]})])
    r = await typed_run(faux, list[int])
    assert r.end.output == [1, 2]


async def test_a_json_schema_answer_does_not_share_data_with_the_transcript() -> None:
    schema = {"type": "object", "properties": {"tags": {"type": "array"}}}
    faux = FauxProvider([faux_tool_call("final_answer", {"tags": ["a"]})])
    r = await typed_run(faux, schema)
    r.end.output["tags"].append("changed")
    call = next(m for m in r.result if isinstance(m, AssistantMessage)).tool_calls[0]
    assert call.arguments == {"tags": ["a"]}


def test_an_output_type_is_built_once_for_the_runs_of_an_agent() -> None:
    faux = FauxProvider()
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    first = AgentLoopConfig(model=faux.model, output_type=schema).output_type
    assert AgentLoopConfig(model=faux.model, output_type=dict(schema)).output_type is first
    schema["required"] = ["n"]  # a changed schema is a new spec
    changed = AgentLoopConfig(model=faux.model, output_type=schema).output_type
    assert changed is not first and changed.schema["required"] == ["n"]
    assert first.schema.get("required") is None  # the spec kept its own copy
