"""`agentcore chat`: an interactive conversation in the terminal.

Each line is a prompt; the answer streams back and joins the transcript, so the next prompt is
answered with the whole conversation in view. Lines starting with `/` are commands (`/help`).
Ctrl-C stops the answer being written and keeps the conversation; Ctrl-D (end of input) or
`/exit` quits. Input that is not a terminal (a pipe, a file, a test) is read line by line the
same way, without prompts.
"""

from __future__ import annotations

import contextlib
import sys
import uuid
from collections.abc import Callable
from typing import TextIO

import anyio

from ..events import AgentEvent
from ..messages import AgentMessage, UserMessage
from ._json import JsonLinesWriter
from ._render import Renderer, make_styler
from ._run import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    CommandError,
    Interrupts,
    Settings,
    outcome,
    resolve_model,
    run_prompt,
)

__all__ = ["chat"]

_PROMPT = "> "

_HELP = """\
commands:
  /help               this help
  /model PROVIDER/ID  switch the model (the conversation is kept); /model shows the current one
  /reset              forget the conversation
  /exit               quit (or Ctrl-D)
Ctrl-C stops the answer being written."""


def _model_ref(settings: Settings) -> str:
    return f"{settings.model.provider}/{settings.model.id}"


class _Chat:
    def __init__(
        self,
        settings: Settings,
        *,
        json_mode: bool,
        stdin: TextIO,
        stdout: TextIO,
        stderr: TextIO,
        interactive: bool,
    ) -> None:
        self.settings = settings
        self.transcript: list[AgentMessage] = []
        self.stdin = stdin
        self.interactive = interactive
        self.styler = make_styler(stderr)
        self.renderer = Renderer(stdout, self.styler)
        self.sink: Callable[[AgentEvent], None] = (
            JsonLinesWriter(stdout) if json_mode else self.renderer
        )
        self.interrupts = Interrupts(idle=self._idle_interrupt)

    def _idle_interrupt(self) -> None:
        self.styler.write("\n(Ctrl-D or /exit quits)\n" + _PROMPT, "dim")

    def say(self, text: str) -> None:
        self.renderer.notice(text)

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
                self.styler.write("\n")
            return line
        raw = await anyio.to_thread.run_sync(self.stdin.readline, abandon_on_cancel=True)
        return raw.rstrip("\r\n") if raw else None

    def command(self, text: str) -> bool:
        """Run a `/command`; returns False when the chat should end."""
        name, _, arg = text.partition(" ")
        arg = arg.strip()
        if name in ("/exit", "/quit"):
            return False
        if name == "/reset":
            self.transcript.clear()
            self.say("(conversation cleared)")
        elif name == "/model":
            if arg:
                try:
                    self.settings.model = resolve_model(arg, stream_fn=self.settings.stream_fn)
                except CommandError as exc:
                    self.renderer.error(str(exc))
                    return True
            self.say(f"(model: {_model_ref(self.settings)})")
        elif name == "/help":
            self.say(_HELP)
        else:
            self.renderer.error(f"unknown command {name}; /help lists the commands")
        return True

    async def answer(self, text: str) -> None:
        added = await run_prompt(
            [UserMessage(content=text)], self.transcript, self.settings, self.sink, self.interrupts
        )
        self.transcript.extend(added)
        code, error = outcome(added)
        if error is not None:
            self.renderer.error(error)
        elif code == EXIT_INTERRUPTED:
            self.say("(stopped)")
        else:
            self.renderer.finish()

    async def loop(self) -> int:
        if self.interactive:
            self.say(
                f"agentcore chat with {_model_ref(self.settings)}: /help for commands, "
                "Ctrl-D to quit"
            )
        async with self.interrupts.installed():
            while True:
                line = await self.read_line()
                if line is None:
                    break
                text = line.strip()
                if not text:
                    continue
                if text.startswith("/"):
                    if not self.command(text):
                        break
                    continue
                await self.answer(text)
        return EXIT_INTERRUPTED if self.interrupts.quit_requested else EXIT_OK


async def chat(
    settings: Settings,
    *,
    json_mode: bool,
    stdin: TextIO | None,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    """Run the chat until end of input or `/exit`; returns the exit code."""
    source = stdin if stdin is not None else sys.stdin
    interactive = stdin is None and source.isatty()
    if interactive:
        with contextlib.suppress(ImportError):
            import readline  # noqa: F401  # line editing and history for input()
    if settings.session_id is None:
        settings.session_id = uuid.uuid4().hex
    session = _Chat(
        settings,
        json_mode=json_mode,
        stdin=source,
        stdout=stdout,
        stderr=stderr,
        interactive=interactive,
    )
    return await session.loop()
