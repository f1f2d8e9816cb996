"""Session titles: what `SessionInfo.title` holds, computed the same way by every store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..messages import AgentMessage, ImageContent, TextContent, UserMessage, valid_text

__all__ = ["TITLE_LENGTH", "session_title", "title_text"]


TITLE_LENGTH = 100
"""The most characters of a `SessionInfo.title` (a longer first prompt is cut, ending in `…`)."""


def title_text(text: str) -> str:
    """A title as every store can hold it: valid Unicode (`valid_text`) with each NUL replaced
    by U+FFFD, as the page shows one. A title is a summary a store keeps as a plain text column
    (PostgreSQL's `text` refuses NUL); the message itself keeps its NUL, which its JSON form
    writes as the escape `\\u0000` on every store."""
    text = valid_text(text)
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else ():
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ImageContent):
            parts.append("[image]")
    return " ".join(parts)


def session_title(messages: Sequence[AgentMessage]) -> str | None:
    """The title the first user message among `messages` gives a session (None: there is none):
    its text (text blocks joined, an image as `[image]`) with every run of whitespace (newlines
    included) made one space, cut to `TITLE_LENGTH` characters (the last one `…` when cut), and
    storable by every store (`title_text`: a lone surrogate, as in every stored text, and a NUL
    become U+FFFD)."""
    for message in messages:
        if isinstance(message, UserMessage):
            text = " ".join(_content_text(message.content).split())
            if len(text) > TITLE_LENGTH:
                text = text[: TITLE_LENGTH - 1].rstrip() + "…"
            return title_text(text)
    return None
