"""What the terminal UI shows of a run: Markdown answers, tool activity, a spinner, usage.

The screen has two parts. Above, the transcript: lines written once and never redrawn (they
scroll into the terminal's history). Below, the live area, redrawn by prompt_toolkit with the
input line: the block of the answer being written, a spinner line saying what the run waits for,
and the prompt.

Answers are rendered as Markdown (with rich, when installed) block by block: a block (a
paragraph, a list, a fenced code block, …) ends at a blank line outside a code fence. While a
block is written it shows, rendered, in the live area; once complete it moves up into the
transcript. Without rich the text is shown as it is, line by line.
"""

from __future__ import annotations

import io
import os
import shutil
import time
from collections.abc import Callable, Sequence
from typing import Any

from .. import run_usage
from ..events import AgentEvent
from ..messages import AgentMessage, AssistantMessage, Usage
from ._render import Speakers, _result_text, call_text, result_text
from ._safe import visible

__all__ = [
    "LiveView",
    "MarkdownBlocks",
    "Screen",
    "ScreenStream",
    "render_markdown",
    "styled",
    "usage_line",
]

_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_RENDER_INTERVAL = 0.1  # seconds between two renderings of the block being written
_PROGRESS_LIMIT = 60
_STYLES = {"dim": "2", "tool": "36", "ok": "32", "error": "1;31", "prompt": "1"}


def _color() -> bool:
    return not os.environ.get("NO_COLOR")


