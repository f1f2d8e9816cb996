"""The request of the `google-generative-ai` adapter: thinking levels and the payload.

The payload is JSON-friendly and in the SDK's own shape, `{"model", "contents", "config"}` with
snake_case keys and base64 strings for bytes (thought signatures, image data); `on_payload` sees
it and may replace it, and only then does `sdk_arguments` validate it into the SDK's types.

Thought signatures are replayed only to the model that made them (`transform_messages` drops
them for others). Gemini 3 rejects unsigned function calls in the history, so calls without a
signature get the documented skip-validation sentinel. Tool-result images go inside the function
response for Gemini 3 and in a user turn after the results for older models.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from types import ModuleType
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
from .._profiles import google_compat, thinking_control
from ..model import Model
from ..thinking import budget_for, clamp_level
from ..transform import normalize_id_alnum, sanitize_surrogates, transform_messages
from ..types import Context, StreamOptions, ThinkingBudgets, ThinkingLevel, Tool

__all__ = [
    "SKIP_THOUGHT_SIGNATURE",
    "build_contents",
    "build_payload",
    "sdk_arguments",
    "thinking_config",
]

SKIP_THOUGHT_SIGNATURE = "skip_thought_signature_validator"
"""Stands in for a missing thought signature on a replayed Gemini 3 function call."""

_BASE64 = re.compile(r"^[A-Za-z0-9+/_-]+={0,2}$")

_DYNAMIC_BUDGET = -1
"""Lets the model decide how long to think (models without a known budget range)."""


def _valid_signature(signature: str | None) -> bool:
    """Whether a stored signature can be sent back (the SDK decodes it as base64)."""
    return signature is not None and len(signature) % 4 == 0 and bool(_BASE64.match(signature))


def thinking_config(
    model: Model, level: ThinkingLevel | None, budgets: ThinkingBudgets | None = None
) -> dict[str, Any] | None:
    """The `thinking_config` for a thinking level, or None for models that do not reason.

    Gemini 3 takes a thinking level; Gemini 2.5 a token budget (custom `budgets` win over the
    per-model defaults). Without a level, thinking is turned off where the model allows it and
    kept to the minimum where it does not.
    """
    if not model.reasoning:
        return None
    compat = google_compat(model)  # the catalogue's facts (hand-made models: from the id)
    takes_level = thinking_control(model) == "level"
    low_high = compat.thinking_levels == "low_high"
    if level is None or level == "off":
        if takes_level:
            return {"thinking_level": "LOW" if low_high else "MINIMAL"}
        return {"thinking_budget": compat.min_thinking_budget}  # 0 turns thinking off
    level = clamp_level(level, supports_xhigh=False)
    if takes_level:
        if low_high:
            gemini_level = "LOW" if level in ("minimal", "low") else "HIGH"
        else:
            gemini_level = level.upper()
        return {"include_thoughts": True, "thinking_level": gemini_level}
    if budgets is not None:
        budget = budget_for(level, budgets)
    else:
        defaults = compat.thinking_budgets
        budget = budget_for(level, defaults) if defaults is not None else _DYNAMIC_BUDGET
    return {"include_thoughts": True, "thinking_budget": budget}


def _image_part(image: ImageContent) -> dict[str, Any]:
    return {"inline_data": {"mime_type": image.mime_type, "data": image.data}}


def _user_content(message: UserMessage, model: Model) -> dict[str, Any] | None:
    if isinstance(message.content, str):
        return {"role": "user", "parts": [{"text": sanitize_surrogates(message.content)}]}
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            parts.append({"text": sanitize_surrogates(block.text)})
        elif "image" in model.input:
            parts.append(_image_part(block))
    return {"role": "user", "parts": parts} if parts else None


def _model_content(message: AssistantMessage, model: Model) -> dict[str, Any] | None:
    # `transform_messages` has already turned other models' thinking into text and dropped
    # their signatures, so what is left here may be replayed as is.
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if not block.text.strip():
                continue
            part: dict[str, Any] = {"text": sanitize_surrogates(block.text)}
            if _valid_signature(block.text_signature):
                part["thought_signature"] = block.text_signature
        elif isinstance(block, ThinkingContent):
            if not block.thinking.strip() or block.redacted:
                continue
            part = {"text": sanitize_surrogates(block.thinking), "thought": True}
            if _valid_signature(block.thinking_signature):
                part["thought_signature"] = block.thinking_signature
        else:
            call: dict[str, Any] = {"name": block.name, "args": block.arguments}
            if google_compat(model).requires_tool_call_id:
                call["id"] = block.id
            part = {"function_call": call}
            if _valid_signature(block.thought_signature):
                part["thought_signature"] = block.thought_signature
            elif google_compat(model).requires_thought_signatures:
                part["thought_signature"] = SKIP_THOUGHT_SIGNATURE
        parts.append(part)
    return {"role": "model", "parts": parts} if parts else None


def _function_response(
    message: ToolResultMessage, model: Model, images: list[dict[str, Any]]
) -> dict[str, Any]:
    """The `function_response` part of a tool result; images Gemini cannot take inline go to
    `images`, to follow the results as a user turn."""
    text = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
    image_parts = (
        [_image_part(b) for b in message.content if isinstance(b, ImageContent)]
        if "image" in model.input
        else []
    )
    value = sanitize_surrogates(text) if text else "(see attached image)" if image_parts else ""
    response: dict[str, Any] = {
        "name": message.tool_name,
        "response": {"error": value} if message.is_error else {"output": value},
    }
    if google_compat(model).requires_tool_call_id:
        response["id"] = message.tool_call_id
    if image_parts and google_compat(model).images_in_function_response:
        response["parts"] = image_parts
    else:
        images.extend(image_parts)
    return {"function_response": response}


def build_contents(messages: Sequence[Message], model: Model) -> list[dict[str, Any]]:
    """The transcript as Gemini `contents` (after the cross-provider conversion)."""
    normalize = normalize_id_alnum if google_compat(model).requires_tool_call_id else None
    contents: list[dict[str, Any]] = []
    images: list[dict[str, Any]] = []  # tool-result images waiting for the end of the results
    results: dict[str, Any] | None = None  # the user turn gathering consecutive tool results
    for message in transform_messages(messages, model, normalize):
        if isinstance(message, ToolResultMessage):
            if results is None:
                results = {"role": "user", "parts": []}
                contents.append(results)
            results["parts"].append(_function_response(message, model, images))
            continue
        if images:
            contents.append({"role": "user", "parts": [{"text": "Tool result image:"}, *images]})
            images = []
        results = None
        if isinstance(message, UserMessage):
            content = _user_content(message, model)
        elif isinstance(message, AssistantMessage):
            content = _model_content(message, model)
        else:  # an application-defined message: not for the model
            continue
        if content is not None:
            contents.append(content)
    if images:
        contents.append({"role": "user", "parts": [{"text": "Tool result image:"}, *images]})
    return contents


def _tools(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    declarations = [
        {"name": t.name, "description": t.description, "parameters_json_schema": dict(t.parameters)}
        for t in tools
    ]
    return [{"function_declarations": declarations}]


def build_payload(
    model: Model,
    context: Context,
    options: StreamOptions,
    thinking: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The request as `on_payload` sees it: the keyword arguments of `generate_content_stream`."""
    config: dict[str, Any] = {}
    if context.system_prompt:
        config["system_instruction"] = sanitize_surrogates(context.system_prompt)
    if options.temperature is not None:
        config["temperature"] = options.temperature
    config["max_output_tokens"] = options.max_tokens or model.max_tokens
    if context.tools:
        config["tools"] = _tools(context.tools)
    if thinking is not None:
        config["thinking_config"] = thinking
    if options.output_schema is not None:  # native structured output (the full JSON Schema)
        config["response_mime_type"] = "application/json"
        config["response_json_schema"] = dict(options.output_schema.schema)
    return {
        "model": model.id,
        "contents": build_contents(context.messages, model),
        "config": config,
    }


def sdk_arguments(types: ModuleType, payload: Any) -> tuple[str, list[Any], Any]:
    if not isinstance(payload, dict) or "contents" not in payload:
        raise ValueError(
            "the payload must be a dict with 'model', 'contents' and 'config', "
            f"got {type(payload).__name__}"
        )
    contents = [types.Content.model_validate(c) for c in payload["contents"]]
    config = types.GenerateContentConfig.model_validate(
        {**(payload.get("config") or {}), "automatic_function_calling": {"disable": True}}
    )
    return str(payload.get("model")), contents, config
