"""The shared thinking-level rules."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentcore.llm import Model, ThinkingBudgets
from agentcore.llm.thinking import (
    DEFAULT_BUDGETS,
    MIN_ANSWER_TOKENS,
    adjust_max_tokens_for_thinking,
    budget_for,
    clamp_level,
    supports_xhigh,
)


def test_clamp() -> None:
    assert clamp_level("xhigh", supports_xhigh=False) == "high"
    assert clamp_level("xhigh", supports_xhigh=True) == "xhigh"
    assert clamp_level("minimal", supports_xhigh=False) == "minimal"


def test_budgets() -> None:
    assert [budget_for(lvl) for lvl in ("off", "minimal", "low", "medium", "high", "xhigh")] == [
        0, 1024, 2048, 8192, 16384, 16384,
    ]  # fmt: skip
    assert budget_for("low", ThinkingBudgets(low=5000)) == 5000
    assert ThinkingBudgets() == DEFAULT_BUDGETS


def test_adjust() -> None:
    assert adjust_max_tokens_for_thinking(4096, 64000, "medium") == (4096 + 8192, 8192)
    assert adjust_max_tokens_for_thinking(32000, 32000, "high") == (32000, 16384)
    # the budget would take everything: keep 1024 answer tokens
    assert adjust_max_tokens_for_thinking(1000, 8000, "high") == (8000, 8000 - 1024)
    assert adjust_max_tokens_for_thinking(500, 500, "minimal") == (500, 0)


@given(st.integers(1, 200_000), st.integers(1, 200_000),
       st.sampled_from(["minimal", "low", "medium", "high", "xhigh"]))  # fmt: skip
def test_adjust_invariants(max_tokens: int, model_max: int, level: str) -> None:
    total, budget = adjust_max_tokens_for_thinking(max_tokens, model_max, level)  # type: ignore[arg-type]
    assert total <= model_max
    assert 0 <= budget < total or budget == 0
    assert total - budget >= min(MIN_ANSWER_TOKENS, total)


def test_supports_xhigh() -> None:
    assert supports_xhigh(Model(id="gpt-5.2", api="openai-responses", provider="openai"))
    assert supports_xhigh(Model(id="claude-opus-4-6", api="anthropic-messages", provider="x"))
    assert not supports_xhigh(Model(id="gpt-5-mini", api="openai-responses", provider="openai"))
    assert not supports_xhigh(Model(id="claude-sonnet-4-5", api="anthropic-messages", provider="x"))
