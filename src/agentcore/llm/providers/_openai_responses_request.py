"""The request of the `openai-responses` adapter: our transcript as Responses `input` items.

The request is stateless (`store: false`): the whole transcript goes in `input` every time. How
our blocks become items:

* thinking → the `reasoning` item it came from (its JSON is the block's `thinking_signature`),
  replayed verbatim to the same model; other models get it as plain text (`transform_messages`);
* text → an assistant `message` item, with its item id (and `phase`) from the block's
  `text_signature` when replayed to the same model, a plain assistant message otherwise;
* tool call → a `function_call` item; `ToolCall.id` is `"<call_id>|<item_id>"` and the item id
  is only sent back to the same model; a result is a `function_call_output` for `call_id`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

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
from ..model import Model
from ..transform import normalize_id_alnum, sanitize_surrogates, transform_messages
from ..types import Context, StreamOptions, Tool

__all__ = [
    "OpenAIResponsesOptions",
    "ReasoningEffort",
    "ReasoningSummary",
    "build_payload",
    "convert_messages",
    "decode_text_signature",
    "encode_text_signature",
    "normalize_tool_call_id",
]

ReasoningEffort = Literal["minimal", "low", "medium", "high", "xhigh"]
ReasoningSummary = Literal["auto", "concise", "detailed"]


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenAIResponsesOptions(StreamOptions):
    """`StreamOptions` plus the Responses API's reasoning knobs.

    Attributes:
        reasoning_effort: sent as `reasoning.effort` to reasoning models (None: the server's
            default).
        reasoning_summary: which reasoning summary to stream as thinking (default `auto` when an
            effort is set).
    """

    reasoning_effort: ReasoningEffort | None = None
    reasoning_summary: ReasoningSummary | None = None


# -- ids ------------------------------------------------------------------------------------


def normalize_tool_call_id(id: str) -> str:
    """A tool-call id from another model, made acceptable to the Responses API.

    Both parts of a `call|item` id keep only `[A-Za-z0-9_-]` and at most 64 characters, and the
    item part starts with `fc`; an id without an item part is just a cleaned call id.
    """
    call_id, sep, item_id = id.partition("|")
    call = normalize_id_alnum(call_id) or "call"
    if not sep:
        return call
    item = normalize_id_alnum(item_id)
    if not item.startswith("fc"):
        item = normalize_id_alnum(f"fc_{item}")
    return f"{call}|{item}"


def encode_text_signature(item_id: str, phase: str | None) -> str:
    """A text block's signature: the message item's id, with its `phase` when there is one."""
    if phase is None:
        return item_id
    return json.dumps({"v": 1, "id": item_id, "phase": phase}, separators=(",", ":"))


def decode_text_signature(signature: str) -> tuple[str | None, str | None]:
    """`(item_id, phase)` from a text signature (a bare id, or `{"v":1,"id":..,"phase":..}`)."""
    if signature.startswith("{"):
        try:
            data = json.loads(signature)
        except ValueError:
            return None, None
        if isinstance(data, dict) and isinstance(data.get("id"), str):
            phase = data.get("phase")
            return data["id"], phase if isinstance(phase, str) else None
        return None, None
    return signature, None


# -- the request ----------------------------------------------------------------------------


def _data_url(image: ImageContent) -> str:
    return f"data:{image.mime_type};base64,{image.data}"


def _user_item(message: UserMessage, model: Model) -> dict[str, Any] | None:
    if isinstance(message.content, str):
        parts: list[dict[str, Any]] = [
            {"type": "input_text", "text": sanitize_surrogates(message.content)}
        ]
    else:
        parts = []
        for block in message.content:
            if isinstance(block, TextContent):
                parts.append({"type": "input_text", "text": sanitize_surrogates(block.text)})
            elif "image" in model.input:  # images to a text-only model are dropped
                parts.append(
                    {"type": "input_image", "detail": "auto", "image_url": _data_url(block)}
                )
    if not parts:
        return None
    return {"role": "user", "content": parts}


def _assistant_items(message: AssistantMessage, model: Model) -> list[dict[str, Any]]:
    same = (
        message.provider == model.provider
        and message.api == model.api
        and message.model == model.id
    )
    thinking = [b for b in message.content if isinstance(b, ThinkingContent)]
    # Item ids point at the server's record of this turn; they are only safe to send when the
    # reasoning items they came with are replayed too (or there were none).
    with_ids = same and all(b.thinking_signature for b in thinking)
    items: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            if not same or not block.thinking_signature:
                continue  # transform_messages already turned foreign thinking into text
            try:
                item = json.loads(block.thinking_signature)
            except ValueError:
                continue
            if isinstance(item, dict) and item.get("type") == "reasoning":
                items.append(item)
        elif isinstance(block, TextContent):
            if not block.text:
                continue
            text = sanitize_surrogates(block.text)
            item_id, phase = (
                decode_text_signature(block.text_signature)
                if with_ids and block.text_signature
                else (None, None)
            )
            if item_id is None:
                items.append({"role": "assistant", "content": text})
                continue
            output: dict[str, Any] = {
                "type": "message",
                "id": item_id,
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
            if phase is not None:
                output["phase"] = phase
            items.append(output)
        else:
            call_id, _, item_id = block.id.partition("|")
            call: dict[str, Any] = {
                "type": "function_call",
                "call_id": call_id,
                "name": block.name,
                "arguments": json.dumps(block.arguments, ensure_ascii=False),
            }
            if with_ids and item_id:
                call["id"] = item_id
            items.append(call)
    return items


def _tool_result_item(message: ToolResultMessage, model: Model) -> dict[str, Any]:
    call_id = message.tool_call_id.partition("|")[0]
    texts = [sanitize_surrogates(b.text) for b in message.content if isinstance(b, TextContent)]
    images = [b for b in message.content if isinstance(b, ImageContent)]
    output: str | list[dict[str, Any]]
    if images and "image" in model.input:
        output = [{"type": "input_text", "text": t} for t in texts]
        output.extend(
            {"type": "input_image", "detail": "auto", "image_url": _data_url(image)}
            for image in images
        )
    else:
        output = "\n".join(texts) if texts else "(no output)"
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def convert_messages(messages: list[Message], model: Model) -> list[dict[str, Any]]:
    """The transcript as Responses `input` items (after `transform_messages`)."""
    items: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            user = _user_item(message, model)
            if user is not None:
                items.append(user)
        elif isinstance(message, AssistantMessage):
            items.extend(_assistant_items(message, model))
        elif isinstance(message, ToolResultMessage):
            items.append(_tool_result_item(message, model))
    return items


def _tool(tool: Tool) -> dict[str, Any]:
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": dict(tool.parameters),
        "strict": False,
    }


def build_payload(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    """The request body for `POST /responses` (before `on_payload`)."""
    messages = transform_messages(context.messages, model, normalize_tool_call_id)
    items = convert_messages(messages, model)
    payload: dict[str, Any] = {"model": model.id}
    if context.system_prompt:
        system = sanitize_surrogates(context.system_prompt)
        if model.reasoning:
            items.insert(0, {"role": "developer", "content": system})
        else:
            payload["instructions"] = system
    payload["input"] = items
    payload["stream"] = True
    payload["store"] = False
    payload["max_output_tokens"] = options.max_tokens or model.max_tokens
    if options.temperature is not None:
        payload["temperature"] = options.temperature
    if context.tools:
        payload["tools"] = [_tool(t) for t in context.tools]
    if options.session_id and options.cache_retention != "none":
        payload["prompt_cache_key"] = options.session_id
        if options.cache_retention == "long" and on_api_service(model):
            payload["prompt_cache_retention"] = "24h"
    if options.metadata:
        payload["metadata"] = dict(options.metadata)
    output = options.output_schema
    if output is not None:  # native structured output
        text_format: dict[str, Any] = {
            "type": "json_schema",
            "name": output.name,
            "schema": dict(output.schema),
            "strict": output.strict,
        }
        if output.description:
            text_format["description"] = output.description
        payload["text"] = {"format": text_format}
    if model.reasoning:
        effort = getattr(options, "reasoning_effort", None)
        summary = getattr(options, "reasoning_summary", None)
        if effort is not None or summary is not None:
            reasoning: dict[str, Any] = {"summary": summary or "auto"}
            if effort is not None:
                reasoning["effort"] = effort
            payload["reasoning"] = reasoning
        payload["include"] = ["reasoning.encrypted_content"]
    return payload
