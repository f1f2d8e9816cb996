"""Counting a run against its bounds: turns, and token and cost totals.

The loop counts every answer it receives (one per turn), and the usage its tool results report
(a sub-agent's, an MCP server's sampling), and asks, once a turn is over, whether a
bound is reached. The totals are over this run's answers only (not the transcript it started
from): input tokens are `input + cache_read + cache_write` (every prompt token the provider
processed, cached or not), output tokens are `output`, cost is `usage.cost.total` in USD. A bound
is reached when the count or total is at least the limit; the bounds are checked in the order
turns, input tokens, output tokens, cost, and the first one reached is the one reported.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from ..config import AgentLoopConfig
from ..limits import LimitKind, LimitReached
from ..messages import AssistantMessage, ToolResultMessage

__all__ = ["Bounds"]

_log = logging.getLogger("agentcore")


class Bounds:
    """The counts of one run and the bounds of its config."""

    __slots__ = ("cost", "input_tokens", "max_turns", "output_tokens", "turns", "usage_limits")

    def __init__(self, config: AgentLoopConfig) -> None:
        self.max_turns = config.max_turns
        self.usage_limits = config.usage_limits
        self.turns = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.cost = 0.0

    @staticmethod
    def of(config: AgentLoopConfig) -> Bounds | None:
        """The counter for a run, or None when the config sets no bound (nothing to count)."""
        if config.max_turns is None and config.usage_limits is None:
            return None
        return Bounds(config)

    def count(self, answer: AssistantMessage) -> None:
        """Count one answer: a turn, and its usage."""
        self.turns += 1
        usage = answer.usage
        self.input_tokens += usage.input + usage.cache_read + usage.cache_write
        self.output_tokens += usage.output
        self.cost += usage.cost.total

    def count_results(self, results: Iterable[ToolResultMessage]) -> None:
        """Count the usage tool results report (a sub-agent's, an MCP server's sampling): it
        was spent by this run too. Not a turn."""
        for result in results:
            usage = result.usage
            if usage is None:
                continue
            self.input_tokens += usage.input + usage.cache_read + usage.cache_write
            self.output_tokens += usage.output
            self.cost += usage.cost.total

    def reached(self) -> LimitReached | None:
        """The first bound the run has reached (and a log line saying so), or None."""
        checks: list[tuple[LimitKind, float | None, float]] = [
            ("max_turns", self.max_turns, self.turns)
        ]
        limits = self.usage_limits
        if limits is not None:
            checks += [
                ("input_tokens", limits.input_tokens, self.input_tokens),
                ("output_tokens", limits.output_tokens, self.output_tokens),
                ("cost", limits.cost, self.cost),
            ]
        for kind, limit, used in checks:
            if limit is not None and used >= limit:
                reached = LimitReached(kind=kind, limit=limit, used=used)
                _log.warning("the run ended: %s", reached)
                return reached
        return None
