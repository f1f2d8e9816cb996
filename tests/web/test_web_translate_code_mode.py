"""The AG-UI mapping of the calls a code-mode snippet makes (`agentcore.codemode`): each nested
call becomes a tool call of the snippet's message (`TOOL_CALL_START` with `parentMessageId` and
`metadata.agentcore.parentToolCallId`, its arguments, `TOOL_CALL_END`, `TOOL_CALL_RESULT`), in a
real `Agent` run on the real Monty sandbox and the faux provider; every event is validated
against the `ag-ui-protocol` models."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from pydantic import TypeAdapter

from agentcore import tool
from agentcore.agent import Agent
from agentcore.testing import FauxProvider, faux_text, faux_tool_call

pytest.importorskip("pydantic_monty")
ag_ui = pytest.importorskip("ag_ui.core")
from agentcore.codemode import code_mode  # noqa: E402
from agentcore.web import AgUiTranslator  # noqa: E402

EVENT: TypeAdapter[Any] = TypeAdapter(ag_ui.Event)


@tool
async def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: the city's name.
    """
    if city == "Atlantis":
        raise ValueError("no such city")
    return f"sunny in {city}"


def _run(code: str) -> list[Any]:
    faux = FauxProvider(
        [faux_tool_call("run_code", {"code": code}, id="call_c"), faux_text("Warmest: Rome.")]
    )
    agent = Agent(initial_state={"model": faux.model, "tools": [code_mode([get_weather])]})
    translator = AgUiTranslator(thread_id="t")
    out: list[Any] = []
    agent.subscribe(lambda event: out.extend(translator.translate(event)))
    translator.begin(0, run_id="r1")
    anyio.run(agent.prompt, "weather?")
    for event in out:  # each one is a valid AG-UI event, also after a JSON round trip
        EVENT.validate_json(event.model_dump_json(by_alias=True))
    return out


def _calls(events: list[Any]) -> list[tuple[str, str]]:
    """(type, tool call id) of the tool call events, in order (streamed arguments as one)."""
    kinds = ("TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT")
    out: list[tuple[str, str]] = []
    for e in events:
        item = (e.type.value, e.tool_call_id) if e.type.value in kinds else None
        if item is not None and (not out or out[-1] != item or item[0] != "TOOL_CALL_ARGS"):
            out.append(item)
    return out


def test_a_snippets_calls_are_tool_calls_of_its_message() -> None:
    events = _run("a = await get_weather(city='Paris')\nb = await get_weather(city='Rome')\nb")
    assert _calls(events) == [
        ("TOOL_CALL_START", "call_c"),
        ("TOOL_CALL_ARGS", "call_c"),
        ("TOOL_CALL_END", "call_c"),
        *[
            (kind, call)
            for call in ("call_c.1", "call_c.2")
            for kind in ("TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT")
        ],
        ("TOOL_CALL_RESULT", "call_c"),  # the snippet's own result comes after its calls'
    ]
    starts = {e.tool_call_id: e for e in events if e.type.value == "TOOL_CALL_START"}
    snippet_message = starts["call_c"].parent_message_id
    assert snippet_message == "m1"
    for call, city in (("call_c.1", "Paris"), ("call_c.2", "Rome")):
        start = starts[call]
        assert start.tool_call_name == "get_weather"
        assert start.parent_message_id == snippet_message
        assert start.metadata == {"agentcore": {"parentToolCallId": "call_c"}}
        (args,) = [e for e in events if e.type.value == "TOOL_CALL_ARGS" and e.tool_call_id == call]
        assert json.loads(args.delta) == {"city": city}
        (result,) = [
            e for e in events if e.type.value == "TOOL_CALL_RESULT" and e.tool_call_id == call
        ]
        assert result.content == f"sunny in {city}"
        assert result.message_id == f"{call}.result"  # no transcript message id (m0, m1, ...)
        assert result.metadata == {
            "agentcore": {"isError": False, "toolName": "get_weather", "parentToolCallId": "call_c"}
        }
    wire = json.loads(starts["call_c.1"].model_dump_json(by_alias=True))
    assert wire["parentMessageId"] == "m1"
    assert wire["metadata"] == {"agentcore": {"parentToolCallId": "call_c"}}


def test_the_custom_events_of_a_nested_call_name_its_parent() -> None:
    events = _run("await get_weather(city='Oslo')")
    custom = [(e.name, e.value) for e in events if e.type.value == "CUSTOM"]
    executions = [
        (name.rsplit(".", 1)[1], value["toolCallId"], value.get("parentToolCallId"))
        for name, value in custom
        if name.startswith("agentcore.tool_execution_")
    ]
    assert executions == [
        ("tool_execution_start", "call_c", None),
        ("tool_execution_start", "call_c.1", "call_c"),
        ("tool_execution_end", "call_c.1", "call_c"),
        ("tool_execution_end", "call_c", None),
    ]


def test_a_failed_nested_call_is_an_error_result() -> None:
    events = _run(
        "try:\n r = await get_weather(city='Atlantis')\nexcept Exception as e:\n r = str(e)\nr"
    )
    (result,) = [
        e for e in events if e.type.value == "TOOL_CALL_RESULT" and e.tool_call_id == "call_c.1"
    ]
    assert result.metadata["agentcore"]["isError"] is True
    assert "no such city" in result.content
