"""The AG-UI mapping of runs the HTTP tests do not reach: thinking, failed and stopped answers,
answers that never streamed, pending approvals, tool progress. Each run is a real `Agent` run on
the faux provider; every event is validated against the `ag-ui-protocol` models."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from pydantic import TypeAdapter

from agentcore import (
    AgentEndEvent,
    AgentEvent,
    AgentTool,
    AgentToolResult,
    AssistantMessage,
    MessageEndEvent,
    MessageStartEvent,
    TextContent,
    TurnEndEvent,
    TurnStartEvent,
)
from agentcore.agent import Agent
from agentcore.testing import FauxProvider, faux_error, faux_text, faux_thinking, faux_tool_call

ag_ui = pytest.importorskip("ag_ui.core")
from agentcore.web import AgUiTranslator  # noqa: E402

EVENT: TypeAdapter[Any] = TypeAdapter(ag_ui.Event)


def _run(faux: FauxProvider, prompt: str = "hi", **state: Any) -> list[Any]:
    agent = Agent(initial_state={"model": faux.model, **state})
    translator = AgUiTranslator(thread_id="t")
    out: list[Any] = []
    agent.subscribe(lambda event: out.extend(translator.translate(event)))
    translator.begin(0, run_id="r1")
    anyio.run(agent.prompt, prompt)
    for event in out:  # each one is a valid AG-UI event, also after a JSON round trip
        EVENT.validate_json(event.model_dump_json(by_alias=True))
    return out


def _types(events: list[Any]) -> list[str]:
    return [
        e.type.value
        for e in events
        if e.type.value not in ("CUSTOM", "STEP_STARTED", "STEP_FINISHED")
    ]


def test_thinking_streams_as_reasoning_events() -> None:
    faux = FauxProvider([faux_thinking("Let me see.", "Yes.")])
    events = _run(faux)
    assert _types(events)[4:] == [
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_END",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    reasoning = [e for e in events if e.type.value == "REASONING_MESSAGE_CONTENT"]
    assert reasoning[0].message_id == "m1.r0" and reasoning[0].delta == "Let me see."


def test_a_failed_answer_ends_the_run_with_run_error() -> None:
    faux = FauxProvider([faux_error("the server is down")])
    events = _run(faux)
    assert events[-1].type.value == "RUN_ERROR"
    assert "the server is down" in events[-1].message
    assert not any(e.type.value == "RUN_FINISHED" for e in events)
    end = next(e for e in events if e.type.value == "CUSTOM" and e.name == "agentcore.message_end")
    assert end.value["stopReason"] == "error"


def test_a_stopped_answer_finishes_cancelled_with_its_blocks_closed() -> None:
    faux = FauxProvider([faux_text("word " * 400)], tokens_per_second=500)
    agent = Agent(initial_state={"model": faux.model})
    translator = AgUiTranslator(thread_id="t")
    out: list[Any] = []

    def listen(event: AgentEvent) -> None:
        out.extend(translator.translate(event))
        if event.type == "message_update" and len(out) > 8:
            agent.abort()

    agent.subscribe(listen)
    translator.begin(0)
    anyio.run(agent.prompt, "go")
    types = _types(out)
    assert types[-2:] == ["TEXT_MESSAGE_END", "RUN_FINISHED"]  # closed although cut short
    assert out[-1].outcome.type == "cancelled"


def test_an_answer_that_never_streamed_is_sent_whole() -> None:
    """A stream function that gives only its final message (no updates) still yields every
    block: text, and each tool call with its arguments."""
    translator = AgUiTranslator(thread_id="t")
    translator.begin(3)
    message = AssistantMessage(
        content=[TextContent(text="Hi."), *faux_tool_call("add", {"a": 1}).content],
        stop_reason="tool_use",
    )
    events: list[Any] = []
    for event in (
        TurnStartEvent(),
        MessageStartEvent(message=message),
        MessageEndEvent(message=message),
        TurnEndEvent(message=message, tool_results=[]),
    ):
        events.extend(translator.translate(event))
    assert _types(events) == [
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
    ]
    assert events[1].message_id == "m3" and events[2].delta == "Hi."
    assert events[5].delta == '{"a": 1}' and events[4].parent_message_id == "m3"


def test_tool_progress_is_a_custom_event() -> None:
    async def slow(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> AgentToolResult:
        on_update(AgentToolResult.text("half way"))
        return AgentToolResult.text("done")

    work = AgentTool(
        name="work",
        description="Work.",
        parameters={"type": "object", "properties": {}},
        execute=slow,
    )
    faux = FauxProvider([faux_tool_call("work", {}), faux_text("ok")])
    events = _run(faux, tools=[work])
    custom = [(e.name, e.value) for e in events if e.type.value == "CUSTOM"]
    names = [n for n, _ in custom]
    assert (
        names.index("agentcore.tool_execution_start")
        < names.index("agentcore.tool_execution_update")
        < names.index("agentcore.tool_execution_end")
    )
    update = dict(custom)["agentcore.tool_execution_update"]
    assert update["text"] == "half way" and update["toolName"] == "work"


@dataclass(frozen=True)
class _Pending:
    tool_call_id: str
    tool_name: str
    arguments: dict[str, Any]
    reason: str | None


def test_pending_approvals_finish_the_run_as_an_interrupt() -> None:
    translator = AgUiTranslator(thread_id="t")
    translator.begin(0)
    pending = (_Pending("call_1", "rm", {"path": "/"}, "deletes files"),)
    events = translator.translate(AgentEndEvent(messages=[], pending_approvals=pending))
    finished = events[-1]
    EVENT.validate_json(finished.model_dump_json(by_alias=True))
    assert finished.outcome.type == "interrupt"
    (interrupt,) = finished.outcome.interrupts
    assert interrupt.tool_call_id == "call_1" and interrupt.reason == "tool_approval"
    assert interrupt.message == "deletes files"


def test_application_messages_become_custom_events() -> None:
    @dataclass(frozen=True)
    class Note:
        text: str
        role: str = "note"

    translator = AgUiTranslator(thread_id="t")
    translator.begin(5)
    (event,) = translator.translate(MessageEndEvent(message=Note(text="x")))
    assert event.name == "agentcore.note" and event.value["messageId"] == "m5"
    assert translator.index == 6


def test_a_handoff_is_a_step_of_its_own_between_two_turns() -> None:
    from agentcore import AgentSpec, handoff

    billing = AgentSpec(name="billing", system_prompt="You are billing.")
    faux = FauxProvider([faux_tool_call("transfer_to_billing", {}, id="h1"), faux_text("ok")])
    agent = Agent(
        initial_state={"model": faux.model, "tools": [handoff(billing)]},
        stream_fn=faux.stream_fn,
        agent_name="triage",
    )
    translator = AgUiTranslator(thread_id="t")
    out: list[Any] = []
    agent.subscribe(lambda event: out.extend(translator.translate(event)))
    translator.begin(0, run_id="r1")
    anyio.run(agent.prompt, "refund")
    for event in out:
        EVENT.validate_json(event.model_dump_json(by_alias=True))
    steps = [(e.type.value, e.step_name) for e in out if e.type.value.startswith("STEP_")]
    assert steps == [
        ("STEP_STARTED", "turn 1"),
        ("STEP_FINISHED", "turn 1"),
        ("STEP_STARTED", "handoff triage -> billing"),
        ("STEP_FINISHED", "handoff triage -> billing"),
        ("STEP_STARTED", "turn 2"),
        ("STEP_FINISHED", "turn 2"),
    ]
    switch = next(e for e in out if getattr(e, "name", "") == "agentcore.agent_switch")
    assert switch.value == {
        "fromAgent": "triage",
        "toAgent": "billing",
        "toolCallId": "h1",
        "returns": False,
    }


def test_a_memory_update_after_the_run_is_a_custom_event() -> None:
    import json

    from agentcore.memory import Extractor, InMemoryMemoryStore, Memory, MemoryScope

    proposal = {"text": "Prefers French", "kind": "preference", "source": ["#0"]}
    cheap = FauxProvider([faux_text(json.dumps({"memories": [proposal]}))])
    faux = FauxProvider([faux_text("D'accord.")])
    alice = MemoryScope(user="alice")
    memory = Memory(InMemoryMemoryStore(), alice, extract=Extractor(cheap.model))
    agent = Agent(initial_state={"model": faux.model}, memory=memory)
    translator = AgUiTranslator(thread_id="t")
    out: list[Any] = []
    agent.subscribe(lambda event: out.extend(translator.translate(event)))
    translator.begin(0, run_id="r1")
    anyio.run(agent.prompt, "Answer in French from now on.")
    for event in out:
        EVENT.validate_json(event.model_dump_json(by_alias=True))
    types = [getattr(e, "name", None) or e.type.value for e in out]
    assert types[-2:] == ["RUN_FINISHED", "agentcore.memory_update"]  # after the run
    value = out[-1].value
    assert value["extractionId"].startswith("ext_") and value["error"] is None
    (record,) = value["records"]
    assert record["text"] == "Prefers French" and record["message_ids"] == ["#0"]
    assert record["origin"] == "extractor" and value["rejected"] == []
