"""The engine's stages return values: a turn's outcome, a call's stage, a compaction, a typed
answer; the run's end is one typed variant per reason, and `agent_end` is built from it in one
place; no stage writes the run or its state (see docs/contributing-engine.md)."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from agentcore import AgentContext, AgentLoopConfig, UserMessage, run_agent_loop, tool
from agentcore._engine.outcome import (
    DONE,
    NEXT,
    STOPS,
    Aborted,
    Answered,
    AwaitingApprovals,
    Done,
    Failed,
    HookStopped,
    LimitHit,
    OutOfRetries,
    Tripped,
    agent_end,
)
from agentcore.approvals import ApprovalRequest
from agentcore.events import AgentEndEvent
from agentcore.guardrails import GuardrailTrip
from agentcore.limits import LimitReached
from agentcore.messages import ToolCall
from agentcore.testing import FauxProvider, faux_message

pytestmark = pytest.mark.anyio

ENGINE = Path(__file__).resolve().parents[2] / "src" / "agentcore" / "_engine"


def test_each_end_fills_its_agent_end_field_alone() -> None:
    limit = LimitReached(kind="max_turns", limit=1, used=1)
    trip = GuardrailTrip(guardrail="g", kind="input", reason="no")
    request = ApprovalRequest(tool_call_id="a", tool_name="t", arguments={})
    expected: list[tuple[Any, dict[str, Any]]] = [
        (DONE, {}),
        (Aborted(), {}),
        (Failed(error=RuntimeError("x")), {}),
        (HookStopped(), {}),
        (LimitHit(limit), {"limit": limit}),
        (OutOfRetries(limit), {"limit": limit}),
        (AwaitingApprovals((request,)), {"pending_approvals": (request,)}),
        (Answered({"n": 1}), {"output": {"n": 1}}),
        (Tripped(trip), {"guardrail": trip}),
    ]
    assert {type(end) for end, _ in expected} - {Done} == set(STOPS)  # every stop is covered
    defaults = AgentEndEvent(messages=[])
    for end, fields in expected:
        event = agent_end(end, [])
        for field in dataclasses.fields(AgentEndEvent):
            if field.name in ("messages", "type"):
                continue
            want = fields.get(field.name, getattr(defaults, field.name))
            assert getattr(event, field.name) == want, (end, field.name)
    assert NEXT is not DONE


# The stages that hand results back to the loop: none of them may write the run or its state (its
# inputs, services, transcript), whatever the variable holding it is called: a parameter or a
# field annotated with one of the run's types, or a local taken from one. What a stage may do to
# the transcript is named here: a batch publishes its results (`join`; carrying out approval
# decisions also joins the marker before a call runs), a request streams its answer into it.
RUN_TYPES = {
    "ToolRun",
    "CompactionRun",
    "RequestRun",
    "LoopRun",
    "RunInputs",
    "RunServices",
    "Transcript",
}
STAGES = {
    "approval_gate.py": set(),
    "bounds.py": set(),
    "compaction.py": set(),
    "decided_calls.py": {"join"},
    "input_wait.py": set(),
    "instrumentation.py": set(),
    "tool_batch.py": {"join"},
    "tool_execution.py": set(),
    "tool_outcomes.py": set(),
    "turn_request.py": {"join", "open", "interrupted", "keep", "offer"},
    "typed_output.py": set(),
}
CHANGING = {
    "join",
    "open",
    "interrupted",
    "keep",
    "offer",
    "replace",
    "turn_end",
    "turn_start",
    "turn_hooks",
    "apply",
}
MUTATING = {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault"}


def _annotation_names(node: ast.expr | None) -> set[str]:
    if node is None:
        return set()
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return set()
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
    }


def _root(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _writes_to_run(source: str, allowed: frozenset[str] | set[str] = frozenset()) -> list[str]:
    tree = ast.parse(source)
    fields = set()  # `self.<name>` fields of a run type (a dataclass's annotated fields)
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for item in cls.body:
            if (
                isinstance(item, ast.AnnAssign)
                and isinstance(item.target, ast.Name)
                and _annotation_names(item.annotation) & RUN_TYPES
            ):
                fields.add(item.target.id)
    funcs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    helds = {
        func: {
            a.arg
            for a in [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]
            if _annotation_names(a.annotation) & RUN_TYPES
        }
        for func in funcs
    }

    def is_run(node: ast.expr, held: set[str]) -> bool:
        if isinstance(node, ast.Call) and _annotation_names(node.func) & RUN_TYPES:
            return True  # a run type built here (`self.t = Transcript(...)`)
        while True:
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "self"
                and node.attr in fields
            ):
                return True  # `self.<field>...`, the field holding the run
            if isinstance(node, ast.Name):
                return node.id in held
            if not isinstance(node, ast.Attribute | ast.Subscript | ast.Call | ast.NamedExpr):
                return False
            node = (
                node.func
                if isinstance(node, ast.Call)
                else node.value
                if isinstance(node, ast.Attribute | ast.Subscript | ast.NamedExpr)
                else node
            )

    def names(target: ast.expr) -> set[str]:
        return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}

    # what holds the run, to a fixed point: a field assigned from it (`self.owner = run`), a
    # local taken from it (`t = run.transcript`, `for t in (run.transcript,)`, `(t := run.x)`)
    while True:
        before = (len(fields), sum(len(h) for h in helds.values()))
        for func, held in helds.items():
            for node in ast.walk(func):
                if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                    if is_run(node.value, held):
                        for target in (
                            node.targets if isinstance(node, ast.Assign) else [node.target]
                        ):
                            if isinstance(target, ast.Name):
                                held.add(target.id)
                            elif (
                                isinstance(target, ast.Attribute)
                                and isinstance(target.value, ast.Name)
                                and target.value.id == "self"
                            ):
                                fields.add(target.attr)
                elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
                    if any(is_run(n, held) for n in ast.walk(node.iter) if isinstance(n, ast.expr)):
                        held |= names(node.target)
                elif isinstance(node, ast.NamedExpr) and is_run(node.value, held):
                    held.add(node.target.id)
                elif isinstance(node, ast.With | ast.AsyncWith):
                    for with_item in node.items:
                        if with_item.optional_vars is not None and is_run(
                            with_item.context_expr, held
                        ):
                            held |= names(with_item.optional_vars)
        if (len(fields), sum(len(h) for h in helds.values())) == before:
            break
    found = []
    for func, held in helds.items():
        for node in ast.walk(func):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets = [node.target]
            binds = (  # `self.owner = run`: holding the run, not writing it
                isinstance(node, ast.Assign | ast.AnnAssign)
                and node.value is not None
                and is_run(node.value, held)
            )
            for target in targets:
                if binds and isinstance(target, ast.Attribute) and _is_self(target.value):
                    continue
                if isinstance(target, ast.Attribute | ast.Subscript) and is_run(target, held):
                    found.append(f"line {node.lineno}: writes {ast.unparse(target)}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                func_ = node.func
                owner = func_.value
                if func_.attr in CHANGING and func_.attr not in allowed and is_run(owner, held):
                    found.append(f"line {node.lineno}: calls {ast.unparse(func_)}")
                if (
                    func_.attr in MUTATING
                    and isinstance(owner, ast.Attribute | ast.Subscript)
                    and is_run(owner, held)
                ):
                    found.append(f"line {node.lineno}: changes {ast.unparse(owner)}")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("setattr", "delattr")
                and node.args
                and is_run(node.args[0], held)
            ):
                found.append(
                    f"line {node.lineno}: calls {node.func.id} on {ast.unparse(node.args[0])}"
                )
        for node in ast.walk(func):
            if isinstance(node, ast.Delete):
                for target in node.targets:
                    if isinstance(target, ast.Attribute | ast.Subscript) and is_run(target, held):
                        found.append(f"line {node.lineno}: deletes {ast.unparse(target)}")
    return sorted(set(found))


@pytest.mark.parametrize("name", sorted(STAGES))
def test_no_stage_writes_the_run(name: str) -> None:
    assert _writes_to_run((ENGINE / name).read_text("utf-8"), STAGES[name]) == []


def test_the_check_finds_a_stage_writing_the_run() -> None:
    source = (
        "class Batch:\n"
        "    owner: ToolRun\n"
        "    async def step(self) -> None:\n"
        "        self.owner.transcript.messages.append(0)\n"  # a field, whatever its name
        "def f(state: 'RequestRun', item: PipelineCall) -> None:\n"
        "    state.model = 1\n"  # a parameter, whatever its name
        "    state.transcript.tools_by_name['x'] = 2\n"
        "    item.result = 3\n"  # not the run: allowed
        "    t = state.transcript\n"
        "    t.new_messages.extend([4])\n"  # through a local taken from the run
        "    t.phase = 5\n"
        "async def g(r: Transcript) -> None:\n"
        "    await r.join(6)\n"
        "    r.compaction_failed |= True\n"
    )
    found = _writes_to_run(source)
    assert len(found) == 7, found
    assert not any("item.result" in f for f in found)
    assert len(_writes_to_run(source, {"join"})) == 6


def test_the_check_finds_the_run_held_under_any_name() -> None:
    # each function writes the run through a name the check has to follow: a field set from a
    # parameter or built in `__init__`, a loop variable, a walrus, a `with` target, `setattr`
    source = (
        "class Batch:\n"
        "    def __init__(self, run: ToolRun, context: object) -> None:\n"
        "        self.owner = run\n"
        "        self.kept = Transcript(context)\n"
        "    def step(self) -> None:\n"
        "        self.owner.transcript.messages.append(0)\n"
        "    def other(self) -> None:\n"
        "        self.kept.phase = 1\n"
        "def h(run: ToolRun) -> None:\n"
        "    for t in (run.transcript,):\n"
        "        t.phase = 2\n"
        "    (x := run.transcript).new_messages.append(3)\n"
        "    setattr(run, 'model', 4)\n"
        "    with run.services as s:\n"
        "        s.emitter = 5\n"
        "    del run.transcript.messages[0]\n"
        "def untouched(run: ToolRun, item: object) -> None:\n"
        "    for c in run.calls:\n"
        "        item.result = c\n"
    )
    found = _writes_to_run(source)
    assert len(found) == 7, found
    assert not any("item.result" in f for f in found)


ENGINE_WRITERS = {
    # the modules that may write the run: the driver, the transcript, and what builds a run
    "loop.py",
    "transcript.py",
}


@pytest.mark.parametrize(
    "name",
    sorted(
        p.name for p in ENGINE.glob("*.py") if p.name not in STAGES and p.name not in ENGINE_WRITERS
    ),
)
def test_no_other_engine_module_writes_the_run(name: str) -> None:
    # a module that is neither a listed stage nor a writer does not write the run at all, so a
    # new stage cannot escape the check by not being listed
    assert _writes_to_run((ENGINE / name).read_text("utf-8")) == []


def test_the_driver_is_seen_writing_the_run() -> None:
    # the driver writes the run through `self.transcript`, a field built in `__init__`: the
    # check sees it (the check before this one did not)
    assert _writes_to_run((ENGINE / "loop.py").read_text("utf-8")) != []


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
