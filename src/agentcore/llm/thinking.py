"""Thinking levels: the shared rules every adapter applies before its own mapping.

`xhigh` is only sent to models that support it (others get `high`), which `XHIGH_SINCE` says per
model family; APIs that take a token
budget use `ThinkingBudgets` (defaults 1024/2048/8192/16384) and grow the output limit by the
budget, keeping at least 1,024 tokens for the answer.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .types import ThinkingBudgets, ThinkingLevel

if TYPE_CHECKING:
    from .model import Model

__all__ = [
    "DEFAULT_BUDGETS",
    "MIN_ANSWER_TOKENS",
    "XHIGH_MODELS",
    "XHIGH_SINCE",
    "adjust_max_tokens_for_thinking",
    "budget_for",
    "clamp_level",
    "supports_xhigh",
]

DEFAULT_BUDGETS = ThinkingBudgets()
"""minimal 1024, low 2048, medium 8192, high 16384 tokens."""

MIN_ANSWER_TOKENS = 1024
"""Tokens kept for the answer when a thinking budget would eat the whole output limit."""

XHIGH_SINCE: tuple[tuple[re.Pattern[str], tuple[int, int]], ...] = (
    # OpenAI GPT: gpt-5.2, gpt-5.2-codex, gpt-5.4-pro, gpt-6, openai/gpt-5.3, ...
    (re.compile(r"(?<![a-z0-9])gpt-(\d+)(?:\.(\d+))?"), (5, 2)),
    # Claude Opus: claude-opus-4-6, claude-opus-4.6, claude-opus-4-6-20260205, claude-opus-5, ...
    (re.compile(r"(?<![a-z0-9])claude-opus-(\d+)(?:[-.](\d{1,2}))?(?!\d)"), (4, 6)),
)
"""The model families that take `xhigh`, each from the version it first appeared in: a pattern
finding `(major, minor)` in a model id, and that first version. Newer releases of a family
qualify without a change here."""

XHIGH_MODELS: frozenset[str] = frozenset({"gpt-5.1-codex-max"})
"""Models that take `xhigh` although their family's version does not say so."""


def supports_xhigh(model: Model) -> bool:
    """Whether `model` accepts the `xhigh` level: `model.supports_xhigh` when the model states it
    (catalogue models do), else by its id (`XHIGH_SINCE`, `XHIGH_MODELS`): GPT-5.2 and
    later, GPT-5.1 Codex Max, Claude Opus 4.6 and later. Provider prefixes (`openai/`,
    `anthropic.`) and date suffixes are allowed."""
    if model.supports_xhigh is not None:  # the catalogue states it (capability data)
        return model.supports_xhigh
    model_id = model.id.lower()
    if any(known in model_id for known in XHIGH_MODELS):
        return True
    for pattern, since in XHIGH_SINCE:
        match = pattern.search(model_id)
        if match is not None:
            return (int(match.group(1)), int(match.group(2) or 0)) >= since
    return False


def clamp_level(level: ThinkingLevel, supports_xhigh: bool) -> ThinkingLevel:
    """`level`, with `xhigh` lowered to `high` unless the model supports it."""
    if level == "xhigh" and not supports_xhigh:
        return "high"
    return level


def budget_for(level: ThinkingLevel, budgets: ThinkingBudgets | None = None) -> int:
    """The token budget of a level (`off` is 0; `xhigh` uses the `high` budget)."""
    b = budgets or DEFAULT_BUDGETS
    match level:
        case "off":
            return 0
        case "minimal":
            return b.minimal
        case "low":
            return b.low
        case "medium":
            return b.medium
        case _:
            return b.high


def adjust_max_tokens_for_thinking(
    max_tokens: int,
    model_max_tokens: int,
    level: ThinkingLevel,
    budgets: ThinkingBudgets | None = None,
) -> tuple[int, int]:
    """The output limit and thinking budget for a budget-style API.

    The limit grows by the budget, capped at the model's maximum; if the budget would then leave
    fewer than `MIN_ANSWER_TOKENS` for the answer, it shrinks so that they remain (possibly to 0,
    or below an API's minimum budget: the adapter then turns thinking off).

    Returns:
        `(max_tokens, thinking_budget)`.
    """
    budget = budget_for(level, budgets)
    total = min(max_tokens + budget, model_max_tokens)
    if total - budget < MIN_ANSWER_TOKENS:
        budget = max(0, total - MIN_ANSWER_TOKENS)
    return total, budget
