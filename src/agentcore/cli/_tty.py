"""The live terminal UI of `agentcore chat` (stdin and stdout terminals, prompt_toolkit installed).

The input line never goes away: while an answer streams, what the user types and sends with
Enter goes to `Agent.steer` (the model sees it at its next turn). Keys: Enter sends, Up/Down
walk the input history (kept across runs in a file beside the sessions directory), Ctrl-C stops
the answer (pressed again while it stops: quits; with nothing running it clears the line, or
says how to quit), Ctrl-D on an empty line quits. Output is drawn by `_live.LiveView`.

Without prompt_toolkit, `terminal_front` returns None and the chat reads lines with `input()`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from ._conversation import Chat
from ._live import LiveView, Screen, ScreenStream, styled
from ._run import EXIT_INTERRUPTED, EXIT_OK, GuardedOutput
from ._store import private_history
from ._trace import Tracing

__all__ = ["TerminalFront", "terminal_front"]

_PROMPT = "> "
_STEER_PROMPT = "» "
_LIVE_LINES = 12  # at most this many lines of the block being written show live


@dataclass(frozen=True, slots=True)
class _Toolkit:
    """What the UI uses of prompt_toolkit (imported in one place: it is an optional extra)."""

    prompt_session: Any
    file_history: Any
    key_bindings: Any
    ansi: Any
    patch_stdout: Any
    get_app_or_none: Any


def _toolkit() -> _Toolkit | None:
    try:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.application import get_app_or_none
        from prompt_toolkit.formatted_text import ANSI
        from prompt_toolkit.history import FileHistory
        from prompt_toolkit.key_binding import KeyBindings
        from prompt_toolkit.patch_stdout import patch_stdout
    except ImportError:
        return None
    return _Toolkit(PromptSession, FileHistory, KeyBindings, ANSI, patch_stdout, get_app_or_none)


class TerminalFront:
    """Runs a `Chat` in the live terminal UI (see the module docstring)."""

    def __init__(
        self, toolkit: _Toolkit, chat: Chat, stdout: GuardedOutput, trace: Tracing, history: Path
    ) -> None:
        self.toolkit = toolkit
        self.chat = chat
        self.screen = Screen(stdout.stream, toolkit.get_app_or_none)
        trace.show_usage = False  # the view's usage line replaces it
        trace.stderr = ScreenStream(self.screen)  # type: ignore[assignment]
        self.view = LiveView(
            self.screen, chat.model_ref, after=trace.after_answer, speakers=chat.speakers()
        )
        self.history = history
        chat.attach(self.view)
        self._quit = False  # a command asked to quit
        self._handling = False  # a line is being handled
        self._message_text = ""
        self._message_parsed: Any = None
        self._question: tuple[anyio.Event, list[str]] | None = None  # a question being asked

    def _message(self) -> Any:
        """The prompt: the live area, then `> ` (or `» ` while the agent runs). Called several
        times a redraw: the parsed text is reused while it is the same."""
        app = self.toolkit.get_app_or_none()
        marker = styled(_STEER_PROMPT if self.chat.busy else _PROMPT, "prompt")
        if app is not None and app.is_done:
            text = marker  # what stays in the transcript with the line
        else:
            rows = app.output.get_size().rows if app is not None else 24
            text = self.view.live(min(_LIVE_LINES, rows // 2)) + marker
        if text != self._message_text:
            self._message_text, self._message_parsed = text, self._parse(text)
        return self._message_parsed

    def _parse(self, text: str) -> list[tuple[str, str]]:
        """ANSI text as prompt_toolkit fragments, a run of one style as one fragment (its
        parser gives one per character, which makes every redraw slow)."""
        merged: list[tuple[str, str]] = []
        for style, chars, *_ in self.toolkit.ansi(text).__pt_formatted_text__():
            if merged and merged[-1][0] == style:
                merged[-1] = (style, merged[-1][1] + chars)
            else:
                merged.append((style, chars))
        return merged

    def _bindings(self) -> Any:
        bindings = self.toolkit.key_bindings()
        bindings.add("c-c")(self._ctrl_c)
        return bindings

    def _ctrl_c(self, event: Any) -> None:
        buffer = event.app.current_buffer
        if not self.chat.busy and buffer.text:
            buffer.reset()  # like a shell: Ctrl-C drops the line being typed
            return
        self.chat.interrupts.interrupt()

    async def _handle(self, text: str) -> None:
        """A line of input (a prompt or a command, which may run the agent too), handled while
        the input line stays live."""
        try:
            if not await self.chat.handle(text):
                self._quit = True
                app = self.toolkit.get_app_or_none()
                if app is not None and app.is_running and not app.is_done:
                    app.exit(exception=EOFError())
        finally:
            self._handling = False
            self.screen.redraw()

    def _pre_run(self) -> None:
        """A prompt that starts after a command asked to quit ends at once."""
        if self._quit:
            app = self.toolkit.get_app_or_none()
            if app is not None:
                app.exit(exception=EOFError())

    def _redraw(self) -> None:
        app = self.toolkit.get_app_or_none()
        if app is not None and app.is_running:
            app.invalidate()

    async def ask(self, text: str) -> str | None:
        """Show `text` (a question, e.g. whether an MCP server may sample the model) and return
        the next line typed, which answers it instead of steering."""
        answered, box = anyio.Event(), list[str]()
        self._question = (answered, box)
        self.view.asking = True
        try:
            self.screen.print(styled(text.rstrip() + " (answer on the input line)", "tool"))
            self.screen.redraw()
            await answered.wait()
        finally:
            self._question = None
            self.view.asking = False
        return box[0] if box else None

    def _line(self, text: str, start: Callable[[str], None]) -> None:
        """Where a line goes: the answer to a question being asked, a steering message while
        the agent runs, else `start`."""
        chat = self.chat
        if self._question is not None:
            answered, box = self._question
            box.append(text)
            answered.set()
        elif chat.busy:
            if text.startswith("/"):
                chat.say("(commands wait until the answer ends; Ctrl-C stops it)")
            else:
                chat.agent.steer(text)
        elif self._handling:
            chat.say("(wait a moment: the last command is not done)")
        else:
            self._handling = True  # at once, as the busy flag: the next line must see it
            if not text.startswith("/"):
                chat.busy = True  # the next prompt is already a steering one
            start(text)

    async def loop(self) -> int:
        """Read and answer until Ctrl-D, `/exit` or a double Ctrl-C; returns the exit code."""
        toolkit = self.toolkit
        chat = self.chat
        self.screen.redraw = self._redraw
        private_history(self.history)
        prompts = toolkit.prompt_session(
            history=toolkit.file_history(str(self.history)),
            key_bindings=self._bindings(),
            refresh_interval=0.15,  # the spinner, and the block being written
        )
        chat.say(f"agentcore chat with {chat.model_ref()}: /help for commands, Ctrl-D quits")
        for text, style in chat.resumed_lines():
            self.view.replay(text, style)
        async with chat.interrupts.installed(), anyio.create_task_group() as group:

            def start(text: str) -> None:
                group.start_soon(self._handle, text)

            with toolkit.patch_stdout(raw=True):  # stray prints (warnings, logs): above it
                while not self._quit:
                    try:
                        line = await prompts.prompt_async(
                            self._message, handle_sigint=False, pre_run=self._pre_run
                        )
                    except EOFError:
                        break
                    except KeyboardInterrupt:
                        continue
                    if line.strip():
                        self._line(line.strip(), start)
                if chat.busy:  # Ctrl-D while the agent runs
                    chat.agent.abort()
                    await chat.agent.wait_for_idle()
        if chat.session is not None:
            chat.say(f"(saved as session {chat.session.id}: agentcore chat --continue resumes it)")
        return EXIT_INTERRUPTED if chat.interrupts.quit_requested else EXIT_OK


def terminal_front(
    chat: Chat, stdout: GuardedOutput, trace: Tracing, history: Path
) -> TerminalFront | None:
    """The terminal UI for `chat`, or None when prompt_toolkit is not installed."""
    toolkit = _toolkit()
    if toolkit is None:
        return None
    return TerminalFront(toolkit, chat, stdout, trace, history)
