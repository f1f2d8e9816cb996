"""A run's skills (`AgentLoopConfig.skills`): the tools they add and the system prompt of each
request (the catalogue, and the bodies of skills whose activation a compaction took out of the
request's messages).

What is active is read from the run's transcript (`_skills.tools.active_skills`), so it is the
same after a session's reload; the tools join the transcript's own, so a skill's tools pass the
one pipeline every call passes (validation, hooks, guardrails, approvals, bounds, events).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._compaction.view import compacted_view
from .._skills.tools import (
    ACTIVATE_SKILL,
    active_skill_block,
    active_skills,
    skill_catalogue,
    skill_tools,
)
from ..messages import ToolResultMessage

if TYPE_CHECKING:
    from ..config import AgentLoopConfig
    from ..tools import AgentTool
    from .transcript import Transcript

__all__ = ["run_skill_tools", "skills_prompt"]


def run_skill_tools(config: AgentLoopConfig, transcript: Transcript) -> list[AgentTool]:
    """The skill tools of a run over `transcript` (none without skills)."""
    if not config.skills:
        return []
    return skill_tools(config.skills, active=lambda: active_skills(transcript.messages))


def skills_prompt(config: AgentLoopConfig, transcript: Transcript) -> str:
    """The system prompt of the next request: the transcript's, then the catalogue, then the
    bodies of active skills whose activation result is not sent as it was (a compaction
    summarised, dropped or cut it)."""
    parts = [transcript.system_prompt] if transcript.system_prompt else []
    parts.append(skill_catalogue(config.skills))
    if config.compaction is not None:
        messages = transcript.messages
        active = active_skills(messages)
        if active:
            sent = {
                id(m)
                for m in compacted_view(messages)
                if isinstance(m, ToolResultMessage) and m.tool_name == ACTIVATE_SKILL
            }
            lost = [
                name
                for name in active
                if not any(
                    id(m) in sent
                    for m in messages
                    if isinstance(m, ToolResultMessage)
                    and m.tool_name == ACTIVATE_SKILL
                    and isinstance(m.details, dict)
                    and m.details.get("skill") == name
                    and not m.details.get("already_active")
                )
            ]
            if lost:
                parts.append(active_skill_block(config.skills, lost))
    return "\n\n".join(parts)
