"""Context-overflow detection."""

from __future__ import annotations

import pytest

from agentcore.llm import is_context_overflow
from agentcore.llm.overflow import OVERFLOW_PATTERNS
from agentcore.messages import AssistantMessage, StopReason, Usage


def failed(text: str) -> AssistantMessage:
    return AssistantMessage(stop_reason="error", error_message=text)


@pytest.mark.parametrize(
    "text",
    [
        "prompt is too long: 213462 tokens > 200000 maximum",  # Anthropic
        "Error code: 413 - request_too_large",
        "Your input exceeds the context window of this model.",  # OpenAI
        "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).",
        "This model's maximum prompt length is 131072 but the request contains 537812 tokens.",
        "Please reduce the length of the messages or completion.",  # Groq
        "This endpoint's maximum context length is 128000 tokens. However, you requested 200k",
        "the request exceeds the available context size, try increasing it",  # llama.cpp
        "request (5000 tokens) exceeds the available context size (4096 tokens)",
        "Trying to keep the first 9000 tokens when context the overflows. However, the model is "
        "loaded with context length of 4096, which is greater than the context length",
        "Prompt contains 40000 tokens, too large for model with 32768 maximum context length",
        "model_context_window_exceeded",
        "400 status code (no body)",  # Cerebras
        "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 32769",
    ],
)
def test_known_overflow_errors(text: str) -> None:
    assert is_context_overflow(failed(text))


@pytest.mark.parametrize(
    "text",
    [
        "Rate limit reached for gpt-4o: too many tokens per minute",
        "429 Too Many Requests",
        "Service unavailable: too many tokens in flight",
        "invalid api key",
        "",
    ],
)
def test_other_errors_are_not_overflow(text: str) -> None:
    assert not is_context_overflow(failed(text))


def ended(stop: StopReason, input: int, output: int = 10, cache_read: int = 0) -> AssistantMessage:
    return AssistantMessage(
        stop_reason=stop, usage=Usage(input=input, output=output, cache_read=cache_read)
    )


def test_silent_overflow_from_usage() -> None:
    assert is_context_overflow(ended("stop", 3000, cache_read=2000), context_window=4096)
    assert not is_context_overflow(ended("stop", 3000, cache_read=2000))
    assert not is_context_overflow(ended("stop", 3000), context_window=4096)
    assert is_context_overflow(ended("length", 4090, output=0), context_window=4096)
    assert not is_context_overflow(ended("length", 4090, output=5), context_window=4096)


def test_patterns_are_exposed() -> None:
    assert len(OVERFLOW_PATTERNS) > 15
