"""Sessions of `agentcore chat` (saved, `--continue`, `--session ID`) and `agentcore sessions
list|show|rm`, driven in-process through `main(...)` with the faux model (the plain, scriptable
mode: stdin is not a terminal). The terminal UI is tested in a pseudo-terminal: test_cli_tty.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentcore.cli._store import default_sessions_dir, open_store
from agentcore.sessions import JsonlSessionStore
from agentcore.testing import FauxProvider, faux_text, faux_tool_call

from .harness import cli, ref


def seen(faux: FauxProvider, call: int) -> list[tuple[str, str]]:
    """What the model saw in request `call`: (role, text) pairs."""
    out: list[tuple[str, str]] = []
    for m in faux.calls[call].context.messages:
        content: Any = m.content
        text = (
            content
            if isinstance(content, str)
            else "".join(getattr(b, "text", "") for b in content)
        )
        out.append((m.role, text))
    return out


def store() -> JsonlSessionStore:
    return open_store()


# --- saving and resuming -------------------------------------------------------------------------


def test_every_chat_is_saved_in_the_default_store(faux: FauxProvider) -> None:
    faux.set_responses([faux_text("Hello!"), faux_text("Fine.")])
    result = cli("chat", "--model", ref(faux), "--system", "Be brief.", stdin="hi\nhow are you?\n")
    assert result.code == 0, result.err
    assert (result.out, result.err) == ("Hello!\nFine.\n", "")  # the plain mode says nothing more
    [info] = store().list()
    data = store().load(info.id)
    assert [(m.role, getattr(m, "text", None) or m.content) for m in data.messages] == [
        ("user", "hi"),
        ("assistant", "Hello!"),
        ("user", "how are you?"),
        ("assistant", "Fine."),
    ]
    assert data.state.model == faux.model and data.state.system_prompt == "Be brief."
    assert Path(store().directory) == default_sessions_dir()


def test_a_chat_without_a_prompt_leaves_no_session(faux: FauxProvider) -> None:
    assert cli("chat", "--model", ref(faux), stdin="/help\n/model\n").code == 0
    assert store().list() == []


def test_continue_resumes_the_latest_session(faux: FauxProvider) -> None:
    faux.set_responses([faux_text("one"), faux_text("two"), faux_text("three")])
    assert cli("chat", "--model", ref(faux), stdin="first\n").code == 0
    assert cli("chat", "--model", ref(faux), stdin="second\n").code == 0
    result = cli("chat", "--continue", stdin="third\n")  # the session's own model
    assert result.code == 0, result.err
    assert result.out == "three\n"
    assert seen(faux, 2) == [("user", "second"), ("assistant", "two"), ("user", "third")]
    assert len(store().list()) == 2


def test_session_by_id_or_unique_beginning(faux: FauxProvider) -> None:
    faux.set_responses([faux_text("a1"), faux_text("b1"), faux_text("a2"), faux_text("b2")])
    cli("chat", "--model", ref(faux), stdin="about a\n")
    cli("chat", "--model", ref(faux), stdin="about b\n")
    first, second = (info.id for info in store().list())
    assert cli("chat", "--session", first, stdin="more a\n").out == "a2\n"
    assert seen(faux, 2)[0] == ("user", "about a")
    unique = next(i for i in range(1, len(second) + 1) if not first.startswith(second[:i]))
    assert cli("chat", "--session", second[:unique], "-s", "new", stdin="more b\n").out == "b2\n"
    assert seen(faux, 3)[0] == ("user", "about b")
    assert faux.calls[3].context.system_prompt == "new"  # the command line wins


def test_unknown_and_ambiguous_session_ids(faux: FauxProvider) -> None:
    result = cli("chat", "--model", ref(faux), "--session", "nope", stdin="x\n")
    assert result.code == 2 and result.out == ""
    assert "no session 'nope' in " in result.err and "agentcore sessions list" in result.err
    result = cli("chat", "--continue", "--model", ref(faux), stdin="x\n")
    assert result.code == 2 and "no session to continue in" in result.err
    faux.set_responses([faux_text("1"), faux_text("2")])
    cli("chat", "--model", ref(faux), stdin="a\n")
    cli("chat", "--model", ref(faux), stdin="b\n")
    result = cli("chat", "--session", "0", stdin="x\n")  # both ids begin with a 0
    assert result.code == 2 and "ambiguous" in result.err
    assert faux.call_count == 2


def test_a_session_in_use_is_refused(faux: FauxProvider) -> None:
    faux.set_responses([faux_text("1")])
    cli("chat", "--model", ref(faux), stdin="a\n")
    [info] = store().list()
    other = JsonlSessionStore(store().directory)
    with other.open(info.id):
        result = cli("chat", "--continue", stdin="x\n")
        assert result.code == 2 and "open in another agentcore process" in result.err
        result = cli("sessions", "rm", info.id)
        assert result.code == 2 and "in use by another agentcore process" in result.err
    assert faux.call_count == 1


def test_reset_starts_a_new_session_and_keeps_the_old(faux: FauxProvider) -> None:
    faux.set_responses([faux_text("1"), faux_text("2")])
    result = cli("chat", "--model", ref(faux), stdin="a\n/reset\nb\n")
    assert result.code == 0 and "(conversation cleared)" in result.err
    sessions = [store().load(info.id) for info in store().list()]
    assert [[m.role for m in s.messages] for s in sessions] == [["user", "assistant"]] * 2
    assert seen(faux, 1) == [("user", "b")]


def test_sessions_dir_option(faux: FauxProvider, tmp_path: Path) -> None:
    faux.set_responses([faux_text("1"), faux_text("2")])
    where = str(tmp_path / "elsewhere")
    cli("chat", "--model", ref(faux), "--sessions-dir", where, stdin="a\n")
    assert store().list() == []
    assert len(JsonlSessionStore(where).list()) == 1
    result = cli("chat", "--continue", "--sessions-dir", where, stdin="b\n")
    assert result.out == "2\n" and seen(faux, 1)[0] == ("user", "a")
    assert "FIRST PROMPT" in cli("sessions", "--sessions-dir", where, "list").out
    assert cli("sessions", "list", "--sessions-dir", where).out.count("\n") == 2


# --- agentcore sessions ------------------------------------------------------------------------


def test_sessions_list_show_rm(faux: FauxProvider, tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("x")
    faux.set_responses(
        [
            faux_text("Hello!"),
            faux_tool_call("calculator", {"expression": "6*7"}),
            faux_text("**42**"),
        ]
    )
    cli("chat", "--model", ref(faux), stdin="hi there\n")
    cli("chat", "--model", ref(faux), "--tools", "--root", str(tmp_path), stdin="what is 6*7\n")
    first, second = (info.id for info in store().list())

    result = cli("sessions", "list")
    assert result.code == 0, result.err
    header, *rows = result.out.splitlines()
    assert header.split() == ["ID", "UPDATED", "MODEL", "MESSAGES", "FIRST", "PROMPT"]
    assert rows[0].split()[0] == first and rows[0].endswith("hi there")
    assert rows[1].split()[0] == second and rows[1].endswith("what is 6*7")
    assert rows[1].split()[3:5] == [ref(faux), "4"]

    result = cli("sessions", "show", second[:-3])
    assert result.code == 0, result.err
    assert result.out.splitlines()[0].startswith(f"session {second} · {ref(faux)} · 4 messages")
    assert result.out.splitlines()[1:] == [
        "> what is 6*7",
        '[tool] calculator {"expression": "6*7"}',
        "[calculator ok]",
        "  6*7 = 42",
        "**42**",
    ]

    result = cli("sessions", "rm", first)
    assert (result.code, result.out) == (0, f"deleted {first}\n")
    assert [info.id for info in store().list()] == [second]
    for argv in (["show", first], ["rm", first, second]):
        result = cli("sessions", *argv)
        assert result.code == 2 and f"no session {first!r}" in result.err
    assert [info.id for info in store().list()] == [second]  # rm deletes all or nothing


def test_sessions_list_when_there_are_none() -> None:
    result = cli("sessions", "list")
    assert result.code == 0 and result.out == ""
    assert "(no sessions in " in result.err


def test_sessions_usage_errors() -> None:
    for argv in (["sessions"], ["sessions", "show"], ["sessions", "rm"], ["sessions", "fly"]):
        result = cli(*argv)
        assert result.code == 2 and result.err, argv


def test_help_shows_the_session_options() -> None:
    result = cli("chat", "--help")
    assert result.code == 0
    text = " ".join(result.out.split())
    for option in ("-c, --continue", "--session ID", "--sessions-dir DIR"):
        assert option in text
    assert "resume the most recently updated session" in text
    assert "sessions" in cli("--help").out
    result = cli("sessions", "--help")
    assert result.code == 0 and all(a in result.out for a in ("list", "show", "rm"))


def test_continue_and_session_exclude_each_other() -> None:
    result = cli("chat", "--continue", "--session", "x", stdin="")
    assert result.code == 2 and "not allowed with" in result.err
