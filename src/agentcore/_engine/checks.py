"""What the loop's entry points check before a run starts: misuse is an exception at the call,
never a run that fails later."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._approvals.transcript import check_decided
from ..config import AgentContext, AgentLoopConfig
from ..errors import ConfigError, MessageFormatError
from ..messages import AgentMessage

__all__ = ["check_call", "check_continue", "check_prompts"]


def check_prompts(prompts: Any, what: str = "prompts") -> list[AgentMessage]:
    """`prompts` as a list, if it is a sequence of objects with a `role`."""
    if isinstance(prompts, str | bytes) or not isinstance(prompts, Sequence):
        raise MessageFormatError(
            f"{what} must be a list of messages (e.g. [UserMessage(content='hi')]), "
            f"got {type(prompts).__name__}"
        )
    for i, message in enumerate(prompts):
        if not isinstance(getattr(message, "role", None), str):
            raise MessageFormatError(
                f"{what}[{i}] is not a message: expected an object with a `role` "
                f"(UserMessage, ...), got {type(message).__name__}"
            )
    return list(prompts)


def check_continue(context: AgentContext) -> None:
    """A continue run needs a transcript that does not end with an assistant message."""
    if not context.messages:
        raise ConfigError("cannot continue: the transcript has no messages")
    last = context.messages[-1]
    if getattr(last, "role", None) == "assistant":
        raise ConfigError(
            "cannot continue from an assistant message: add a user or tool-result message first"
        )


def check_call(context: Any, config: Any, emit: Any = None) -> None:
    """The context, config and sink are of the right kinds."""
    if not isinstance(context, AgentContext):
        raise ConfigError(f"context must be an AgentContext, got {type(context).__name__}")
    if not isinstance(config, AgentLoopConfig):
        raise ConfigError(f"config must be an AgentLoopConfig, got {type(config).__name__}")
    if emit is not None and not callable(emit):
        raise ConfigError(f"emit must be a function (event) -> None, got {type(emit).__name__}")
    check_decided(context.messages)
    if config.memory is not None and config.memory.tools:
        for t in context.tools:
            if t.name in ("recall_memory", "remember"):
                raise ConfigError(
                    f"a tool is named {t.name!r}, the name of a memory tool: with memory= set, "
                    "rename it (or give Memory(..., tools=False))"
                )
    if config.skills:
        for t in context.tools:
            if t.name in ("activate_skill", "read_skill_file"):
                raise ConfigError(
                    f"a tool is named {t.name!r}, the name of a skills tool: with skills= set, "
                    "rename it"
                )
