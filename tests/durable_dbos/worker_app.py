"""What the DBOS test workers serve: scripted faux models and tools, registered by name.

The scripts answer as a function of the request (the n-th answer for a context holding n
assistant messages), so a request run again after a crash gets the same answer. Tools append
one line per execution to files under `AGENTCORE_DBOS_TEST_DIR`, so a test counts side effects
across worker processes.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from dbos import DBOS

from agentcore import AgentSpec, AgentTool, AssistantMessage, tool
from agentcore.approvals import InputRequired, input_answer
from agentcore.dbos import DurableTool
from agentcore.llm import Model
from agentcore.messages import ToolCall
from agentcore.skills import load_skills
from agentcore.testing import FauxCall, FauxProvider, faux_message, faux_text, faux_tool_call

SCRIPTS: dict[str, list[AssistantMessage]] = {
    "tools": [
        faux_message(
            "Let me add and record.",
            ToolCall(id="c1", name="add", arguments={"a": 2, "b": 40}),
            ToolCall(id="c2", name="record", arguments={"note": "first"}),
        ),
        faux_tool_call("nope", {}, id="c4"),  # an unknown tool
        faux_text("2 + 40 = 42, and I took a note."),
    ],
    "slow-tool": [
        faux_tool_call("slow", {"note": "n1", "seconds": 30}, id="s1"),
        faux_tool_call("record", {"note": "after"}, id="s2"),
        faux_text("done"),
    ],
    "once": [faux_tool_call("charge", {"amount": 5}, id="p1"), faux_text("charged")],
    "gated-loop": [faux_tool_call("record", {"note": f"step {i}"}, id=f"l{i}") for i in (1, 2, 3)]
    + [faux_text("looped")],
    "question": [faux_tool_call("ask_size", {}, id="q1"), faux_text("sized")],
    "skills": [
        faux_tool_call("activate_skill", {"name": "forms"}, id="k1"),
        faux_message(
            "Reading the skill's files.",
            ToolCall(
                id="k2",
                name="read_skill_file",
                arguments={"name": "forms", "path": "references/fields.md"},
            ),
            ToolCall(
                id="k3", name="read_skill_file", arguments={"name": "forms", "path": "link.md"}
            ),
        ),
        faux_tool_call("activate_skill", {"name": "forms"}, id="k4"),
        faux_text("The form is filled."),
    ],
    "skills-gated": [
        faux_tool_call("activate_skill", {"name": "forms"}, id="g1"),
        faux_tool_call(
            "read_skill_file", {"name": "forms", "path": "references/fields.md"}, id="g2"
        ),
        faux_text("Filled."),
    ],
    "approval": [
        faux_message(
            "Paying.",
            ToolCall(id="a1", name="pay", arguments={"amount": 20}),
            ToolCall(id="a2", name="pay", arguments={"amount": 5000}),
        ),
        faux_text("Paid what was approved."),
    ],
}


def _effects() -> Path:
    default = Path(tempfile.gettempdir()) / "agentcore-dbos-effects"
    path = Path(os.environ.get("AGENTCORE_DBOS_TEST_DIR", default))
    path.mkdir(parents=True, exist_ok=True)
    return path


def _append(name: str, line: str) -> None:
    with open(_effects() / name, "a", encoding="utf-8") as f:
        f.write(line + "\n")


def _run_id() -> str:
    return DBOS.workflow_id or "local"


GATED = {"gated-loop", "skills-gated"}
"""Scripts whose second request is marked in `stream-<name>`, then waits for the test's gate file
(`gate-<workflow id>`): the run is held between its first and second turn, with its first tool
call checkpointed, for as long as the test needs."""

SLOW_MODELS = {"slow-stream": [faux_text("a long and slowly streamed answer " * 10)]}
"""Scripts streamed slowly (seconds per answer), to kill a worker mid-stream; each request
appends a line to `stream-<name>`."""


def _wait_for_gate(run_id: str) -> None:
    gate = _effects() / f"gate-{run_id}"
    for _ in range(3000):  # at most a minute: the test opens it right after its kill
        if gate.exists():
            return
        time.sleep(0.02)


class _Scripted(FauxProvider):
    def __init__(self, name: str, script: list[AssistantMessage], **kwargs: Any) -> None:
        super().__init__(provider=f"faux-{name}", **kwargs)
        self._script = script
        self._marker = f"stream-{name}" if kwargs or name in GATED else None
        self._gated = name in GATED

    @property
    def pending(self) -> int:
        return 1

    def stream(self, model, context, options=None):  # type: ignore[no-untyped-def]
        def answer(call: FauxCall) -> AssistantMessage:
            n = sum(1 for m in call.context.messages if m.role == "assistant")
            if self._marker is not None:
                _append(self._marker, f"{_run_id()} {os.getpid()} {n}")
            if self._gated and n == 1:
                _wait_for_gate(_run_id())
            return self._script[min(n, len(self._script) - 1)]

        self.set_responses([answer])
        return super().stream(model, context, options)


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first addend.
        b: the second addend.
    """
    return a + b


@tool
async def record(note: str, tool_call_id: str) -> str:
    """Write a note.

    Args:
        note: what to write.
    """
    _append("effects", f"{_run_id()} {tool_call_id} {note}")
    return f"noted: {note}"