def styled(text: str, style: str | None) -> str:
    """`text` in an ANSI style (`dim`, `tool`, `ok`, `error`, `prompt`), unless NO_COLOR is set."""
    code = _STYLES.get(style or "")
    if code is None or not _color() or not text:
        return text
    return "\n".join(f"\x1b[{code}m{line}\x1b[0m" if line else line for line in text.split("\n"))


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_markdown(text: str, width: int) -> str:
    """`text` as Markdown for a terminal of `width` columns (ANSI styles; plain without rich),
    without a trailing newline. Control characters are made visible (`_safe.visible`)."""
    text = visible(text)
    try:
        from markdown_it import MarkdownIt  # rich's own parser (rich depends on it)
        from rich.console import Console
        from rich.markdown import Markdown
    except ImportError:
        return text.rstrip("\n")
    out = io.StringIO()
    color = _color()
    console = Console(
        file=out,
        width=max(width, 20),
        force_terminal=True,
        no_color=not color,
        color_system="auto" if color else None,
        highlight=False,
        emoji=False,
        legacy_windows=False,
    )
    console.print(_text_markdown(text, Markdown, MarkdownIt))
    lines = [line.rstrip(" ") for line in out.getvalue().split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return "\n".join(lines)


def _text_markdown(text: str, markdown: Any, markdown_it: Any) -> Any:
    """rich's `Markdown` of `text` with raw HTML off: a model's `List<String>`, `<ol>` or
    `<tool_response>` is text to show as written, not markup to drop."""
    rendered = markdown("", hyperlinks=False)
    parser = markdown_it("commonmark", {"html": False}).enable("strikethrough").enable("table")
    rendered.markup = text
    rendered.parsed = parser.parse(text)
    return rendered


def _is_fence(line: str) -> bool:
    stripped = line.lstrip()
    return stripped.startswith("```") or stripped.startswith("~~~")


class MarkdownBlocks:
    """Splits streamed Markdown into complete blocks: each ends at a blank line outside a
    fenced code block."""

    def __init__(self) -> None:
        self._lines: list[str] = []  # complete lines of the block being written
        self._partial = ""  # the line being written
        self._fenced = False

    @property
    def pending(self) -> str:
        """The text of the block being written."""
        return "".join(line + "\n" for line in self._lines) + self._partial

    def feed(self, delta: str) -> list[str]:
        """Add streamed text; returns the blocks it completed."""
        done: list[str] = []
        text = self._partial + delta
        *lines, self._partial = text.split("\n")
        for line in lines:
            if _is_fence(line):
                self._fenced = not self._fenced
            if not self._fenced and not line.strip():
                if self._lines:
                    done.append("\n".join(self._lines))
                    self._lines = []
                continue
            self._lines.append(line)
        return done

    def rest(self) -> str:
        """The unfinished block (and forget it)."""
        text = self.pending.strip("\n")
        self._lines, self._partial, self._fenced = [], "", False
        return text


class Screen:
    """Writes lines above the prompt while prompt_toolkit shows one (erasing the prompt, writing,
    and letting it redraw below), or straight to the terminal when none is shown; in order.

    Unlike prompt_toolkit's `run_in_terminal`, the terminal stays in raw mode and the input
    attached: what the user types while an answer streams is neither echoed by the terminal
    nor held back until the next line."""

    def __init__(self, out: Any, get_app: Callable[[], Any]) -> None:
        self._out = out
        self._get_app = get_app  # prompt_toolkit's get_app_or_none
        self._pending: list[str] = []
        self._scheduled = False
        self.redraw: Callable[[], None] = lambda: None

    def print(self, text: str) -> None:
        """Write `text` and a newline."""
        self._pending.append(text + "\n")
        app = self._get_app()
        if app is None or not app.is_running or app.loop is None:
            self._flush()
        elif not self._scheduled:  # once per turn of the event loop, however many lines
            self._scheduled = True
            app.loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._scheduled = False
        text, self._pending = "".join(self._pending), []
        if not text:
            return
        app = self._get_app()
        if app is None or not app.is_running or app.is_done:
            self._out.write(text)
            self._out.flush()
            return
        app.renderer.erase()  # the cursor goes back to where the prompt's area begins
        app.output.write_raw(text.replace("\n", "\r\n"))
        app.output.flush()
        app.invalidate()


class ScreenStream:
    """A text stream whose complete lines go to a `Screen` (for `--trace`'s tree)."""

    def __init__(self, screen: Screen) -> None:
        self._screen = screen
        self._buffer = ""

    def write(self, text: str) -> int:
        self._buffer += text
        if "\n" in self._buffer:
            lines, _, self._buffer = self._buffer.rpartition("\n")
            self._screen.print(lines)
        return len(text)

    def flush(self) -> None:
        if self._buffer:
            self._screen.print(self._buffer)
            self._buffer = ""

    def isatty(self) -> bool:
        return True


def usage_line(added: Sequence[AgentMessage], total: Usage, fallback_model: str) -> str:
    """`12 in / 34 out tokens · $0.0012 · provider/model`, and the conversation's cost so far
    when it differs."""
    usage = run_usage(added)
    answers = [m for m in added if isinstance(m, AssistantMessage)]
    model = visible(f"{answers[-1].provider}/{answers[-1].model}" if answers else fallback_model)
    tokens_in = usage.input + usage.cache_read + usage.cache_write
    text = f"{tokens_in:,} in"
    if usage.cache_read:
        text += f" ({usage.cache_read:,} cached)"
    cost = f"${usage.cost.total:.4f}" if usage.cost.total else "free"  # no price: not $0.0000
    text += f" / {usage.output:,} out tokens · {cost} · {model}"
    if total.cost.total > usage.cost.total:
        text += f" · conversation ${total.cost.total:.4f}"
    return text


class LiveView:
    """Agent events to the screen (see the module docstring); `live()` is the live area."""

    def __init__(
        self,
        screen: Screen,
        model_ref: Callable[[], str],
        after: Callable[[Sequence[AgentMessage], Usage], None] | None = None,
        speakers: Speakers | None = None,
    ) -> None:
        self.screen = screen
        self.speakers = speakers if speakers is not None else Speakers(None)
        self._model_ref = model_ref
        self._after = after  # what else to show after an answer (--trace's span tree)
        self._blocks = MarkdownBlocks()
        self._blocks_shown = 0  # blocks of the current text block already in the transcript
        self._thinking = ""  # the thinking line being written
        self._thinking_open = False
        self._tools: dict[str, str] = {}  # running tool calls: id -> name
        self._progress: dict[str, str] = {}  # running tool calls: id -> their last update
        self._writing = False
        self._rendered: tuple[str, int, str] = ("", 0, "")  # the live block's last rendering
        self._rendered_at = 0.0
        self.asking = False  # a question waits for its answer on the input line
        self.running = False

    @staticmethod
    def width() -> int:
        """The terminal's width."""
        return shutil.get_terminal_size().columns

    # -- the transcript --------------------------------------------------------------------

    def _print_block(self, block: str) -> None:
        if self._blocks_shown:
            self.screen.print("")
        self._blocks_shown += 1
        self.screen.print(render_markdown(block, self.width()))

    def _end_text(self) -> None:
        rest = self._blocks.rest()
        if rest:
            self._print_block(rest)
        self._blocks_shown = 0

    def _end_thinking(self) -> None:
        if self._thinking_open:
            self.screen.print(styled(self._thinking, "dim"))
            self._thinking, self._thinking_open = "", False

    def _speaker(self) -> None:
        """Name the agent at the first output of its answer, when it is not the one shown."""
        if (line := self.speakers.header()) is not None:
            self.finish()
            self.screen.print(styled(line, "tool"))

    def _thinking_delta(self, delta: str) -> None:
        self._speaker()
        if not self._thinking_open:
            self._end_text()
            self._thinking, self._thinking_open = "thinking: ", True
        *done, self._thinking = (self._thinking + visible(delta)).split("\n")
        for line in done:
            self.screen.print(styled(line, "dim"))

    def __call__(self, event: AgentEvent) -> None:
        switch = self.speakers.switch(event)
        match event.type:
            case "agent_switch" if switch is not None:
                self.finish()
                self.screen.print(styled(switch, "dim"))
            case "agent_start":
                self.running = True
            case "agent_end":
                self.running = False
                self._tools.clear()
                self._progress.clear()
            case "message_start" if isinstance(event.message, AssistantMessage):
                self._writing = False
            case "message_update":
                raw = event.assistant_message_event
                if raw.type == "text_delta":
                    self._speaker()
                    self._end_thinking()
                    self._writing = True
                    for block in self._blocks.feed(raw.delta):  # made visible when rendered
                        self._print_block(block)
                elif raw.type == "thinking_delta":
                    self._writing = True
                    self._thinking_delta(raw.delta)
                elif raw.type == "text_start":
                    self._end_text()
            case "message_end" if isinstance(event.message, AssistantMessage):
                self.finish()
                self._writing = False
            case "tool_execution_start":
                if event.parent_tool_call_id is None:
                    self._speaker()
                self.finish()
                name = visible(event.tool_name)
                self._tools[event.tool_call_id] = name
                text = call_text(event.tool_name, event.args, event.parent_tool_call_id)
                self.screen.print(styled(text, "tool"))
            case "tool_execution_update":
                lines = visible(_result_text(event.partial_result)).strip().splitlines()
                if lines:
                    self._progress[event.tool_call_id] = _clip(lines[-1], _PROGRESS_LIMIT)
            case "tool_execution_end":
                self._tools.pop(event.tool_call_id, None)
                self._progress.pop(event.tool_call_id, None)
                text = result_text(
                    event.tool_name, event.result, event.is_error, event.parent_tool_call_id
                )
                self.screen.print(styled(text, "error" if event.is_error else "ok"))
            case _:
                pass
        if event.type != "message_update":  # deltas show at the next refresh (10 a second)
            self.screen.redraw()

    # -- the chat's own lines (the `View` of `_chat`) ----------------------------------------

    def finish(self) -> None:
        """Move what is still live into the transcript."""
        self._end_thinking()
        self._end_text()

    def error(self, text: str) -> None:
        """A failure."""
        self.finish()
        self.screen.print(styled(f"error: {visible(text)}", "error"))

    def notice(self, text: str) -> None:
        """A dimmed notice."""
        self.finish()
        self.screen.print(styled(visible(text), "dim"))

    def replay(self, text: str, style: str | None) -> None:
        """A line of a resumed conversation: an answer's text (`style` None) as Markdown."""
        if style is None:
            self.screen.print(render_markdown(text, self.width()))
        else:
            self.screen.print(styled(visible(text), style))

    def after_answer(self, added: Sequence[AgentMessage], total: Usage) -> None:
        """The usage line of an answer."""
        self.screen.print(styled(f"── {usage_line(added, total, self._model_ref())}", "dim"))
        if self._after is not None:
            self._after(added, total)

    # -- the live area ---------------------------------------------------------------------

    def status(self) -> str:
        """What the run is doing now, for the spinner line ("" when idle)."""
        if not self.running:
            return ""
        if self._tools:
            names = ", ".join(dict.fromkeys(self._tools.values()))
            if len(self._tools) == 1 and self._progress:  # what the tool last reported
                return f"running {names}: {next(iter(self._progress.values()))}"
            return f"running {names}"
        if self._thinking_open:
            return "thinking"
        if self._writing:
            return "writing"
        return f"waiting for {self._model_ref()}"

    def live(self, height: int) -> str:
        """The live area above the prompt (ANSI text, ending in a newline; "" when idle):
        the answer's block being written (its last lines, to fit `height`) and the spinner."""
        lines: list[str] = []
        pending = self._blocks.pending.strip("\n")
        if pending:
            width = self.width()
            now = time.monotonic()
            # rendered again at most 10 times a second: a long block takes milliseconds
            if self._rendered[:2] != (pending, width) and (
                now - self._rendered_at >= _RENDER_INTERVAL or self._rendered[1] != width
            ):
                self._rendered = (pending, width, render_markdown(pending, width))
                self._rendered_at = now
            lines += self._rendered[2].split("\n")
        if self._thinking_open and self._thinking:
            lines.append(styled(self._thinking, "dim"))
        status = self.status()
        if status:
            frame = _SPINNER[int(time.monotonic() * 10) % len(_SPINNER)]
            hint = (
                "  (waiting for your answer: type it and press Enter)"
                if self.asking
                else "  (Ctrl-C stops · Enter sends a steering message)"
            )
            lines.append(styled(f"{frame} {status}…", "tool") + styled(hint, "dim"))
        lines = lines[-max(height, 1) :]
        return "".join(line + "\n" for line in lines)
