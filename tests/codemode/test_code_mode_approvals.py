"""A nested call that needs a decision suspends the snippet: the run ends waiting (the same
end as for a direct call, with the nested call's id and the snippet's), the snapshot is kept in
the session, and after the decision (a new Agent, a new store, a new worker pool, or a new
process) the snippet goes on where it stopped, without running again what already ran."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest

pytest.importorskip("pydantic_monty")

from agentcore import AgentEvent, ToolResultMessage, tool
from agentcore.approvals import (
    INTERRUPTED_APPROVED_CALL,
    ApprovalRequest,
    ApprovedCallStarted,
    InputRequired,
    SuspendedCall,
    input_answer,
)
from agentcore.codemode import CodeLimits, code_mode
from agentcore.messages import ToolCall
from agentcore.sessions import JsonlSessionStore, SessionStore, SqliteSessionStore
from agentcore.testing import FauxProvider, check_well_formed, faux_message, faux_text

from .suspending import DENIED, SNIPPET, agent_for, first_answer, tools_for

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def make_store(kind: str, where: Path) -> SessionStore:
    return JsonlSessionStore(where) if kind == "jsonl" else SqliteSessionStore(where / "s.db")


@pytest.mark.parametrize("kind", ["jsonl", "sqlite"])
async def test_approved_in_a_new_agent_the_snippet_goes_on_and_nothing_runs_twice(
    tmp_path: Path, kind: str
) -> None:
    ran: list[str] = []
    faux = FauxProvider([first_answer(SNIPPET)])
    events: list[AgentEvent] = []
    with make_store(kind, tmp_path) as store:
        session = store.create()
        agent = agent_for(faux, tools_for(ran), session=session)
        agent.subscribe(events.append)
        await agent.prompt("go")
        session_id = session.id
    check_well_formed(events)
    (request,) = agent.state.pending_approvals
    assert (request.tool_call_id, request.parent_tool_call_id) == ("c1.3", "c1")
    assert (request.tool_name, request.arguments) == ("delete", {"path": "x"})
    assert events[-1].type == "agent_end" and events[-1].pending_approvals == (request,)
    assert ran == ["first", "second"]  # the calls before the suspension ran, once
    ends = {e.tool_call_id: e for e in events if e.type == "tool_execution_end"}
    assert "waiting for approval" in ends["c1.3"].result.content[0].text
    assert ends["c1.3"].parent_tool_call_id == "c1" and not ends["c1.3"].is_error
    assert "suspended" in ends["c1"].result.content[0].text and not ends["c1"].is_error
    assert [m.role for m in agent.state.messages][-2:] == ["suspended_call", "approval_request"]
    kept = agent.state.messages[-2]
    assert isinstance(kept, SuspendedCall) and kept.nested_calls == 3
    assert len(json.dumps(kept.state)) < 64 * 1024  # the snapshot is small (~6 KB here)

    faux.set_responses([faux_text("done")])
    events.clear()
    with make_store(kind, tmp_path) as store:  # later: a new store, a new Agent, new tools
        agent = agent_for(faux, tools_for(ran), session=store.open(session_id))
        agent.subscribe(events.append)
        assert agent.state.pending_approvals == [request]
        agent.approve("c1.3")
        await agent.continue_()
        final = store.load(session_id).messages
    check_well_formed(events)
    assert ran == ["first", "second", "delete x", "after deleted x"]
    (result,) = [m for m in final if isinstance(m, ToolResultMessage)]
    assert not result.is_error
    assert result.content[0].text == (
        'printed before and after\n["first", "second", "deleted x"]'
    ), result.content[0].text
    assert final[-1].text == "done"  # type: ignore[union-attr]
    nested = [(e.type, e.tool_call_id) for e in events if e.type.startswith("tool_execution")]
    assert nested == [
        ("tool_execution_start", "c1"),
        ("tool_execution_start", "c1.3"),  # the decided call, carried on
        ("tool_execution_end", "c1.3"),
        ("tool_execution_start", "c1.4"),  # the numbering goes on
        ("tool_execution_end", "c1.4"),
        ("tool_execution_end", "c1"),
    ]


async def test_denied_the_nested_call_gets_the_denial_as_its_error() -> None:
    ran: list[str] = []
    faux = FauxProvider([first_answer(DENIED)])
    agent = agent_for(faux, tools_for(ran))
    await agent.prompt("go")
    assert [r.tool_call_id for r in agent.state.pending_approvals] == ["c1.2"]
    faux.set_responses([faux_text("done")])
    agent = agent_for(faux, tools_for(ran), messages=agent.state.messages)
    agent.deny("c1.2", "not this file")
    await agent.continue_()
    (result,) = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    assert not result.is_error
    assert result.content[0].text.startswith("refused: delete failed:"), result.content[0].text
    assert "not this file" in result.content[0].text
    assert ran == ["first", "after"]


async def test_a_snippet_suspends_again_on_its_next_call_that_needs_approval() -> None:
    ran: list[str] = []
    code = "await delete(path='a')\nawait log(item='between')\nawait delete(path='b')\n'ok'"
    faux = FauxProvider([first_answer(code)])
    agent = agent_for(faux, tools_for(ran))
    await agent.prompt("go")
    agent.approve("c1.1")
    faux.set_responses([faux_text("done")])
    await agent.continue_()
    assert [r.tool_call_id for r in agent.state.pending_approvals] == ["c1.3"]
    assert ran == ["delete a", "between"]
    agent.approve("c1.3")
    await agent.continue_()
    (result,) = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    assert result.content[0].text == "ok"
    assert ran == ["delete a", "between", "delete b"]


async def test_edited_arguments_are_refused_for_a_call_from_code() -> None:
    from agentcore import ConfigError

    faux = FauxProvider([first_answer(SNIPPET)])
    agent = agent_for(faux, tools_for([]))
    await agent.prompt("go")
    with pytest.raises(ConfigError, match="made by the code of call 'c1'"):
        agent.approve("c1.3", arguments={"path": "y"})


async def test_a_state_sealed_with_another_key_is_not_resumed() -> None:
    ran: list[str] = []
    faux = FauxProvider([first_answer(SNIPPET)])
    agent = agent_for(faux, tools_for(ran, snapshot_key=b"k" * 32))
    await agent.prompt("go")
    faux.set_responses([faux_text("done")])
    agent = agent_for(faux, tools_for(ran, snapshot_key=b"x" * 32), messages=agent.state.messages)
    agent.approve("c1.3")
    await agent.continue_()
    (result,) = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    assert result.is_error and "saved state was refused" in result.content[0].text
    assert ran == ["first", "second"]  # nothing more ran


async def test_a_snapshot_over_the_limit_does_not_suspend_the_call_fails() -> None:
    ran: list[str] = []
    code = "try:\n  await delete(path='x')\nexcept RuntimeError as e:\n  r = str(e)\nr"
    faux = FauxProvider([first_answer(code), faux_text("done")])
    agent = agent_for(faux, tools_for(ran, limits=CodeLimits(snapshot=100)))
    await agent.prompt("go")
    assert agent.state.pending_approvals == []
    (result,) = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    assert "over the 100 bytes" in result.content[0].text and ran == []


@tool
def ask_color() -> str:
    """Ask the user for a color."""
    answer = input_answer("c1.1", "color")
    if answer is None:
        raise InputRequired("color", "Which color?", {"type": "object"})
    return str((answer.content or {}).get("color"))


async def test_an_input_request_from_code_suspends_and_the_answer_goes_in() -> None:
    code = "c = await ask_color()\n'the color is ' + c"
    faux = FauxProvider([first_answer(code)])
    agent = agent_for(faux, [code_mode([ask_color])])
    await agent.prompt("go")
    (request,) = agent.state.pending_approvals
    assert request.input_schema == {"type": "object"} and request.parent_tool_call_id == "c1"
    faux.set_responses([faux_text("done")])
    agent.approve("c1.1", arguments={"color": "green"})
    await agent.continue_()
    (result,) = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    assert result.content[0].text == "the color is green"


_CHILD = """\
import sys, anyio
sys.path.insert(0, sys.argv[2])
from suspending import SNIPPET, agent_for, first_answer, tools_for
from agentcore.sessions import JsonlSessionStore
from agentcore.testing import FauxProvider

