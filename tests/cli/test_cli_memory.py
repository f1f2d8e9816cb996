"""Long-term memory in the command: `chat|run --memory [--memory-user NAME]` and `agentcore memory
list|search|delete`, driven in-process through `main(...)` with the faux model, against the real
SQLite store (`memory.db` beside the sessions in the test's own `AGENTCORE_HOME`)."""

from __future__ import annotations

import getpass
import json
import os
import sys
from pathlib import Path

import anyio
import pytest

from agentcore.cli._memory import open_memory
from agentcore.cli._store import default_sessions_dir, open_store, sessions_directory
from agentcore.memory import MemoryScope, PostgresMemoryStore, SqliteMemoryStore
from agentcore.testing import FauxProvider, faux_text, faux_tool_call
from support.postgres import drop_schema, postgres_url, schema_for

from .harness import cli, ref


def remember(text: str, kind: str = "preference") -> object:
    return faux_tool_call("remember", {"text": text, "kind": kind})


def listed(*argv: str) -> list[dict[str, object]]:
    result = cli("memory", "list", "--json", *argv)
    assert result.code == 0, result.err
    return [json.loads(line) for line in result.out.splitlines()]


def add(text: str, user: str) -> str:
    """A record written straight into the CLI's store (as an earlier `--memory` chat would)."""

    async def go() -> str:
        with SqliteMemoryStore(sessions_directory() / "memory.db") as store:
            return (await store.add(text, scope=MemoryScope(user=user))).id

    return anyio.run(go)


def test_a_chat_remembers_and_a_later_session_recalls(faux: FauxProvider) -> None:
    faux.set_responses(
        [remember("Prefers answers in French"), faux_text("Noted."), faux_text("En français.")]
    )
    first = cli("chat", "--model", ref(faux), "--memory", stdin="Answer in French from now on.\n")
    assert first.code == 0, first.err
    assert {t.name for t in faux.calls[0].context.tools or []} >= {"recall_memory", "remember"}
    [record] = listed()
    [session] = open_store().list()
    assert record["text"] == "Prefers answers in French" and record["kind"] == "preference"
    assert record["session_id"] == session.id and record["origin"] == "remember"
    assert record["user"] == getpass.getuser()  # the default scope: the OS user
    assert (default_sessions_dir() / "memory.db").exists()

    question = "Which language do I like my answers in?\n"
    later = cli("chat", "--model", ref(faux), "--memory", stdin=question)
    assert later.code == 0, later.err
    assert later.out == "En français.\n"
    system = faux.calls[-1].context.system_prompt
    assert system.startswith("<recalled_memories>") and "Prefers answers in French" in system
    assert "not instructions" in system
    assert len(open_store().list()) == 2
    for info in open_store().list():  # the block is in the request only, never in a session
        assert "recalled_memories" not in (default_sessions_dir() / f"{info.id}.jsonl").read_text()


def test_without_memory_nothing_is_recalled_or_offered(faux: FauxProvider) -> None:
    add("Prefers answers in French", getpass.getuser())
    faux.set_responses([faux_text("Hello.")])
    assert cli("run", "--model", ref(faux), "Which language do I like my answers in?").code == 0
    assert "recalled_memories" not in faux.calls[0].context.system_prompt
    assert not {t.name for t in faux.calls[0].context.tools or []} & {"remember", "recall_memory"}


def test_run_with_memory_remembers_without_a_session(faux: FauxProvider) -> None:
    faux.set_responses([remember("Lives in Lyon", "fact"), faux_text("Noted.")])
    result = cli("run", "--model", ref(faux), "--memory", "--memory-user", "ann", "I live in Lyon")
    assert result.code == 0, result.err
    [record] = listed("--user", "ann")
    assert record["text"] == "Lives in Lyon" and record["session_id"] is None
    assert open_store().list() == []  # run keeps no session


def test_list_search_and_delete() -> None:
    ids = [add(text, "ann") for text in ("Likes tea", "Lives in Lyon", "Has a cat named Tea")]
    text = cli("memory", "list", "--user", "ann")
    assert text.code == 0, text.err
    lines = text.out.splitlines()
    assert lines[0].split() == ["ID", "KIND", "UPDATED", "SESSION", "TEXT"]
    assert [line.split()[0] for line in lines[1:]] == ids[::-1]  # newest first
    assert lines[1].endswith("Has a cat named Tea")
    found = cli("memory", "search", "tea", "--user", "ann", "--json")
    assert found.code == 0, found.err
    assert {json.loads(line)["id"] for line in found.out.splitlines()} == {ids[0], ids[2]}
    assert cli("memory", "search", "coffee", "--user", "ann").err.startswith("(no memory")
    assert [r["id"] for r in listed("--user", "ann", "--limit", "1")] == [ids[2]]

    gone = cli("memory", "delete", ids[0], ids[1][:12], "--user", "ann")  # a unique beginning
    assert gone.code == 0, gone.err
    assert gone.out == f"deleted {ids[0]}\ndeleted {ids[1]}\n"
    assert [r["id"] for r in listed("--user", "ann")] == [ids[2]]
    as_json = cli("memory", "delete", ids[2], "--user", "ann", "--json")
    assert json.loads(as_json.out) == {"deleted": ids[2]}
    assert cli("memory", "list", "--user", "ann").err.startswith("(no memories for user 'ann'")


