"""Approvals on the Agent: `state.pending_approvals`, `approve`, `deny`, `continue_`, `prompt`
while calls wait, and sessions (the repair of a resumed transcript keeps waiting calls)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentcore import (
    Agent,
    AgentBusyError,
    AgentEvent,
    AgentTool,
    AgentToolResult,
    ApprovalDecision,
    ApprovalRequest,
    ApprovedCallStarted,
    AssistantMessage,
    ConfigError,
    MessageFormatError,
    TextContent,
    ToolResultMessage,
    UserMessage,
)
from agentcore.approvals import INTERRUPTED_APPROVED_CALL, NEW_MESSAGE_REASON
from agentcore.messages import ToolCall
from agentcore.sessions import (
    INTERRUPTED_TOOL_RESULT,
    JsonlSessionStore,
    SessionStore,
    SqliteSessionStore,
    repair_transcript,
)
from agentcore.testing import FauxProvider, check_well_formed, faux_message, faux_text
from support import delete_and_look, texts
from support.postgres import STORE_KINDS, open_postgres_store

pytestmark = pytest.mark.anyio


def three_calls() -> AssistantMessage:
    return faux_message(
        ToolCall(id="a", name="delete", arguments={"path": "x"}),
        ToolCall(id="b", name="look", arguments={"path": "y"}),
        ToolCall(id="c", name="delete", arguments={"path": "z"}),
    )


class Setup:
    def __init__(self, responses: list[Any] | None = None) -> None:
        self.ran: list[tuple[str, str]] = []
        self.tools = list(delete_and_look(self.ran))
        self.faux = FauxProvider(responses if responses is not None else [three_calls()])

    def agent(self, **kwargs: Any) -> Agent:
        return Agent(initial_state={"model": self.faux.model, "tools": self.tools}, **kwargs)


def roles(agent: Agent) -> list[str]:
    return [m.role for m in agent.state.messages]


async def test_a_run_stops_for_approval_and_the_state_lists_the_waiting_calls() -> None:
    setup = Setup()
    agent = setup.agent()
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    added = await agent.prompt("go")
    check_well_formed(events)
    assert roles(agent)[-2:] == ["approval_request", "approval_request"]
    waiting = agent.state.pending_approvals
    assert [r.tool_call_id for r in waiting] == ["a", "c"]
    assert events[-1].pending_approvals == tuple(waiting)  # type: ignore[union-attr]
    assert added[-2:] == waiting
    assert setup.ran == [("look", "y")]
    assert not agent.state.is_streaming and agent.state.pending_tool_calls == frozenset()


async def test_approve_and_deny_record_at_once_then_continue_carries_them_out() -> None:
    setup = Setup([three_calls(), faux_text("done")])
    agent = setup.agent()
    await agent.prompt("go")
    agent.approve("a")
    assert [r.tool_call_id for r in agent.state.pending_approvals] == ["c"]
    assert isinstance(agent.state.messages[-1], ApprovalDecision)
    with pytest.raises(
        ConfigError, match=r"cannot continue: a tool call waits for a decision: delete \(c\)"
    ):
        await agent.continue_()
    agent.deny("c", "not that one")
    assert agent.state.pending_approvals == []
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    added = await agent.continue_()
    check_well_formed(events)
    assert [m.role for m in added] == [
        "approved_call_started",
        "tool_result",
        "tool_result",
        "assistant",
    ]
    assert setup.ran == [("look", "y"), ("delete", "x")]
    assert texts(added[2]) == "Tool call was not executed: it was denied: not that one"
    assert agent.state.messages[-1].text == "done"  # type: ignore[union-attr]


async def test_unknown_or_decided_ids_are_refused() -> None:
    setup = Setup()
    agent = setup.agent()
    await agent.prompt("go")
    with pytest.raises(
        ConfigError, match=r"no tool call 'zz' waits for approval \(waiting: 'a', 'c'\)"
    ):
        agent.approve("zz")
    with pytest.raises(ConfigError, match="no tool call 'b' waits"):
        agent.deny("b")  # ran without approval: nothing to decide
    agent.deny("a")
    with pytest.raises(ConfigError, match="'a' was already decided"):
        agent.approve("a")
    with pytest.raises(ConfigError, match="reason must be a string"):
        agent.deny("c", 5)  # type: ignore[arg-type]


async def test_edited_arguments_are_checked_when_approving() -> None:
    setup = Setup()
    agent = setup.agent()
    await agent.prompt("go")
    count = len(agent.state.messages)
    with pytest.raises(ConfigError, match="path"):
        agent.approve("a", arguments={"path": 5})
    with pytest.raises(ConfigError, match="arguments must be a dict"):
        agent.approve("a", arguments=["x"])  # type: ignore[arg-type]
    assert len(agent.state.messages) == count  # nothing recorded
    agent.approve("a", arguments={"path": "x2"})
    assert agent.state.messages[-1].arguments == {"path": "x2"}  # type: ignore[union-attr]


async def test_approve_and_deny_need_an_idle_agent() -> None:
    setup = Setup([three_calls(), faux_text("done")])
    agent = setup.agent()
    await agent.prompt("go")
    agent.approve("a")
    agent.deny("c")
    errors: list[Exception] = []

    def listener(event: AgentEvent) -> None:
        if event.type == "turn_start":
            try:
                agent.approve("a")
            except AgentBusyError as exc:
                errors.append(exc)

    agent.subscribe(listener)
    await agent.continue_()
    assert errors and "approve() and deny() need an idle agent" in str(errors[0])


async def test_a_new_prompt_denies_the_waiting_calls_first() -> None:
    setup = Setup([three_calls(), faux_text("fine")])
    agent = setup.agent()
    await agent.prompt("go")
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    await agent.prompt("never mind, do something else")
    check_well_formed(events)
    assert roles(agent) == [
        "user",
        "assistant",
        "tool_result",
        "approval_request",
        "approval_request",
        "approval_decision",
        "approval_decision",
        "tool_result",
        "tool_result",
        "user",
        "assistant",
    ]
    decisions = [m for m in agent.state.messages if isinstance(m, ApprovalDecision)]
    assert all(not d.approved and d.reason == NEW_MESSAGE_REASON for d in decisions)
    denied = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)][1:]
    assert all(NEW_MESSAGE_REASON in texts(m) for m in denied)
    sent = setup.faux.calls[-1].context.messages
    assert [m.role for m in sent] == [
        "user",
        "assistant",
        "tool_result",
        "tool_result",
        "tool_result",
        "user",
    ]
    assert setup.ran == [("look", "y")]


async def test_a_decision_that_cannot_be_stored_is_not_kept(tmp_path: Path) -> None:
    setup = Setup()
    with JsonlSessionStore(tmp_path) as store:
        agent = setup.agent(session=store.create())
        await agent.prompt("go")
        # a `delete` whose schema takes anything: the arguments pass, but are not JSON
        agent.state.tools = [
            AgentTool(
                name="delete",
                description="Delete anything.",
                parameters={"type": "object"},
                execute=lambda *args: AgentToolResult.text("deleted"),
            )
        ]
        count = len(agent.state.messages)
        with pytest.raises(MessageFormatError, match="arguments"):
            agent.approve("a", arguments={"path": object()})
        assert len(agent.state.messages) == count
        assert len(agent.session.load(repair=False).messages) == count  # type: ignore[union-attr]


def make_store(kind: str, where: Path) -> SessionStore:
    if kind == "postgres":
        return open_postgres_store(where)
    return JsonlSessionStore(where) if kind == "jsonl" else SqliteSessionStore(where / "s.db")


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_waiting_calls_survive_a_resume_and_decisions_are_stored_at_once(
    tmp_path: Path, kind: str
) -> None:
    setup = Setup([three_calls()])
    with make_store(kind, tmp_path) as store:
        session = store.create()
        await setup.agent(session=session).prompt("go")
        session_id = session.id
    with make_store(kind, tmp_path) as store:  # later: a new store, a new Agent
        setup.faux.set_responses([faux_text("done")])
        agent = setup.agent(session=store.open(session_id))
        assert [r.tool_call_id for r in agent.state.pending_approvals] == ["a", "c"]
        agent.approve("a")
        agent.deny("c", "no")
        stored = agent.session.load(repair=False).messages  # type: ignore[union-attr]
        assert [m.role for m in stored][-2:] == ["approval_decision", "approval_decision"]
        await agent.continue_()
    with make_store(kind, tmp_path) as store:
        final = store.load(session_id).messages
    results = [m.tool_call_id for m in final if isinstance(m, ToolResultMessage)]
    assert sorted(results) == ["a", "b", "c"]
    assert final[-1].text == "done"  # type: ignore[union-attr]
    assert setup.ran == [("look", "y"), ("delete", "x")]


async def test_a_resumed_approved_call_that_had_started_is_never_run_again(tmp_path: Path) -> None:
    setup = Setup([three_calls()])
    with JsonlSessionStore(tmp_path) as store:
        session = store.create()
        agent = setup.agent(session=session)
        await agent.prompt("go")
        agent.approve("a")
        agent.deny("c")
        session.append(ApprovedCallStarted(tool_call_id="a"))  # the process died right after
    with JsonlSessionStore(tmp_path) as store:
        setup.faux.set_responses([faux_text("done")])
        agent = setup.agent(session=store.open(session.id))
        repaired = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
        assert [(m.tool_call_id, texts(m)) for m in repaired][-1] == (
            "a",
            INTERRUPTED_APPROVED_CALL,
        )
        added = await agent.continue_()
    assert setup.ran == [("look", "y")]
    assert [m.role for m in added] == ["tool_result", "assistant"]  # c's denial, then the answer


# --- repair_transcript --------------------------------------------------------------------


def batch() -> list[Any]:
    request_a = ApprovalRequest(tool_call_id="a", tool_name="delete", arguments={})
    request_c = ApprovalRequest(tool_call_id="c", tool_name="delete", arguments={})
    return [
        UserMessage(content="go"),
        three_calls(),
        ToolResultMessage(tool_call_id="b", tool_name="look", content=[TextContent(text="ok")]),
        request_a,
        request_c,
    ]


def test_repair_leaves_waiting_and_decided_calls_alone() -> None:
    messages = batch()
    assert repair_transcript(messages) == (messages, 0)
    decided = [
        *messages,
        ApprovalDecision.approve(messages[3]),
        ApprovalDecision.deny(messages[4]),
    ]
    assert repair_transcript(decided) == (decided, 0)


def test_repair_answers_an_approved_call_that_started_and_unrequested_calls() -> None:
    messages = batch()
    del messages[2]  # b's result never arrived
    messages += [
        ApprovalDecision.approve(messages[2]),
        ApprovalDecision.deny(messages[3]),
        ApprovedCallStarted(tool_call_id="a"),
    ]
    repaired, added = repair_transcript(messages)
    assert added == 2
    assert repaired[: len(messages)] == messages  # inserted after the batch's messages
    new = {m.tool_call_id: texts(m) for m in repaired[len(messages) :]}
    assert new == {"a": INTERRUPTED_APPROVED_CALL, "b": INTERRUPTED_TOOL_RESULT}


# -- who decides: only an agent holding the tool; the decision says who; reopen asks again ----


async def test_an_agent_decides_only_for_tools_it_holds(tmp_path: Path) -> None:
    setup = Setup()
    store = JsonlSessionStore(tmp_path)
    session = store.create()
    agent = setup.agent(session=session)
    await agent.prompt("go")
    session.close()
    elsewhere = Agent(initial_state={"tools": []}, session=store.open(session.id))
    for decide in (
        lambda: elsewhere.approve("a", arguments={"path": "/etc/passwd"}),
        lambda: elsewhere.approve("a"),
        lambda: elsewhere.deny("a"),
    ):
        with pytest.raises(
            ConfigError,
            match=r"tool call 'a' calls 'delete', which this agent does not have: an agent "
            r"decides only for tools it holds",
        ):
            decide()
    assert [r.tool_call_id for r in elsewhere.state.pending_approvals] == ["a", "c"]
    assert not any(isinstance(m, ApprovalDecision) for m in store.load(session.id).messages)


@pytest.mark.parametrize("backend", STORE_KINDS)
async def test_a_decision_records_who_took_it_and_reopen_asks_again(
    tmp_path: Path, backend: str
) -> None:
    from agentcore.approvals import decided_approvals

    setup = Setup([three_calls(), faux_text("done")])
    store: SessionStore = make_store(backend, tmp_path)
    session = store.create()
    agent = setup.agent(session=session)
    await agent.prompt("go")
    agent.approve("a", arguments={"path": "edited"}, decided_by="web")
    agent.deny("c", "no", decided_by="cli")
    session.close()

    resumed = setup.agent(session=store.open(session.id))
    decided = decided_approvals(resumed.state.messages)
    assert [(d.request.tool_call_id, d.decision.decided_by) for d in decided] == [
        ("a", "web"),
        ("c", "cli"),
    ]
    assert decided[0].decision.arguments == {"path": "edited"}
    request = resumed.reopen("a")  # the web's decision set aside: "a" waits again
    assert request.arguments == {"path": "x"}  # what the model asked for, not the edit
    assert [r.tool_call_id for r in resumed.state.pending_approvals] == ["a"]
    assert [d.request.tool_call_id for d in decided_approvals(resumed.state.messages)] == ["c"]
    with pytest.raises(ConfigError, match=r"reopen\(\): no decided tool call 'a' waits to run"):
        resumed.reopen("a")
    resumed.approve("a", decided_by="cli")
    await resumed.continue_()
    assert setup.ran == [("look", "y"), ("delete", "x")]  # the request as asked; never "edited"
    resumed.session.close()  # type: ignore[union-attr]
    again = setup.agent(session=store.open(session.id))
    assert decided_approvals(again.state.messages) == []
    with pytest.raises(ConfigError, match="reopen"):
        again.reopen("c")  # answered: nothing to decide again
    store.close()


def test_decided_by_must_be_a_string() -> None:
    with pytest.raises(TypeError, match=r"ApprovalDecision\.decided_by must be a string or None"):
        ApprovalDecision(tool_call_id="a", approved=True, decided_by=3)  # type: ignore[arg-type]
