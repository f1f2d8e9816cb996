"""Lone surrogates never reach a session, and an old session file holding one is still read.

A prompt with `\\ud800`, or an emoji a provider streamed as its two UTF-16 halves in two chunks,
used to be stored as it was; every view that encodes text as UTF-8 (the terminal, the web's
JSON) then failed on the session for good. Now a message's JSON form joins a pair of halves into
its character and replaces a lone half with U+FFFD, and the Agent keeps that same form.
"""

from __future__ import annotations

import io
import json
import zlib
from pathlib import Path

import pytest

from agentcore import Agent, ApprovalRequest, TextContent, ToolResultMessage, UserMessage
from agentcore.cli import main
from agentcore.cli._store import open_store
from agentcore.messages import from_json, to_json
from agentcore.sessions import JsonlSessionStore, SessionStore, SqliteSessionStore
from agentcore.testing import FauxProvider, faux_text
from support.postgres import STORE_KINDS, open_postgres_store

EMOJI_HALVES = "\ud83d\ude00"  # U+1F600 as two UTF-16 code units, as a split stream leaves it


def make_store(kind: str, where: Path) -> SessionStore:
    if kind == "postgres":
        return open_postgres_store(where)
    return JsonlSessionStore(where) if kind == "jsonl" else SqliteSessionStore(where / "s.db")


def utf8_out() -> io.TextIOWrapper:
    """A stdout that fails, as a UTF-8 terminal's does, on text UTF-8 cannot hold."""
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")


def cli_text(*argv: str) -> str:
    out, err = utf8_out(), utf8_out()
    code = main(list(argv), stdout=out, stderr=err)
    out.flush()
    err.flush()
    text = out.buffer.getvalue().decode()  # type: ignore[attr-defined]
    assert code == 0, err.buffer.getvalue().decode()  # type: ignore[attr-defined]
    return text


@pytest.mark.anyio
@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_surrogates_are_replaced_when_stored_and_in_memory(tmp_path: Path, kind: str) -> None:
    # the answer streams in 1-character chunks: the emoji's halves arrive in two deltas
    faux = FauxProvider([faux_text(f"smile {EMOJI_HALVES} and \udc00 half")], chunk_chars=1)
    with make_store(kind, tmp_path) as store:
        session = store.create()
        agent = Agent(initial_state={"model": faux.model}, session=session)
        await agent.prompt("bad \ud800 prompt")
        user, answer = agent.state.messages
        assert isinstance(user, UserMessage) and user.content == "bad \ufffd prompt"
        assert answer.text == "smile \U0001f600 and \ufffd half"  # type: ignore[union-attr]
        assert store.load(session.id).messages == agent.state.messages  # memory == disk
        session.close()


def test_every_field_of_the_json_form_is_valid_unicode() -> None:
    result = ToolResultMessage(
        tool_call_id="c\ud800",
        tool_name="t",
        content=[TextContent(text="out \udfff")],
        details={"k\ud800": ["v\ud83d\ude00"]},
    )
    doc = to_json(result)
    json.dumps(doc, ensure_ascii=False).encode()  # no UnicodeEncodeError
    back = from_json(doc)
    assert back.tool_call_id == "c\ufffd"  # type: ignore[union-attr]
    assert back.details == {"k\ufffd": ["v\U0001f600"]}  # type: ignore[union-attr]
    request = from_json(to_json(ApprovalRequest(tool_call_id="a", tool_name="x\ud800")))
    assert request.tool_name == "x\ufffd"  # type: ignore[union-attr]


def _write_old_file(path: Path, marker: str, replacement: str) -> None:
    """Put `replacement` where `marker` is in a JSONL session, as an older version wrote it (a
    `\\ud800` escape), with a valid checksum."""
    lines = []
    for line in path.read_bytes().splitlines():
        record = json.loads(line)
        if marker in line.decode():
            record.pop("crc")
            text = json.dumps(record, separators=(",", ":")).replace(marker, replacement)
            body = text.encode()
            line = b'%s,"crc":"%08x"}' % (body[:-1], zlib.crc32(body))
        lines.append(line)
    path.write_bytes(b"\n".join(lines) + b"\n")


def test_an_old_file_with_a_lone_surrogate_is_listed_shown_and_resumed() -> None:
    faux = FauxProvider([faux_text("answer MARK-B")])
    with open_store(None) as store:
        session = store.create()
        Agent(initial_state={"model": faux.model}, session=session).prompt_sync("MARK-A x")
        session.close()
        path = Path(store.directory) / f"{session.id}.jsonl"
    _write_old_file(path, "MARK-A", "\\ud800")
    _write_old_file(path, "MARK-B", "\\udc00\\ud83d\\ude00")
    assert "\\ud800" in path.read_text()  # the old form really is on disk

    listed = cli_text("sessions", "list")
    assert session.id in listed and "\ufffd x" in listed
    shown = cli_text("sessions", "show", session.id)
    assert "> \ufffd x\nanswer \ufffd\U0001f600\n" in shown
    with open_store(None) as store:
        resumed = Agent(session=store.open(session.id))
        assert resumed.state.messages[0].content == "\ufffd x"  # type: ignore[union-attr]
        resumed.session.close()  # type: ignore[union-attr]


@pytest.mark.anyio
@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_nul_in_a_prompt_a_steer_and_an_answer_is_kept_by_every_store(
    tmp_path: Path, kind: str
) -> None:
    # PostgreSQL's text refuses NUL: the session's title (the first prompt) used to fail the
    # write, and an assistant error was stored in place of the prompt
    agent: Agent | None = None

    def steer_then_answer(call: object) -> object:
        assert agent is not None
        agent.steer("steer \x00 here")
        return faux_text("answer \x00 one")

    faux = FauxProvider([steer_then_answer, faux_text("answer\x00two")])
    with make_store(kind, tmp_path) as store:
        session = store.create()
        agent = Agent(initial_state={"model": faux.model}, session=session)
        await agent.prompt("first \x00 prompt\x00")
        texts = [
            m.content if isinstance(m, UserMessage) else m.text  # type: ignore[union-attr]
            for m in agent.state.messages
        ]
        assert texts == [
            "first \x00 prompt\x00",
            "answer \x00 one",
            "steer \x00 here",
            "answer\x00two",
        ]
        assert all(m.stop_reason == "stop" for m in agent.state.messages if m.role == "assistant")  # type: ignore[union-attr]
        session.close()
    with make_store(kind, tmp_path) as store:  # read back by a fresh store: the same messages
        assert store.load(session.id).messages == agent.state.messages
        (info,) = store.list()
        assert info.title == "first \ufffd prompt\ufffd"  # the title shows it as the page does
