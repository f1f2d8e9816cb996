"""The Agent's state follows its events through one reducer, and a failed run is closed by the
loop's own failure path (issue 9): the state read at every event agrees with the events so far,
and a failure whose text cannot even be had still settles the run with well-nested events."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from agentcore import Agent, AgentEvent, AgentLoopConfig
from agentcore.testing import FauxProvider, check_well_formed, faux_text, faux_tool_call
from support import ONE_TURN_NO_UPDATES, echo_tool, run

pytestmark = pytest.mark.anyio


class Unprintable(Exception):
    """An exception whose `str()` raises too."""

    def __str__(self) -> str:
        raise RuntimeError("no text for you")


def unprintable_hook(*args: Any) -> Any:
    raise Unprintable


async def test_state_agrees_with_the_events_at_every_event() -> None:
    faux = FauxProvider([faux_tool_call("echo", {"a": 1}), faux_text("3")])
    agent = Agent(initial_state={"model": faux.model, "tools": [echo_tool()]})
    seen: list[tuple[str, int, bool, frozenset[str], str | None]] = []

    def listener(event: AgentEvent) -> None:
        state = agent.state
        streaming = state.streaming_message
        seen.append(
            (
                event.type,
                len(state.messages),
                streaming is not None,
                state.pending_tool_calls,
                streaming.role if streaming is not None else None,
            )
        )

    agent.subscribe(listener)
    await agent.prompt("add them")
    by_type: dict[str, list[tuple[Any, ...]]] = {}
    for row in seen:
        by_type.setdefault(row[0], []).append(row)
    # message_start opens the streamed message, message_end adds it and closes it
    assert all(row[2] for row in by_type["message_start"])
    assert all(not row[2] for row in by_type["message_end"])
    assert [row[1] for row in by_type["message_end"]] == [1, 2, 3, 4]
    assert all(row[4] == "assistant" for row in by_type["message_update"])
    # a tool call is pending between its start and end events
    (start,) = by_type["tool_execution_start"]
    (end,) = by_type["tool_execution_end"]
    assert len(start[3]) == 1 and end[3] == frozenset()
    assert seen[-1][0] == "agent_end" and not seen[-1][2]
    assert agent.state.usage.total_tokens == sum(
        m.usage.total_tokens for m in agent.state.messages if m.role == "assistant"
    )


async def test_a_failure_without_text_still_ends_the_loop_well_formed() -> None:
    faux = FauxProvider([faux_text("never")])
    config = AgentLoopConfig(model=faux.model, transform_context=unprintable_hook)
    r = await run("hi", config=config)  # `run` checks the events are well formed
    last = r.result[-1]
    assert last.stop_reason == "error" and last.error_message == "Unprintable"
    assert r.types == ONE_TURN_NO_UPDATES


async def test_a_failure_without_text_settles_the_agent() -> None:
    faux = FauxProvider([faux_text("never")])
    agent = Agent(initial_state={"model": faux.model}, transform_context=unprintable_hook)
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    added = await agent.prompt("hi")
    check_well_formed(events)
    assert [e.type for e in events] == ONE_TURN_NO_UPDATES
    assert added == events[-1].messages  # type: ignore[union-attr]
    assert agent.state.error_message == "Unprintable"
    assert not agent.state.is_streaming and agent.state.streaming_message is None
    await agent.prompt("again")  # the agent is idle and usable
    assert len(agent.state.messages) == 4


_CHANGING = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse"})


def _is_state(node: ast.expr) -> bool:
    """`x._state`, `self._state` or a variable named `state`."""
    return (isinstance(node, ast.Attribute) and node.attr == "_state") or (
        isinstance(node, ast.Name) and node.id == "state"
    )


def _private_state_writes(source: str) -> list[str]:
    """Writes of an `AgentState` outside `AgentState` itself: assignments to a private field
    (`x._state._f = ...`, `state._f = ...`), and changes of its transcript list in place
    (`state.messages.append(m)`, `del state.messages[-1]`, or through a name bound to it,
    `messages = self._state.messages; messages.append(m)`) instead of through `_reduce`."""
    found = []
    tree = ast.parse(source)
    aliases = set()  # names bound to a state's transcript list
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            value = node.value
            if (
                isinstance(value, ast.Attribute)
                and value.attr == "messages"
                and _is_state(value.value)
            ):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                aliases |= {t.id for t in targets if isinstance(t, ast.Name)}

    def transcript(node: ast.expr) -> bool:
        if isinstance(node, ast.Attribute) and node.attr in ("messages", "_messages"):
            return _is_state(node.value)
        return isinstance(node, ast.Name) and node.id in aliases

    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = list(node.targets)
        for target in targets:
            if isinstance(target, ast.Attribute) and target.attr.startswith("_"):
                if _is_state(target.value):
                    found.append(f"line {node.lineno}: {ast.unparse(target)}")
            elif isinstance(target, ast.Subscript) and transcript(target.value):
                found.append(f"line {node.lineno}: {ast.unparse(target)}")
            elif isinstance(node, ast.AugAssign) and transcript(target):
                found.append(f"line {node.lineno}: {ast.unparse(target)} +=")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _CHANGING
            and transcript(node.func.value)
        ):
            found.append(f"line {node.lineno}: {ast.unparse(node.func)}()")
    return found


def test_only_the_reducer_writes_the_state() -> None:
    from pathlib import Path

    src = Path(__file__).resolve().parents[1] / "src" / "agentcore"
    files = [src / "agent.py", *sorted((src / "_agent").glob("*.py"))]
    for path in files:
        if path.name == "state.py":  # AgentState itself
            continue
        assert _private_state_writes(path.read_text("utf-8")) == [], path.name
    made_up = "def reset(self):\n    self._state._limit = None\n    state._output = 1\n"
    assert len(_private_state_writes(made_up)) == 2
    # what `_decide` and `_deny_waiting` did before they went through the reducer
    made_up = (
        "def _decide(self, kept):\n"
        "    messages = self._state.messages\n"
        "    messages.append(kept)\n"
        "    messages.pop()\n"
        "def _deny_waiting(self, reason):\n"
        "    for request in self._state.pending_approvals:\n"
        "        self._state.messages.append(deny(request, reason))\n"
        "def more(state, m):\n"
        "    state.messages.extend([m])\n"
        "    state.messages[0] = m\n"
        "    del state.messages[-1]\n"
        "    state.messages += [m]\n"
        "    copy = list(state.messages)\n"
        "    copy.append(m)\n"  # a copy is not the state
    )
    assert len(_private_state_writes(made_up)) == 7
