"""What an OpenAI-compatible server declares it can do, on the wire: several tool calls per answer
(`compat.supports_parallel_tool_calls` asks for them with `parallel_tool_calls: true`) and native
structured output (`Model.structured_output`: a typed output of a run without tools is asked for
as `response_format`, not with the final-answer tool). The local model's catalogue entry and the
`llama.cpp` server profile declare both. Through the real `openai` SDK against the replay server;
the same against the real server is tests/e2e/test_local_model_native.py.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from pydantic import BaseModel

from agentcore import AgentContext, AgentLoopConfig, OutputSpec, run_agent_loop, tool
from agentcore.llm import (
    Context,
    Model,
    OpenAICompletionsCompat,
    StreamOptions,
    Tool,
    get_model,
    openai_compatible_model,
    stream,
)
from agentcore.llm.providers.openai_completions import build_payload
from agentcore.messages import AssistantMessage, ToolResultMessage, UserMessage

from .fault_server import Call, CompletionsWire, FaultServer
from .helpers import collect
from .replay_server import ReplayServer, ScriptedResponse, load_fixture

pytestmark = pytest.mark.anyio

API = "openai-completions"
WEATHER = Tool(
    name="get_weather",
    description="The weather in a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)


class City(BaseModel):
    name: str
    population: int


LYON = {"name": "Lyon", "population": 522000}


def local_at(server: ReplayServer) -> Model:
    """The catalogue's local model, pointed at `server`."""
    return dataclasses.replace(get_model("local", "qwen2.5-coder-1.5b"), base_url=server.base_url())


def _ignore(event: object) -> None:
    pass


def sse(name: str) -> ScriptedResponse:
    return ScriptedResponse.sse(load_fixture(API, name))


def ask(tools: list[Tool] | None = None) -> Context:
    return Context(messages=[UserMessage(content="Weather in Paris and Tokyo?")], tools=tools or [])


# --- what is declared ----------------------------------------------------------------------------


def test_the_local_entry_declares_native_output_and_parallel_calls() -> None:
    local = get_model("local", "qwen2.5-coder-1.5b")
    assert local.structured_output is True
    assert isinstance(local.compat, OpenAICompletionsCompat)
    assert local.compat.supports_parallel_tool_calls is True


def test_the_llama_cpp_profile_fills_in_what_the_caller_did_not_state() -> None:
    model = openai_compatible_model("http://127.0.0.1:8080/v1", "any", provider="llama.cpp")
    assert model.structured_output is True
    assert isinstance(model.compat, OpenAICompletionsCompat)
    assert model.compat.supports_parallel_tool_calls is True
    # what the caller states wins
    own = OpenAICompletionsCompat(supports_usage_in_streaming=False)
    stated = openai_compatible_model(
        "http://127.0.0.1:8080/v1", "any", provider="llama.cpp", compat=own, structured_output=False
    )
    assert stated.compat is own and stated.structured_output is False
    # a server of no known profile keeps the plain defaults
    other = openai_compatible_model("http://127.0.0.1:8080/v1", "any", provider="vllm")
    assert other.structured_output is None
    assert other.compat == OpenAICompletionsCompat()


def test_parallel_tool_calls_is_asked_for_only_with_tools_and_the_flag() -> None:
    local = get_model("local", "qwen2.5-coder-1.5b")
    body = build_payload(local, ask([WEATHER]), StreamOptions(), reasoning=None)
    assert body["parallel_tool_calls"] is True
    assert "parallel_tool_calls" not in build_payload(local, ask(), StreamOptions(), reasoning=None)
    plain = dataclasses.replace(local, compat=OpenAICompletionsCompat())
    body = build_payload(plain, ask([WEATHER]), StreamOptions(), reasoning=None)
    assert "parallel_tool_calls" not in body


# --- on the wire ---------------------------------------------------------------------------------


async def test_the_sdk_sends_parallel_tool_calls_and_reads_several_calls(
    replay_server: ReplayServer,
) -> None:
    replay_server.enqueue(sse("tool_calls_parallel"))
    _, message = await collect(stream(local_at(replay_server), ask([WEATHER]), StreamOptions()))
    assert replay_server.requests[0].json["parallel_tool_calls"] is True
    assert [(c.id, c.name) for c in message.tool_calls] == [
        ("call_1", "get_weather"),
        ("call_2", "get_forecast"),
    ]


async def test_several_independent_calls_take_one_round_trip(replay_server: ReplayServer) -> None:
    """Two calls in one answer run as one batch: two model requests, not three."""

    @tool
    def get_weather(city: str) -> str:
        """Current weather in a city."""
        return f"{city}: 18C"

    @tool
    def get_forecast(city: str, days: list[int]) -> str:
        """The forecast for a city, some days ahead."""
        return f"{city}: sun on days {days}"

    replay_server.enqueue(sse("tool_calls_parallel"), sse("text"))
    messages = await run_agent_loop(
        [UserMessage(content="Weather in Paris, forecast for Tokyo?")],
        AgentContext(tools=[get_weather, get_forecast]),
        AgentLoopConfig(model=local_at(replay_server)),
        _ignore,
    )
    assert [m.role for m in messages] == [
        "user", "assistant", "tool_result", "tool_result", "assistant",
    ]  # fmt: skip
    first, second = (r.json for r in replay_server.requests)
    assert first["parallel_tool_calls"] is True and second["parallel_tool_calls"] is True
    assert [m["role"] for m in second["messages"][-3:]] == ["assistant", "tool", "tool"]
    assert len(second["messages"][-3]["tool_calls"]) == 2


