"""Control characters from a model, a tool or a session file never reach the terminal as they
are: `cli/_safe.py`, and the places that write such text (the plain renderer of `run` and
`chat`, `sessions list|show`, the approval line, the `--output-schema` value). The live terminal
UI is tested through a pseudo-terminal in test_cli_tty.py."""

from __future__ import annotations

import io
import json
import re

from agentcore import Agent, AgentToolResult, ApprovalRequest
from agentcore.cli import main
from agentcore.cli._approve import describe
from agentcore.cli._render import Renderer, make_styler
from agentcore.cli._safe import exact, json_text, visible
from agentcore.cli._store import open_store
from agentcore.events import ToolExecutionEndEvent, ToolExecutionStartEvent
from agentcore.testing import FauxProvider, faux_text

OSC52 = "\x1b]52;c;cm0gLXJmIH4=\x07"  # writes `rm -rf ~` to the clipboard
TITLE = "\x1b]0;pwned\x07"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # the styles a live view adds


def test_visible_escapes_controls_and_keeps_text() -> None:
    assert visible("plain\ttext\nnext line, ünïcode, 😀") == "plain\ttext\nnext line, ünïcode, 😀"
    assert visible(f"a{OSC52}b") == "a\\x1b]52;c;cm0gLXJmIH4=\\x07b"
    assert visible("x\ry\x08\x7f\x9b\u202eevil\ud800") == "x\\ry\\x08\\x7f\\x9b\\u202eevil\\ud800"


def test_exact_reads_back_to_the_same_bytes() -> None:
    assert exact("ls -la 'a\\nb'") == ("ls -la 'a\\nb'", False)  # nothing to escape: as it is
    shown, escaped = exact("touch x #\x1b[9Dls\t\\x1b")
    assert escaped and shown == "touch x #\\x1b[9Dls\\t\\\\x1b"
    decoded = shown.encode().decode("unicode_escape")
    assert decoded == "touch x #\x1b[9Dls\t\\x1b"  # exactly what runs


def test_json_text_escapes_what_json_lets_through() -> None:
    text = json_text({"k": "a\x9bb\u202ec\x1bd ü"})
    assert not RAW.search(text)
    assert json.loads(text) == {"k": "a\x9bb\u202ec\x1bd ü"}


def test_the_approval_line_shows_a_long_command_whole() -> None:
    command = "echo " + "a" * 400 + "; rm -rf ~"
    line = describe(
        ApprovalRequest(tool_call_id="c", tool_name="shell", arguments={"command": command})
    )
    assert line.endswith("; rm -rf ~")  # a padded command cannot hide its end


def test_the_plain_renderer_shows_controls() -> None:
    out, err = io.StringIO(), io.StringIO()
    renderer = Renderer(out, make_styler(err))
    renderer.error(f"provider said {TITLE}")
    renderer(ToolExecutionStartEvent(tool_call_id="1", tool_name="t\x1b[2J", args={"a": "\x9b"}))
    result = AgentToolResult.text(f"out {OSC52}")
    renderer(ToolExecutionEndEvent(tool_call_id="1", tool_name="t", result=result, is_error=False))
    assert not RAW.search(err.getvalue().replace("\n", ""))
    assert "\\x1b]52;c;" in err.getvalue() and "t\\x1b[2J" in err.getvalue()


def test_run_writes_the_answer_with_controls_visible() -> None:
    from agentcore.llm import register_model

    faux = FauxProvider([faux_text(f"copied{OSC52} {TITLE}done")])
    register_model(faux.model)
    out, err = io.StringIO(), io.StringIO()
    assert main(["run", "-m", f"{faux.provider_id}/faux-1", "hi"], stdout=out, stderr=err) == 0
    assert out.getvalue() == "copied\\x1b]52;c;cm0gLXJmIH4=\\x07 \\x1b]0;pwned\\x07done\n"


def test_sessions_list_and_show_print_no_escapes() -> None:
    faux = FauxProvider([faux_text(f"answer {OSC52}")])
    with open_store(None) as store:
        session = store.create()
        agent = Agent(
            initial_state={"model": faux.model, "system_prompt": f"sys{TITLE}"}, session=session
        )
        agent.prompt_sync(f"prompt {TITLE}")
        session.close()
    for argv in (["sessions", "list"], ["sessions", "show", session.id]):
        out, err = io.StringIO(), io.StringIO()
        assert main(argv, stdout=out, stderr=err) == 0, err.getvalue()
        assert "\x1b" not in out.getvalue() and "\x07" not in out.getvalue()
        assert "prompt \\x1b]0;pwned\\x07" in out.getvalue()
    assert "answer \\x1b]52;c;cm0gLXJmIH4=\\x07" in out.getvalue()
    assert "system: sys\\x1b]0;pwned\\x07" in out.getvalue()


