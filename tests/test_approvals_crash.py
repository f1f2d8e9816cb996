"""Approvals survive restarts and kills (issue 11).

A run stops for approval, a NEW process reopens the session, approves one call and denies
another, and continues. Then the same sequence is killed with SIGKILL at every point of it, one
point per attempt (every event that an Agent stores or reports, inside the approved tool before
and after its side effect, after each decision), and a fresh process finishes the work from what
the session holds. After every kill: the session loads, no call has two results, no call ran
twice (side effects are counted in a file), the denied call never ran, an approved call that
reports success ran exactly once, and the conversation completes.

The processes are real: a "zygote" process imports agentcore once and forks one child per
attempt (so that the ~100 attempts take seconds, not minutes); a child kills itself with SIGKILL
at the chosen point. Deterministic: the points are enumerated, not sampled.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentcore import (
    ApprovalDecision,
    ApprovalRequest,
    ApprovedCallStarted,
    AssistantMessage,
    ToolResultMessage,
)
from agentcore.approvals import INTERRUPTED_APPROVED_CALL
from agentcore.sessions import JsonlSessionStore, SessionStore, SqliteSessionStore

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

SESSION = "s1"

# The child: one function, `sequence(kind, where, kill_at, phase)`, doing the next steps of
# "prompt until the run stops for approval; approve A, deny B; continue" from whatever the
# session holds. `phase` limits it to one step ("stop", "decide", "continue") or does all.
CHILD = r"""
import json, os, signal, sys
import anyio
from agentcore import Agent, AssistantMessage, tool
from agentcore.messages import ToolCall
from agentcore.sessions import JsonlSessionStore, SqliteSessionStore
from agentcore.testing import FauxProvider, faux_message, faux_text

JOB = {"points": 0, "kill_at": None, "effects": ""}


def point():
    JOB["points"] += 1
    if JOB["points"] == JOB["kill_at"]:
        os.kill(os.getpid(), signal.SIGKILL)


def effect(name):
    with open(JOB["effects"], "a") as f:
        f.write(name + "\n")


@tool(requires_approval=True)
def danger(name: str) -> str:
    "Do something that needs approval."
    point()
    effect(name)
    point()
    return f"did {name}"


@tool
def note(name: str) -> str:
    "Do something harmless."
    effect(name)
    return f"noted {name}"


def respond(call):
    if call.context.messages[-1].role == "user":
        return faux_message(
            "on it",
            ToolCall(id="A", name="danger", arguments={"name": "A"}),
            ToolCall(id="B", name="danger", arguments={"name": "B"}),
            ToolCall(id="C", name="note", arguments={"name": "C"}),
        )
    return faux_text("done")


def on_event(event):
    if event.type != "message_update":
        point()


def sequence(kind, where, kill_at, phase):
    JOB.update(points=0, kill_at=kill_at, effects=os.path.join(where, "effects.log"))
    faux = FauxProvider([respond] * 100, provider="faux-approvals")
    store = JsonlSessionStore(where) if kind == "jsonl" else SqliteSessionStore(
        os.path.join(where, "s.db"))
    exists = "s1" in {info.id for info in store.list()}
    session = store.open("s1") if exists else store.create(session_id="s1")
    agent = Agent(initial_state={"model": faux.model, "tools": [danger, note]},
                  session=session, stream_fn=faux.stream_fn)
    agent.subscribe(on_event)

    async def main():
        while True:
            messages = agent.state.messages
            last = messages[-1] if messages else None
            if last is None:
                if phase not in ("all", "stop"):
                    return
                await agent.prompt("go")
            elif agent.state.pending_approvals:
                if phase not in ("all", "decide"):
                    return
                for request in agent.state.pending_approvals:
                    if request.tool_call_id == "A":
                        agent.approve("A")
                    else:
                        agent.deny(request.tool_call_id, "not this one")
                    point()
            elif isinstance(last, AssistantMessage) and not last.tool_calls:
                return
            else:
                if phase not in ("all", "continue"):
                    return
                await agent.continue_()
            if phase != "all":
                return

    try:
        anyio.run(main)
    finally:
        store.close()
    return JOB["points"]
"""

ZYGOTE = (
    CHILD
    + r"""
import agentcore.sessions.sqlite  # warm up what a child would import lazily, once, before forking
from agentcore.messages import to_json
from agentcore import ApprovalRequest
to_json(ApprovalRequest(tool_call_id="x", tool_name="y"))
FauxProvider([], provider="faux-warm-up")
for line in sys.stdin:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        try:
            points = sequence(job["kind"], job["where"], job["kill_at"], job["phase"])
            with open(os.path.join(job["where"], "points"), "w") as f:
                f.write(str(points))
        except BaseException as exc:
            sys.stderr.write(f"child failed: {exc!r}\n")
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    points = None
    if code == 0:
        with open(os.path.join(job["where"], "points")) as f:
            points = int(f.read())
    print(json.dumps({"killed": killed, "code": code, "points": points}), flush=True)
