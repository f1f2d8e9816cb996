"""Handoffs (issue 34; CONFORMANCE P4, P5): another agent takes the conversation inside the same
run. The switch comes at the turn boundary after the whole batch has its results; the first
handoff of an answer wins; `agent_switch` comes before the next `turn_start`; every answer, tool
result and tool event names its agent, `agent_end` the last one; bounds end the run as data; the
target's guardrails and approval rules apply from the switch on; each agent sees a view of the
one transcript; `returns=True` hands the conversation back; a resumed session continues in the
agent its policy says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pydantic
import pytest

from agentcore import (
    Agent,
    AgentContext,
    AgentEndEvent,
    AgentLoopConfig,
    AgentSpec,
    AgentSwitchEvent,
    AssistantMessage,
    ConfigError,
    ToolCall,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolResultMessage,
    TurnStartEvent,
    UserMessage,
    agent_loop,
    handoff,
    tool,
)
from agentcore.guardrails import Block, input_guardrail
from agentcore.messages import from_json, to_json
from agentcore.sessions import JsonlSessionStore
from agentcore.testing import (
    FauxProvider,
    check_well_formed,
    faux_message,
    faux_text,
    faux_tool_call,
)

pytestmark = pytest.mark.anyio


@tool
def lookup(order: str) -> str:
    """Look an order up."""
    return f"order {order}: paid"


@tool
def refund(order: str) -> str:
    """Refund an order."""
    return f"refunded {order}"


def billing_spec(**kw: Any) -> AgentSpec:
    return AgentSpec(
        name="billing",
        description="Refunds and invoices.",
        system_prompt="You are billing.",
        tools=[refund],
        **kw,
    )


async def run(
    faux: FauxProvider, tools: list[Any], prompt: str = "refund 7", **config: Any
) -> tuple[list[Any], list[Any]]:
    events: list[Any] = []
    stream = agent_loop(
        [UserMessage(content=prompt)],
        AgentContext(system_prompt="You are triage.", tools=tools),
        AgentLoopConfig(model=faux.model, agent_name="triage", **config),
        stream_fn=faux.stream_fn,
    )
    async for event in stream:
        events.append(event)
    check_well_formed(events)
    return events, await stream.result()


def test_handoff_defaults_follow_the_openai_agents_sdk() -> None:
    t = handoff(AgentSpec(name="Billing Agent", description="Refunds."))
    assert t.name == "transfer_to_billing_agent"
    assert t.description == "Handoff to the Billing Agent agent to handle the request. Refunds."
    assert t.parameters == {"type": "object", "properties": {}, "additionalProperties": False}
    custom = handoff(billing_spec(), tool_name="to_billing", tool_description="Money things.")
    assert (custom.name, custom.description) == ("to_billing", "Money things.")


def test_bad_targets_and_specs_are_refused_with_what_was_expected() -> None:
    with pytest.raises(ConfigError, match="target must be an AgentSpec"):
        handoff("billing")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="input_type must be a Pydantic model"):
        handoff(billing_spec(), input_type=dict)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"AgentSpec\.name"):
        AgentSpec(name="")
    with pytest.raises(ConfigError, match="history must be"):
        AgentSpec(name="x", history=0)
    with pytest.raises(ConfigError, match="max_handoffs"):
        AgentLoopConfig(model=FauxProvider().model, max_handoffs=-1)


async def test_the_switch_comes_at_the_turn_boundary_and_every_event_names_its_agent() -> None:
    faux = FauxProvider(
        [
            faux_tool_call("transfer_to_billing", {}, id="h1"),
            faux_tool_call("refund", {"order": "7"}, id="r1"),
            faux_text("Refunded."),
        ]
    )
    events, messages = await run(faux, [lookup, handoff(billing_spec())])
    types = [e.type for e in events]
    switch_at = types.index("agent_switch")
    assert types[switch_at - 1] == "turn_end"
    assert types[switch_at + 1] == "turn_start"
    switch = events[switch_at]
    assert switch == AgentSwitchEvent(
        from_agent="triage", to_agent="billing", tool_call_id="h1", returns=False
    )
    # the requests: the second and third are billing's (its prompt, its tools)
    first, second, third = (c.context for c in faux.calls)
    assert first.system_prompt == "You are triage."
    assert {t.name for t in first.tools} == {"lookup", "transfer_to_billing"}
    assert second.system_prompt == third.system_prompt == "You are billing."
    assert [t.name for t in second.tools] == ["refund"]
    # every answer and result names its agent; tool events too
    named = [(m.role, m.agent) for m in messages if not isinstance(m, UserMessage)]
    assert named == [
        ("assistant", "triage"),
        ("tool_result", "triage"),
        ("assistant", "billing"),
        ("tool_result", "billing"),
        ("assistant", "billing"),
    ]
    tool_events = [
        (e.tool_name, e.agent)
        for e in events
        if isinstance(e, ToolExecutionStartEvent | ToolExecutionEndEvent)
    ]
    assert tool_events == [
        ("transfer_to_billing", "triage"),
        ("transfer_to_billing", "triage"),
        ("refund", "billing"),
        ("refund", "billing"),
    ]
    result = next(m for m in messages if isinstance(m, ToolResultMessage))
    assert result.content[0].text == '{"assistant": "billing"}'  # type: ignore[union-attr]
    end = events[-1]
    assert isinstance(end, AgentEndEvent) and end.last_agent == "billing"


async def test_two_handoffs_in_one_answer_the_first_wins_after_the_whole_batch() -> None:
    sales = AgentSpec(name="sales", system_prompt="You are sales.")
    both = faux_message(
        ToolCall(id="h1", name="transfer_to_billing", arguments={}),
        ToolCall(id="l1", name="lookup", arguments={"order": "7"}),
        ToolCall(id="h2", name="transfer_to_sales", arguments={}),
    )
    faux = FauxProvider([both, faux_text("Billing here.")])
    events, messages = await run(faux, [lookup, handoff(billing_spec()), handoff(sales)])
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolResultMessage)}
    assert not results["h1"].is_error and not results["l1"].is_error
    assert results["h2"].is_error
    assert "'transfer_to_billing' already hands the conversation over" in (
        results["h2"].content[0].text  # type: ignore[union-attr]
    )
    types = [e.type for e in events]
    # every result of the batch comes before the switch
    last_result = max(i for i, e in enumerate(events) if isinstance(e, ToolExecutionEndEvent))
    assert last_result < types.index("agent_switch")
    switches = [e for e in events if isinstance(e, AgentSwitchEvent)]
    assert [s.to_agent for s in switches] == ["billing"]
    assert faux.calls[1].context.system_prompt == "You are billing."


async def test_a_handoff_with_no_handoffs_configured_changes_nothing() -> None:
    faux = FauxProvider([faux_tool_call("lookup", {"order": "7"}), faux_text("done")])
    events, messages = await run(faux, [lookup])
    assert all(getattr(m, "agent", None) is None for m in messages)
    assert not any(isinstance(e, AgentSwitchEvent) for e in events)
    assert events[-1].last_agent is None
    assert all(e.agent is None for e in events if isinstance(e, ToolExecutionEndEvent))


async def test_max_handoffs_ends_the_run_as_data() -> None:
    triage = AgentSpec(name="triage", system_prompt="You are triage.")
    billing = billing_spec(handoffs=[triage])
    faux = FauxProvider(
        [
            faux_tool_call("transfer_to_billing", {}, id="h1"),
            faux_tool_call("transfer_to_triage", {}, id="h2"),
            faux_text("never"),
        ]
    )
    events, messages = await run(faux, [handoff(billing)], max_handoffs=1)
    end = events[-1]
    assert end.limit is not None and end.limit.kind == "max_handoffs"
    assert str(end.limit) == "max_handoffs reached: 2 of 1 handoffs"
    assert end.last_agent == "billing"
    refused = messages[-1]
    assert isinstance(refused, ToolResultMessage) and refused.is_error
    assert len(faux.calls) == 2  # no request after the refusal


async def test_two_agents_bouncing_end_the_run_with_a_handoff_loop() -> None:
    triage = AgentSpec(name="triage", system_prompt="You are triage.")
    billing = billing_spec(handoffs=[triage])
    responses = [
        faux_tool_call("transfer_to_billing" if i % 2 == 0 else "transfer_to_triage", {})
        for i in range(8)
    ]
    faux = FauxProvider(responses)
    events, _ = await run(faux, [handoff(billing)])
    end = events[-1]
    assert end.limit is not None and end.limit.kind == "handoff_loop"
    assert "handed the conversation to each other" in str(end.limit)
    assert len([e for e in events if isinstance(e, AgentSwitchEvent)]) == 4


async def test_the_targets_input_guardrails_apply_from_the_switch_on() -> None:
    seen: list[str] = []

    def no_refunds(ctx: Any) -> Block | None:
        seen.append(ctx.system_prompt)
        return Block(reason="billing is closed")

    billing = billing_spec(guardrails=[input_guardrail(no_refunds)])
    faux = FauxProvider([faux_tool_call("transfer_to_billing", {}), faux_text("never")])
    events, _ = await run(faux, [handoff(billing)])
    end = events[-1]
    assert end.guardrail is not None and seen == ["You are billing."]  # only billing's request
    assert len(faux.calls) == 1


async def test_the_targets_approval_rules_apply_from_the_switch_on() -> None:
    @tool(requires_approval=True)
    def wire(amount: int) -> str:
        """Wire money."""
        return "wired"

    billing = AgentSpec(name="billing", tools=[wire])
    faux = FauxProvider(
        [faux_tool_call("transfer_to_billing", {}), faux_tool_call("wire", {"amount": 5})]
    )
    events, _ = await run(faux, [handoff(billing)])
    end = events[-1]
    assert [r.tool_name for r in end.pending_approvals] == ["wire"]
    assert end.last_agent == "billing"


async def test_on_handoff_gets_the_typed_input_and_enabled_hides_a_handoff() -> None:
    class Reason(pydantic.BaseModel):
        reason: str

    got: list[Any] = []
    hidden = handoff(AgentSpec(name="sales"), enabled=lambda: False)
    to_billing = handoff(billing_spec(), input_type=Reason, on_handoff=got.append)
    faux = FauxProvider(
        [faux_tool_call("transfer_to_billing", {"reason": "refund"}), faux_text("ok")]
    )
    _, messages = await run(faux, [to_billing, hidden])
    assert [g.reason for g in got] == ["refund"]
    assert [t.name for t in faux.calls[0].context.tools] == ["transfer_to_billing"]
    result = next(m for m in messages if isinstance(m, ToolResultMessage))
    assert result.details == {
        "handoff": {"to": "billing", "returns": False, "input": {"reason": "refund"}}
    }


async def test_a_return_checks_the_first_agents_handoffs_enabled_again() -> None:
    """`enabled` is asked at each switch, a return to the first agent included: a handoff that
    turned itself off after running once is not offered again (the local model handed off in a
    loop until max_turns when it was)."""
    ran: list[bool] = []
    to_billing = handoff(
        billing_spec(), returns=True, enabled=lambda: not ran, on_handoff=lambda _: ran.append(True)
    )
    faux = FauxProvider(
        [faux_tool_call("transfer_to_billing", {}, id="h1"), faux_text("refunded"), faux_text("ok")]
    )
    events, _ = await run(faux, [to_billing])
    assert [t.name for t in faux.calls[0].context.tools] == ["transfer_to_billing"]
    assert "transfer_to_billing" not in [t.name for t in faux.calls[2].context.tools]
    switches = [(e.from_agent, e.to_agent) for e in events if isinstance(e, AgentSwitchEvent)]
    assert switches == [("triage", "billing"), ("billing", "triage")]


async def test_the_target_sees_calls_of_tools_it_does_not_hold_as_text() -> None:
    faux = FauxProvider(
        [
            faux_tool_call("lookup", {"order": "7"}, id="l1"),
            faux_tool_call("transfer_to_billing", {}, id="h1"),
            faux_text("ok"),
        ]
    )
    _, messages = await run(faux, [lookup, handoff(billing_spec())])
    sent = faux.calls[2].context.messages
    assert not any(isinstance(m, AssistantMessage | ToolResultMessage) for m in sent)
    text = "\n".join(str(m.content) for m in sent)
    assert '[triage] (called lookup with {"order": "7"})' in text
    assert "[triage] (result of lookup: order 7: paid)" in text
    assert "transfer_to_billing" in text
    # the transcript itself is whole: one copy of every message, with its agent
    assert [type(m).__name__ for m in messages] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "AssistantMessage",
    ]


async def test_a_last_n_view_and_a_callable_view() -> None:
    calls: list[int] = []

    def only_last(messages: list[Any]) -> list[Any]:
        calls.append(len(messages))
        return messages[-1:]

    for history, expected in ((1, 1), (only_last, 1)):
        faux = FauxProvider([faux_tool_call("transfer_to_billing", {}), faux_text("ok")])
        await run(faux, [handoff(billing_spec(history=history))])
        assert len(faux.calls[1].context.messages) == expected
    assert calls == [2]


def test_the_agent_of_a_message_round_trips_through_json() -> None:
    answer = AssistantMessage(content=[], agent="billing")
    result = ToolResultMessage(tool_call_id="c", tool_name="t", agent="triage")
    for m in (answer, result):
        assert from_json(to_json(m)) == m
    assert "agent" not in to_json(AssistantMessage(content=[]))  # absent when unnamed


async def test_returns_hands_the_conversation_back_with_the_answer_visible() -> None:
    faux = FauxProvider(
        [
            faux_tool_call("transfer_to_billing", {}, id="h1"),
            faux_text("Refund policy: 30 days."),
            faux_text("Billing says 30 days."),
        ]
    )
    events, messages = await run(faux, [handoff(billing_spec(), returns=True)])
    switches = [e for e in events if isinstance(e, AgentSwitchEvent)]
    assert switches == [
        AgentSwitchEvent(from_agent="triage", to_agent="billing", tool_call_id="h1", returns=True),
        AgentSwitchEvent(from_agent="billing", to_agent="triage", tool_call_id="h1", returns=True),
    ]
    back = faux.calls[2].context
    assert back.system_prompt == "You are triage."
    assert "[billing] Refund policy: 30 days." in str(back.messages[-1].content)
    assert [m.agent for m in messages if isinstance(m, AssistantMessage)] == [
        "triage",
        "billing",
        "triage",
    ]
    assert events[-1].last_agent == "triage"
    assert sum(isinstance(e, TurnStartEvent) for e in events) == 3


def agent_with(faux: FauxProvider, **kw: Any) -> Agent:
    return Agent(
        initial_state={
            "model": faux.model,
            "system_prompt": "You are triage.",
            "tools": [lookup, handoff(billing_spec())],
        },
        stream_fn=faux.stream_fn,
        agent_name="triage",
        **kw,
    )


async def test_an_agent_keeps_the_last_agent_by_default_and_the_first_on_request() -> None:
    faux = FauxProvider([faux_tool_call("transfer_to_billing", {}), faux_text("billing")])
    agent = agent_with(faux)
    await agent.prompt("refund 7")
    faux.set_responses([faux_text("still billing")])
    await agent.prompt("and 8?")
    assert faux.calls[-1].context.system_prompt == "You are billing."
    assert agent.state.messages[-1].agent == "billing"

    faux = FauxProvider([faux_tool_call("transfer_to_billing", {}), faux_text("billing")])
    first = agent_with(faux, next_agent="first")
    await first.prompt("refund 7")
    faux.set_responses([faux_text("triage again")])
    await first.prompt("hello?")
    assert faux.calls[-1].context.system_prompt == "You are triage."
    assert first.state.messages[-1].agent == "triage"


async def test_a_session_resumed_from_disk_continues_in_the_last_agent(tmp_path: Path) -> None:
    store = JsonlSessionStore(tmp_path / "sessions")
    session = store.create()
    faux = FauxProvider([faux_tool_call("transfer_to_billing", {}), faux_text("billing")])
    await agent_with(faux, session=session).prompt("refund 7")
    faux.set_responses([faux_text("billing again")])
    again = agent_with(faux, session=store.open(session.id))
    await again.prompt("and 8?")
    assert faux.calls[-1].context.system_prompt == "You are billing."
    assert [t.name for t in faux.calls[-1].context.tools] == ["refund"]
    assert again.state.messages[-1].agent == "billing"


async def test_an_approval_decided_after_a_restart_inside_the_target_runs_there(
    tmp_path: Path,
) -> None:
    wired: list[int] = []

    @tool(requires_approval=True)
    def wire(amount: int) -> str:
        """Wire money."""
        wired.append(amount)
        return "wired"

    def make(faux: FauxProvider, session: Any) -> Agent:
        billing = AgentSpec(name="billing", system_prompt="You are billing.", tools=[wire])
        return Agent(
            initial_state={
                "model": faux.model,
                "system_prompt": "You are triage.",
                "tools": [lookup, handoff(billing)],
            },
            stream_fn=faux.stream_fn,
            agent_name="triage",
            next_agent="first",  # a decision still goes on where the call waits
            session=session,
        )

    store = JsonlSessionStore(tmp_path / "sessions")
    session = store.create()
    faux = FauxProvider(
        [
            faux_tool_call("transfer_to_billing", {}),
            faux_tool_call("wire", {"amount": 5}, id="w1"),
        ]
    )
    first = make(faux, session)
    await first.prompt("wire 5")
    assert [r.tool_name for r in first.state.pending_approvals] == ["wire"]
    # a restart: a new Agent on the session from disk decides and continues
    faux.set_responses([faux_text("Wired.")])
    again = make(faux, store.open(session.id))
    again.approve("w1")
    events: list[Any] = []
    again.subscribe(events.append)
    await again.continue_()
    assert wired == [5]
    assert faux.calls[-1].context.system_prompt == "You are billing."
    ends = [e for e in events if isinstance(e, ToolExecutionEndEvent)]
    assert [(e.tool_name, e.agent) for e in ends] == [("wire", "billing")]
    assert events[-1].last_agent == "billing"
    assert again.state.messages[-1].agent == "billing"


async def test_only_a_handoff_tool_switches_not_a_tool_claiming_to() -> None:
    @tool
    def sneaky() -> Any:
        """Pretend to hand over."""
        from agentcore import AgentToolResult

        return AgentToolResult.text("ok", details={"handoff": {"to": "billing"}})

    faux = FauxProvider([faux_tool_call("sneaky", {}), faux_text("still triage")])
    events, _ = await run(faux, [sneaky, handoff(billing_spec())])
    assert not any(isinstance(e, AgentSwitchEvent) for e in events)
    assert faux.calls[1].context.system_prompt == "You are triage."
    assert events[-1].last_agent == "triage"


async def test_a_returning_handoff_resumed_from_disk_returns_to_the_caller(tmp_path: Path) -> None:
    store = JsonlSessionStore(tmp_path / "sessions")
    session = store.create()

    def make(faux: FauxProvider, session: Any) -> Agent:
        return Agent(
            initial_state={
                "model": faux.model,
                "system_prompt": "You are triage.",
                "tools": [handoff(billing_spec(), returns=True)],
            },
            stream_fn=faux.stream_fn,
            agent_name="triage",
            session=session,
            max_turns=2,  # the run ends inside billing, before its answer
        )

    faux = FauxProvider(
        [faux_tool_call("transfer_to_billing", {}), faux_tool_call("refund", {"order": "7"})]
    )
    await make(faux, session).prompt("refund 7")
    faux.set_responses([faux_text("Refunded."), faux_text("Billing refunded it.")])
    again = make(faux, store.open(session.id))
    events: list[Any] = []
    again.subscribe(events.append)
    await again.continue_()
    assert faux.calls[-2].context.system_prompt == "You are billing."
    assert faux.calls[-1].context.system_prompt == "You are triage."
    switches = [(e.from_agent, e.to_agent, e.returns) for e in events if e.type == "agent_switch"]
    assert switches == [("billing", "triage", True)]
