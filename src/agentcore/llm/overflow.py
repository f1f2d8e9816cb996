"""Recognising a request that did not fit the model's context window.

Servers say so in many ways. `is_context_overflow` matches the error texts of the major APIs and
servers (`OVERFLOW_PATTERNS`), ignoring rate-limit and availability errors that happen to mention
tokens, and also catches the silent kinds: a server that accepted more input than the window
holds, or one that stopped at the length limit without writing a token.
"""

from __future__ import annotations

import re

from ..messages import AssistantMessage

__all__ = ["OVERFLOW_PATTERNS", "is_context_overflow"]

OVERFLOW_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"prompt is too long",  # Anthropic
        r"request_too_large",  # Anthropic (413)
        r"input is too long for requested model",  # Amazon Bedrock
        r"exceeds the context window",  # OpenAI Chat Completions and Responses
        r"input token count.*exceeds the maximum",  # Google Gemini
        r"maximum prompt length is \d+",  # xAI
        r"reduce the length of the messages",  # Groq
        r"maximum context length is \d+ tokens",  # OpenRouter, vLLM, DeepSeek, OpenAI legacy
        r"maximum allowed input length",  # OpenRouter
        r"exceeds the limit of \d+",  # GitHub Copilot
        r"exceeds the available context size",  # llama.cpp server
        r"greater than the context length",  # LM Studio
        r"context window exceeds limit",  # MiniMax
        r"exceeded model token limit",  # Kimi
        r"too large for model with \d+ maximum context length",  # Mistral
        r"model_context_window_exceeded",  # z.ai
        r"prompt too long; exceeded (?:max )?context length",  # Ollama
        r"`inputs` tokens \+ `max_new_tokens` must be",  # Together, Hugging Face TGI
        r"context[_ ]length[_ ]exceeded",  # generic
        r"context (?:length|window) (?:of \d+ )?(?:was |is )?exceeded",  # generic
        r"too many tokens",  # generic
        r"token limit exceeded",  # generic
        r"^\s*4(?:00|13)\s*(?:status code)?\s*\(no body\)",  # Cerebras: a bodiless 400/413
    )
)
"""The error texts that mean "the request did not fit the context window"."""

_NOT_OVERFLOW = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"rate.?limit",
        r"too many requests",
        r"^\s*(?:throttling|service unavailable)",
        r"tokens per (?:minute|min|day)",
        r"\bTPM\b",
    )
)


def is_context_overflow(message: AssistantMessage, context_window: int | None = None) -> bool:
    """Whether `message` failed (or silently went wrong) because the prompt was too long.

    Args:
        message: the assistant message a request ended with.
        context_window: the model's window, to detect silent overflows from the usage.
    """
    if message.stop_reason == "error":
        text = message.error_message or ""
        if any(p.search(text) for p in _NOT_OVERFLOW):
            return False
        return any(p.search(text) for p in OVERFLOW_PATTERNS)
    if context_window:
        prompt = message.usage.input + message.usage.cache_read
        if message.stop_reason == "stop" and prompt > context_window:
            return True
        if message.stop_reason == "length" and message.usage.output == 0:
            return prompt >= 0.99 * context_window
    return False
