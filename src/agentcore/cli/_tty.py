"""The live terminal UI of `agentcore chat` (stdin and stdout terminals, prompt_toolkit installed).

The input line never goes away: while an answer streams, what the user types and sends with
Enter goes to `Agent.steer` (the model sees it at its next turn). Keys: Enter sends, Up/Down
walk the input history (kept across runs in a file beside the sessions directory), Ctrl-C stops
the answer (pressed again while it stops: quits; with nothing running it clears the line, or
says how to quit), Ctrl-D on an empty line quits. Output is drawn by `_live.LiveView`.

Without prompt_toolkit, `terminal_front` returns None and the chat reads lines with `input()`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from ._conversation import Chat
from ._live import LiveView, Screen, ScreenStream, styled
from ._run import EXIT_INTERRUPTED, EXIT_OK, GuardedOutput
from ._trace import Tracing

__all__ = ["TerminalFront", "terminal_front"]

_PROMPT = "> "
_STEER_PROMPT = "» "


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
        self.view = LiveView(self.screen, chat.model_ref)
        self.history = history
        self.trace = trace
        trace.show_usage = False  # the view's usage line replaces it
        trace.stderr = ScreenStream(self.screen)  # type: ignore[assignment]
        chat.attach(self.view)
        self._quit = False
        self._app: Any = None

    def _message(self) -> Any:
        ansi = self.toolkit.ansi
        app = self.toolkit.get_app_or_none()
        marker = _STEER_PROMPT if self.chat.busy else _PROMPT
        if app is not None and app.is_done:
            return ansi(styled(marker, "prompt"))  # what stays in the transcript with the line
        height = app.output.get_size().rows - 2 if app is not None else 20
        return ansi(self.view.live(height) + styled(marker, "prompt"))

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

    async def _answer(self, text: str) -> None:
        try:
            await self.chat.answer(text)
        finally:
            self.screen.redraw()

    def _redraw(self) -> None:
        app = self.toolkit.get_app_or_none()
        if app is not None and app.is_running:
            app.invalidate()

    async def loop(self) -> int:
        """Read and answer until Ctrl-D, `/exit` or a double Ctrl-C; returns the exit code."""
        toolkit = self.toolkit
        chat = self.chat
        self.screen.redraw = self._redraw
        prompts = toolkit.prompt_session(
            history=toolkit.file_history(str(self.history)),
            key_bindings=self._bindings(),
            refresh_interval=0.1,  # the spinner
        )
        chat.say(f"agentcore chat with {chat.model_ref()}: /help for commands, Ctrl-D quits")
        for line in chat.resumed_lines():
            chat.say(line)
        async with chat.interrupts.installed(), anyio.create_task_group() as group:
            with toolkit.patch_stdout(
                raw=True
            ):  # stray prints (warnings, logs) go above the prompt
                while True:
                    try:
                        line = await prompts.prompt_async(self._message, handle_sigint=False)
                    except EOFError:
                        break
                    except KeyboardInterrupt:
                        continue
                    text = line.strip()
                    if not text:
                        continue
                    if chat.busy:
                        if text.startswith("/"):
                            chat.say("(commands wait until the answer ends; Ctrl-C stops it)")
                        else:
                            chat.agent.steer(text)
                        continue
                    if text.startswith("/"):
                        if not await chat.command(text):
                            break
                        continue
                    chat.busy = True  # at once: the next prompt is already a steering one
                    group.start_soon(self._answer, text)
                if chat.busy:
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
