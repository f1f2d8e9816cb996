"""`agentcore chat` in a real pseudo-terminal (pexpect): the live terminal UI.

Each test starts `cli_tty_app.py` (the chat on a scripted faux model, see its docstring) in a
pseudo-terminal, types into it and waits, with a timeout, for text on its screen (as a terminal
emulator, pyte, draws it); nothing is timed. The sessions live in the test's own `AGENTCORE_HOME`.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.cli.cli_tty_app import AGENTS

from agentcore.skills import load_skills

pexpect = pytest.importorskip("pexpect")
pyte = pytest.importorskip("pyte")
pytest.importorskip("prompt_toolkit")

if sys.platform == "win32":
    pytest.skip("pseudo-terminals are POSIX", allow_module_level=True)

APP = Path(__file__).with_name("cli_tty_app.py")
MCP_SERVER = Path(__file__).parent.parent / "mcp" / "mcp_test_server.py"
ASKING_SERVER = Path(__file__).parent.parent / "mcp" / "interactive_server.py"
SPINNER = "[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]"
USAGE = r"── [\d,]+ in( \([\d,]+ cached\))? / [\d,]+ out tokens · free · faux-tty/faux-1"
UP = "\x1b[A"
ROWS, COLUMNS = 50, 100


class Terminal:
    """The chat in a pseudo-terminal of 100x50, its output fed to a terminal emulator (pyte):
    `screen` is what a person would see."""

    def __init__(
        self, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
    ) -> None:
        # pexpect answers no cursor position requests, which prompt_toolkit would wait for
        environ = {
            **os.environ,
            "TERM": "xterm-256color",
            "PROMPT_TOOLKIT_NO_CPR": "1",
            **(env or {}),
        }
        environ.pop("NO_COLOR", None)
        self.child = pexpect.spawn(
            sys.executable,
            [str(APP), *args],
            env=environ,
            dimensions=(ROWS, COLUMNS),
            cwd=str(cwd) if cwd is not None else None,
            encoding="utf-8",
            timeout=20,
        )
        self._screen = pyte.Screen(COLUMNS, ROWS)
        self._stream = pyte.Stream(self._screen)
        self.raw = ""

    def _read(self, timeout: float) -> None:
        data = self.child.read_nonblocking(65536, timeout=timeout)
        self.raw += data
        self._stream.feed(data)

    @property
    def screen(self) -> str:
        """The terminal's screen, as lines of text."""
        return "\n".join(line.rstrip() for line in self._screen.display).rstrip("\n")

    def wait(self, pattern: str, flags: int = 0, *, count: int = 1, timeout: float = 20) -> None:
        """Read until `pattern` (a regex) shows `count` times on the screen."""
        regex = re.compile(pattern, flags)
        deadline = time.monotonic() + timeout
        while len(regex.findall(self.screen)) < count:
            try:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise pexpect.TIMEOUT("")
                self._read(left)
            except pexpect.TIMEOUT:
                raise AssertionError(f"{pattern!r} not shown; the screen:\n{self.screen}") from None
            except pexpect.EOF:
                raise AssertionError(f"{pattern!r} not shown before exit:\n{self.screen}") from None

    def send(self, keys: str) -> None:
        self.child.send(keys)

    def line(self, text: str) -> None:
        """Type a line and Enter."""
        self.child.send(text + "\r")

    def quit(self) -> int:
        """Ctrl-D; returns the exit status."""
        self.send("\x04")
        return self.end()

    def end(self) -> int:
        """Wait for the exit; returns the exit status."""
        while True:
            try:
                self._read(20)
            except pexpect.EOF:
                break
        self.child.wait()
        status = self.child.exitstatus
        assert status is not None, self.screen
        return int(status)

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)


@pytest.fixture
def terminals() -> Iterator[list[Terminal]]:
    started: list[Terminal] = []
    yield started
    for terminal in started:
        terminal.close()


Start = Callable[..., Terminal]


