"""`agentcore chat`: an interactive conversation in the terminal, on a stateful `Agent`.

Each line is a prompt; the answer streams back and joins the agent's transcript, so the next
prompt is answered with the whole conversation in view. Lines starting with `/` are commands
(`/help`). Ctrl-C stops the answer being written and keeps the conversation; Ctrl-D (end of
input) or `/exit` quits. Input that is not a terminal (a pipe, a file, a test) is read line by
line the same way, without prompts.
"""

from __future__ import annotations

import contextlib
import sys
import uuid
from typing import TextIO

import anyio

from ..agent import Agent
from ._json import JsonLinesWriter
from ._render import Renderer, make_styler
from ._run import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    CommandError,
    GuardedOutput,
    Interrupts,
    Settings,
    limit_notice,
    outcome,
    resolve_model,
)
from ._trace import Tracing

__all__ = ["chat"]

_PROMPT = "> "

_HELP = """\
commands:
  /help               this help
  /model PROVIDER/ID  switch the model (the conversation is kept); /model shows the current one
  /reset              forget the conversation
  /exit               quit (or Ctrl-D)
Ctrl-C stops the answer being written."""


class _Chat:
    def __init__(
        self,
        settings: Settings,
        *,
        json_mode: bool,
        stdin: TextIO,
        stdout: GuardedOutput,
        stderr: TextIO,
        interactive: bool,
        trace: Tracing,
    ) -> None:
        self.trace = trace
        self.stream_fn = settings.stream_fn
        self.agent = Agent(
            initial_state={
                "system_prompt": settings.system,
                "model": settings.model,
                "thinking_level": settings.thinking,
                "tools": settings.tools,
            },
            stream_fn=settings.stream_fn,
            session_id=uuid.uuid4().hex,  # prompt-cache affinity
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            prepare_next_turn=settings.prepare_next_turn,
            **settings.bounds(),
        )
        self.stdin = stdin
        self.stdout = stdout
        self.interactive = interactive
        self.styler = make_styler(stderr)
        self.renderer = Renderer(stdout, self.styler)
        self.agent.subscribe(JsonLinesWriter(stdout) if json_mode else self.renderer)
        self.interrupts = Interrupts(idle=self._idle_interrupt)

    def _model_ref(self) -> str:
        model = self.agent.state.model
        return f"{model.provider}/{model.id}"

    def _idle_interrupt(self) -> None:
        self.styler.write("\n(Ctrl-D or /exit quits)\n" + (_PROMPT if self.interactive else ""))

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
            self.agent.reset()
            self.say("(conversation cleared)")
        elif name == "/model":
            if arg:
                try:
                    self.agent.state.model = resolve_model(arg, stream_fn=self.stream_fn)
                except CommandError as exc:
                    self.renderer.error(str(exc))
                    return True
            self.say(f"(model: {self._model_ref()})")
        elif name == "/help":
            self.say(_HELP)
        else:
            self.renderer.error(f"unknown command {name}; /help lists the commands")
        return True

    async def answer(self, text: str) -> None:
        with self.interrupts.running(self.agent.abort):
            added = await self.agent.prompt(text)
        if self.stdout.broken:
            return
        limit = self.agent.state.limit
        code, error = outcome(added, limit)
        if error is not None:
            self.renderer.error(error)
        elif code == EXIT_INTERRUPTED:
            self.say("(stopped)")
        elif limit is not None:
            self.say(f"({limit_notice(limit)})")
        else:
            self.renderer.finish()
        self.trace.after_answer(added, self.agent.state.usage)

    async def loop(self) -> int:
        if self.interactive:
            self.say(f"agentcore chat with {self._model_ref()}: /help for commands, Ctrl-D quits")
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
                if self.stdout.broken:
                    return EXIT_BROKEN_PIPE
        return EXIT_INTERRUPTED if self.interrupts.quit_requested else EXIT_OK


async def chat(
    settings: Settings,
    *,
    json_mode: bool,
    stdin: TextIO | None,
    stdout: GuardedOutput,
    stderr: TextIO,
    trace: Tracing | None = None,
) -> int:
    """Run the chat until end of input or `/exit`; returns the exit code. After each answer,
    `trace` shows its usage and the conversation's total (and its span tree with `--trace`)."""
    source = stdin if stdin is not None else sys.stdin
    interactive = stdin is None and source.isatty()
    if interactive:
        with contextlib.suppress(ImportError):
            import readline  # noqa: F401  # line editing and history for input()
    session = _Chat(
        settings,
        json_mode=json_mode,
        stdin=source,
        stdout=stdout,
        stderr=stderr,
        interactive=interactive,
        trace=trace if trace is not None else Tracing(stderr, trace=False),
    )
    return await session.loop()
