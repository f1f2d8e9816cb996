"""Rendering a run's events for a person at a terminal.

stdout carries the answer's text and nothing else, so `agentcore run "..." > answer.txt` saves
just the answer; everything around it (thinking, tool calls and their results, errors) goes to
stderr. In a terminal both streams show, interleaved in order. When `rich` is installed (the `cli`
extra) and stderr is a terminal, thinking is dimmed and tool activity and errors are coloured;
otherwise the same lines are written as plain text.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, ClassVar, Protocol, TextIO

from ..events import AgentEvent
from ..messages import AgentMessage, AssistantMessage, ImageContent, TextContent
from ..tools import AgentToolResult
from ._safe import json_text, split_surrogate, visible

__all__ = [
    "CODE_TOOL",
    "Renderer",
    "Speakers",
    "Styler",
    "Writable",
    "call_text",
    "last_speaker",
    "make_styler",
    "result_text",
]

_ARGS_LIMIT = 200
_RESULT_LINES = 3
_LINE_LIMIT = 160
_CODE_LINES = 40

CODE_TOOL = "run_code"
"""The name of the code tool of `--code-mode`: its snippet is shown as code, the calls it makes
indented under it."""
_NESTED = "    "


class Writable(Protocol):
    """Where output goes: a text stream, or anything with its `write` and `flush`."""

    def write(self, text: str, /) -> int: ...

    def flush(self) -> None: ...


class Styler(Protocol):
    """Writes text to stderr, optionally with a style (`dim`, `tool`, `ok`, `error`)."""

    def write(self, text: str, style: str | None = None) -> None: ...


class _PlainStyler:
    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str, style: str | None = None) -> None:
        self._stream.write(text)
        self._stream.flush()


class _RichStyler:
    _STYLES: ClassVar[dict[str, str]] = {
        "dim": "dim",
        "tool": "cyan",
        "ok": "green",
        "error": "bold red",
    }

    def __init__(self, console: Any) -> None:
        self._console = console

    def write(self, text: str, style: str | None = None) -> None:
        self._console.print(text, style=self._STYLES.get(style or ""), end="")
        self._console.file.flush()


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def make_styler(stream: TextIO) -> Styler:
    """A styler over `stream`: coloured with rich for a terminal (unless NO_COLOR is set and
    rich is installed), plain otherwise."""
    if _is_terminal(stream) and not os.environ.get("NO_COLOR"):
        try:
            from rich.console import Console
        except ImportError:
            pass
        else:
            console = Console(
                file=stream, highlight=False, markup=False, emoji=False, soft_wrap=True
            )
            return _RichStyler(console)
    return _PlainStyler(stream)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def plural(count: int, noun: str) -> str:
    """`1 line`, `2 lines`: a count and its noun."""
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


_WAITING = "Tool call was not executed: it is waiting for approval."
"""How the loop's `tool_execution_end` reads for a call that waits for approval: it did not run
(the agent layer's text; the CLI reads only public names, tests/test_cli_approve.py checks it)."""


_WAITING_FOR_INPUT = "Tool call did not finish: it is waiting for input from the user."
"""How it reads for a call that stopped to ask the user (an MCP elicitation through approvals):
it has not finished (tests/test_cli_approve.py checks the text)."""


def _result_label(name: str, result: AgentToolResult, is_error: bool) -> str:
    """`[name ok]`, `[name failed]`, `[name waiting for approval]` for a call that never ran, or
    `[name waiting for input]` for one that stopped to ask the user."""
    if is_error:
        return f"[{name} failed]"
    shown = _result_text(result)
    if shown.startswith(_WAITING):
        return f"[{name} waiting for approval]"
    if shown.startswith(_WAITING_FOR_INPUT):
        return f"[{name} waiting for input]"
    return f"[{name} ok]"


def _result_text(result: AgentToolResult) -> str:
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ImageContent):
            parts.append(f"[image {block.mime_type}]")
    return "\n".join(parts)


