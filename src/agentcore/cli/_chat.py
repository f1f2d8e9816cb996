"""`agentcore chat`: an interactive conversation in the terminal, on a stateful `Agent`.

Each line is a prompt; the answer streams back and joins the agent's transcript, so the next
prompt is answered with the whole conversation in view. Lines starting with `/` are commands
(`/help`). Ctrl-C stops the answer being written and keeps the conversation; Ctrl-D (end of
input) or `/exit` quits. Input that is not a terminal (a pipe, a file, a test) is read line by
line the same way, without prompts.

Every chat is saved as a session of the command's store (`_store.open_store`), created at the
first prompt; `--continue` and `--session ID` resume one. `Chat` holds the conversation (agent,
session, commands, one run at a time); a front end drives it: `_PlainFront` here reads lines
(and is what scripts get), `_tty.TerminalFront` is the live terminal UI (prompt_toolkit).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TextIO

import anyio

from ..events import AgentEvent
from ..messages import AgentMessage, Usage
from ..sessions import JsonlSessionStore, Session, SessionError, SessionLockedError, SessionStore
from ._conversation import Chat, SessionOptions
from ._json import JsonLinesWriter
from ._mcp_sampling import SamplingQuestions
from ._render import Renderer, make_styler
from ._run import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    CommandError,
    GuardedOutput,
    Settings,
)
from ._sessions_cmd import find_session, latest_session
from ._store import open_store, private_history
from ._trace import Tracing

__all__ = ["chat", "history_path"]

_PROMPT = "> "


class _PlainView:
    """Today's line output: the answer on stdout, the rest on stderr (or JSON Lines events)."""

    def __init__(self, renderer: Renderer, trace: Tracing, json_writer: JsonLinesWriter | None):
        self._renderer = renderer
        self._trace = trace
        self._json = json_writer

    def finish(self) -> None:
        self._renderer.finish()

    def error(self, text: str) -> None:
        self._renderer.error(text)

    def notice(self, text: str) -> None:
        self._renderer.notice(text)

    def __call__(self, event: AgentEvent) -> None:
        (self._json or self._renderer)(event)

    def after_answer(self, added: Sequence[AgentMessage], total: Usage) -> None:
        self._trace.after_answer(added, total)


class _PlainFront:
    """Reads lines from stdin: with `input()` (line editing, history) in a terminal."""

    def __init__(self, chat: Chat, stdin: TextIO, stdout: GuardedOutput, *, interactive: bool):
        self.chat = chat
        self.stdin = stdin
        self.stdout = stdout
        self.interactive = interactive

    async def read_line(self) -> str | None:
        """The next line of input without its newline, or None at end of input."""
        if self.interactive:

            def prompt() -> str | None:
                try:
                    return input(_PROMPT)
                except EOFError:
                    return None

            line = await anyio.to_thread.run_sync(prompt, abandon_on_cancel=True)
            if line is None:
                self.chat.say("")
            return line
        raw = await anyio.to_thread.run_sync(self.stdin.readline, abandon_on_cancel=True)
        return raw.rstrip("\r\n") if raw else None

    async def loop(self) -> int:
        chat = self.chat
        if self.interactive:
            chat.say(f"agentcore chat with {chat.model_ref()}: /help for commands, Ctrl-D quits")
            for resumed, _ in chat.resumed_lines():
                chat.say(resumed)
        if not self.interactive and chat.reasked is not None:
            chat.say(chat.reasked)
        async with chat.interrupts.installed():
            while True:
                line = await self.read_line()
                if line is None:
                    break
                keep = await chat.handle(line)
                if self.stdout.broken:
                    return EXIT_BROKEN_PIPE
                if not keep:
                    break
        return EXIT_INTERRUPTED if chat.interrupts.quit_requested else EXIT_OK


def _open(options: SessionOptions) -> tuple[JsonlSessionStore, Session | None]:
    try:
        store = open_store(options.directory)
    except OSError as exc:
        raise CommandError(f"cannot use the sessions directory: {exc}") from None
    try:
        return store, _resume(store, options)
    except BaseException:
        store.close()
        raise


def _resume(store: JsonlSessionStore, options: SessionOptions) -> Session | None:
    """The session `--continue` or `--session ID` asks for, opened for writing (or None)."""
    sid: str | None
    if options.continue_last:
        sid = latest_session(store)
        if sid is None:
            raise CommandError(f"no session to continue in {store.directory}")
    elif options.session is not None:
        sid = find_session(store, options.session)
    else:
        return None
    try:
        return store.open(sid)
    except SessionLockedError:
        raise CommandError(
            f"session {sid} is open in another agentcore process; quit that chat first"
        ) from None
    except SessionError as exc:
        raise CommandError(f"cannot resume session {sid}: {exc}") from None


@contextlib.contextmanager
def _readline_history(path: Path) -> Iterator[None]:
    """Line editing for `input()`, with the history kept in `path`."""
    try:
        import readline
    except ImportError:
        yield
        return
    with contextlib.suppress(OSError):
        readline.read_history_file(path)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            readline.set_history_length(1000)
            private_history(path)
            readline.write_history_file(path)


def history_path(store: SessionStore) -> Path:
    """The input history file: beside the sessions directory."""
    return Path(getattr(store, "directory", ".")).parent / "chat_history"


async def chat(
    settings: Settings,
    *,
    json_mode: bool,
    stdin: TextIO | None,
    stdout: GuardedOutput,
    stderr: TextIO,
    trace: Tracing | None = None,
    sessions: SessionOptions | None = None,
    questions: SamplingQuestions | None = None,
) -> int:
    """Run the chat until end of input or `/exit`; returns the exit code. After each answer,
    `trace` shows its usage and the conversation's total (and its span tree with `--trace`).

    With stdin and stdout terminals (and prompt_toolkit installed) the chat is the live terminal
    UI of `_tty`; otherwise lines are read from stdin and the answers written as they stream.
    `questions` (of `--mcp-sampling`) then asks on the same input: the UI's input line, or the
    next line of stdin."""
    options = sessions if sessions is not None else SessionOptions()
    trace = trace if trace is not None else Tracing(stderr, trace=False)
    source = stdin if stdin is not None else sys.stdin
    interactive = stdin is None and source.isatty()
    store, session = _open(options)
    with store:
        conversation = Chat(
            settings, store=store, session=session, given=options.given, output=stdout
        )
        try:
            if interactive and not json_mode and stdout.isatty():
                from ._tty import terminal_front

                front = terminal_front(conversation, stdout, trace, history_path(store))
                if front is not None:
                    if questions is not None:
                        questions.ask_line = front.ask
                    return await front.loop()
            if questions is not None:
                questions.source = source
            styler = make_styler(stderr)
            renderer = Renderer(stdout, styler, conversation.speakers())
            writer = JsonLinesWriter(stdout) if json_mode else None
            conversation.attach(_PlainView(renderer, trace, writer))

            def idle() -> None:  # Ctrl-C at the prompt of input(), which stays where it is
                styler.write("\n(Ctrl-D or /exit quits)\n" + (_PROMPT if interactive else ""))

            conversation.on_idle_interrupt = idle
            plain = _PlainFront(conversation, source, stdout, interactive=interactive)
            if not interactive:
                return await plain.loop()
            with _readline_history(history_path(store)):
                code = await plain.loop()
            _saved_notice(conversation)
            return code
        finally:
            conversation.close()


def _saved_notice(chat: Chat) -> None:
    if chat.session is not None:
        chat.say(f"(saved as session {chat.session.id}: agentcore chat --continue resumes it)")
