"""The built-in compaction strategies: `Summarize`, `DropOldest`, `KeepToolResultHeads`.

`Summarize` writes the older messages out as plain text (so that any model can read them, with
no tool definitions and no message-ordering rules to satisfy) and asks a model for a summary. When
the text does not fit the summarising model's context window, it is summarised in pieces, each
request getting the summary so far and the next piece.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..llm.model import Model
from ..llm.types import Context
from ..messages import (
    AgentMessage,
    AssistantMessage,
    Cost,
    ImageContent,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from .protocol import CompactionError, CompactionRequest, CompactionResult
from .view import SUMMARY_PREFIX, cut_tool_result

__all__ = ["DropOldest", "KeepToolResultHeads", "Summarize", "transcript_text"]

SUMMARY_SYSTEM_PROMPT = (
    "You summarise conversations between a user and an AI assistant that uses tools, so that the "
    "assistant can continue the work from your summary alone, without the original messages."
)

SUMMARY_INSTRUCTIONS = """\
Write a summary of the conversation above that lets the assistant continue the work. Include:
- the user's goals and requests, in their own words where it matters, and every constraint or \
preference they stated;
- what was done: the tools called and what they found or changed (names, paths, identifiers, \
numbers, error messages that matter);
- decisions made and why, and what was ruled out;
- the current state of the work and what remains to be done next.
Be concise and factual. Do not invent anything. Write only the summary."""

_MESSAGE_CHARS = 20_000  # a single message is cut to this head in the text to summarise


def _blocks_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ImageContent):
            parts.append("[image]")
    return "\n".join(parts)


def _message_text(message: AgentMessage) -> str | None:
    """One message as text, or None for a message no model is sent (an application message,
    a failed answer)."""
    if isinstance(message, UserMessage):
        text = _blocks_text(message.content)
        if text.startswith(SUMMARY_PREFIX):
            return f"[summary of the conversation before]\n{text[len(SUMMARY_PREFIX) :]}"
        return f"[user]\n{text}"
    if isinstance(message, AssistantMessage):
        if message.stop_reason in ("error", "aborted"):
            return None
        parts = []
        for block in message.content:
            if isinstance(block, TextContent) and block.text:
                parts.append(block.text)
            elif isinstance(block, ToolCall):
                parts.append(f"(calls {block.name} {json.dumps(block.arguments)})")
        return "[assistant]\n" + "\n".join(parts)
    if isinstance(message, ToolResultMessage):
        label = "tool error" if message.is_error else "tool result"
        return f"[{label} of {message.tool_name}]\n{_blocks_text(message.content)}"
    return None


def transcript_text(messages: Sequence[AgentMessage], max_chars: int | None = None) -> list[str]:
    """The messages as text, in pieces of at most `max_chars` characters (one piece when None);
    a message longer than `_MESSAGE_CHARS` (or the piece size) is cut to its head."""
    limit = _MESSAGE_CHARS if max_chars is None else min(_MESSAGE_CHARS, max_chars)
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for message in messages:
        text = _message_text(message)
        if text is None:
            continue
        if len(text) > limit:
            text = text[:limit] + f"\n[... {len(text) - limit} more characters]"
        if current and max_chars is not None and size + len(text) + 2 > max_chars:
            pieces.append("\n\n".join(current))
            current, size = [], 0
        current.append(text)
        size += len(text) + 2
    if current:
        pieces.append("\n\n".join(current))
    return pieces


def _add(a: Usage, b: Usage) -> Usage:
    return Usage(
        input=a.input + b.input,
        output=a.output + b.output,
        cache_read=a.cache_read + b.cache_read,
        cache_write=a.cache_write + b.cache_write,
        cost=Cost(
            input=a.cost.input + b.cost.input,
            output=a.cost.output + b.cost.output,
            cache_read=a.cost.cache_read + b.cost.cache_read,
            cache_write=a.cost.cache_write + b.cost.cache_write,
        ),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Summarize:
    """Replace the older messages by a summary a model writes.

    Attributes:
        model: the summarising model (None: the run's current model). A cheaper model with a
            large window is a good choice.
        max_tokens: the longest summary, in tokens (capped at the model's `max_tokens`).
        instructions: what the summary must contain, in place of the built-in instructions.
    """

    model: Model | None = None
    max_tokens: int = 4096
    instructions: str | None = None

    def __post_init__(self) -> None:
        if self.model is not None and not isinstance(self.model, Model):
            raise TypeError(
                f"Summarize.model must be an agentcore.llm.Model or None, got {self.model!r}"
            )
        if (
            isinstance(self.max_tokens, bool)
            or not isinstance(self.max_tokens, int)
            or (self.max_tokens < 1)
        ):
            raise ValueError(
                f"Summarize.max_tokens must be a positive integer, got {self.max_tokens!r}"
            )

    async def compact(self, request: CompactionRequest) -> CompactionResult | None:
        """Summarise `request.older` (in pieces if needed)."""
        model = self.model or request.model
        max_tokens = min(self.max_tokens, model.max_tokens) if model.max_tokens else self.max_tokens
        instructions = self.instructions or SUMMARY_INSTRUCTIONS
        budget = None
        if model.context_window:
            # what the text may take: the window less the summary, the prompt, and a margin
            room = model.context_window - max_tokens - (len(instructions) + 2000) // 4
            budget = max(room, 1000) * 3  # three characters a token: a cautious estimate
        pieces = transcript_text(request.older, budget)
        if not pieces:
            return None
        summary: str | None = None
        usage = Usage()
        for piece in pieces:
            text = f"<conversation>\n{piece}\n</conversation>\n\n{instructions}"
            if summary is not None:
                text = (
                    f"<summary of the conversation before>\n{summary}\n"
                    f"</summary of the conversation before>\n\n{text}\n"
                    "Fold the summary of the conversation before into your summary."
                )
            context = Context(
                system_prompt=SUMMARY_SYSTEM_PROMPT, messages=[UserMessage(content=text)]
            )
            answer = await request.complete(model, context, max_tokens=max_tokens)
            usage = _add(usage, answer.usage)
            if answer.stop_reason in ("error", "aborted"):
                raise CompactionError(
                    f"the summary request to {model.provider}/{model.id} failed: "
                    f"{answer.error_message or answer.stop_reason}"
                )
            summary = "".join(b.text for b in answer.content if isinstance(b, TextContent)).strip()
            if not summary:
                raise CompactionError(
                    f"the summary request to {model.provider}/{model.id} gave no text"
                )
        return CompactionResult(summary=summary, usage=usage)


@dataclass(frozen=True, slots=True, kw_only=True)
class DropOldest:
    """Drop the older messages: only the kept recent turns are sent (the cheapest strategy; the
    model forgets what was dropped)."""

    async def compact(self, request: CompactionRequest) -> CompactionResult | None:
        """Drop `request.older`."""
        return CompactionResult()


@dataclass(frozen=True, slots=True, kw_only=True)
class KeepToolResultHeads:
    """Keep the older messages, but cut each older tool result to its first `chars` characters
    (images left out): the model keeps the thread of the conversation and loses the bulk of what
    tools returned. No marker is written when no older tool result is longer.

    Attributes:
        chars: the head of each older tool result that is kept.
    """

    chars: int = 500

    def __post_init__(self) -> None:
        if isinstance(self.chars, bool) or not isinstance(self.chars, int) or self.chars < 0:
            raise ValueError(
                f"KeepToolResultHeads.chars must be a non-negative integer, got {self.chars!r}"
            )

    async def compact(self, request: CompactionRequest) -> CompactionResult | None:
        """Cut the older tool results, if one is longer than `chars`."""
        if not any(self._long(m) for m in request.older):
            return None
        return CompactionResult(tool_result_chars=self.chars)

    def _long(self, message: AgentMessage) -> bool:
        return (
            isinstance(message, ToolResultMessage)
            and cut_tool_result(message, self.chars) is not message
        )
