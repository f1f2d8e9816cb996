"""What a request carries: the context, the tools, and the stream options."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, get_args

from ..messages import Message
from .model import Model, ThinkingBudgets

if TYPE_CHECKING:
    from ..abort import AbortSignal

__all__ = [
    "CacheRetention",
    "Context",
    "OnPayload",
    "OnResponse",
    "OutputSchema",
    "ResponseInfo",
    "SimpleStreamOptions",
    "StreamOptions",
    "ThinkingBudgets",
    "THINKING_LEVELS",
    "ThinkingLevel",
    "Tool",
    "ToolCallerKind",
    "Transport",
]

ThinkingLevel: TypeAlias = Literal["off", "minimal", "low", "medium", "high", "xhigh"]
"""How hard the model should think; each provider maps it to its own knob ("off" sends none)."""

THINKING_LEVELS: tuple[ThinkingLevel, ...] = get_args(ThinkingLevel)
"""Every `ThinkingLevel`, from least to most thinking: the one list to check or offer them from."""

CacheRetention: TypeAlias = Literal["none", "short", "long"]
"""How long prompt-cache entries should live, where the API lets us say ("none": no caching)."""

Transport: TypeAlias = Literal["sse", "websocket", "auto"]
"""How a response streams, for providers that offer a choice."""


ToolCallerKind: TypeAlias = Literal["direct", "hosted_code"]
"""Who may call a tool: the model itself (`direct`), or code the provider runs for the model
(`hosted_code`: Anthropic's programmatic tool calling; see docs/code-mode.md)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Tool:
    """A tool as the model sees it: a name, a description and a JSON Schema for its arguments.

    `allowed_callers` says who may call it (`AgentTool`'s argument of that name): adapters whose
    API runs code for the model mark the tool for it and turn the code execution on; the others
    offer the tool as an ordinary one.

    `deferred` marks a tool the provider's own tool search finds (Anthropic's `defer_loading`):
    the loop sends such tools only to a model whose `Model.tool_search` is true; an adapter
    without native tool search sends every tool it is given as it is.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    allowed_callers: tuple[ToolCallerKind, ...] = ("direct",)
    deferred: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Context:
    """One request's input: the system prompt, the transcript and the tools offered."""

    system_prompt: str = ""
    messages: list[Message] = field(default_factory=list)
    tools: list[Tool] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class ResponseInfo:
    """The HTTP status and headers of a provider response, before its body is read."""

    status: int
    headers: Mapping[str, str]


OnPayload: TypeAlias = Callable[[Any, "Model"], Any | Awaitable[Any]]
"""Sees the request body right before it is sent; a non-None return value replaces it."""

OnResponse: TypeAlias = Callable[[ResponseInfo, "Model"], Awaitable[None] | None]
"""Sees the status and headers of each response."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamOptions:
    """Options of one request; every field is optional.

    Attributes:
        temperature: sampling temperature.
        max_tokens: the output limit (default: the model's).
        signal: aborts the request; the stream then ends with `stop_reason="aborted"`.
        api_key: overrides the provider's environment variable.
        headers: extra HTTP headers, merged over the model's.
        session_id: prompt-cache affinity key, for providers that support it.
        on_payload: sees, and may replace, the request body.
        on_response: sees the status and headers of each response.
        transport: `sse`, `websocket` or `auto`, for providers that offer a choice.
        max_retry_delay_ms: a server-requested retry wait longer than this fails at once
            (0 = no cap).
        cache_retention: how long prompt-cache entries should live, where the API lets us say.
        metadata: provider metadata (e.g. Anthropic's `user_id`).
        request_timeout: seconds from sending a request to its first stream event (None: no
            limit); a request that takes longer fails (and is retried like a lost connection).
        idle_timeout: the longest silence in seconds between two stream events once the answer
            streams (None: no limit); keep-alive comments do not count as events. A stream that
            stalls longer ends with `stop_reason="error"` and a message naming the timeout.
        max_retries: retries of a transient failure before the first event (0: none).
        output_schema: ask for an answer constrained to a JSON schema, on APIs that support it
            natively (`Model.structured_output`); others ignore it.
    """

    temperature: float | None = None
    max_tokens: int | None = None
    signal: AbortSignal | None = None
    api_key: str | None = None
    headers: Mapping[str, str] | None = None
    session_id: str | None = None
    on_payload: OnPayload | None = None
    on_response: OnResponse | None = None
    transport: Transport = "auto"
    max_retry_delay_ms: int = 60_000
    cache_retention: CacheRetention = "short"
    metadata: Mapping[str, Any] | None = None
    request_timeout: float | None = None
    idle_timeout: float | None = None
    max_retries: int = 3
    output_schema: OutputSchema | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class OutputSchema:
    """A JSON schema the answer's text must follow (native structured output).

    Attributes:
        name: a short name for the schema (OpenAI requires one).
        schema: the JSON Schema of the answer (an object schema).
        description: what the answer is, for APIs that take one.
        strict: ask the API to enforce the schema exactly, where it can.
    """

    name: str
    schema: Mapping[str, Any]
    description: str | None = None
    strict: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class SimpleStreamOptions(StreamOptions):
    """`StreamOptions` plus a provider-neutral thinking level and budgets."""

    reasoning: ThinkingLevel | None = None
    thinking_budgets: ThinkingBudgets | None = None