"""
)


def _env() -> dict[str, str]:
    src = str(Path(__file__).resolve().parent.parent / "src")
    return {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}


class Zygote:
    """A process that forks one child per job and reports how it ended."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", ZYGOTE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=_env(),
        )

    def run(self, kind: str, where: Path, kill_at: int | None = None, phase: str = "all") -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        job = {"kind": kind, "where": str(where), "kill_at": kill_at, "phase": phase}
        self.process.stdin.write(json.dumps(job) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line, "the zygote process died"
        return json.loads(line)

    def close(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)
        self.process.stdout.close()


@pytest.fixture(scope="module")
def zygote() -> Iterator[Zygote]:
    z = Zygote()
    yield z
    z.close()


def _store(kind: str, where: Path) -> SessionStore:
    return JsonlSessionStore(where) if kind == "jsonl" else SqliteSessionStore(where / "s.db")


def _effects(where: Path) -> Counter[str]:
    path = where / "effects.log"
    return Counter(path.read_text().split()) if path.exists() else Counter()


def _check(kind: str, where: Path, *, complete: bool) -> list[Any]:
    """The invariants after any number of kills; with `complete`, also that the work is done."""
    with _store(kind, where) as store:
        raw = store.open(SESSION).load(repair=False).messages
    results = Counter(m.tool_call_id for m in raw if isinstance(m, ToolResultMessage))
    assert all(n == 1 for n in results.values()), f"a call has two results: {results}"
    effects = _effects(where)
    assert all(n == 1 for n in effects.values()), f"a call ran twice: {effects}"
    assert effects["B"] == 0, "the denied call ran"
    for m in raw:
        if isinstance(m, ToolResultMessage) and m.tool_call_id == "A" and not m.is_error:
            assert effects["A"] == 1, "A reports success but did not run"
    markers = Counter(m.tool_call_id for m in raw if isinstance(m, ApprovedCallStarted))
    assert all(n == 1 for n in markers.values()), f"an approved call started twice: {markers}"
    if complete:
        calls = [c.id for m in raw if isinstance(m, AssistantMessage) for c in m.tool_calls]
        assert sorted(calls) == ["A", "B", "C"]
        assert set(results) == {"A", "B", "C"}
        last = raw[-1]
        assert isinstance(last, AssistantMessage) and last.text == "done"
    return raw


@pytest.mark.parametrize("kind", ["jsonl", "sqlite"])
def test_stop_reopen_decide_continue_in_new_processes(
    zygote: Zygote, tmp_path: Path, kind: str
) -> None:
    assert zygote.run(kind, tmp_path, phase="stop")["code"] == 0
    raw = _check(kind, tmp_path, complete=False)
    requests = [m for m in raw if isinstance(m, ApprovalRequest)]
    assert [r.tool_call_id for r in requests] == ["A", "B"]
    assert _effects(tmp_path) == Counter({"C": 1})  # the call without approval ran, no other
    assert zygote.run(kind, tmp_path, phase="decide")["code"] == 0
    raw = _check(kind, tmp_path, complete=False)
    decisions = {m.tool_call_id: m.approved for m in raw if isinstance(m, ApprovalDecision)}
    assert decisions == {"A": True, "B": False}
    assert zygote.run(kind, tmp_path, phase="continue")["code"] == 0
    raw = _check(kind, tmp_path, complete=True)
    assert _effects(tmp_path) == Counter({"A": 1, "C": 1})
    by_id = {m.tool_call_id: m for m in raw if isinstance(m, ToolResultMessage)}
    assert not by_id["A"].is_error and by_id["A"].content[0].text == "did A"  # type: ignore[union-attr]
    assert by_id["B"].is_error and "not this one" in by_id["B"].content[0].text  # type: ignore[union-attr]


# Every point for JSONL; for SQLite (slower to open), every third one: the same code paths.
@pytest.mark.parametrize(("kind", "step"), [("jsonl", 1), ("sqlite", 3)])
def test_a_kill_at_any_point_loses_nothing_and_runs_nothing_twice(
    zygote: Zygote, tmp_path: Path, kind: str, step: int
) -> None:
    (tmp_path / "full").mkdir()
    full = zygote.run(kind, tmp_path / "full")
    assert full["killed"] is False and full["code"] == 0
    _check(kind, tmp_path / "full", complete=True)
    points = full["points"]
    assert points > 30, f"only {points} kill points: the sequence is not what it should be"
    interrupted_seen = False
    for kill_at in range(1, points + 1, step):
        where = tmp_path / f"kill{kill_at}"
        where.mkdir()
        outcome = zygote.run(kind, where, kill_at=kill_at)
        assert outcome["killed"] is True, f"kill {kill_at}: {outcome}"
        _check(kind, where, complete=False)
        recovered = zygote.run(kind, where)  # a fresh process finishes the work
        assert recovered["code"] == 0, f"recovery after kill {kill_at}: {recovered}"
        raw = _check(kind, where, complete=True)
        interrupted_seen |= any(
            isinstance(m, ToolResultMessage)
            and m.tool_call_id == "A"
            and m.content[0].text == INTERRUPTED_APPROVED_CALL  # type: ignore[union-attr]
            for m in raw
        )
    assert interrupted_seen or step > 1, "no kill fell between an approved call's start and end"
