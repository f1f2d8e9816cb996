"""What the test workers serve: scripted faux models and tools, registered by name.

A worker process cannot share a `FauxProvider` with the test, so each script is set up here
under a model name, and answers as a function of the request: the n-th answer of the script for
a request whose context holds n assistant messages. The same request always gets the same
answer, so a request retried after its worker was killed streams the same message, and an
in-process run of the same script (`scripted_provider`) builds the same transcript.

Tools record what they did in files under `AGENTCORE_TEMPORAL_TEST_DIR` (one line per finished
execution), so that a test can count side effects across worker processes.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import anyio
from temporalio import activity

from agentcore import AgentMessage, AgentSpec, AgentTool, AssistantMessage, tool
from agentcore.approvals import InputRequired, input_answer
from agentcore.llm import Model
from agentcore.messages import ToolCall
from agentcore.temporal import DurableTool
from agentcore.testing import FauxCall, FauxProvider, faux_message, faux_text, faux_tool_call

SCRIPTS: dict[str, list[AssistantMessage]] = {
    "tools": [
        faux_message(
            "Let me add and record.",
            ToolCall(id="c1", name="add", arguments={"a": 2, "b": 40}),
            ToolCall(id="c2", name="record", arguments={"note": "first"}),
        ),
        faux_tool_call("add", {"a": "x"}, id="c3"),  # invalid arguments: an error result
        faux_tool_call("nope", {}, id="c4"),  # an unknown tool
        faux_text("2 + 40 = 42, and I took a note."),
    ],
    "slow-tool": [
        faux_tool_call("slow", {"note": "n1", "seconds": 3}, id="s1"),
        faux_tool_call("record", {"note": "after"}, id="s2"),
        faux_text("done"),
    ],
    "chat": [faux_text(f"answer {i}") for i in range(1, 20)],
    "loop": [faux_tool_call("record", {"note": f"step {i}"}, id=f"l{i}") for i in range(1, 9)]
    + [faux_text("looped")],
    "gated-loop": [faux_tool_call("record", {"note": f"step {i}"}, id=f"l{i}") for i in range(1, 9)]
    + [faux_text("looped")],
    "once": [faux_tool_call("charge", {"amount": 5}, id="p1"), faux_text("charged")],
    "question": [faux_tool_call("ask_size", {}, id="q1"), faux_text("sized")],
    "failing": [
        faux_message(
            "Trying both.",
            ToolCall(id="f1", name="explode", arguments={"note": "async"}),
            ToolCall(id="f2", name="explode_sync", arguments={"note": "sync"}),
        ),
        faux_text("Both failed."),
    ],
    "approval": [
        faux_message(
            "Paying.",
            ToolCall(id="a1", name="pay", arguments={"amount": 20}),
            ToolCall(id="a2", name="pay", arguments={"amount": 5000}),
            ToolCall(id="a3", name="record", arguments={"note": "asked"}),
        ),
        faux_text("Paid what was approved."),
    ],
}
"""Each script's answers, by model name."""

SLOW_MODELS = {"slow-stream": [faux_text("a long and slowly streamed answer " * 10)]}
"""Scripts streamed slowly (a few seconds per answer), to kill a worker mid-stream."""

GATED = {"gated-loop"}
"""Scripts whose second answer waits for the test's gate file (`gate-<workflow id>`): the run is
then held between its first and second turn, with no tool running, for as long as the test
needs."""


def _effects() -> Path:
    default = Path(tempfile.gettempdir()) / "agentcore-temporal-effects"  # in-process runs
    path = Path(os.environ.get("AGENTCORE_TEMPORAL_TEST_DIR", default))
    path.mkdir(parents=True, exist_ok=True)
    return path


def _append(name: str, line: str) -> None:
    with open(_effects() / name, "a", encoding="utf-8") as f:
        f.write(line + "\n")


def _run_id() -> str:
    """The workflow id of the run a tool call belongs to (or "local" in-process)."""
    return activity.info().workflow_id if activity.in_activity() else "local"


def _wait_for_gate(run_id: str) -> None:
    gate = _effects() / f"gate-{run_id}"
    for _ in range(3000):  # at most a minute: the test opens it right after its kill
        if gate.exists():
            return
        time.sleep(0.02)


def _answer(  # type: ignore[no-untyped-def]
    script: list[AssistantMessage], marker: str | None, gated: bool = False
):
    def answer(call: FauxCall) -> AssistantMessage:
        n = sum(1 for m in call.context.messages if m.role == "assistant")
        if marker is not None:
            _append(marker, f"{_run_id()} {os.getpid()} {n}")
        if gated and n == 1:
            _wait_for_gate(_run_id())
        return script[min(n, len(script) - 1)]

    return answer