async def test_a_typed_output_without_tools_is_asked_for_natively(
    replay_server: ReplayServer,
) -> None:
    replay_server.enqueue(sse("json_answer"))
    events: list[Any] = []
    config = AgentLoopConfig(model=local_at(replay_server), output_type=City)
    await run_agent_loop(
        [UserMessage(content="Which city?")], AgentContext(), config, events.append
    )
    end = events[-1]
    assert end.limit is None and end.output == City(**LYON)
    body = replay_server.requests[0].json
    assert "tools" not in body  # no final-answer tool: the server constrains the text
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "final_answer",
            "schema": OutputSpec(City).output_schema().schema,
            "strict": True,
        },
    }
    assert not [e for e in events if e.type == "tool_execution_start"]


async def test_a_typed_output_beside_tools_uses_the_final_answer_tool(
    replay_server: ReplayServer,
) -> None:
    """llama.cpp applies `response_format` instead of the tools (its grammar then allows only
    the answer), so beside the run's own tools the answer stays a tool call."""

    @tool
    def lookup(city: str) -> str:
        """The population of a city."""
        return "522000"

    answer = CompletionsWire().answer([], Call("call_a", "final_answer", [json.dumps(LYON)]))
    replay_server.enqueue(ScriptedResponse.sse(answer.body()))
    events: list[Any] = []
    config = AgentLoopConfig(model=local_at(replay_server), output_type=City)
    await run_agent_loop(
        [UserMessage(content="Which city?")], AgentContext(tools=[lookup]), config, events.append
    )
    assert events[-1].output == City(**LYON)
    body = replay_server.requests[0].json
    assert "response_format" not in body
    assert [t["function"]["name"] for t in body["tools"]] == ["lookup", "final_answer"]
    assert body["parallel_tool_calls"] is True


def _two_calls() -> list[bytes]:
    """A llama.cpp-shaped answer with two tool calls, one SSE event per list item."""
    wire = CompletionsWire()
    head = wire.answer([]).events[:1]
    calls = []
    for index, (call_id, city) in enumerate((("call_p", "Paris"), ("call_t", "Tokyo"))):
        start = {"index": index, "id": call_id, "type": "function"}
        function = {"name": "get_weather", "arguments": ""}
        calls.append(wire._chunk({"tool_calls": [{**start, "function": function}]}))
        for fragment in ('{"city": ', json.dumps(city), "}"):
            calls.append(
                wire._chunk({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]})
            )
    return [*head, *calls, *wire.answer([], Call("x", "y", ["{}"])).events[-3:]]


async def test_a_two_call_answer_cut_off_runs_neither_call() -> None:
    """The connection drops inside the second of two calls: the answer is an error, and no call
    of it runs (a complete first call is not run on its own)."""
    ran: list[str] = []

    @tool
    def get_weather(city: str) -> str:
        """Current weather in a city."""
        ran.append(city)
        return f"{city}: 18C"

    events = _two_calls()
    with FaultServer() as server:
        server.enqueue(CompletionsWire.sse(events, gate_after=6, reset_after=6))
        server.gate.set()  # the reset comes after the first call and the second's start
        messages = await run_agent_loop(
            [UserMessage(content="Weather in Paris and Tokyo?")],
            AgentContext(tools=[get_weather]),
            AgentLoopConfig(model=local_at(server), max_retries=0),
            _ignore,
        )
        assert server.requests[0].json["parallel_tool_calls"] is True
    assert ran == []
    last = messages[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason == "error"
    assert not [m for m in messages if isinstance(m, ToolResultMessage)]


async def test_a_whole_two_call_answer_runs_both_calls_once() -> None:
    ran: list[str] = []

    @tool
    def get_weather(city: str) -> str:
        """Current weather in a city."""
        ran.append(city)
        return f"{city}: 18C"

    with FaultServer() as server:
        server.enqueue(CompletionsWire.sse(_two_calls()), sse("text"))
        messages = await run_agent_loop(
            [UserMessage(content="Weather in Paris and Tokyo?")],
            AgentContext(tools=[get_weather]),
            AgentLoopConfig(model=local_at(server)),
            _ignore,
        )
        assert len(server.requests) == 2
        assert all(r.json["parallel_tool_calls"] is True for r in server.requests)
    assert sorted(ran) == ["Paris", "Tokyo"]
    results = [m for m in messages if isinstance(m, ToolResultMessage)]
    assert [r.tool_call_id for r in results] == ["call_p", "call_t"]