def test_exact_shows_invisible_characters_on_the_approval_line() -> None:
    command = "rm\u00a0-rf /tmp/x\u200b; echo \U000e0041ok\u2028ü 😀"
    shown, escaped = exact(command)
    assert escaped
    assert shown == "rm\\xa0-rf /tmp/x\\u200b; echo \\U000e0041ok\\u2028ü 😀"
    assert shown.encode("latin-1", "backslashreplace").decode("unicode_escape") == command
    assert exact("naïve café\nnext") == ("naïve café\nnext", False)


def test_a_character_split_into_utf16_halves_across_deltas_shows_whole() -> None:
    from agentcore.cli._live import render_markdown
    from agentcore.events import MessageUpdateEvent
    from agentcore.llm import TextDeltaEvent
    from agentcore.messages import AssistantMessage

    out, err = io.StringIO(), io.StringIO()
    renderer = Renderer(out, make_styler(err))
    partial = AssistantMessage(content=[], api="faux", provider="p", model="m")
    for delta in ("smile \ud83d", "\ude00 and a lone \udc00", " half"):
        raw = TextDeltaEvent(content_index=0, delta=delta, partial=partial)
        renderer(MessageUpdateEvent(message=partial, assistant_message_event=raw))
    renderer.finish()
    assert out.getvalue() == "smile \U0001f600 and a lone \\udc00 half\n"
    assert render_markdown("a \ud83d\ude00 b \ud800", 40).endswith("a \U0001f600 b \\ud800")


def test_json_lines_escape_what_json_lets_through() -> None:
    from agentcore.llm import register_model

    faux = FauxProvider([faux_text("a\x9b[2Jb \u202e c \ud800 d")])
    register_model(faux.model)
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")  # as a terminal
    code = main(["run", "--json", "-m", f"{faux.provider_id}/faux-1", "hi"], stdout=out)
    out.flush()
    text = out.buffer.getvalue().decode()
    assert code == 0 and text and not RAW.search(text.replace("\n", ""))
    end = json.loads(text.splitlines()[-1])
    assert end["type"] == "agent_end"
    assert "a\x9b[2Jb \u202e c" in json.dumps(end, ensure_ascii=False)


def test_the_approval_line_says_how_much_of_long_arguments_it_cuts() -> None:
    arguments = {"path": "notes.txt", "text": "x" * 3000}
    line = describe(ApprovalRequest(tool_call_id="c", tool_name="write", arguments=arguments))
    cut = len(json.dumps(arguments)) - 2000
    assert line.endswith(f"… ({cut} more characters not shown)")


def test_a_memory_update_is_one_dim_line_per_record_controls_visible() -> None:
    from agentcore.cli._live import LiveView, Screen
    from agentcore.events import MemoryUpdateEvent
    from agentcore.memory import MemoryRecord, MemoryScope

    record = MemoryRecord(
        id="mem_1",
        text=f"Prefers\nFrench {OSC52}",
        kind="preference",
        scope=MemoryScope(user="alice"),
        created_at=1,
        updated_at=1,
    )
    update = MemoryUpdateEvent(
        extraction_id="ext_1", session_id=None, model="faux/cheap", records=(record,)
    )
    failed = MemoryUpdateEvent(
        extraction_id="ext_2", session_id=None, model="faux/cheap", error="the answer is not JSON"
    )
    out, err = io.StringIO(), io.StringIO()
    renderer = Renderer(out, make_styler(err))
    renderer(update)
    renderer(failed)
    screen_out = io.StringIO()
    live = LiveView(Screen(screen_out, lambda: None), lambda: "faux/cheap")
    live(update)
    live(failed)
    for shown in (err.getvalue(), ANSI.sub("", screen_out.getvalue())):
        lines = shown.splitlines()
        assert lines[0].startswith("remembered: Prefers French \\x1b]52;c;")  # one line
        assert lines[1] == "memory extraction failed: the answer is not JSON"
        assert not RAW.search(shown.replace("\n", "")) and len(lines) == 2
    assert out.getvalue() == ""  # stdout holds the answer only
