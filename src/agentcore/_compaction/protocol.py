"""What a compaction strategy is given and gives back (`CompactionRequest`, `CompactionResult`,
the `CompactionStrategy` protocol) and the marker a compaction leaves in the transcript
(`CompactionSummary`): the bottom of the compaction feature, below the policy (`policy`), the
built-in strategies (`strategies`) and the compacted view (`view`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Literal, Protocol, TypeAlias

from ..abort import AbortSignal
from ..errors import AgentCoreError
from ..llm.model import Model
from ..messages import AgentMessage, AssistantMessage, Cost, Usage, now_ms, register_message_type

__all__ = [
    "CompactionError",
    "CompactionReason",
    "CompactionRequest",
    "CompactionResult",
    "CompactionStrategy",
    "CompactionSummary",
]

CompactionReason: TypeAlias = Literal["threshold", "overflow"]
"""Why a compaction happened: the estimate passed the threshold before a request, or a request
failed as a context overflow (and was retried after the compaction)."""


class CompactionError(AgentCoreError):
    """A strategy could not compact (its summary request failed, say). The loop logs it and goes
    on without compacting."""


def _usage_of(value: Any) -> Usage | None:
    """A `Usage` from itself or from its JSON form (a session gives back dicts)."""
    if value is None or isinstance(value, Usage):
        return value
    if not isinstance(value, dict):
        raise TypeError(f"usage must be a Usage, its JSON object or None, got {type(value)}")
    names = {f.name for f in fields(Usage) if f.init}
    kwargs = {k: v for k, v in value.items() if k in names}
    cost = kwargs.get("cost")
    if isinstance(cost, dict):
        cost_names = {f.name for f in fields(Cost) if f.init}
        kwargs["cost"] = Cost(**{k: v for k, v in cost.items() if k in cost_names})
    return Usage(**kwargs)


def _check_count(name: str, value: Any, *, optional: bool = False) -> None:
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        expected = "a non-negative integer" + (" or None" if optional else "")
        raise TypeError(f"CompactionSummary.{name} must be {expected}, got {value!r}")


@register_message_type
@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionSummary:
    """The marker a compaction appends to the transcript (an application-defined message: the
    default `convert_to_llm` never sends it as it is; the loop sends what it stands for).

    It stands for: the `compacted_messages` older messages of the conversation as it was sent
    before this marker are replaced (by `summary` if there is one; else, with
    `tool_result_chars`, by themselves with every tool result cut to that many characters; else
    by nothing), and its `kept_messages` most recent messages are sent as they were, followed by
    whatever comes after the marker.

    Attributes:
        summary: the text standing for the older messages (None: they were dropped or cut).
        kept_messages: how many of the most recent messages were kept as they were.
        compacted_messages: how many older messages were summarised, dropped or cut.
        tool_result_chars: the head of each older tool result that was kept (None: not cut).
        strategy: the class name of the strategy that compacted.
        reason: "threshold" (the estimate passed the threshold before a request) or "overflow"
            (a request failed as a context overflow, and was sent again after this).
        tokens_before: the estimated size of the request before compacting.
        tokens_after: the estimated size after compacting.
        usage: what the strategy's own model requests cost (a summary's), else None.
        timestamp: ms since the epoch.
    """

    role: Literal["compaction"] = "compaction"
    summary: str | None = None
    kept_messages: int = 0
    compacted_messages: int = 0
    tool_result_chars: int | None = None
    strategy: str = ""
    reason: CompactionReason = "threshold"
    tokens_before: int = 0
    tokens_after: int = 0
    usage: Usage | None = None
    timestamp: int = field(default_factory=now_ms)

    def __post_init__(self) -> None:
        # A session gives back JSON values: checked here, so a damaged document fails to load
        # with a clear error instead of failing a later run.
        if self.summary is not None and not isinstance(self.summary, str):
            raise TypeError(
                f"CompactionSummary.summary must be a string or None, got {self.summary!r}"
            )
        for name in ("kept_messages", "compacted_messages", "tokens_before", "tokens_after"):
            _check_count(name, getattr(self, name))
        _check_count("tool_result_chars", self.tool_result_chars, optional=True)
        _check_count("timestamp", self.timestamp)
        if self.reason not in ("threshold", "overflow"):
            raise TypeError(
                f"CompactionSummary.reason must be 'threshold' or 'overflow', got {self.reason!r}"
            )
        if not isinstance(self.strategy, str):
            raise TypeError(f"CompactionSummary.strategy must be a string, got {self.strategy!r}")
        object.__setattr__(self, "usage", _usage_of(self.usage))


Complete: TypeAlias = Callable[..., Awaitable[AssistantMessage]]


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionRequest:
    """What a strategy is asked to compact.

    Attributes:
        older: the older messages to summarise, drop or cut (as they would be sent: earlier
            compactions applied, application messages included).
        recent: the recent messages that are kept as they are (never split from their tool
            calls or results).
        model: the run's current model.
        system_prompt: the run's system prompt.
        reason: why the compaction happens.
        tokens_before: the estimated size of the request.
        signal: the run's abort signal.
        complete: `await complete(model, context, max_tokens=None)` sends one request through
            the run's stream function with the run's bounds, abort signal and API keys, and
            returns the answer (use it for summaries).
    """

    older: Sequence[AgentMessage]
    recent: Sequence[AgentMessage]
    model: Model
    system_prompt: str
    reason: CompactionReason
    tokens_before: int
    signal: AbortSignal
    complete: Complete


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionResult:
    """What a strategy made of the older messages: a `summary` replacing them, or
    `tool_result_chars` (keep them, with each tool result cut to that head), or neither (drop
    them).

    Attributes:
        summary: the text standing for the older messages.
        tool_result_chars: keep the older messages, each tool result cut to this many characters.
        usage: what the strategy's model requests cost (recorded on the marker).
    """

    summary: str | None = None
    tool_result_chars: int | None = None
    usage: Usage | None = None

    def __post_init__(self) -> None:
        if self.summary is not None and self.tool_result_chars is not None:
            raise ValueError("a CompactionResult has a summary or tool_result_chars, not both")
        if self.summary is not None and not isinstance(self.summary, str):
            raise TypeError(f"CompactionResult.summary must be a string, got {self.summary!r}")
        if self.tool_result_chars is not None and (
            isinstance(self.tool_result_chars, bool)
            or not isinstance(self.tool_result_chars, int)
            or self.tool_result_chars < 0
        ):
            raise ValueError(
                "CompactionResult.tool_result_chars must be a non-negative integer or None, "
                f"got {self.tool_result_chars!r}"
            )


class CompactionStrategy(Protocol):
    """How older messages are compacted: `Summarize`, `DropOldest`, `KeepToolResultHeads`, or
    your own."""

    async def compact(self, request: CompactionRequest) -> CompactionResult | None:
        """Compact `request.older`; None when there is nothing to gain (no marker is written).

        Raises:
            CompactionError: the compaction failed (the loop logs it and goes on without).
        """
        ...
