"""OpenAI Chat Completions: the request, built from a context (messages converted, tools, the
reasoning and output-schema options); `openai_completions` sends it and reads the stream."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ...messages import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolResultMessage,
    UserMessage,
)
from .._profiles import on_api_service
from ..model import Model, OpenAICompletionsCompat
from ..thinking import clamp_level, supports_xhigh
from ..transform import (
    AlnumIdMap,
    normalize_id_openai,
    sanitize_surrogates,
    transform_messages,
)
from ..types import Context, OutputSchema, StreamOptions, ThinkingLevel

__all__ = ["REASONING_FIELDS", "build_payload", "compat_of", "convert_messages", "response_format"]

REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
_IMAGE_NOTE = "Attached image(s) from tool result:"


def compat_of(model: Model) -> OpenAICompletionsCompat:
    """The model's Chat Completions quirks (the defaults when it has none of this API)."""
    return model.compat if isinstance(model.compat, OpenAICompletionsCompat) else _DEFAULT_COMPAT


_DEFAULT_COMPAT = OpenAICompletionsCompat()


# --- request ----------------------------------------------------------------------------------


def _image_part(image: ImageContent) -> dict[str, Any]:
    return {
        "type": "image_url",
        "image_url": {"url": f"data:{image.mime_type};base64,{image.data}"},
    }


def _user_message(message: UserMessage, images: bool) -> dict[str, Any] | None:
    if isinstance(message.content, str):
        return {"role": "user", "content": sanitize_surrogates(message.content)}
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            parts.append({"type": "text", "text": sanitize_surrogates(block.text)})
        elif images:
            parts.append(_image_part(block))
    if not parts:
        return None
    if len(parts) == 1 and parts[0]["type"] == "text":
        return {"role": "user", "content": parts[0]["text"]}
    return {"role": "user", "content": parts}


def _assistant_message(
    message: AssistantMessage, compat: OpenAICompletionsCompat, ids: Callable[[str], str]
) -> dict[str, Any] | None:
    texts = [b.text for b in message.content if isinstance(b, TextContent) and b.text.strip()]
    thinking = [b for b in message.content if isinstance(b, ThinkingContent) and b.thinking.strip()]
    out: dict[str, Any] = {"role": "assistant"}
    if thinking:
        reasoning = "\n\n".join(b.thinking for b in thinking)
        if compat.requires_thinking_as_text:
            texts.insert(0, reasoning)
        elif thinking[0].thinking_signature in REASONING_FIELDS:
            out[str(thinking[0].thinking_signature)] = sanitize_surrogates(reasoning)
    calls = message.tool_calls
    if not texts and not calls:
        return None
    out["content"] = sanitize_surrogates("".join(texts)) if texts else None
    if calls:
        out["tool_calls"] = [
            {
                "id": ids(call.id),
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
            for call in calls
        ]
    return out


def _tool_message(
    message: ToolResultMessage, compat: OpenAICompletionsCompat, ids: Callable[[str], str]
) -> tuple[dict[str, Any], list[ImageContent]]:
    text = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
    images = [b for b in message.content if isinstance(b, ImageContent)]
    if not text and images:
        text = "(see attached image)"
    out: dict[str, Any] = {
        "role": "tool",
        "tool_call_id": ids(message.tool_call_id),
        "content": sanitize_surrogates(text),
    }
    if compat.requires_tool_result_name:
        out["name"] = message.tool_name
    return out, images


def convert_messages(model: Model, context: Context) -> list[dict[str, Any]]:
    """The `messages` of a request: the system prompt, then the transcript as `model` sees it.

    Images from consecutive tool results follow them in one user message (tool messages cannot
    carry images); images are dropped for models without image input. Tool-call ids take the
    form the server accepts (`compat.tool_call_id_format`), a call and its result alike.
    """
    compat = compat_of(model)
    ids: Callable[[str], str] = (
        AlnumIdMap(9) if compat.tool_call_id_format == "mistral" else (lambda id: id)
    )
    images_ok = "image" in model.input
    out: list[dict[str, Any]] = []
    if context.system_prompt:
        role = "developer" if model.reasoning and compat.supports_developer_role else "system"
        out.append({"role": role, "content": sanitize_surrogates(context.system_prompt)})
    pending_images: list[ImageContent] = []

    def flush_images() -> None:
        if pending_images and images_ok:
            parts = [{"type": "text", "text": _IMAGE_NOTE}]
            parts.extend(_image_part(image) for image in pending_images)
            out.append({"role": "user", "content": parts})
        pending_images.clear()

    messages: list[Message] = transform_messages(context.messages, model, normalize_id_openai)
    for message in messages:
        if isinstance(message, ToolResultMessage):
            converted, images = _tool_message(message, compat, ids)
            out.append(converted)
            pending_images.extend(images)
            continue
        flush_images()
        item = (
            _user_message(message, images_ok)
            if isinstance(message, UserMessage)
            else _assistant_message(message, compat, ids)
        )
        if item is not None:
            out.append(item)
    flush_images()
    return out


def build_payload(
    model: Model, context: Context, options: StreamOptions, *, reasoning: ThinkingLevel | None
) -> dict[str, Any]:
    """The request body for `model`, before `on_payload` sees it."""
    compat = compat_of(model)
    payload: dict[str, Any] = {
        "model": model.id,
        "messages": convert_messages(model, context),
        "stream": True,
    }
    if compat.supports_usage_in_streaming:
        payload["stream_options"] = {"include_usage": True}
    if compat.supports_store:
        payload["store"] = False
    payload[compat.max_tokens_field] = options.max_tokens or model.max_tokens
    if options.temperature is not None:
        payload["temperature"] = options.temperature
    if context.tools:
        tools = []
        for tool in context.tools:
            function: dict[str, Any] = {
                "name": tool.name,
                "description": tool.description,
                "parameters": dict(tool.parameters),
            }
            if compat.supports_strict_mode:
                function["strict"] = False
            tools.append({"type": "function", "function": function})
        payload["tools"] = tools
        if compat.supports_parallel_tool_calls:
            payload["parallel_tool_calls"] = True
    if reasoning and reasoning != "off" and model.reasoning and compat.supports_reasoning_effort:
        level = clamp_level(reasoning, supports_xhigh(model))
        payload["reasoning_effort"] = compat.reasoning_effort_map.get(level, level)
    if options.session_id and options.cache_retention != "none" and on_api_service(model):
        payload["prompt_cache_key"] = options.session_id
        if options.cache_retention == "long":
            payload["prompt_cache_retention"] = "24h"
    if options.metadata and isinstance(options.metadata.get("user_id"), str):
        payload["user"] = options.metadata["user_id"]
    if options.output_schema is not None:
        payload["response_format"] = response_format(options.output_schema)
    return payload


def response_format(output: OutputSchema) -> dict[str, Any]:
    """Native structured output: Chat Completions' `response_format` (also llama.cpp's)."""
    schema: dict[str, Any] = {
        "name": output.name,
        "schema": dict(output.schema),
        "strict": output.strict,
    }
    if output.description:
        schema["description"] = output.description
    return {"type": "json_schema", "json_schema": schema}