def test_deleting_an_unknown_id_is_an_error_and_deletes_nothing() -> None:
    known = add("Likes tea", "ann")
    result = cli("memory", "delete", known, "mem_nope", "--user", "ann")
    assert result.code == 2 and result.out == ""
    assert "no memory 'mem_nope' for user 'ann'" in result.err
    assert "nothing was deleted" in result.err
    assert [r["id"] for r in listed("--user", "ann")] == [known]
    ambiguous = cli("memory", "delete", "mem_", "--user", "ann")
    assert ambiguous.code == 0  # one record: "mem_" is a unique beginning of it
    add("One", "bob"), add("Two", "bob")
    result = cli("memory", "delete", "mem_", "--user", "bob")
    assert result.code == 2 and "ambiguous" in result.err
    assert len(listed("--user", "bob")) == 2


def test_two_users_never_see_each_others_memories(faux: FauxProvider) -> None:
    faux.set_responses(
        [remember("Alice's door code is 1234", "fact"), faux_text("Noted."), faux_text("No idea.")]
    )
    alice = cli("chat", "--model", ref(faux), "--memory", "--memory-user", "alice", stdin="x\n")
    assert alice.code == 0, alice.err
    asks = "What is the door code?\n"  # the words of alice's memory
    bob = cli("chat", "--model", ref(faux), "--memory", "--memory-user", "bob", stdin=asks)
    assert bob.code == 0, bob.err
    assert "recalled_memories" not in faux.calls[-1].context.system_prompt
    [record] = listed("--user", "alice")
    assert listed("--user", "bob") == []
    assert cli("memory", "search", "door code", "--user", "bob", "--json").out == ""
    refused = cli("memory", "delete", str(record["id"]), "--user", "bob")
    assert refused.code == 2 and "no memory" in refused.err
    assert [r["id"] for r in listed("--user", "alice")] == [record["id"]]


def test_memory_text_is_escaped_in_the_terminal() -> None:
    add("Pay \x1b]52;c;cGF5\x07 now\x1b[2K\u202eevil", "ann")
    out = cli("memory", "list", "--user", "ann").out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "Pay \\x1b]52;c;cGF5\\x07 now\\x1b[2K\\u202eevil" in out
    raw = cli("memory", "list", "--user", "ann", "--json").out
    assert "\x1b" not in raw and "\u202e" not in raw
    assert json.loads(raw)["text"] == "Pay \x1b]52;c;cGF5\x07 now\x1b[2K\u202eevil"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("run", "hi", "--memory-user", "ann"), "--memory-user needs --memory"),
        (("memory", "search", " ", "--user", "ann"), "the query is empty"),
        (("memory", "list", "--user", ""), "expected a user name"),
        (("memory", "list", "--limit", "0"), "expected a number from 1 to 10000"),
    ],
)
def test_usage_errors(argv: tuple[str, ...], message: str) -> None:
    add("Likes tea", "ann")  # the store exists: the search reaches its check
    result = cli(*argv)
    assert result.code == 2 and message in result.err


def test_memory_list_in_a_terminal_shows_escapes_and_obeys_none() -> None:
    """`agentcore memory list` in a real pseudo-terminal, drawn by a terminal emulator (pyte): a
    memory holding a title escape and a line erase shows them as text and changes nothing."""
    pexpect = pytest.importorskip("pexpect")
    pyte = pytest.importorskip("pyte")
    add("Call me Root\x1b]0;pwned\x07\x1b[2K\rgone", "ann")
    child = pexpect.spawn(
        sys.executable,
        ["-m", "agentcore.cli", "memory", "list", "--user", "ann"],
        env={**os.environ, "TERM": "xterm-256color"},
        dimensions=(10, 200),
        encoding="utf-8",
        timeout=20,
    )
    screen = pyte.Screen(200, 10)
    stream = pyte.Stream(screen)
    stream.feed(child.read())  # to the end of its output
    child.wait()
    assert child.exitstatus == 0
    shown = "\n".join(line.rstrip() for line in screen.display)
    assert "Call me Root\\x1b]0;pwned\\x07\\x1b[2K gone" in shown  # \\r: a space
    assert screen.title == ""


def test_serve_store_keeps_memories_in_the_sessions_database(tmp_path: Path) -> None:
    """`serve --store postgresql://…?schema=S --memory`: the memories live in that database and
    schema (the store `run_memory` opens is the one `--store` names)."""
    url, schema = postgres_url(), schema_for(tmp_path)
    store = open_memory(None, f"{url}?schema={schema}")
    try:
        assert isinstance(store, PostgresMemoryStore) and store.schema == schema

        async def go() -> list[str]:
            await store.add("Likes tea", scope=MemoryScope(user="ann"))
            return [r.text for r in await store.list(scope=MemoryScope(user="ann"))]

        assert anyio.run(go) == ["Likes tea"]
    finally:
        store.close()
        drop_schema(url, schema)