def call_text(name: str, args: Any, parent: str | None) -> str:
    """A tool call as shown when it starts: `[tool] name {args}`; the snippet of the code tool
    as its lines of code under `[code] run_code`; a call a snippet made (`parent` set)
    indented under it. Model text made visible (`_safe.visible`), long lines clipped."""
    indent = _NESTED if parent is not None else ""
    shown = visible(name)
    code = args.get("code") if isinstance(args, dict) else None
    if name != CODE_TOOL or parent is not None or not isinstance(code, str):
        return f"{indent}[tool] {shown} {_clip(json_text(args), _ARGS_LIMIT)}"
    lines = code.expandtabs(4).split("\n")
    head = f"[code] {shown}" + (" (variables reset)" if args.get("reset") is True else "")
    body = [f"  │ {_clip(visible(line), _LINE_LIMIT)}" for line in lines[:_CODE_LINES]]
    if len(lines) > _CODE_LINES:
        body.append(f"  │ … ({plural(len(lines) - _CODE_LINES, 'more line')})")
    return "\n".join([head, *body])


def result_text(name: str, result: AgentToolResult, is_error: bool, parent: str | None) -> str:
    """A tool call's result as shown when it ends: its label and first lines, indented under
    the snippet for a call a snippet made (`parent` set)."""
    indent = _NESTED if parent is not None else ""
    lines = visible(_result_text(result)).splitlines() or ["(no output)"]
    shown = [_clip(line, _LINE_LIMIT) for line in lines[:_RESULT_LINES]]
    if len(lines) > _RESULT_LINES:
        shown.append(f"… ({plural(len(lines) - _RESULT_LINES, 'more line')})")
    label = _result_label(visible(name), result, is_error)
    return "\n".join([indent + label, *(indent + "  " + line for line in shown)])


def last_speaker(messages: Sequence[AgentMessage]) -> str | None:
    """The agent of the last assistant message that names one (who speaks when a saved
    conversation with handoffs goes on), or None."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage) and message.agent is not None:
            return message.agent
    return None


class Speakers:
    """Who speaks, in a run with handoffs: a line naming an agent when it starts speaking, and
    a line for each switch (`[handoff: triage → billing]`). Agent names are shown through
    `_safe.visible` (they come from a configuration file and the transcript).

    Args:
        first: the agent that starts (None: a run without handoffs, which shows none of this).
        next_agent: the `next_agent` option: with `"first"`, each run starts with `first`.
    """

    def __init__(self, first: str | None, next_agent: str = "last") -> None:
        self.first = first
        self.current = first  # who has the conversation
        self._next_agent = next_agent
        self._shown: str | None = None  # whose name was shown last
        self._asked = False  # the answer being written has had its `header`
        self._callers: list[str] = []  # the agents a returning handoff comes back to

    def header(self) -> str | None:
        """`name:` at the first output of an answer whose agent is not the one shown last
        (None otherwise, and for the rest of that answer)."""
        if self._asked:
            return None
        self._asked = True
        if self.current is None or self.current == self._shown:
            return None
        self._shown = self.current
        return f"{visible(self.current)}:"

    def switch(self, event: AgentEvent) -> str | None:
        """Follows the run's events; returns the line of a switch (`agent_switch`)."""
        if event.type == "message_start" and isinstance(event.message, AssistantMessage):
            self._asked = False  # a new answer: its first output may name its agent
        elif event.type == "agent_start" and self._next_agent == "first" and self.first:
            self.current = self.first
        elif event.type == "message_end" and isinstance(event.message, AssistantMessage):
            if event.message.agent is not None:
                self.current = event.message.agent
        elif event.type == "agent_end" and event.last_agent is not None:
            self.current = event.last_agent
        elif event.type == "agent_switch":
            source, target = visible(event.from_agent), visible(event.to_agent)
            self.current = event.to_agent
            if event.returns and self._callers and self._callers[-1] == event.to_agent:
                self._callers.pop()
                return f"[return: {source} → {target}]"
            if event.returns:
                self._callers.append(event.from_agent)
                return f"[handoff: {source} → {target}, returns]"
            return f"[handoff: {source} → {target}]"
        return None


