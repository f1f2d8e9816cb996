"""What a compacted transcript sends, where a compaction cuts it, and how big a request is.

* `compacted_view(transcript)`: the messages a request is built from. The transcript is read in
  order; each `CompactionSummary` marker replaces the older part of the view built so far (see
  its docstring), so compactions compose: a second summary summarises the first one with what
  followed. A marker of an overflow compaction also leaves out the failed answer just before it
  (that answer is kept in the transcript; it was never a real answer).
* `split(view, keep_recent_turns, budget)`: where the kept recent part begins. A turn is a model
  answer with its tool results and the messages that led to it; the cut never separates a tool
  call from its result.
* `estimate_tokens` / `estimate_context`: four characters a token (images count
  `IMAGE_TOKENS`), the cheap estimate used where no usage is known.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from ..llm.types import Tool
from ..messages import (
    AgentMessage,
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from .protocol import CompactionSummary

__all__ = [
    "IMAGE_TOKENS",
    "SUMMARY_PREFIX",
    "compacted_view",
    "cut_tool_result",
    "estimate_context",
    "estimate_tokens",
    "split",
    "summary_message",
]

IMAGE_TOKENS = 1200
"""The estimated size of one image, in tokens."""

SUMMARY_PREFIX = (
    "The earlier part of this conversation was compacted to fit the context window. "
    "Summary of it:\n\n"
)
"""How the user message standing for a summary begins."""


def summary_message(marker: CompactionSummary) -> UserMessage:
    """The user message a summary is sent as."""
    return UserMessage(content=SUMMARY_PREFIX + (marker.summary or ""), timestamp=marker.timestamp)


_CUT_MARK = " cut when the conversation was compacted]"


def _already_cut(text: str, chars: int) -> bool:
    """Whether `text` is a head this module cut to at most `chars` characters."""
    head, sep, _ = text.rpartition("\n[... ")
    return bool(sep) and text.endswith(_CUT_MARK) and len(head) <= chars


def cut_tool_result(message: ToolResultMessage, chars: int) -> ToolResultMessage:
    """`message` with its text cut to its first `chars` characters (and images left out), saying
    how much was cut; the message itself when it is short enough."""
    text = "".join(b.text for b in message.content if isinstance(b, TextContent))
    images = sum(1 for b in message.content if isinstance(b, ImageContent))
    if not images and (len(text) <= chars or _already_cut(text, chars)):
        return message
    notes = []
    if len(text) > chars:
        notes.append(f"{len(text) - chars} more characters")
    if images:
        notes.append(f"{images} image{'s' if images > 1 else ''}")
    note = f"\n[... {' and '.join(notes)}{_CUT_MARK}"
    return replace(message, content=[TextContent(text=text[:chars] + note)])


def _is_answer(message: AgentMessage) -> bool:
    return isinstance(message, AssistantMessage) and message.stop_reason not in (
        "error",
        "aborted",
    )


def compacted_view(transcript: Sequence[AgentMessage]) -> list[AgentMessage]:
    """The messages a request is built from: the transcript with its compactions applied (the
    transcript itself, copied, when it holds no marker)."""
    view: list[AgentMessage] = []
    for message in transcript:
        if not isinstance(message, CompactionSummary):
            view.append(message)
            continue
        if (
            message.reason == "overflow"
            and view
            and isinstance(view[-1], AssistantMessage)
            and view[-1].stop_reason == "error"
        ):
            view.pop()  # the answer that overflowed: kept in the transcript, never sent again
        kept = min(message.kept_messages, len(view))
        older, recent = view[: len(view) - kept], view[len(view) - kept :]
        if message.summary is not None:
            view = [summary_message(message), *recent]
        elif message.tool_result_chars is not None:
            chars = message.tool_result_chars
            view = [
                cut_tool_result(m, chars) if isinstance(m, ToolResultMessage) else m for m in older
            ]
            view.extend(recent)
        else:
            view = list(recent)
    return view


_BATCH_ROLES = frozenset(
    ("tool_result", "approval_request", "approval_decision", "approved_call_started")
)
"""What follows an answer as part of its tool batch: results, and the approvals of its calls."""
_TURN_ENDS = _BATCH_ROLES | {"assistant"}


def _turns(view: Sequence[AgentMessage]) -> list[tuple[int, int]]:
    """Each turn as (where it begins, where its answer is): it begins at the answer, moved back
    over the messages that led to it (user and application messages; not tool results, not
    other answers)."""
    turns = []
    for i, message in enumerate(view):
        if not _is_answer(message):
            continue
        start = i
        while start > 0 and getattr(view[start - 1], "role", None) not in _TURN_ENDS:
            start -= 1
        turns.append((start, i))
    return turns


def _paired(view: Sequence[AgentMessage], cut: int) -> int:
    """`cut` moved back until no tool result at or after it answers a call before it."""
    while cut > 0:
        later = {m.tool_call_id for m in view[cut:] if isinstance(m, ToolResultMessage)}
        back = cut
        for i in range(cut - 1, -1, -1):
            message = view[i]
            if isinstance(message, AssistantMessage) and any(
                c.id in later for c in message.tool_calls
            ):
                back = i
                break
        if back == cut:
            return cut
        cut = back
    return cut


def split(view: Sequence[AgentMessage], keep_recent_turns: int, budget: float | None) -> int:
    """The index where the kept recent part of `view` begins (0: nothing to compact).

    The last `keep_recent_turns` turns are kept (the one the coming request continues counts),
    fewer while their estimate is above `budget`; what the coming request answers (a new prompt
    after the last answer, or the last answer with its tool results) is always kept.
    """
    turns = _turns(view)
    starts = [start for start, _ in turns]
    # keeping no turn: the messages after the last turn, or that turn if the request continues it
    last_end = 0
    if turns:
        last_start, last_answer = turns[-1]
        last_end = last_answer + 1
        while last_end < len(view) and getattr(view[last_end], "role", None) in _BATCH_ROLES:
            last_end += 1
        if last_end == len(view):
            last_end = last_start
    keep = min(keep_recent_turns, len(starts))
    while True:
        cut = _paired(view, starts[len(starts) - keep] if keep else last_end)
        if keep == 0 or budget is None or estimate_tokens(view[cut:]) <= budget:
            return cut
        keep -= 1


def _content_chars(content: Any) -> tuple[int, int]:
    """The characters and images of a message's content (a tool call's arguments are measured by
    their `repr`, close to their JSON and several times cheaper to make)."""
    if type(content) is str:
        return len(content), 0
    chars = images = 0
    for block in content:
        kind = type(block)
        if kind is TextContent:
            chars += len(block.text)
        elif kind is ToolCall:
            chars += len(block.name) + len(repr(block.arguments))
        elif kind is ThinkingContent:
            chars += len(block.thinking)
        elif kind is ImageContent:
            images += 1
        elif isinstance(block, TextContent):  # a subclass: rare, measured all the same
            chars += len(block.text)
    return chars, images


def estimate_tokens(messages: Iterable[AgentMessage]) -> int:
    """The estimated size in tokens of `messages`: four characters a token, `IMAGE_TOKENS` an
    image; application messages count as the text they hold (their `summary` or `content`)."""
    chars = images = 0
    for message in messages:
        if type(message) is CompactionSummary:
            chars += len(message.summary or "")
            continue
        c, i = _content_chars(getattr(message, "content", ""))
        chars += c + 16  # a little for the role and framing
        images += i
    return (chars + 3) // 4 + images * IMAGE_TOKENS


def estimate_context(system_prompt: str, tools: Sequence[Tool], messages: Iterable[Any]) -> int:
    """The estimated size of a request: its system prompt, tool definitions and messages."""
    chars = len(system_prompt)
    for t in tools:
        chars += len(t.name) + len(t.description) + len(json.dumps(t.parameters))
    return (chars + 3) // 4 + estimate_tokens(messages)
