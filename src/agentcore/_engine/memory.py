"""A run's memory (`AgentLoopConfig.memory`): the memories recalled for each request (searched
once per request, for the latest user message; see `agentcore.memory.inject`), and the system
prompt a request sends with them. Nothing of it searches without `memory=`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..messages import TextContent, UserMessage
from .skills import skills_prompt

if TYPE_CHECKING:
    from ..config import AgentLoopConfig
    from ..memory.inject import Memory
    from .transcript import Transcript

__all__ = ["latest_user_text", "recall", "request_system_prompt"]


def latest_user_text(transcript: Transcript) -> str:
    """The text of the transcript's latest user message (empty if it has none)."""
    for m in reversed(transcript.messages):
        if isinstance(m, UserMessage):
            if isinstance(m.content, str):
                return m.content
            return " ".join(b.text for b in m.content if isinstance(b, TextContent))
    return ""


async def recall(memory: Memory | None, transcript: Transcript) -> str:
    """The block of memories recalled for the transcript's latest user message; empty without
    `memory=` or when nothing is recalled. A request searches once: its compaction estimate and
    its system prompt share the block."""
    if memory is None:
        return ""
    return await memory.block_for(latest_user_text(transcript))


def request_system_prompt(config: AgentLoopConfig, transcript: Transcript, recalled: str) -> str:
    """The system prompt a request sends: the transcript's, with the skills' catalogue (and
    the bodies of active skills a compaction took out of the messages) when there are skills,
    then the `recalled` block (for this request only: never in the transcript)."""
    system = skills_prompt(config, transcript) if config.skills else transcript.system_prompt
    if not recalled:
        return system
    return f"{system}\n\n{recalled}" if system else recalled
