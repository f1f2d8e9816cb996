"""The request of the `bedrock-converse-stream` adapter: options, thinking, and the parameters.

The request is the keyword arguments of boto3's `converse_stream` (what `on_payload` sees, and
may replace): `modelId`, `messages`, `system`, `inferenceConfig`, `toolConfig` and
`additionalModelRequestFields`. It is boto3's parameter form, not the JSON on the wire: image
and redacted-thinking data are `bytes`, which the SDK base64-encodes itself.

* The transcript goes through the cross-provider transform, with tool-call ids cut to what
  Bedrock accepts (`[a-zA-Z0-9_-]`, at most 64 characters). Consecutive messages of one role
  share one Bedrock message (the API wants the roles to alternate), so tool results that answer
  one turn go out together; empty text is dropped (the API rejects it).
* A request that offers no tools tells earlier tool calls and results in words: Bedrock
  rejects tool blocks without a `toolConfig` (a summary request after a tool loop, say).
* Thinking is replayed as `reasoningContent` with its signature, redacted thinking as its
  opaque bytes; unsigned thinking (cut off) goes back as text.
* Prompt caching (`cache_retention` other than `none`, on models that take cache points) puts a
  `cachePoint` after the system prompt and after the last user message.
* A thinking level becomes Anthropic's thinking settings in `additionalModelRequestFields`
  (adaptive with an effort for Claude 4.6 and later, else a token budget with interleaved
  thinking), on models whose compat says they take them.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any, Literal

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
from .._profiles import bedrock_compat
from ..model import BedrockCompat, Model
from ..transform import normalize_id_alnum, sanitize_surrogates, transform_messages
from ..types import Context, SimpleStreamOptions, StreamOptions
from ._anthropic_request import thinking_options

__all__ = [
    "BedrockCompat",
    "BedrockOptions",
    "build_payload",
    "compat_of",
    "convert_messages",
    "normalize_tool_call_id",
    "thinking_fields",
]

_INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"
_IMAGE_FORMATS = {
    "image/png": "png",
    "image/jpeg": "jpeg",
    "image/gif": "gif",
    "image/webp": "webp",
}
_CACHE_POINT: dict[str, Any] = {"cachePoint": {"type": "default"}}


def compat_of(model: Model) -> BedrockCompat:
    """The model's `BedrockCompat` (the catalogue's Bedrock entries carry one; a model built by
    hand without one gets it by the rule of `_profiles.bedrock_compat`)."""
    return bedrock_compat(model)


@dataclass(frozen=True, slots=True, kw_only=True)
class BedrockOptions(StreamOptions):
    """`StreamOptions` plus where and as whom to call Bedrock, and the thinking settings.

    Credentials and region follow the AWS SDK's chain unless given here: the environment
    (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_PROFILE`,
    `AWS_REGION`, `AWS_DEFAULT_REGION`), the shared config and credentials files, SSO, and the
    container or instance roles.

    Attributes:
        region: the AWS region (default: the chain's).
        profile: a profile of the shared config files.
        aws_access_key_id: static credentials (with `aws_secret_access_key`).
        aws_secret_access_key: static credentials.
        aws_session_token: the token of temporary credentials.
        thinking: `enabled` (a token budget), `adaptive` (Claude 4.6+), `off`, or None to send
            nothing (what `stream_simple` fills in from a thinking level).
        thinking_budget: the budget of `enabled` thinking.
        effort: the effort of `adaptive` thinking.
    """

    region: str | None = None
    profile: str | None = None
    aws_access_key_id: str | None = None
    aws_secret_access_key: str | None = None
    aws_session_token: str | None = None
    thinking: Literal["off", "enabled", "adaptive"] | None = None
    thinking_budget: int | None = None
    effort: str | None = None


# --- thinking levels --------------------------------------------------------------------------


def thinking_fields(model: Model, options: SimpleStreamOptions) -> dict[str, Any]:
    """The `BedrockOptions` fields that express `options.reasoning` for this model: Anthropic's
    mapping (`thinking.py` budgets, adaptive effort) for Claude, nothing for other models."""
    if compat_of(model).thinking != "anthropic":
        return {}
    return thinking_options(model, options)


# --- the transcript ---------------------------------------------------------------------------


def normalize_tool_call_id(id: str) -> str:
    """A tool-call id Bedrock accepts: `[a-zA-Z0-9_-]`, 1 to 64 characters."""
    return normalize_id_alnum(id, 64) or "call"


def _image(block: ImageContent) -> dict[str, Any] | None:
    kind = _IMAGE_FORMATS.get(block.mime_type.lower())
    if kind is None:
        return None  # Bedrock takes no other formats; the text around it still goes
    try:
        data = base64.b64decode(block.data, validate=True)
    except (binascii.Error, ValueError):
        return None
    return {"image": {"format": kind, "source": {"bytes": data}}}


def _text(text: str) -> dict[str, Any] | None:
    return {"text": sanitize_surrogates(text)} if text.strip() else None


def _user_blocks(content: str | list[TextContent | ImageContent], images: bool) -> list[Any]:
    if isinstance(content, str):
        content = [TextContent(text=content)]
    blocks: list[Any] = []
    for block in content:
        if isinstance(block, TextContent):
            converted = _text(block.text)
        else:
            converted = _image(block) if images else None
        if converted is not None:
            blocks.append(converted)
    return blocks


def _tool_result(message: ToolResultMessage, images: bool) -> dict[str, Any]:
    content = _user_blocks(list(message.content), images)
    if not content:
        content = [{"text": "(no output)" if not message.is_error else "(error)"}]
    return {
        "toolResult": {
            "toolUseId": message.tool_call_id,
            "content": content,
            "status": "error" if message.is_error else "success",
        }
    }


def _assistant_blocks(message: AssistantMessage) -> list[Any]:
    blocks: list[Any] = []
    for block in message.content:
        if isinstance(block, TextContent):
            converted = _text(block.text)
            if converted is not None:
                blocks.append(converted)
        elif isinstance(block, ThinkingContent):
            signature = block.thinking_signature
            if block.redacted:
                if signature:
                    try:
                        data = base64.b64decode(signature, validate=True)
                    except (binascii.Error, ValueError):
                        continue
                    blocks.append({"reasoningContent": {"redactedContent": data}})
            elif signature and signature.strip():
                text = {"text": sanitize_surrogates(block.thinking), "signature": signature}
                blocks.append({"reasoningContent": {"reasoningText": text}})
            elif (converted := _text(block.thinking)) is not None:
                blocks.append(converted)  # unsigned (cut off): the API would reject it
        elif isinstance(block, ToolCall):
            blocks.append(
                {"toolUse": {"toolUseId": block.id, "name": block.name, "input": block.arguments}}
            )
    return blocks


def _as_text(blocks: list[Any], names: dict[str, str]) -> list[Any]:
    """Tool blocks told in words, for a request that offers no tools (Bedrock rejects tool
    blocks without a `toolConfig`); images of tool results stay images."""
    out: list[Any] = []
    for block in blocks:
        if "toolUse" in block:
            use = block["toolUse"]
            arguments = json.dumps(use["input"], ensure_ascii=False)
            out.append({"text": f"(called the tool {use['name']} with {arguments})"})
        elif "toolResult" in block:
            result = block["toolResult"]
            name = names.get(result["toolUseId"], "tool")
            outcome = "failed" if result["status"] == "error" else "returned"
            texts = [b["text"] for b in result["content"] if "text" in b]
            out.append({"text": f"(the tool {name} {outcome}: {' '.join(texts)})"})
            out.extend(b for b in result["content"] if "image" in b)
        else:
            out.append(block)
    return out


def convert_messages(
    messages: list[Message], model: Model, *, tools_as_text: bool = False
) -> list[dict[str, Any]]:
    """Our transcript as Converse `messages` (see the module docstring).

    Args:
        messages: the transcript.
        model: the model the request goes to.
        tools_as_text: tell tool calls and results in words (for a request without tools).
    """
    images = "image" in model.input
    params: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for message in transform_messages(messages, model, normalize_tool_call_id):
        if isinstance(message, ToolResultMessage):
            role, blocks = "user", [_tool_result(message, images)]
        elif isinstance(message, UserMessage):
            role, blocks = "user", _user_blocks(message.content, images)
        else:
            role, blocks = "assistant", _assistant_blocks(message)
            names.update((call.id, call.name) for call in message.tool_calls)
        if tools_as_text:
            blocks = _as_text(blocks, names)
        if not blocks:
            continue
        if params and params[-1]["role"] == role:
            params[-1]["content"].extend(blocks)
        else:
            params.append({"role": role, "content": blocks})
    return params


def _tool_loop_without_thinking(messages: list[dict[str, Any]]) -> bool:
    """Whether the conversation is inside a tool loop whose assistant turn does not open with
    thinking: budget thinking must then stay off, or Claude rejects the request."""
    for param in reversed(messages):
        content = param["content"]
        if param["role"] == "user":
            if any("toolResult" not in block and "cachePoint" not in block for block in content):
                return False
            continue
        return "reasoningContent" not in content[0]
    return False


# --- the parameters ---------------------------------------------------------------------------


def build_payload(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    """The keyword arguments of `converse_stream` (before `on_payload`)."""
    extra = options if isinstance(options, BedrockOptions) else BedrockOptions()
    compat = compat_of(model)
    cache = compat.cache_points and options.cache_retention != "none"
    messages = convert_messages(context.messages, model, tools_as_text=not context.tools)
    payload: dict[str, Any] = {"modelId": model.id, "messages": messages}
    if context.system_prompt.strip():
        system: list[Any] = [{"text": sanitize_surrogates(context.system_prompt)}]
        if cache:
            system.append(dict(_CACHE_POINT))
        payload["system"] = system
    if cache and messages and messages[-1]["role"] == "user":
        messages[-1]["content"].append(dict(_CACHE_POINT))
    inference: dict[str, Any] = {"maxTokens": options.max_tokens or model.max_tokens}
    if context.tools:
        payload["toolConfig"] = {
            "tools": [
                {
                    "toolSpec": {
                        "name": tool.name,
                        "description": tool.description or tool.name,
                        "inputSchema": {"json": {"type": "object", **tool.parameters}},
                    }
                }
                for tool in context.tools
            ]
        }
    fields: dict[str, Any] = {}
    thinking = extra.thinking if compat.thinking == "anthropic" else None
    if thinking == "enabled" and (
        not extra.thinking_budget or _tool_loop_without_thinking(messages)
    ):
        thinking = "off"
    if thinking == "enabled":
        fields["thinking"] = {"type": "enabled", "budget_tokens": extra.thinking_budget}
        fields["anthropic_beta"] = [_INTERLEAVED_BETA]
    elif thinking == "adaptive":
        fields["thinking"] = {"type": "adaptive"}
        if extra.effort is not None:
            fields["output_config"] = {"effort": extra.effort}
    if options.temperature is not None and thinking not in ("enabled", "adaptive"):
        inference["temperature"] = options.temperature
    payload["inferenceConfig"] = inference
    if fields:
        payload["additionalModelRequestFields"] = fields
    metadata = {
        k: v for k, v in (options.metadata or {}).items() if isinstance(v, str) and len(k) <= 256
    }
    if metadata:
        payload["requestMetadata"] = metadata
    return payload
