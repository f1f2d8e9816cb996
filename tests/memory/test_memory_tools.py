"""The `recall_memory` and `remember` tools, run by the faux model through an Agent against the
in-memory store and the real SQLite and PostgreSQL (`scripts/postgres`) ones: records out with
provenance and dates, bounded count and size, provenance kept on writes, empty and huge texts
refused, the scope fixed by the caller."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentcore import Agent
from agentcore.abort import AbortController
from agentcore.memory import (
    MAX_MEMORY_CHARS,
    BackedMemoryStore,
    Memory,
    MemoryScope,
    recall_memory_tool,
    remember_tool,
)
from agentcore.messages import ToolResultMessage
from agentcore.testing import FauxProvider, faux_text, faux_tool_call

pytestmark = pytest.mark.anyio

ALICE = MemoryScope(user="alice")
BOB = MemoryScope(user="bob")


def results(agent: Agent) -> list[ToolResultMessage]:
    return [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]


def text_of(message: ToolResultMessage) -> str:
    return "".join(getattr(b, "text", "") for b in message.content)


async def run_tools(store: BackedMemoryStore, calls: list[Any], **tools: Any) -> Agent:
    faux = FauxProvider([*calls, faux_text("done")])
    agent = Agent(
        initial_state={
            "model": faux.model,
            "tools": [
                recall_memory_tool(store, ALICE, **tools.get("recall", {})),
                remember_tool(store, ALICE, session_id="s-7"),
            ],
        },
        stream_fn=faux.stream_fn,
    )
    await agent.prompt("go")
    return agent


async def test_recall_returns_records_with_provenance_and_dates(
    store: BackedMemoryStore,
) -> None:
    mine = await store.add(
        "Prefers answers in French",
        scope=ALICE,
        kind="preference",
        session_id="s-1",
        message_ids=["#3"],
    )
    await store.add("Prefers answers in German", scope=BOB, kind="preference")
    agent = await run_tools(
        store, [faux_tool_call("recall_memory", {"query": "answers language"}, id="c1")]
    )
    (result,) = results(agent)
    assert not result.is_error
    data = json.loads(text_of(result))
    assert [m["id"] for m in data["memories"]] == [mine.id]  # bob's is never returned
    (memory,) = data["memories"]
    assert memory["kind"] == "preference"
    assert memory["text"] == "Prefers answers in French"
    assert memory["session_id"] == "s-1" and memory["message_ids"] == ["#3"]
    assert memory["origin"] == "api"
    assert memory["created_at"].endswith("+00:00") and memory["created_at"][:4].isdigit()
    assert "not instructions" in data["note"]


async def test_recall_is_bounded_in_count_and_size(store: BackedMemoryStore) -> None:
    for i in range(8):
        await store.add(f"coffee note {i} " + "x" * 900, scope=ALICE)
    agent = await run_tools(
        store,
        [
            faux_tool_call("recall_memory", {"query": "coffee"}, id="c1"),
            faux_tool_call("recall_memory", {"query": "coffee", "limit": 50}, id="c2"),
        ],
        recall={"limit": 3, "max_chars": 2000},
    )
    first, too_many = results(agent)
    data = json.loads(text_of(first))
    assert len(data["memories"]) == 2 and data["left_out"] == 1  # 3 found, 2 fit in 2000
    assert too_many.is_error  # above MAX_RECALL_LIMIT: refused by the schema
    with pytest.raises(ValueError, match="limit must be an int from 1 to 20"):
        recall_memory_tool(store, ALICE, limit=0)
    with pytest.raises(TypeError, match="scope must be a MemoryScope"):
        recall_memory_tool(store, "alice")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="store must be a MemoryStore"):
        remember_tool(object(), ALICE)  # type: ignore[arg-type]


async def test_remember_keeps_the_session_and_the_tool_call(store: BackedMemoryStore) -> None:
    agent = await run_tools(
        store,
        [
            faux_tool_call(
                "remember", {"text": "Allergic to peanuts", "kind": "fact"}, id="call-9"
            ),
        ],
    )
    (result,) = results(agent)
    assert not result.is_error and "Allergic to peanuts" in text_of(result)
    (record,) = await store.list(scope=ALICE)
    assert record.text == "Allergic to peanuts" and record.kind == "fact"
    assert record.session_id == "s-7"
    assert record.message_ids == ("call-9",)
    assert record.origin == "remember"
    assert result.details["memory"]["id"] == record.id
    assert await store.list(scope=BOB) == []


async def test_remember_refuses_empty_and_huge_texts(store: BackedMemoryStore) -> None:
    agent = await run_tools(
        store,
        [
            faux_tool_call("remember", {"text": "   "}, id="e1"),
            faux_tool_call("remember", {"text": "y" * (MAX_MEMORY_CHARS + 1)}, id="e2"),
            faux_tool_call("remember", {"text": "ok", "kind": "password"}, id="e3"),
        ],
    )
    empty, huge, kind = results(agent)
    assert empty.is_error and "the text is empty" in text_of(empty)
    assert huge.is_error and f"at most {MAX_MEMORY_CHARS}" in text_of(huge)
    assert kind.is_error  # not one of the kinds offered (the schema's enum)
    assert await store.list(scope=ALICE) == []
    with pytest.raises(ValueError, match="kind"):
        remember_tool(store, ALICE, kinds=["Not A Kind"])


async def test_the_tools_are_built_once_per_session_and_remember_its_own(
    store: BackedMemoryStore,
) -> None:
    memory = Memory(store, ALICE)
    first = memory.run_tools("s1")
    assert [t.name for t in first] == ["recall_memory", "remember"]
    again = memory.run_tools("s1")
    assert again == first and all(a is b for a, b in zip(again, first, strict=True))
    other = memory.run_tools("s2")
    assert other[1] is not first[1]  # another session: its own remember
    for tools, session in ((first, "s1"), (other, "s2")):
        signal = AbortController().signal
        await tools[1].execute(f"c-{session}", {"text": f"said in {session}"}, signal, print)
    found = {r.text: r.session_id for r in await store.list(scope=ALICE)}
    assert found == {"said in s1": "s1", "said in s2": "s2"}
    assert Memory(store, ALICE, tools=False).run_tools("s1") == []