class _Scripted(FauxProvider):
    """A faux provider that answers from its script by the request's context, forever."""

    def __init__(self, name: str, script: list[AssistantMessage], **kwargs: object) -> None:
        super().__init__(provider=f"faux-{name}", **kwargs)  # type: ignore[arg-type]
        self._script = _answer(script, f"stream-{name}" if kwargs else None, name in GATED)

    @property
    def pending(self) -> int:
        return 1

    def stream(self, model, context, options=None):  # type: ignore[no-untyped-def]
        self.set_responses([self._script])
        return super().stream(model, context, options)


def scripted_provider(name: str) -> FauxProvider:
    """The faux provider of script `name` (also for the in-process runs of the tests)."""
    if name in SLOW_MODELS:
        return _Scripted(name, SLOW_MODELS[name], tokens_per_second=20, chunk_chars=8)
    return _Scripted(name, SCRIPTS[name])


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
    """Take a while, then write a note.

    Args:
        note: what to write.
        seconds: how long to take.
    """
    _append("started", f"{_run_id()} {tool_call_id} {os.getpid()}")
    await anyio.sleep(seconds)
    _append("effects", f"{_run_id()} {tool_call_id} {note}")
    return f"slowly noted: {note}"


@tool
async def charge(amount: int, tool_call_id: str) -> str:
    """Charge an amount (must not run twice).

    Args:
        amount: how much.
    """
    _append("started", f"{_run_id()} {tool_call_id} {os.getpid()}")
    await anyio.sleep(float(os.environ.get("AGENTCORE_TEMPORAL_CHARGE_SECONDS", "0")))
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


SIZE = {"type": "object", "properties": {"size": {"enum": ["S", "M", "L"]}}, "required": ["size"]}


@tool
async def ask_size(tool_call_id: str) -> str:
    """Ask the user which size, then note it (a question for the user: see agentcore.approvals)."""
    answer = input_answer(tool_call_id, "size")
    _append("started", f"{_run_id()} {tool_call_id} {os.getpid()}")
    if answer is None:
        raise InputRequired("size", "Which size?", SIZE)
    _append("effects", f"{_run_id()} {tool_call_id} {answer.action} {answer.content}")
    return f"{answer.action}: {answer.content}"


@tool
async def explode(note: str) -> str:
    """Fail with a message of its own.

    Args:
        note: put into the message.
    """
    raise ValueError(f"the disk is full ({note})")


@tool
def explode_sync(note: str) -> str:
    """Fail with a message of its own, in a worker thread.

    Args:
        note: put into the message.
    """
    raise ValueError(f"the disk is full ({note})")


def _triage(call: FauxCall) -> AssistantMessage:
    """The first agent: hands every conversation to billing (and answers if it gets it back)."""
    if any(m.role == "assistant" for m in call.context.messages):
        return faux_text("triage answers")
    return faux_tool_call("transfer_to_billing", {}, id="h1")


def _billing(call: FauxCall) -> AssistantMessage:
    """The handoff target, on a model of its own: "refund" runs `slow` (killed mid-call by the
    test), "pay" runs `pay` (waits for approval); then it answers with the system prompt and
    the tools of the request, to show they were billing's."""
    messages = call.context.messages
    prompt = next(m for m in messages if m.role == "user").content
    if not any(m.role == "assistant" for m in messages):  # its first turn (triage's is text)
        if prompt == "refund":
            return faux_tool_call("slow", {"note": "refund", "seconds": 3}, id="b1")
        return faux_tool_call("pay", {"amount": 7}, id="b1")
    names = sorted(t.name for t in call.context.tools)
    return faux_text(f"[{call.context.system_prompt}] done with {names}")


class _Agent(FauxProvider):
    """A faux provider answering every request with a function of it."""

    def __init__(self, name: str, answer: object) -> None:
        super().__init__(provider=f"faux-{name}")
        self._answer = answer

    @property
    def pending(self) -> int:
        return 1

    def stream(self, model, context, options=None):  # type: ignore[no-untyped-def]
        self.set_responses([self._answer])  # type: ignore[list-item]
        return super().stream(model, context, options)


_providers = {name: scripted_provider(name) for name in [*SCRIPTS, *SLOW_MODELS]}
_providers["triage"] = _Agent("triage", _triage)
_providers["billing"] = _Agent("billing", _billing)

models: dict[str, Model] = {name: p.model for name, p in _providers.items()}

billing = AgentSpec(
    name="billing",
    description="Refunds and payments.",
    system_prompt="You are billing.",
    model=models["billing"],
    tools=[slow, pay],
)
triage = AgentSpec(
    name="triage",
    system_prompt="You are triage.",
    model=models["triage"],
    handoffs=[billing],
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
    explode,
    explode_sync,
]
local_tools: list[AgentTool] = [add, record, slow, charge, pay, ask_size, explode, explode_sync]

__all__ = ["AgentMessage", "agents", "local_tools", "models", "scripted_provider", "tools"]
