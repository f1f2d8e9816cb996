"""The engine's stages return values: a turn's outcome, a call's stage, a compaction, a typed
answer; the stop reasons are one list; no stage writes a field of the run (see
docs/contributing-engine.md)."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from agentcore import AgentContext, AgentLoopConfig, UserMessage, run_agent_loop, tool
from agentcore._engine.outcome import DONE, NEXT, StopCause, Stopped
from agentcore.events import AgentEndEvent
from agentcore.limits import LimitReached
from agentcore.messages import ToolCall
from agentcore.testing import FauxProvider, faux_message

pytestmark = pytest.mark.anyio

ENGINE = Path(__file__).resolve().parents[1] / "src" / "agentcore" / "_engine"


def test_each_stop_reason_fills_one_agent_end_field_or_none() -> None:
    end_fields = {f.name for f in dataclasses.fields(AgentEndEvent)}
    for cause in StopCause:
        assert cause.field is None or cause.field in end_fields, cause
        stopped = Stopped(cause, data := object())
        read = {
            "limit": stopped.limit,
            "output": stopped.output,
            "pending_approvals": stopped.pending_approvals,
            "guardrail": stopped.guardrail,
        }
        assert [name for name, value in read.items() if value is data] == (
            [cause.field] if cause.field is not None else []
        ), cause
    assert Stopped(StopCause.APPROVALS).pending_approvals == ()
    assert NEXT is not DONE


def test_a_limit_stop_carries_its_limit() -> None:
    limit = LimitReached(kind="max_turns", limit=1, used=1)
    assert Stopped(StopCause.LIMIT, limit).limit is limit
    assert Stopped(StopCause.OUTPUT_RETRIES, limit).limit is limit
    assert Stopped(StopCause.HOOK).limit is None


# The stages that hand results back to the loop: none of them may write the run's fields or call
# the run's methods that change it (the loop keeps what they return). Carrying out approval
# decisions is a tool batch: like any batch, it adds its messages (the marker before a call
# runs) with `add_message`, and nothing else.
STAGES = {
    "approval_gate.py": set(),
    "bounds.py": set(),
    "compaction.py": set(),
    "decided_calls.py": {"add_message"},
    "instrumentation.py": set(),
    "tool_batch.py": set(),
    "tool_execution.py": set(),
    "tool_outcomes.py": set(),
    "typed_answer.py": set(),
}
CHANGING = {"add_message", "turn_end", "turn_start", "turn_hooks", "turn_hooks_stop", "apply"}


def _writes_to_run(source: str, allowed: frozenset[str] | set[str] = frozenset()) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            while isinstance(target, ast.Subscript):
                target = target.value
            base = target
            while isinstance(base, ast.Attribute):
                base = base.value
            if (
                isinstance(target, ast.Attribute)
                and isinstance(base, ast.Name)
                and base.id == "run"
            ):
                found.append(f"line {node.lineno}: writes {ast.unparse(target)}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            func = node.func
            owner = func.value
            changing = func.attr in CHANGING and func.attr not in allowed
            if isinstance(owner, ast.Name) and owner.id == "run" and changing:
                found.append(f"line {node.lineno}: calls run.{func.attr}")
            if func.attr in ("append", "extend") and isinstance(func.value, ast.Attribute):
                owner = func.value.value
                if isinstance(owner, ast.Name) and owner.id == "run":
                    found.append(f"line {node.lineno}: changes {ast.unparse(func.value)}")
    return found


@pytest.mark.parametrize("name", sorted(STAGES))
def test_no_stage_writes_the_run(name: str) -> None:
    assert _writes_to_run((ENGINE / name).read_text("utf-8"), STAGES[name]) == []


def test_the_check_finds_a_stage_writing_the_run() -> None:
    source = (
        "def f(run):\n"
        "    run.output = 1\n"
        "    run.tools_by_name['x'] = 2\n"
        "    run.pending_approvals.append(3)\n"
        "    run.compaction_failed |= True\n"
        "async def g(run):\n"
        "    await run.add_message(4)\n"
    )
    assert len(_writes_to_run(source)) == 5


async def test_agent_end_keeps_the_pending_approvals_when_the_sink_fails_at_that_turn_end() -> None:
    """The run stops for approvals; the sink then fails at `turn_end`: the run ends through its
    failure path (an error message) and `agent_end` still names the waiting call."""

    @tool(requires_approval=True)
    def delete(path: str) -> str:
        """Delete a file."""
        return "deleted"

    faux = FauxProvider()
    faux.set_responses([faux_message(ToolCall(id="a", name="delete", arguments={"path": "x"}))])
    events: list[Any] = []

    def sink(event: Any) -> None:
        events.append(event)
        if event.type == "turn_end" and len([e for e in events if e.type == "turn_end"]) == 1:
            raise RuntimeError("the sink broke")

    added = await run_agent_loop(
        [UserMessage(content="go")],
        AgentContext(tools=[delete]),
        AgentLoopConfig(model=faux.model),
        sink,
    )
    end = events[-1]
    assert end.type == "agent_end"
    assert [r.tool_call_id for r in end.pending_approvals] == ["a"]
    assert added[-1].role == "assistant" and added[-1].stop_reason == "error"
    assert added[-1].error_message == "the sink broke"
