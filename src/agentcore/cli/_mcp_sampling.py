"""`--mcp-sampling` at work: the `MCPSampling` of the `--mcp` servers, and the question that asks
the person at the terminal before each request (`--mcp-sampling-approve ask`, the default).

A request is shown whole enough to decide on: which server, for which tool, which model, how
many tokens, and the server's messages (each cut after 500 characters, at most 6 of them, its
control characters escaped: a server's text is shown, never obeyed); then `allow it? [y/N]`.
Only `y` or `yes` lets it reach the model; anything else, the end of the input, or Ctrl-C
refuses it. Questions are asked one at a time.

Where the answer is read: in the live terminal UI of `agentcore chat`, the next line typed on
the input line (not a steering message); elsewhere the next line of stdin (`input()` in a
terminal). `agentcore run -` reads its prompt from stdin and `agentcore serve` has no terminal
to ask at: both need `--mcp-sampling-approve yes`. (The `MCPSampling` itself is built in
`_mcp`, the one module of the command that imports `agentcore.mcp`.)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TextIO

import anyio
import anyio.to_thread

from ..messages import TextContent
from ._safe import visible

__all__ = ["SamplingQuestions", "describe_request"]

_TEXT_LIMIT = 500  # characters of one message shown
_MESSAGES_SHOWN = 6
QUESTION = "allow it? [y/N] "


def _cut(text: str) -> str:
    if len(text) <= _TEXT_LIMIT:
        return text
    return f"{text[:_TEXT_LIMIT]}… ({len(text) - _TEXT_LIMIT:,} more characters not shown)"


def describe_request(request: Any, model_ref: str) -> str:
    """An `MCPSamplingRequest` as the person deciding sees it (without the question line)."""
    tool = f" (tool {request.tool})" if request.tool else ""
    lines = [
        f"MCP server {request.server!r} asks {model_ref} for an answer of at most "
        f"{request.max_tokens:,} tokens{tool}:"
    ]
    if request.system_prompt:
        lines.append(f"  system: {_cut(request.system_prompt)}")
    for message in request.messages[:_MESSAGES_SHOWN]:
        parts = [
            b.text if isinstance(b, TextContent) else f"[image {getattr(b, 'mime_type', '')}]"
            for b in message.content
        ]
        lines.append(f"  {message.role}: {_cut(' '.join(parts))}")
    hidden = len(request.messages) - _MESSAGES_SHOWN
    if hidden > 0:
        lines.append(f"  … ({hidden:,} more messages not shown)")
    return visible("\n".join(lines))


class SamplingQuestions:
    """Asks at the terminal before each sampling request (an `MCPSampling.approve`).

    `ask_line(text)` shows `text` (the request and the question) and returns the answer line,
    or None at the end of input; the chat's live terminal UI replaces it with its own."""

    def __init__(self, source: TextIO, stderr: TextIO, model_ref: str) -> None:
        self.source = source
        self.stderr = stderr
        self.model_ref = model_ref
        self.ask_line: Callable[[str], Awaitable[str | None]] = self._read_line
        self._lock: anyio.Lock | None = None

    async def approve(self, request: Any) -> bool:
        """Show the request, ask, and return whether the answer was y or yes."""
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            text = f"{describe_request(request, self.model_ref)}\n{QUESTION}"
            answer = await self.ask_line(text)
        return (answer or "").strip().lower() in ("y", "yes")

    async def _read_line(self, text: str) -> str | None:
        source = self.source
        if source.isatty():
            *shown, question = text.split("\n")
            self.stderr.write("\n".join(shown) + "\n")
            self.stderr.flush()

            def ask() -> str | None:
                try:
                    return input(question)
                except EOFError:
                    return None

            return await anyio.to_thread.run_sync(ask, abandon_on_cancel=True)
        self.stderr.write(text)
        self.stderr.flush()
        line = await anyio.to_thread.run_sync(source.readline, abandon_on_cancel=True)
        self.stderr.write("\n" if not line.endswith("\n") else "")
        return line or None
