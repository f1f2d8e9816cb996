"""Bounds on a run: how many turns, how many tokens, how much money.

All are off unless set (`AgentLoopConfig.max_turns`, `AgentLoopConfig.usage_limits`; the `Agent`
sets `max_turns=100`). They are checked after each turn, once `turn_end`, `prepare_next_turn` and
`should_stop_after_turn` are done and before the queues are polled; a run that has reached one
ends there (queued messages stay queued), and `AgentEndEvent.limit` (also `EventStream.limit`
and `AgentState.limit`) says which one ended it. Timeouts (`request_timeout`, `idle_timeout`,
`tool_timeout`) end single steps, not the run: see `AgentLoopConfig` and docs/limits.md. A typed
run (`output_type`) also ends with the `output_retries` limit when its answers keep failing
validation (see docs/typed-outputs.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from .errors import ConfigError

__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_TURNS",
    "DEFAULT_REQUEST_TIMEOUT",
    "DEFAULT_TOOL_TIMEOUT",
    "LimitKind",
    "LimitReached",
    "UsageLimits",
]

# The defaults of the `Agent` and the CLI (`agent_loop` has no bounds unless given).
DEFAULT_MAX_TURNS = 100
"""The Agent's default `max_turns` (`agent_loop` has none): a model that keeps calling tools
ends after this many turns instead of running until someone aborts it."""
DEFAULT_TOOL_TIMEOUT = 600.0
"""The Agent's default `tool_timeout` in seconds: a tool that never returns cannot hold a run."""
DEFAULT_REQUEST_TIMEOUT = 300.0
"""The Agent's default `request_timeout` in seconds (a slow local model still answers)."""
DEFAULT_IDLE_TIMEOUT = 300.0
"""The Agent's default `idle_timeout` in seconds (reasoning models may be silent for minutes)."""


LimitKind: TypeAlias = Literal[
    "max_turns",
    "input_tokens",
    "output_tokens",
    "cost",
    "output_retries",
    "max_handoffs",
    "handoff_loop",
]
"""Which bound ended a run (`output_retries`: a typed run's answers kept failing validation;
`max_handoffs`: the run's handoffs reached `max_handoffs`; `handoff_loop`: two agents kept handing
the conversation to each other)."""


def _check(name: str, value: float | None, *, integer: bool) -> None:
    if value is None:
        return
    kinds = int if integer else (int, float)
    # `not value > 0` also refuses NaN, which no total would ever reach
    if (
        isinstance(value, bool)
        or not isinstance(value, kinds)
        or not value > 0
        or value == float("inf")
    ):
        expected = "a positive integer" if integer else "a positive, finite number"
        raise ConfigError(f"UsageLimits.{name} must be {expected} or None, got {value!r}")


def _amount(kind: LimitKind, value: float) -> str:
    if kind == "cost":
        return f"${value:.4f}" if value >= 0.01 else f"${value:.6f}"
    return f"{int(value):,}"


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageLimits:
    """Totals over a run's assistant messages that end the run once reached.

    Attributes:
        input_tokens: prompt tokens, cached ones included (`input + cache_read + cache_write`).
        output_tokens: generated tokens.
        cost: USD, from the catalogue's prices (`Usage.cost.total`).

    Raises:
        ConfigError: a limit that is not a positive number.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None

    def __post_init__(self) -> None:
        _check("input_tokens", self.input_tokens, integer=True)
        _check("output_tokens", self.output_tokens, integer=True)
        _check("cost", self.cost, integer=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class LimitReached:
    """The bound that ended a run.

    Attributes:
        kind: `max_turns`, `input_tokens`, `output_tokens`, `cost` or `output_retries`.
        limit: the configured bound.
        used: what the run had used when it was checked (turns, tokens, USD, or invalid
            answers).
        errors: for `output_retries`, what was wrong with each invalid answer, oldest first.
    """

    kind: LimitKind
    limit: float
    used: float
    errors: tuple[str, ...] = ()

    def __str__(self) -> str:
        """A sentence for people: `max_turns reached: 3 of 3 turns`."""
        used, limit = _amount(self.kind, self.used), _amount(self.kind, self.limit)
        if self.kind == "max_turns":
            return f"max_turns reached: {used} of {limit} turns"
        if self.kind == "max_handoffs":
            return f"max_handoffs reached: {used} of {limit} handoffs"
        if self.kind == "handoff_loop":
            return (
                f"handoff loop: the same two agents handed the conversation to each other "
                f"{used} times in a row (at most {limit} allowed)"
            )
        if self.kind == "output_retries":
            last = f"; the last one: {self.errors[-1]}" if self.errors else ""
            return (
                f"output_retries reached: {used} invalid final answers, {limit} "
                f"{'retry' if self.limit == 1 else 'retries'} allowed{last}"
            )
        unit = "" if self.kind == "cost" else " tokens"
        return f"{self.kind} limit reached: {used}{unit} used of {limit}"
