"""The shared thinking-level rules."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentcore.llm import Model, ThinkingBudgets, get_models
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


@pytest.mark.parametrize(
    ("model_id", "expected"),
    [
        ("gpt-5.2", True),
        ("gpt-5.2-codex", True),
        ("gpt-5.3", True),
        ("gpt-5.4-pro", True),
        ("gpt-6", True),
        ("gpt-6.1-mini", True),
        ("openai/gpt-5.2", True),
        ("gpt-5.1-codex-max", True),
        ("claude-opus-4-6", True),
        ("claude-opus-4.6", True),
        ("claude-opus-4-6-20260205", True),
        ("claude-opus-4-7", True),
        ("claude-opus-5", True),
        ("anthropic/claude-opus-4.6", True),
        ("anthropic.claude-opus-4-6-v1:0", True),
        ("gpt-5", False),
        ("gpt-5-mini", False),
        ("gpt-5.1", False),
        ("gpt-5.1-codex", False),
        ("gpt-4.1", False),
        ("chatgpt-4o-latest", False),
        ("gpt-oss-120b", False),
        ("o3", False),
        ("claude-opus-4-5", False),
        ("claude-opus-4-1", False),
        ("claude-opus-4-20250514", False),
        ("claude-3-opus-20240229", False),
        ("claude-sonnet-4-5", False),
        ("claude-sonnet-4-6", False),
        ("gemini-3-pro-preview", False),
    ],
)
def test_supports_xhigh(model_id: str, expected: bool) -> None:
    assert supports_xhigh(Model(id=model_id, api="openai-responses", provider="x")) is expected


def test_xhigh_in_the_catalogue() -> None:
    assert {m.id for m in get_models("openai") if supports_xhigh(m)} == {"gpt-5.2"}
    assert {m.id for m in get_models("anthropic") if supports_xhigh(m)} == {"claude-opus-4-6"}
    assert not any(supports_xhigh(m) for m in get_models("google"))


def test_one_list_of_thinking_levels_and_their_public_homes() -> None:
    from typing import get_args

    import agentcore
    from agentcore import llm

    assert llm.THINKING_LEVELS == ("off", "minimal", "low", "medium", "high", "xhigh")
    assert get_args(llm.ThinkingLevel) == llm.THINKING_LEVELS
    assert agentcore.ThinkingLevel is llm.ThinkingLevel
    assert agentcore.StreamFn is llm.StreamFn