async def main():
    ran = []
    with JsonlSessionStore(sys.argv[1]) as store:
        session = store.create()
        faux = FauxProvider([first_answer(SNIPPET)])  # (kept: a provider is held weakly)
        agent = agent_for(faux, tools_for(ran), session=session)
        await agent.prompt("go")
        print(session.id, ",".join(ran))
anyio.run(main)
"""


async def test_decided_after_a_restart_of_the_process(tmp_path: Path) -> None:
    """The first run in a child process (its own Monty pool, its own memory), the decision
    and the rest in this one."""
    here = str(Path(__file__).parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*sys.path])}
    child = await anyio.run_process(
        [sys.executable, "-c", _CHILD, str(tmp_path), here], env=env, check=False
    )
    assert child.returncode == 0, child.stderr.decode()
    session_id, ran_there = child.stdout.decode().split()
    assert ran_there == "first,second"
    ran: list[str] = []
    faux = FauxProvider([faux_text("done")])
    with JsonlSessionStore(tmp_path) as store:
        agent = agent_for(faux, tools_for(ran), session=store.open(session_id))
        (request,) = agent.state.pending_approvals
        assert isinstance(request, ApprovalRequest) and request.parent_tool_call_id == "c1"
        agent.approve(request.tool_call_id)
        await agent.continue_()
    assert ran == ["delete x", "after deleted x"]  # only what had not run in the child
    (result,) = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    assert result.content[0].text.endswith('["first", "second", "deleted x"]')


async def test_a_process_that_dies_while_the_snippet_goes_on_runs_nothing_of_it_again(
    tmp_path: Path,
) -> None:
    """The snippet's marker is stored before it goes on: a transcript that ends after the marker
    (the process died while the resumed snippet ran) gives the snippet an error result."""
    ran: list[str] = []
    faux = FauxProvider([first_answer(SNIPPET)])
    agent = agent_for(faux, tools_for(ran))
    await agent.prompt("go")
    agent.approve("c1.3")
    with JsonlSessionStore(tmp_path) as store:
        session = store.create()
        for message in [*agent.state.messages, ApprovedCallStarted(tool_call_id="c1")]:
            session.append(message)  # (the marker stored, then the process died)
        faux.set_responses([faux_text("done")])
        later = agent_for(faux, tools_for(ran), session=store.open(session.id))
        await later.continue_()
    (result,) = [m for m in later.state.messages if isinstance(m, ToolResultMessage)]
    assert result.is_error and result.content[0].text == INTERRUPTED_APPROVED_CALL
    assert ran == ["first", "second"]  # not the approved delete, not the rest of the snippet


async def test_two_snippets_of_one_batch_suspend_and_go_on_each_from_its_own_point() -> None:
    ran: list[str] = []
    one = "await log(item='one')\nawait delete(path='1')"
    two = (
        "await log(item='two')\ntry:\n  await delete(path='2')\nexcept RuntimeError:\n  pass\n"
        "await delete(path='3')"
    )
    faux = FauxProvider(
        [
            faux_message(
                ToolCall(id="p", name="run_code", arguments={"code": one}),
                ToolCall(id="q", name="run_code", arguments={"code": two}),
            )
        ]
    )
    agent = agent_for(faux, tools_for(ran))
    await agent.prompt("go")
    waiting = [(r.tool_call_id, r.parent_tool_call_id) for r in agent.state.pending_approvals]
    assert waiting == [("p.2", "p"), ("q.2", "q")]
    assert sorted(ran) == ["one", "two"]
    agent.approve("p.2")
    agent.deny("q.2", "no")
    faux.set_responses([faux_text("done")])
    await agent.continue_()
    results = {m.tool_call_id: m for m in agent.state.messages if isinstance(m, ToolResultMessage)}
    assert set(results) == {"p"}  # q goes on, and waits again at its next call
    assert results["p"].content[0].text == "deleted 1"
    assert [(r.tool_call_id, r.parent_tool_call_id) for r in agent.state.pending_approvals] == [
        ("q.3", "q")
    ]
    agent.approve("q.3")
    await agent.continue_()
    results = {m.tool_call_id: m for m in agent.state.messages if isinstance(m, ToolResultMessage)}
    assert results["q"].content[0].text == "deleted 3"
    assert sorted(ran) == ["delete 1", "delete 3", "one", "two"]