class Renderer:
    """Turns agent events into terminal output (see the module docstring for what goes where).

    Args:
        out: where the answer's text goes (stdout).
        styler: where everything else goes (stderr), see `make_styler`.
    """

    def __init__(self, out: Writable, styler: Styler, speakers: Speakers | None = None) -> None:
        self._out = out
        self._err = styler
        self.speakers = speakers if speakers is not None else Speakers(None)
        self._text_col = 0  # characters written on the current line of `out` (0: at line start)
        self._thinking = False  # a thinking line is open on stderr
        self._wrote_text = False
        self._held = ""  # the first half of a character whose second half comes in the next delta

    def _end_thinking(self) -> None:
        if self._thinking:
            self._err.write("\n")
            self._thinking = False

    def _end_text_line(self) -> None:
        if self._held:  # the second half never came
            self._out.write(visible(self._held))
            self._held = ""
            self._text_col += 1
        if self._text_col:
            self._out.write("\n")
            self._out.flush()
            self._text_col = 0

    def _speaker(self) -> None:
        """Name the agent at the first output of its answer, when it is not the one shown."""
        if (line := self.speakers.header()) is not None:
            self._end_text_line()
            self._err.write(line + "\n", "tool")

    def _text(self, delta: str) -> None:
        self._speaker()
        self._end_thinking()
        delta, self._held = split_surrogate(self._held + delta)
        if not delta:
            return
        delta = visible(delta)
        self._out.write(delta)
        self._out.flush()
        self._wrote_text = True
        newline = delta.rfind("\n")
        self._text_col = len(delta) - newline - 1 if newline >= 0 else self._text_col + len(delta)

    def _thinking_delta(self, delta: str) -> None:
        self._speaker()
        if not self._thinking:
            self._end_text_line()
            self._err.write("thinking: ", "dim")
            self._thinking = True
        self._err.write(visible(delta), "dim")

    def __call__(self, event: AgentEvent) -> None:
        switch = self.speakers.switch(event)
        match event.type:
            case "agent_switch" if switch is not None:
                self._end_thinking()
                self._end_text_line()
                self._err.write(switch + "\n", "dim")
            case "message_update":
                raw = event.assistant_message_event
                if raw.type == "text_delta":
                    self._text(raw.delta)
                elif raw.type == "thinking_delta":
                    self._thinking_delta(raw.delta)
                elif raw.type == "text_start" and self._wrote_text:
                    self._end_text_line()  # a new text block starts on a new line
            case "message_end" if isinstance(event.message, AssistantMessage):
                self._end_thinking()
                self._end_text_line()
            case "tool_execution_start":
                if event.parent_tool_call_id is None:
                    self._speaker()
                self._end_thinking()
                self._end_text_line()
                text = call_text(event.tool_name, event.args, event.parent_tool_call_id)
                self._err.write(text + "\n", "tool")
            case "tool_execution_end":
                text = result_text(
                    event.tool_name, event.result, event.is_error, event.parent_tool_call_id
                )
                self._err.write(text + "\n", "error" if event.is_error else "ok")
            case _:
                pass

    def finish(self) -> None:
        """Close any open line (called after the run, before anything else is printed)."""
        self._end_thinking()
        self._end_text_line()

    def error(self, text: str) -> None:
        """Show a failure on stderr."""
        self.finish()
        self._err.write(f"error: {visible(text)}\n", "error")

    def notice(self, text: str) -> None:
        """Show a dimmed notice on stderr (e.g. that an answer was stopped)."""
        self.finish()
        self._err.write(f"{visible(text)}\n", "dim")