@pytest.fixture
def open_terminal(terminals: list[Terminal]) -> Iterator[Start]:
    def start(*args: str, env: dict[str, str] | None = None) -> Terminal:
        terminal = Terminal(*args, env=env)
        terminals.append(terminal)
        terminal.wait("agentcore chat with faux-tty/faux-1: /help for commands, Ctrl-D quits")
        return terminal

    yield start


def test_an_answer_is_rendered_as_markdown_with_a_usage_line(open_terminal: Start) -> None:
    term = open_terminal()
    term.line("markdown")
    term.wait(USAGE)
    lines = term.screen.splitlines()
    assert lines[1] == "> markdown"
    answer = "\n".join(lines[2:])
    assert re.search(r"^ +Big Title$", answer, re.M)  # a centred heading
    assert "Some bold words and inline code." in answer
    assert re.search(r'^ print\("hello"\)$', answer, re.M)  # a code block
    assert re.search(r"^ • first item\n • second item\n\nseen: markdown\n── ", answer, re.M)
    assert "#" not in answer and "**" not in answer and "```" not in answer
    assert term.quit() == 0
    assert re.search(r"\(saved as session [0-9a-f-]+: agentcore chat --continue", term.screen)


def test_spinner_while_waiting_and_steering_while_running(
    open_terminal: Start, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    term = open_terminal(env={"TTY_GATE": str(gate)})
    term.line("hold")
    term.wait(SPINNER + " waiting for faux-tty/faux-1…  \\(Ctrl-C stops · Enter sends a steering")
    assert term.screen.splitlines()[-1] == "»"  # the input line stays: it steers
    term.line("steer me")  # the answer has not begun: this goes to agent.steer
    term.wait(r"^» steer me\n" + SPINNER, re.M)
    gate.write_text("go\n")
    term.wait(USAGE + r"\n>$", re.M)
    # one run: the steering message was in the next request of the same run
    assert "\n".join(term.screen.splitlines()[1:]).startswith(
        "> hold\n» steer me\nheld\n\nseen: hold\necho: steer me\n\nseen: hold | steer me\n── "
    )
    assert term.screen.splitlines()[-1] == ">"
    assert term.quit() == 0


def test_steering_while_an_answer_streams(open_terminal: Start) -> None:
    term = open_terminal()
    term.line("long")
    term.wait("word word word word")  # streaming (for 5 seconds, or more on a busy machine)
    term.line("be brief")
    term.wait(r"^» be brief$", re.M)  # sent while the answer streams: a steering message
    # the same run's next request
    term.wait(r"echo: be brief\n\nseen: long \| be brief\n── ", timeout=60)
    assert len(re.findall(USAGE, term.screen)) == 1
    assert term.quit() == 0


def test_thinking_and_a_failed_answer(open_terminal: Start) -> None:
    term = open_terminal()
    term.line("think")
    term.wait(r"> think\nthinking: Let me see\.\nYes, that is it\.\nthought\n\nseen: think\n── ")
    term.line("fail")
    term.wait(r"> fail\nerror: the model fell over\n── ")
    term.line("still here?")
    term.wait(r"echo: still here\?")
    assert term.quit() == 0


def test_ctrl_d_while_an_answer_streams_stops_it_and_quits(open_terminal: Start) -> None:
    term = open_terminal()
    term.line("endless")
    term.wait("word word word word")
    term.send("\x04")
    assert term.end() == 0
    assert re.search(r"\(stopped\)\n── .*\n(>\n)?\(saved as session ", term.screen), term.screen


def test_spinner_during_a_slow_tool_then_ctrl_c_stops_it(open_terminal: Start) -> None:
    pytest.importorskip("mcp")
    term = open_terminal("--mcp", f"{sys.executable} {MCP_SERVER}")
    term.line("tool")
    term.wait(r'\[tool\] wait \{"key": "k", "steps": 1\}\n')
    term.wait(SPINNER + " running wait: [^\n]*k step 1[^\n]*…")  # with the tool's progress
    term.send("\x03")
    term.wait(r"\[wait failed\]\n  Tool execution was aborted\.\n\(stopped\)\n── ")
    term.line("after")
    term.wait(r"echo: after\n\nseen: tool \| after")
    assert term.quit() == 0


def test_an_mcp_servers_question_is_shown_and_answered_in_the_terminal(
    open_terminal: Start,
) -> None:
    pytest.importorskip("mcp")
    term = open_terminal("--mcp", f"{sys.executable} {ASKING_SERVER}")
    term.line("order")
    term.wait(r"waiting for approval:\n  call_1  order: MCP server [^\n]*asks")
    term.wait(r"which size\?\n")
    term.wait(r"answer with \{size: small\|large, count: integer, gift: boolean \(optional\)\}")
    term.line('/approve {"size": "medium", "count": 2}')
    term.wait(r"does not match the requested schema")
    term.line('/approve {"size": "large", "count": 2}')
    term.wait(r"answered order")
    term.wait(r"ordered 2 large pizzas")
    term.wait(r"tool done")
    assert term.quit() == 0


def test_ctrl_c_stops_a_long_answer_and_the_chat_goes_on(open_terminal: Start) -> None:
    term = open_terminal()
    term.line("endless")
    term.wait("word word word word")
    term.send("\x03")
    term.wait(r"wo?r?d?\n\(stopped\)\n── ")
    term.line("next")
    term.wait(r"echo: next\n\nseen: endless \| next")
    # Ctrl-C twice: the second, while the answer stops, quits
    term.line("endless")
    term.wait(r"> endless\nword word word word", count=2)
    term.send("\x03\x03")
    assert term.end() == 130


def test_ctrl_c_with_nothing_running(open_terminal: Start) -> None:
    term = open_terminal()
    term.send("half a line")
    term.wait("> half a line")
    term.send("\x03")  # clears the line
    term.wait(r"^>$", re.M)
    term.send("\x03")  # says how to quit
    term.wait(r"\(Ctrl-D or /exit quits\)")
    term.line("/exit")
    assert term.end() == 0
    assert "echo" not in term.screen


def test_continue_restores_the_conversation_in_a_new_process(open_terminal: Start) -> None:
    term = open_terminal()
    term.line("remember 42")
    term.wait(USAGE)
    assert term.quit() == 0
    session = re.search(r"saved as session ([0-9a-f-]+)", term.screen)
    assert session is not None

    term = open_terminal("--continue")
    term.wait(rf"\(resumed session {session[1]}: 2 messages\)\n> remember 42\necho: remember 42\n")
    term.line("what was it?")
    term.wait(r"seen: remember 42 \| what was it\?")
    assert term.quit() == 0
    assert f"saved as session {session[1]}" in term.screen


def test_input_history_across_runs(open_terminal: Start) -> None:
    term = open_terminal()
    term.line("alpha one")
    term.wait("seen: alpha one")
    term.line("beta two")
    term.wait("seen: alpha one | beta two")
    assert term.quit() == 0

    term = open_terminal()
    term.wait(r"^>$", re.M)  # the prompt is drawn: its history is read
    term.send(UP + UP)  # back two lines: alpha one
    term.wait(r"^> alpha one$", re.M)
    term.send("\r")
    term.wait(r"echo: alpha one\n\nseen: alpha one\n")  # a new session: only this prompt
    assert term.quit() == 0
    history = Path(os.environ["AGENTCORE_HOME"]) / "chat_history"
    assert history.stat().st_mode & 0o777 == 0o600  # the prompts typed: for their owner only


def test_without_prompt_toolkit_the_chat_reads_lines(open_terminal: Start) -> None:
    term = open_terminal(env={"CLI_TTY_NO_PROMPT_TOOLKIT": "1"})
    term.line("markdown")
    term.wait(r"Some \*\*bold words\*\* and")  # plain text, as it streams
    term.wait(r"\(\d+ in / \d+ out tokens; conversation: ")  # the plain usage line
    term.line("again")
    term.wait("echo: again")
    term.send("\x03")  # at the prompt
    term.wait(r"\(Ctrl-D or /exit quits\)\n>$", re.M)
    term.line("/session")
    term.wait(r"\(session [0-9a-f-]+: 4 messages\)")
    assert term.quit() == 0
    assert re.search(r"\(saved as session [0-9a-f-]+: agentcore chat --continue", term.screen)


# -- what a terminal is sent: decisions taken elsewhere, control characters, HTML-like text ----


def _shell_session(open_terminal: Start, work: Path, command: str) -> str:
    """A `chat --shell` that ends with `command` waiting for approval; returns its session id."""
    term = open_terminal("--shell", "--root", str(work))
    term.line(f"shell: {command}")
    term.wait(r"waiting for approval:\n  \S+  shell: \$ " + re.escape(command))
    assert term.quit() == 0
    session = re.search(r"saved as session ([0-9a-f-]+)", term.screen)
    assert session is not None
    return session[1]


def _approve_elsewhere(session_id: str, arguments: dict[str, str]) -> None:
    """Another surface on the same store (the web server, a program) approves the waiting call
    with edited arguments: an agent with a `shell` tool of its own (not the terminal's)."""
    from agentcore import Agent, tool
    from agentcore.cli._store import open_store

    @tool(name="shell", requires_approval=True)
    def shell(command: str) -> str:
        """Elsewhere's shell."""
        return command

    with open_store(None) as store:
        session = store.open(session_id)
        try:
            agent = Agent(initial_state={"tools": [shell]}, session=session)
            (request,) = agent.state.pending_approvals
            agent.approve(request.tool_call_id, arguments=arguments)  # as the web API did
        finally:
            session.close()


def test_a_call_approved_elsewhere_is_asked_again_not_run(
    open_terminal: Start, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    sid = _shell_session(open_terminal, work, "echo safe > safe.txt")
    _approve_elsewhere(sid, {"command": "touch pwned"})

    term = open_terminal("--continue", "--shell", "--root", str(work))
    # said at once: the decision taken elsewhere, with what it would have run, and set aside
    term.wait(
        r"decided elsewhere and not run; the decision was set aside, decide here again:\n"
        r"  \S+ \(shell\) was approved outside this terminal with edited arguments:\n"
        r"    \S+  shell: \$ touch pwned\n"
        r"waiting for approval:\n  \S+  shell: \$ echo safe > safe\.txt\n"
    )
    term.line("anything")  # a new message: the waiting call is denied, nothing runs
    term.wait(r"echo: anything\n\nseen: shell: echo safe > safe\.txt \| anything\n── ")
    assert term.quit() == 0
    assert not (work / "pwned").exists() and not (work / "safe.txt").exists()


def test_a_shell_command_with_escapes_shows_exactly_on_the_approval_line(
    open_terminal: Start, tmp_path: Path
) -> None:
    term = open_terminal("--shell", "--root", str(tmp_path))
    term.line("escape")
    term.wait(
        r"waiting for approval:\n  \S+  shell: \$ touch pwned #\\x1b\[14Dls -la *\n"
        r"  \(control characters shown as \\xNN escapes, backslashes doubled: exactly what runs\)"
    )
    assert "$ ls -la" not in term.screen
    assert "\x1b[14D" not in term.raw  # the terminal was never sent the cursor move
    term.line("/deny")
    term.wait(r"denied shell")
    assert term.quit() == 0


def test_code_mode_shows_the_snippet_as_code_and_its_calls_under_it(open_terminal: Start) -> None:
    pytest.importorskip("pydantic_monty")
    term = open_terminal("--tools", "--code-mode")
    term.line("code")
    term.wait(r"seen: code")
    screen = term.screen
    lines = screen.splitlines()
    start = lines.index("[code] run_code")
    assert lines[start + 1 : start + 4] == [
        '  │ a = await calculator(expression="6*7")  # \\x1b]0;pwned title\\x07',
        '  │ b = await calculator(expression="2**10")',
        '  │ print("sum", int(a.split("= ")[1]) + int(b.split("= ")[1]))',
    ], screen
    assert lines[start + 4 : start + 10] == [
        '    [tool] calculator {"expression": "6*7"}',
        "    [calculator ok]",
        "      6*7 = 42",
        '    [tool] calculator {"expression": "2**10"}',
        "    [calculator ok]",
        "      2**10 = 1024",
    ], screen
    assert lines[start + 10 : start + 12] == ["[run_code ok]", "  sum 1066"], screen
    assert "\x1b]0;" not in term.raw  # the title escape was never sent
    assert term.quit() == 0


def test_escapes_in_an_answer_are_shown_not_obeyed(open_terminal: Start) -> None:
    term = open_terminal()
    term.line("osc")
    term.wait(r"copied\\x1b\]52;c;cm0gLXJmIH4=\\x07 and \\x1b\]0;pwned title\\x07 done")
    assert "\x1b]52" not in term.raw and "\x1b]0;" not in term.raw
    assert term.quit() == 0


@pytest.mark.parametrize("plain", [False, True], ids=["rich", "plain"])
def test_text_that_looks_like_html_is_shown_as_written(open_terminal: Start, plain: bool) -> None:
    term = open_terminal(env={"CLI_TTY_NO_PROMPT_TOOLKIT": "1"} if plain else None)
    term.line("html")
    term.wait(r"seen: html")
    screen = term.screen
    for text in (
        "In Java, List<String> names holds names.",
        "<ol><li>one</li>",
        "<li>two</li></ol>",
        "after the list",
        "<tool_response>",
        "fifteen items here",
        "</tool_response>",
    ):
        assert text in screen, screen
    assert term.quit() == 0


def test_a_call_waiting_for_an_answer_says_so_and_the_server_is_named_by_its_own_name(
    open_terminal: Start,
) -> None:
    """Issue 30: the terminal showed `[order ok]` for a call still waiting for the user's
    answer, and named the server by its whole command line."""
    pytest.importorskip("mcp")
    term = open_terminal("--mcp", f"{sys.executable} {ASKING_SERVER}")
    term.line("order")
    term.wait(r"\[order waiting for input\]")
    term.wait(r"call_1  order: MCP server 'interactive-server' asks: How many pizzas")
    assert "[order ok]" not in term.screen
    assert str(ASKING_SERVER) not in term.screen
    term.line('/approve {"size": "large", "count": 2}')
    term.wait(r"\[order ok\]")
    term.wait(r"ordered 2 large pizzas")
    assert term.quit() == 0


def test_mcp_sampling_is_asked_at_the_terminal_and_answered_on_the_input_line(
    open_terminal: Start,
) -> None:
    """Issue 30: the command line could not allow MCP sampling. With `--mcp-sampling` each
    request is shown and runs only when the person answers y on the input line."""
    pytest.importorskip("mcp")
    term = open_terminal(
        "--mcp",
        f"{sys.executable} {ASKING_SERVER}",
        "--mcp-sampling",
        "--mcp-sampling-max-tokens",
        "20",
    )
    term.line("sample")
    term.wait(
        r"MCP server 'interactive-server' asks faux-tty/faux-1 for an answer of at most 20 "
        r"tokens \(tool ask_mo\n?del\):"  # the line is wrapped at 100 columns
    )
    term.wait(r"system: Answer in one word\.\n\s*user: Capital of France\?\nallow it\? \[y/N\]")
    term.wait(r"waiting for your answer: type it and press Enter")
    term.line("y")
    term.wait(r"\[ask_model ok\]\n\s*faux-1 said: echo: Capital of France\?")
    term.wait(r"tool done")
    term.line("sample")
    term.wait(r"allow it\? \[y/N\]", count=2)
    term.line("n")
    term.wait(r"\[ask_model failed\]\n[^\n]*rejected the call")
    term.wait(r"the user did\s+not\s+approve")
    assert term.quit() == 0


def test_mcp_sampling_is_asked_with_input_without_prompt_toolkit(open_terminal: Start) -> None:
    pytest.importorskip("mcp")
    term = open_terminal(
        "--mcp",
        f"{sys.executable} {ASKING_SERVER}",
        "--mcp-sampling",
        env={"CLI_TTY_NO_PROMPT_TOOLKIT": "1"},
    )
    term.line("sample")
    term.wait(r"user: Capital of France\?\nallow it\? \[y/N\]$", re.M)
    term.line("yes")
    term.wait(r"faux-1 said: echo: Capital of France\?")
    term.wait(r"tool done")
    assert term.quit() == 0


def test_skills_the_project_folder_is_asked_about_once_listed_and_used(
    terminals: list[Terminal], tmp_path: Path
) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    mine = home / ".agents" / "skills" / "mine"
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_text("---\nname: mine\ndescription: The user's own.\n---\nMine.\n")
    notes = project / ".agents" / "skills" / "notes"
    notes.mkdir(parents=True)
    (notes / "SKILL.md").write_text(
        # YAML's double quotes decode \x1b and \x07: the skill holds the escapes themselves
        '---\nname: notes\ndescription: "Take notes \\x1b]0;pwned\\x07 briefly."\n---\n'
        "NOTES-BODY: be brief.\n"
    )
    assert "\x1b]0;pwned\x07" in load_skills(notes).skills[0].description
    state = tmp_path / "state"
    env = {"HOME": str(home), "AGENTCORE_HOME": str(state)}
    term = Terminal(env=env, cwd=project)
    terminals.append(term)
    term.wait(r"has skills \(notes\).*Load them\? \[y/N\]", re.S)
    assert str(project / ".agents" / "skills") in term.screen.replace("\n", "")
    term.line("y")
    term.wait("agentcore chat with faux-tty/faux-1: /help for commands, Ctrl-D quits")
    term.line("/skills")
    term.wait(r"notes: Take notes \\x1b\]0;pwned\\x07 briefly\.")
    term.wait(r"mine: The user's own\.")
    assert "\x1b]0;pwned" not in term.raw  # the description's escape is shown, not obeyed
    term.line("/skill nope")
    term.wait(r"no skill 'nope'")
    term.line("/skill notes hello there")
    term.wait(r"seen: Use the skill notes for this request\.")
    term.wait(r"NOTES-BODY: be brief\.")
    term.wait(r"hello there", count=2)
    assert term.quit() == 0
    assert json.loads((state / "trusted-skills.json").read_text()) == {
        str((project / ".agents" / "skills").resolve()): True
    }
    again = Terminal(env=env, cwd=project)  # the answer is remembered: not asked again
    terminals.append(again)
    again.wait("agentcore chat with faux-tty/faux-1: /help for commands, Ctrl-D quits")
    assert "Load them?" not in again.screen
    again.line("/skills")
    again.wait(r"notes: Take notes")
    assert again.quit() == 0


def test_with_agents_the_chat_names_who_speaks_and_each_handoff(
    open_terminal: Start, tmp_path: Path
) -> None:
    agents = tmp_path / "agents.toml"
    agents.write_text(AGENTS)
    term = open_terminal("--agents", str(agents))
    term.line("refund")
    term.wait(USAGE)
    shown = "\n".join(term.screen.splitlines()[1:])
    assert re.search(
        r"^> refund\ntriage:\n\[tool\] transfer_to_billing \{\}\n\[transfer_to_billing ok\]\n"
        r'  \{"assistant": "billing"\}\n\[handoff: triage → billing\]\nbilling:\n'
        r"Order 7 is refunded\.\n\nseen: refund",
        shown,
        re.M,
    ), shown
    term.line("and again")  # billing keeps the conversation: its name is not shown again
    term.wait(USAGE, count=2)
    again = term.screen.split("> and again\n", 1)[1]
    assert again.startswith("Order 7 is refunded."), again
    assert term.quit() == 0
