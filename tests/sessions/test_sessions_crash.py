"""Crash safety: a child process runs an Agent with a session and is killed (SIGKILL) at random
moments — while streaming, while a tool runs, between turns. After every kill the stored session
must load, be well formed, have lost none of the messages stored before, and be resumable."""

from __future__ import annotations

import random
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentcore import Agent, AssistantMessage, ToolResultMessage, UserMessage
from agentcore.messages import to_json
from agentcore.sessions import (
    JsonlSessionStore,
    SessionRecoveryWarning,
    SessionStore,
    SqliteSessionStore,
)
from agentcore.testing import FauxProvider, faux_text
from support.postgres import STORE_KINDS, open_postgres_store, schema_for

ITERATIONS = 16
SEED = 20240611

CHILD = r"""
import random, sys
import anyio
from agentcore import Agent, AgentToolResult, AgentTool
import os
from agentcore.sessions import JsonlSessionStore, PostgresSessionStore, SqliteSessionStore
from agentcore.testing import FauxProvider, faux_text, faux_message
from agentcore.messages import ToolCall

kind, where, sid, seed = sys.argv[1:5]
rng = random.Random(int(seed))
if kind == "postgres":
    store = PostgresSessionStore(os.environ["AGENTCORE_TEST_POSTGRES_URL"], schema=where)
else:
    store = JsonlSessionStore(where) if kind == "jsonl" else SqliteSessionStore(where)
counter = iter(range(1 << 30))

def pause():
    return rng.randint(0, 40)

def respond(call):
    if rng.random() < 0.55:
        calls = [
            ToolCall(id=f"c{seed}-{next(counter)}", name="work", arguments={"ms": pause()})
            for _ in range(rng.randint(1, 3))
        ]
        return faux_message("working on it", *calls)
    return faux_text("an answer " * rng.randint(1, 8))

faux = FauxProvider([respond] * 100000, tokens_per_second=600, chunk_chars=(3, 9))

async def work(tool_call_id, args, signal, on_update):
    phase("T")
    await anyio.sleep(args["ms"] / 1000)
    return AgentToolResult.text(f"did {args['ms']}")

def phase(mark):
    sys.stdout.write(mark + "\n")
    sys.stdout.flush()

tool = AgentTool(name="work", description="work", parameters={"type": "object"}, execute=work)
agent = Agent(initial_state={"tools": [tool]}, session=store.open(sid), stream_fn=faux.stream_fn)

def listener(event):
    if event.type == "message_update":
        phase("S")
    elif event.type == "turn_end":
        phase("B")
        if rng.random() < 0.2:
            agent.steer(f"steer {seed}")

agent.subscribe(listener)

async def main():
    phase("ready")
    i = 0
    while True:
        messages = agent.state.messages
        if messages and messages[-1].role != "assistant":
            await agent.continue_()
        else:
            if rng.random() < 0.3:
                agent.follow_up(f"follow {seed}-{i}")
            await agent.prompt(f"prompt {seed}-{i}")
        i += 1

anyio.run(main)
"""


def open_store(kind: str, tmp_path: Path) -> SessionStore:
    if kind == "jsonl":
        return JsonlSessionStore(tmp_path / "sessions")
    if kind == "postgres":
        return open_postgres_store(tmp_path)
    return SqliteSessionStore(tmp_path / "sessions.db")


def check_well_formed(messages: list[Any]) -> None:
    """What a model needs of a transcript: every executed tool call answered exactly once,
    results right after their assistant message, nothing unknown."""
    assert messages and messages[0].role == "user"
    i = 0
    while i < len(messages):
        message = messages[i]
        assert message.role in ("user", "assistant", "tool_result"), message
        i += 1
        if isinstance(message, AssistantMessage):
            ids = [c.id for c in message.tool_calls]
            results: list[str] = []
            while i < len(messages) and isinstance(messages[i], ToolResultMessage):
                results.append(messages[i].tool_call_id)
                i += 1
            if message.stop_reason in ("error", "aborted"):
                assert results == [], "results for calls that never ran"
            else:
                assert sorted(results) == sorted(ids), (ids, results)
        else:
            assert not isinstance(message, ToolResultMessage), "a result without its call"


async def resume(store: SessionStore, sid: str) -> None:
    faux = FauxProvider([faux_text("resumed")])
    with store.open(sid) as session:
        agent = Agent(session=session, stream_fn=faux.stream_fn)
        agent.clear_all_queues()
        if agent.state.messages[-1].role == "assistant":
            await agent.prompt(UserMessage(content="resume"))
        else:
            await agent.continue_()
        assert agent.state.messages[-1].stop_reason == "stop"
        assert agent.state.messages[-1].text == "resumed"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("kind", STORE_KINDS)
def test_killed_at_random_points_the_session_survives(kind: str, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    where = str(tmp_path / "sessions") if kind == "jsonl" else str(tmp_path / "sessions.db")
    if kind == "postgres":
        where = schema_for(tmp_path)
    with open_store(kind, tmp_path) as store:
        sid = store.create().id
    kept: list[dict[str, Any]] = []
    phases: list[str] = []
    recovered = 0
    for iteration in range(ITERATIONS):
        command = [sys.executable, "-c", CHILD, kind, where, sid, str(iteration)]
        with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as child:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "ready", "the child did not start"
            time.sleep(rng.uniform(0.0, 0.3))
            child.kill()
            child.wait()
            marks = child.stdout.read().split()
        assert child.returncode == -9, "the child died on its own"
        phases.append(marks[-1] if marks else "start")
        with open_store(kind, tmp_path) as store:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", SessionRecoveryWarning)
                raw = store.load(sid, repair=False).messages
                data = store.load(sid)
            recovered += any(issubclass(w.category, SessionRecoveryWarning) for w in caught)
            stored = [to_json(m) for m in raw]
            assert stored[: len(kept)] == kept, f"iteration {iteration}: earlier messages lost"
            check_well_formed(data.messages)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SessionRecoveryWarning)  # a torn line is cut
                anyio.run(resume, store, sid)
            kept = [to_json(m) for m in store.load(sid, repair=False).messages]
            check_well_formed(store.load(sid).messages)
    print(f"{kind}: {len(kept)} messages, kill phases {phases}, torn records {recovered}")
    assert len(kept) > 4 * ITERATIONS
    # the kills landed in different places (streaming "S", tools "T", between turns "B")
    assert len(set(phases) & {"S", "T", "B"}) >= 2, phases
