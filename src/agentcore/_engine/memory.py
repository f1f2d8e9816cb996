"""A run's memory (`AgentLoopConfig.memory`): its tools, and the system prompt of each request
with the recalled memories for the latest user message (see `agentcore.memory.inject`). Nothing
of it runs without `memory=`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..messages import TextContent, UserMessage

if TYPE_CHECKING:
    from ..memory.inject import Memory
    from .transcript import Transcript

__all__ = ["latest_user_text", "memory_prompt"]


def latest_user_text(transcript: Transcript) -> str:
    """The text of the transcript's latest user message (empty if it has none)."""
    for m in reversed(transcript.messages):
        if isinstance(m, UserMessage):
            if isinstance(m.content, str):
                return m.content
            return " ".join(b.text for b in m.content if isinstance(b, TextContent))
    return ""


async def memory_prompt(memory: Memory, transcript: Transcript, system_prompt: str) -> str:
    """`system_prompt` with the block of memories recalled for the latest user message after
    it (unchanged when nothing is recalled)."""
    block = await memory.block_for(latest_user_text(transcript))
    if not block:
        return system_prompt
    return f"{system_prompt}\n\n{block}" if system_prompt else block
