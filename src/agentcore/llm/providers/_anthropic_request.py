"""The request of the `anthropic-messages` adapter: thinking levels, and the JSON body.

The body is plain JSON (so `on_payload` can see and replace all of it):

* the transcript (after the cross-provider transform) as `messages`: consecutive tool results
  share one user message; empty text is dropped (the API rejects it); thinking is replayed with
  its signature, redacted thinking as its data, unsigned thinking as text;
* prompt caching follows `cache_retention`: `short` marks the system prompt and the last user
  message as ephemeral cache breakpoints, `long` asks api.anthropic.com for a one-hour TTL,
  `none` sends no markers;
* the server's own blocks (hosted code execution, tool search), kept whole by the adapter in
  signature-only text blocks (`_anthropic_hosted`), are replayed as they came; tools go with
  `allowed_callers` (callable from code) and `defer_loading` (deferred), with the code execution
  and tool search tools they need;
* a thinking level becomes adaptive thinking with an effort (Claude Opus/Sonnet 4.6 and later)
  or a token budget (older thinking models), which also asks for interleaved thinking.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from ...messages import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from .._adapter import merged_headers
from .._profiles import on_api_service, thinking_control
from ..model import Model
from ..thinking import adjust_max_tokens_for_thinking, supports_xhigh
from ..transform import normalize_id_alnum, sanitize_surrogates, transform_messages
from ..types import Context, SimpleStreamOptions, StreamOptions, ThinkingLevel
from ._anthropic_hosted import (
    TEXT_ONLY_NOTE,
    callers_of,
    decode_block,
    pending_container,
    tools_payload,
)

__all__ = [
    "AnthropicOptions",
    "Effort",
    "ThinkingMode",
    "build_payload",
    "convert_messages",
    "request_headers",
    "supports_adaptive_thinking",
    "thinking_options",
]

Effort: TypeAlias = Literal["low", "medium", "high", "xhigh", "max"]
ThinkingMode: TypeAlias = Literal["off", "enabled", "adaptive"]
_INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"
_MIN_BUDGET = 1024  # the API rejects smaller thinking budgets
_EFFORTS: dict[ThinkingLevel, Effort] = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class AnthropicOptions(StreamOptions):
    """`StreamOptions` plus Anthropic's own thinking knobs (what `stream_simple` fills in).

    Attributes:
        thinking: `enabled` (a token budget), `adaptive` (the model decides; Claude 4.6+),
            `off` (sent as disabled), or None to send nothing (the server's default).
        thinking_budget: the budget of `enabled` thinking, at least 1024 and below `max_tokens`.
        effort: `output_config.effort` (adaptive models).
    """

    thinking: ThinkingMode | None = None
    thinking_budget: int | None = None
    effort: Effort | None = None


# --- thinking levels --------------------------------------------------------------------------


def supports_adaptive_thinking(model: Model) -> bool:
    """Whether the model takes `thinking={"type": "adaptive"}`: Claude Opus/Sonnet 4.6 and later,
    and every Claude 5 model (the catalogue's `thinking_control` says so; the id rule serves
    models built by hand)."""
    return thinking_control(model) == "adaptive"


def thinking_options(model: Model, options: SimpleStreamOptions) -> dict[str, Any]:
    """The `AnthropicOptions` fields that express `options.reasoning` for this model."""
    level = options.reasoning
    if not model.reasoning:
        return {}
    if level is None or level == "off":
        return {"thinking": "off"}
    if supports_adaptive_thinking(model):
        effort: Effort = "max" if level == "xhigh" and supports_xhigh(model) else _EFFORTS[level]
        return {"thinking": "adaptive", "effort": effort}
    max_tokens, budget = adjust_max_tokens_for_thinking(
        options.max_tokens or model.max_tokens,
        model.max_tokens,
        level,  # budget_for gives xhigh the high budget
        options.thinking_budgets,
    )
    if budget < _MIN_BUDGET:  # no room for the smallest budget the API takes
        return {"thinking": "off"}
    return {"thinking": "enabled", "thinking_budget": budget, "max_tokens": max_tokens}


# --- the request body -------------------------------------------------------------------------


def _cache_control(model: Model, retention: str) -> dict[str, str] | None:
    if retention == "none":
        return None
    if retention == "long" and on_api_service(model):  # only Anthropic's own service
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


def _image(block: ImageContent) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": block.mime_type, "data": block.data},
    }


def _user_content(
    content: str | list[TextContent | ImageContent], images: bool
) -> list[dict[str, Any]]:
    if isinstance(content, str):
        content = [TextContent(text=content)]
    blocks: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, TextContent):
            if block.text.strip():  # the API rejects empty text blocks
                blocks.append({"type": "text", "text": sanitize_surrogates(block.text)})
        elif images:
            blocks.append(_image(block))
    return blocks


def _tool_result(message: ToolResultMessage, images: bool, from_code: bool) -> dict[str, Any]:
    """A `tool_result` block; one answering a call from hosted code is text only (the API
    refuses anything else there), its images replaced by a note."""
    content: str | list[dict[str, Any]]
    if images and not from_code and any(isinstance(b, ImageContent) for b in message.content):
        content = [
            {"type": "text", "text": sanitize_surrogates(b.text)}
            if isinstance(b, TextContent)
            else _image(b)
            for b in message.content
            if not isinstance(b, TextContent) or b.text
        ]
        if not any(b["type"] == "text" for b in content):
            content.insert(0, {"type": "text", "text": "(see attached image)"})
    else:
        texts = [b.text for b in message.content if isinstance(b, TextContent)]
        if from_code and any(isinstance(b, ImageContent) for b in message.content):
            texts.append(TEXT_ONLY_NOTE)
        content = sanitize_surrogates("\n".join(texts))
    return {
        "type": "tool_result",
        "tool_use_id": message.tool_call_id,
        "content": content,
        "is_error": message.is_error,
    }


def _assistant_content(message: AssistantMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            kept, hosted = decode_block(block)
            if kept is not None:  # a block of the code execution, replayed as it came
                blocks.append(kept)
            elif block.text.strip() and not hosted:
                blocks.append({"type": "text", "text": sanitize_surrogates(block.text)})
        elif isinstance(block, ThinkingContent):
            signature = block.thinking_signature
            if block.redacted:
                if signature:
                    blocks.append({"type": "redacted_thinking", "data": signature})
            elif signature and signature.strip():
                blocks.append(
                    {
                        "type": "thinking",
                        "thinking": sanitize_surrogates(block.thinking),
                        "signature": signature,
                    }
                )
            elif block.thinking.strip():  # unsigned (e.g. cut off): the API would reject it
                blocks.append({"type": "text", "text": sanitize_surrogates(block.thinking)})
        elif isinstance(block, ToolCall):
            use: dict[str, Any] = {
                "type": "tool_use",
                "id": block.id,
                "name": block.name,
                "input": block.arguments,
            }
            if block.caller is not None:  # a call made by code the provider runs
                use["caller"] = {"type": block.caller.kind, "tool_id": block.caller.id}
            blocks.append(use)
    return blocks


def convert_messages(messages: list[Message], model: Model) -> list[dict[str, Any]]:
    """Our transcript as Anthropic `messages` (after the cross-provider transform).

    Consecutive tool results become one user message of `tool_result` blocks; empty text is
    dropped (the API rejects it), and so are images for models that do not take them.
    """
    return _convert(transform_messages(messages, model, normalize_id_alnum), model)


def _convert(transformed: list[Message], model: Model) -> list[dict[str, Any]]:
    images = "image" in model.input
    params: list[dict[str, Any]] = []
    results: list[dict[str, Any]] | None = None  # the tool_result blocks of the last message
    from_code = callers_of(transformed)
    for message in transformed:
        if isinstance(message, ToolResultMessage):
            if results is None:
                results = []
                params.append({"role": "user", "content": results})
            results.append(_tool_result(message, images, message.tool_call_id in from_code))
            continue
        results = None
        if isinstance(message, UserMessage):
            content = _user_content(message.content, images)
            if content:
                params.append({"role": "user", "content": content})
        else:
            content = _assistant_content(message)
            if content:
                params.append({"role": "assistant", "content": content})
    return params


def _tool_loop_without_thinking(params: list[dict[str, Any]]) -> bool:
    """Whether the conversation is inside a tool loop whose assistant turn does not open with
    thinking: budget thinking must then stay off, or the API rejects the request."""
    for param in reversed(params):
        content = param["content"]
        if param["role"] == "user":
            if any(block["type"] != "tool_result" for block in content):
                return False
            continue
        return content[0]["type"] not in ("thinking", "redacted_thinking")
    return False


def build_payload(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    """The JSON body of a streaming Messages request (before `on_payload`)."""
    extra = options if isinstance(options, AnthropicOptions) else AnthropicOptions()
    cache = _cache_control(model, options.cache_retention)
    transformed = transform_messages(context.messages, model, normalize_id_alnum)
    messages = _convert(transformed, model)
    payload: dict[str, Any] = {
        "model": model.id,
        "max_tokens": options.max_tokens or model.max_tokens,
        "messages": messages,
        "stream": True,
    }
    if context.system_prompt:
        system: dict[str, Any] = {
            "type": "text",
            "text": sanitize_surrogates(context.system_prompt),
        }
        if cache is not None:
            system["cache_control"] = cache
        payload["system"] = [system]
    if cache is not None and messages and messages[-1]["role"] == "user":
        messages[-1]["content"][-1]["cache_control"] = cache
    if context.tools:
        payload["tools"] = tools_payload(context.tools)
    container = pending_container(transformed)
    if container is not None:  # calls from code wait for their results in this container
        payload["container"] = container
    thinking = extra.thinking
    if thinking == "enabled" and (
        not extra.thinking_budget or _tool_loop_without_thinking(messages)
    ):
        thinking = "off"
    if thinking == "enabled":
        payload["thinking"] = {"type": "enabled", "budget_tokens": extra.thinking_budget}
    elif thinking == "adaptive":
        payload["thinking"] = {"type": "adaptive"}
        if extra.effort is not None:
            payload["output_config"] = {"effort": extra.effort}
    elif thinking == "off":
        payload["thinking"] = {"type": "disabled"}
    if options.temperature is not None and thinking not in ("enabled", "adaptive"):
        payload["temperature"] = options.temperature
    user_id = (options.metadata or {}).get("user_id")
    if isinstance(user_id, str):
        payload["metadata"] = {"user_id": user_id}
    return payload


def request_headers(
    model: Model, options: StreamOptions, payload: Mapping[str, Any]
) -> dict[str, str]:
    headers = merged_headers(model, options)
    thinking = payload.get("thinking")
    if isinstance(thinking, Mapping) and thinking.get("type") == "enabled":
        betas = [b.strip() for b in headers.get("anthropic-beta", "").split(",") if b.strip()]
        if _INTERLEAVED_BETA not in betas:
            headers["anthropic-beta"] = ",".join([*betas, _INTERLEAVED_BETA])
    return headers
