"""The memory stores against real databases: in-memory, SQLite (FTS5) and PostgreSQL
(`scripts/postgres`): scopes never leak, expiry, update and delete in scope, hostile queries."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agentcore.memory import (
    MAX_MEMORY_CHARS,
    BackedMemoryStore,
    MemoryScope,
    MemoryStore,
    SqliteMemoryStore,
)
from agentcore.messages import now_ms

pytestmark = pytest.mark.anyio

ALICE = MemoryScope(user="alice")
BOB = MemoryScope(user="bob")


def test_every_store_is_a_memory_store(store: BackedMemoryStore) -> None:
    assert isinstance(store, MemoryStore)


async def test_search_finds_a_fact_with_its_provenance(store: BackedMemoryStore) -> None:
    added = await store.add(
        "The user prefers dark roast coffee",
        scope=ALICE,
        kind="preference",
        session_id="s1",
        message_ids=["#3"],
    )
    await store.add("The user's dog is called Rex", scope=ALICE)
    found = await store.search("Which coffee does the user prefer?", scope=ALICE)
    assert found[0].id == added.id
    assert found[0].session_id == "s1" and found[0].message_ids == ("#3",)
    assert found[0].kind == "preference" and found[0].scope == ALICE


async def test_scopes_never_leak_even_for_the_same_words(store: BackedMemoryStore) -> None:
    wider = MemoryScope(user="alice", agent="support")
    secret = await store.add("bob's password hint is marmalade", scope=BOB)
    await store.add("alice likes marmalade", scope=ALICE)
    await store.add("support notes about marmalade", scope=wider)
    for scope, want in ((ALICE, "alice likes"), (wider, "support notes")):
        found = await store.search("marmalade password hint bob", scope=scope)
        assert [r.text[: len(want)] for r in found] == [want]
        assert [r.scope for r in await store.list(scope=scope)] == [scope]
    # another scope can neither change nor delete it
    assert await store.update(secret.id, scope=ALICE, text="hacked") is None
    assert await store.delete(secret.id, scope=ALICE) is False
    assert [r.text for r in await store.list(scope=BOB)] == ["bob's password hint is marmalade"]


async def test_two_users_writing_at_once_each_see_only_their_own(
    store: BackedMemoryStore,
) -> None:
    async def write(user: str) -> None:
        for i in range(20):
            await store.add(f"note {i} shared word", scope=MemoryScope(user=user))

    async with anyio.create_task_group() as tg:
        tg.start_soon(write, "u1")
        tg.start_soon(write, "u2")
    for user in ("u1", "u2"):
        scope = MemoryScope(user=user)
        listed = await store.list(scope=scope)
        assert len(listed) == 20 and {r.scope for r in listed} == {scope}
        found = await store.search("shared word", scope=scope, limit=50)
        assert len(found) == 20 and {r.scope for r in found} == {scope}


async def test_expired_records_are_never_returned(store: BackedMemoryStore) -> None:
    gone = await store.add("old trip to Oslo", scope=ALICE, expires_at=now_ms() - 1)
    kept = await store.add("next trip to Oslo", scope=ALICE, expires_at=now_ms() + 3_600_000)
    assert [r.id for r in await store.search("Oslo trip", scope=ALICE)] == [kept.id]
    assert [r.id for r in await store.list(scope=ALICE)] == [kept.id]
    assert await store.update(gone.id, scope=ALICE, text="revived") is None


async def test_update_and_delete_in_scope(store: BackedMemoryStore) -> None:
    record = await store.add("likes tea", scope=ALICE)
    updated = await store.update(record.id, scope=ALICE, text="likes green tea", kind="preference")
    assert updated is not None and updated.text == "likes green tea"
    assert [r.text for r in await store.search("green", scope=ALICE)] == ["likes green tea"]
    assert await store.delete(record.id, scope=ALICE) is True
    assert await store.search("tea", scope=ALICE) == []
    assert await store.delete(record.id, scope=ALICE) is False


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced',
        "NEAR(a b) OR text:* AND NOT (",
        "*",
        "') DROP TABLE memories; --",
        "a & b | !c <-> d:*",
        "",
        "   ",
        "x" * 100_000,
        "word " * 10_000,
    ],
)
async def test_hostile_queries_neither_fail_nor_widen_the_match(
    store: BackedMemoryStore, query: str
) -> None:
    await store.add("nothing about the query here", scope=ALICE)
    await store.add("table memories drop text", scope=BOB)
    found = await store.search(query, scope=ALICE)
    assert all(r.scope == ALICE for r in found)
    assert all("drop" not in r.text for r in found)
    assert len(await store.list(scope=BOB)) == 1  # nothing dropped


async def test_bad_records_are_refused_with_what_was_expected(store: BackedMemoryStore) -> None:
    with pytest.raises(ValueError, match=f"at most {MAX_MEMORY_CHARS}"):
        await store.add("x" * (MAX_MEMORY_CHARS + 1), scope=ALICE)
    with pytest.raises(ValueError, match="non-empty string"):
        await store.add("  ", scope=ALICE)
    with pytest.raises(ValueError, match="kind must be"):
        await store.add("fine", scope=ALICE, kind="Not A Kind!")
    with pytest.raises(TypeError, match="MemoryScope"):
        await store.add("fine", scope="alice")  # type: ignore[arg-type]
    assert await store.list(scope=ALICE) == []


async def test_embeddings_rank_by_meaning_when_words_differ(tmp_path: Path) -> None:
    vocabulary = {"coffee": [1.0, 0.0], "espresso": [0.9, 0.1], "dog": [0.0, 1.0]}

    def embed(texts: list[str]) -> list[list[float]]:
        out = []
        for text in texts:
            vec = [0.0, 0.0]
            for word, v in vocabulary.items():
                if word in text.lower():
                    vec = [a + b for a, b in zip(vec, v, strict=True)]
            out.append(vec)
        return out

    store = SqliteMemoryStore(tmp_path / "m.db", embed=embed)
    try:
        want = await store.add("drinks espresso every morning", scope=ALICE)
        await store.add("has a dog", scope=ALICE)
        found = await store.search("coffee?", scope=ALICE, limit=1)
        assert [r.id for r in found] == [want.id]
        assert await SqliteMemoryStore(tmp_path / "m.db").search("coffee", scope=ALICE) == []
    finally:
        store.close()


def test_a_sessions_database_can_hold_the_memory_tables(tmp_path: Path) -> None:
    from agentcore.sessions import SqliteSessionStore

    path = tmp_path / "sessions.db"
    with SqliteSessionStore(path) as sessions:
        sessions.create().close()
    memory = SqliteMemoryStore(path)

    async def main() -> None:
        await memory.add("kept beside the sessions", scope=ALICE)
        assert len(await memory.list(scope=ALICE)) == 1

    anyio.run(main)
    memory.close()
    with SqliteSessionStore(path) as sessions:
        assert len(sessions.list()) == 1