@tool
async def slow(note: str, seconds: float, tool_call_id: str) -> str:
    """Take a while (the test kills the worker meanwhile), then write a note.

    Args:
        note: what to write.
        seconds: how long to take.
    """
    _append("started", f"{_run_id()} {tool_call_id} {os.getpid()}")
    if os.environ.get("AGENTCORE_DBOS_FAST") != "1":
        await anyio.sleep(seconds)
    _append("effects", f"{_run_id()} {tool_call_id} {note}")
    return f"slowly noted: {note}"


@tool
async def charge(amount: int, tool_call_id: str) -> str:
    """Charge an amount (must not run twice; the test kills the worker meanwhile).

    Args:
        amount: how much.
    """
    _append("started", f"{_run_id()} {tool_call_id} {os.getpid()}")
    await anyio.sleep(float(os.environ.get("AGENTCORE_DBOS_CHARGE_SECONDS", "0")))
    _append("effects", f"{_run_id()} {tool_call_id} charged {amount}")
    return f"charged {amount}"


@tool(requires_approval=True)
async def pay(amount: int, tool_call_id: str) -> str:
    """Pay an amount (only once a person approved).

    Args:
        amount: how much.
    """
    _append("effects", f"{_run_id()} {tool_call_id} paid {amount}")
    return f"paid {amount}"


_providers = {name: _Scripted(name, s) for name, s in SCRIPTS.items()}  # kept alive
_providers.update(
    {n: _Scripted(n, s, tokens_per_second=20, chunk_chars=8) for n, s in SLOW_MODELS.items()}
)
SIZE = {"type": "object", "properties": {"size": {"enum": ["S", "M", "L"]}}, "required": ["size"]}


@tool
async def ask_size(tool_call_id: str) -> str:
    """Ask the user which size, then note it (a question for the user: see agentcore.approvals)."""
    answer = input_answer(tool_call_id, "size")
    if answer is None:
        raise InputRequired("size", "Which size?", SIZE)
    _append("effects", f"{_run_id()} {tool_call_id} {answer.action} {answer.content}")
    return f"{answer.action}: {answer.content}"


SKILL_BODY = "Fill the form in three steps; the field names are in references/fields.md."


def _skills_folder() -> Path:
    """The skills this worker serves, under the effects folder: each file written only if it is
    missing (a test may change them on disk before it starts a worker again; two workers may
    start at once)."""
    root = _effects()
    folder = root / "skills" / "forms"
    (folder / "references").mkdir(parents=True, exist_ok=True)
    files = {
        folder / "SKILL.md": "---\nname: forms\ndescription: Fill in PDF forms.\n---\n"
        f"{SKILL_BODY}\n",
        folder / "references" / "fields.md": "name, date\n",
        root / "secret.txt": "not for the model\n",
    }
    for path, text in files.items():
        with contextlib.suppress(FileExistsError), open(path, "x", encoding="utf-8") as f:
            f.write(text)
    with contextlib.suppress(FileExistsError):
        (folder / "link.md").symlink_to(root / "secret.txt")
    return root / "skills"


def _triage(call: FauxCall) -> AssistantMessage:
    """The first agent: hands every conversation to billing (and answers if it gets it back)."""
    if any(m.role == "assistant" for m in call.context.messages):
        return faux_text("triage answers")
    return faux_tool_call("transfer_to_billing", {}, id="h1")


def _billing(call: FauxCall) -> AssistantMessage:
    """The handoff target, on a model of its own: its first request is marked in
    `stream-billing` and held at the run's gate (the test kills the worker meanwhile), then
    records a note with its own tool; then it answers with the system prompt and the tools of
    its request, to show they were billing's."""
    if not any(m.role == "tool_result" and m.tool_call_id == "b1" for m in call.context.messages):
        _append("stream-billing", f"{_run_id()} {os.getpid()}")
        _wait_for_gate(_run_id())
        return faux_tool_call("record", {"note": "refund"}, id="b1")
    names = sorted(t.name for t in call.context.tools)
    return faux_text(f"[{call.context.system_prompt}] done with {names}")


class _Agent(FauxProvider):
    """A faux provider answering every request with a function of it."""

    def __init__(self, name: str, answer: Any) -> None:
        super().__init__(provider=f"faux-{name}")
        self._answer = answer

    @property
    def pending(self) -> int:
        return 1

    def stream(self, model, context, options=None):  # type: ignore[no-untyped-def]
        self.set_responses([self._answer])
        return super().stream(model, context, options)


_providers["triage"] = _Agent("triage", _triage)  # type: ignore[assignment]
_providers["billing"] = _Agent("billing", _billing)  # type: ignore[assignment]
skills = load_skills(_skills_folder())
models: dict[str, Model] = {name: p.model for name, p in _providers.items()}
billing = AgentSpec(
    name="billing",
    description="Refunds and payments.",
    system_prompt="You are billing.",
    model=models["billing"],
    tools=[record],
)
triage = AgentSpec(
    name="triage", system_prompt="You are triage.", model=models["triage"], handoffs=[billing]
)
billing.handoffs.append(triage)
agents: list[AgentSpec] = [triage]
"""The agents the workers serve (billing is reached through triage's handoff)."""
tools: list[AgentTool | DurableTool] = [
    add,
    record,
    slow,
    DurableTool(charge, retry=False),
    pay,
    ask_size,
]
