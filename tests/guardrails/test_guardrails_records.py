"""Where a trip is recorded besides the events: the run's span (OpenTelemetry attributes and
an event), the trace tree, and a session (the withheld answer names the guardrail)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentcore import (
    Agent,
    AgentContext,
    AgentLoopConfig,
    UserMessage,
    run_agent_loop,
    set_instrumentation,
)
from agentcore.guardrails import Block, input_guardrail, output_guardrail
from agentcore.sessions import JsonlSessionStore
from agentcore.testing import FauxProvider, faux_text
from support.tracing import Traces, make_traces

pytestmark = pytest.mark.anyio


@input_guardrail
def no_password(ctx: Any) -> Any:
    return Block("asks for a password") if "password" in ctx.text else None


@pytest.fixture
def traces() -> Iterator[Traces]:
    yield make_traces()
    set_instrumentation(None)


async def test_the_run_span_records_the_trip(traces: Traces) -> None:
    faux = FauxProvider([faux_text("never")])
    config = AgentLoopConfig(model=faux.model, guardrails=[no_password])
    await run_agent_loop([UserMessage(content="password?")], AgentContext(), config, lambda e: None)
    span = traces.one("invoke_agent")
    attributes = dict(span.attributes or {})
    assert attributes["agentcore.guardrail"] == "no_password"
    assert attributes["agentcore.guardrail.kind"] == "input"
    assert attributes["error.type"] == "error"
    (event,) = [e for e in span.events if e.name == "agentcore.guardrail_tripped"]
    assert dict(event.attributes or {})["agentcore.guardrail.reason"] == "asks for a password"


async def test_a_session_stores_the_withheld_answer_naming_the_guardrail(tmp_path: Path) -> None:
    @output_guardrail
    def no_digits(ctx: Any) -> Any:
        return Block("contains digits") if any(c.isdigit() for c in ctx.text) else None

    store = JsonlSessionStore(tmp_path)
    try:
        session = store.create()
        faux = FauxProvider([faux_text("the code is 1234")])
        agent = Agent(initial_state={"model": faux.model}, session=session, guardrails=[no_digits])
        await agent.prompt("what is the code?")
        assert agent.state.guardrail is not None
        last = store.load(session.id, repair=False).messages[-1]
        assert last.role == "assistant" and last.content == []
        assert (
            last.error_message == "output guardrail 'no_digits' blocked the answer: contains digits"
        )
        assert "1234" not in store.path(session.id).read_text()  # never written
    finally:
        store.close()


def test_agent_end_keeps_its_trip_across_the_durable_event_codec() -> None:
    pytest.importorskip("temporalio")
    from agentcore.durable import event_from_json, event_to_json
    from agentcore.events import AgentEndEvent
    from agentcore.guardrails import GuardrailTrip

    trip = GuardrailTrip(guardrail="pii", kind="output", reason="r", failed=True)
    back = event_from_json(event_to_json(AgentEndEvent(messages=[], guardrail=trip)))
    assert isinstance(back, AgentEndEvent) and back.guardrail == trip
    plain = event_from_json(event_to_json(AgentEndEvent(messages=[])))
    assert isinstance(plain, AgentEndEvent) and plain.guardrail is None
