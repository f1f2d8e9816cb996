"""Compaction: the policy (`Compaction`); its strategies' protocol and the marker a compaction
leaves in the transcript (`CompactionSummary`) are in `protocol`.

Nothing is ever removed from the transcript. A compaction appends a `CompactionSummary` marker,
and what is *sent* to the model is computed from the transcript (`compacted_view` in
`view`): every marker replaces the older part of the conversation before it (by its
`summary`, by nothing, or by the same messages with their tool results cut to a head), keeping its
`kept_messages` most recent messages as they were. The full history stays in the Agent's state and
in the session, and every compaction can be read back from it.

See docs/compaction.md for the whole story; the loop side is in `_engine.compaction`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from .protocol import CompactionStrategy

__all__ = ["Compaction", "check_compaction"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Compaction:
    """When and how a run compacts its conversation (`AgentLoopConfig.compaction`,
    `Agent(compaction=...)`).

    Before each request the loop estimates the request's size (see docs/compaction.md); past
    `threshold` x the model's `context_window` it compacts first. A request that fails as a
    context overflow is compacted and sent again, once.

    Attributes:
        strategy: what to do with the older messages (default: `Summarize()` with the run's
            model).
        threshold: the share of the context window that triggers a compaction before a
            request (None: compact only after an overflow).
        keep_recent_turns: how many recent turns (a model answer with its tool results and the
            messages that led to it) are kept as they are; fewer when they alone would take
            more than half the threshold.
        on_overflow: compact and retry a request that failed as a context overflow.

    Raises:
        ConfigError: an option of the wrong type or range.
    """

    strategy: CompactionStrategy = field(default_factory=lambda: _default_strategy())
    threshold: float | None = 0.8
    keep_recent_turns: int = 2
    on_overflow: bool = True

    def __post_init__(self) -> None:
        if not callable(getattr(self.strategy, "compact", None)):
            raise ConfigError(
                "Compaction.strategy must have an async compact(request) method "
                f"(Summarize(), DropOldest(), KeepToolResultHeads(), ...), got {self.strategy!r}"
            )
        t = self.threshold
        if t is not None and (
            isinstance(t, bool) or not isinstance(t, int | float) or not 0 < t <= 1
        ):
            raise ConfigError(
                f"Compaction.threshold must be a share of the context window in (0, 1] or None, "
                f"got {t!r}"
            )
        k = self.keep_recent_turns
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ConfigError(
                f"Compaction.keep_recent_turns must be a non-negative integer, got {k!r}"
            )
        if not isinstance(self.on_overflow, bool):
            raise ConfigError(f"Compaction.on_overflow must be a bool, got {self.on_overflow!r}")


def _default_strategy() -> CompactionStrategy:
    from .strategies import Summarize

    return Summarize()


def check_compaction(value: Any) -> None:
    """Raise `ConfigError` unless `value` is a `Compaction` or None."""
    if value is not None and not isinstance(value, Compaction):
        raise ConfigError(
            "AgentLoopConfig.compaction must be an agentcore.Compaction or None, got "
            f"{type(value).__name__} (e.g. Compaction(strategy=Summarize(), threshold=0.8))"
        )
