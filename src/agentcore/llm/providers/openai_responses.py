"""The `openai-responses` adapter: OpenAI's Responses API through the official `openai` SDK.

The request is stateless (`store: false`): the whole transcript goes in `input` every time, and
the model's reasoning is kept across turns by replaying its reasoning items, which arrive with
their `encrypted_content` because we ask for it (`include: ["reasoning.encrypted_content"]`).

How our blocks map to Responses items, and back:

* thinking ↔ a `reasoning` item. The reasoning summary streams as thinking text; the finished
  item, JSON-encoded, is the block's `thinking_signature` and is sent back verbatim to the same
  model. Other models get the thinking as plain text (see `transform_messages`).
* text ↔ an assistant `message` item. Its item id (and `phase`, when the server sets one) is the
  block's `text_signature`, so the same model sees its own item again.
* tool call ↔ a `function_call` item. `ToolCall.id` is `"<call_id>|<item_id>"`; the result goes
  back as a `function_call_output` for `call_id`. Ids from other models are normalised and sent
  without an item id (the server would look for the reasoning item that produced it).

The SDK's own retries are off; `retry_request` retries the send (before any output) the same way
for every provider. Events are read as plain JSON objects from the SDK's SSE stream, so unknown
event types and fields are ignored rather than failing validation.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field, fields
from types import ModuleType
from typing import Any, Literal, cast
from urllib.parse import urlsplit

import anyio

from ...abort import cancel_on_abort
from ...messages import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from .._env import resolve_api_key
from .._retry import (
    RequestAborted,
    RetryInfo,
    is_retryable_status,
    parse_retry_after,
    retry_request,
)
from .._sdk import import_sdk
from ..builder import MessageBuilder
from ..events import (
    AssistantMessageEvent,
    TextStartEvent,
    ThinkingStartEvent,
    ToolCallStartEvent,
)
from ..model import Model
from ..models import calculate_cost
from ..registry import ApiProvider
from ..stream import AssistantMessageEventStream
from ..thinking import clamp_level, supports_xhigh
from ..transform import normalize_id_alnum, sanitize_surrogates, transform_messages
from ..types import Context, ResponseInfo, SimpleStreamOptions, StreamOptions, Tool

__all__ = [
    "PROVIDER",
    "OpenAIResponsesOptions",
    "build_payload",
    "convert_messages",
    "normalize_tool_call_id",
    "stream",
    "stream_simple",
]

API = "openai-responses"
_ABORTED = "request was aborted"
_CLOSE_TIMEOUT = 5.0
_DRAIN_LIMIT = 1000

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


def _encode_text_signature(item_id: str, phase: str | None) -> str:
    if phase is None:
        return item_id
    return json.dumps({"v": 1, "id": item_id, "phase": phase}, separators=(",", ":"))


def _decode_text_signature(signature: str) -> tuple[str | None, str | None]:
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
                _decode_text_signature(block.text_signature)
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


def _is_openai_host(base_url: str) -> bool:
    if not base_url:
        return True  # the SDK's default endpoint
    return urlsplit(base_url).hostname == "api.openai.com"


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
        if options.cache_retention == "long" and _is_openai_host(model.base_url):
            payload["prompt_cache_retention"] = "24h"
    if options.metadata:
        payload["metadata"] = dict(options.metadata)
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


# -- the response ---------------------------------------------------------------------------


def _usage(model: Model, data: Any) -> Usage | None:
    """Our usage from a Responses `usage` object (its `input_tokens` include cached ones)."""
    if not isinstance(data, Mapping):
        return None
    details = data.get("input_tokens_details")
    details = details if isinstance(details, Mapping) else {}
    total_input = _int(data.get("input_tokens"))
    cache_read = _int(details.get("cached_tokens"))
    cache_write = _int(details.get("cache_write_tokens"))
    usage = Usage(
        input=max(0, total_input - cache_read - cache_write),
        output=_int(data.get("output_tokens")),
        cache_read=cache_read,
        cache_write=cache_write,
    )
    return calculate_cost(model, usage)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _error_text(data: Any, fallback: str) -> str:
    """`code: message` from an error object, or `fallback`."""
    if not isinstance(data, Mapping):
        return fallback
    message = data.get("message")
    code = data.get("code") or data.get("type")
    if isinstance(message, str) and message:
        return f"{code}: {message}" if isinstance(code, str) and code else message
    return f"{fallback} ({code})" if isinstance(code, str) and code else fallback


_Kind = Literal["text", "thinking", "tool_call"]
_ITEM_KINDS: dict[str, _Kind] = {
    "reasoning": "thinking",
    "message": "text",
    "function_call": "tool_call",
}


@dataclass(slots=True)
class _Item:
    """One output item being streamed into the content block at `index`."""

    index: int
    kind: _Kind
    streamed: int = 0
    summary_part: int = 0
    arguments: str | None = None


@dataclass(slots=True)
class _Outcome:
    reason: Literal["stop", "length", "tool_use", "error"]
    error: str | None = None


@dataclass(slots=True)
class _Translator:
    """Turns Responses stream events (JSON objects) into builder calls and protocol events."""

    model: Model
    builder: MessageBuilder
    items: dict[Any, _Item] = field(default_factory=dict)
    outcome: _Outcome | None = None

    def _key(self, data: Mapping[str, Any]) -> Any:
        index = data.get("output_index")
        return index if isinstance(index, int) else data.get("item_id")

    def _open(self, key: Any, kind: _Kind, item: Mapping[str, Any]) -> AssistantMessageEvent:
        builder = self.builder
        event: TextStartEvent | ThinkingStartEvent | ToolCallStartEvent
        if kind == "thinking":
            event = builder.thinking_start()
        elif kind == "text":
            event = builder.text_start()
        else:
            call_id = str(item.get("call_id") or "")
            item_id = str(item.get("id") or "")
            name = str(item.get("name") or "")
            event = builder.toolcall_start(
                id=f"{call_id}|{item_id}" if item_id else call_id, name=name
            )
        self.items[key] = _Item(index=event.content_index, kind=kind)
        return event

    def _delta(self, data: Mapping[str, Any], kind: _Kind, delta: Any) -> Iterator[Any]:
        if not isinstance(delta, str) or not delta:
            return
        key = self._key(data)
        item = self.items.get(key)
        if item is None or item.kind != kind or not self.builder.is_open(item.index):
            # the server skipped `output_item.added`: open the block now
            yield self._open(key, kind, {"id": data.get("item_id")})
            item = self.items[key]
        if kind == "thinking":
            part = data.get("summary_index")
            if isinstance(part, int) and part > item.summary_part:
                item.summary_part = part
                if item.streamed:
                    yield self.builder.thinking_delta(item.index, "\n\n")
            yield self.builder.thinking_delta(item.index, delta)
        elif kind == "text":
            yield self.builder.text_delta(item.index, delta)
        else:
            yield self.builder.toolcall_delta(item.index, delta)
        item.streamed += len(delta)

    def handle(self, data: Any) -> Iterator[AssistantMessageEvent]:
        """The events for one stream event; sets `outcome` on a terminal one."""
        if not isinstance(data, Mapping):
            raise _Malformed(f"an event that is not a JSON object: {str(data)[:200]}")
        kind = data.get("type")
        if kind == "response.output_text.delta" or kind == "response.refusal.delta":
            yield from self._delta(data, "text", data.get("delta"))
        elif kind == "response.function_call_arguments.delta":
            yield from self._delta(data, "tool_call", data.get("delta"))
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            yield from self._delta(data, "thinking", data.get("delta"))
        elif kind == "response.reasoning_summary_part.added":
            item = self.items.get(self._key(data))
            part = data.get("summary_index")
            if (
                item is not None
                and item.kind == "thinking"
                and isinstance(part, int)
                and part > item.summary_part
                and item.streamed
                and self.builder.is_open(item.index)
            ):
                item.summary_part = part
                item.streamed += 2
                yield self.builder.thinking_delta(item.index, "\n\n")
        elif kind == "response.function_call_arguments.done":
            item = self.items.get(self._key(data))
            arguments = data.get("arguments")
            if item is not None and item.kind == "tool_call" and isinstance(arguments, str):
                item.arguments = arguments
        elif kind == "response.output_item.added":
            yield from self._item_added(data)
        elif kind == "response.output_item.done":
            yield from self._item_done(data)
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            yield from self._finish(data.get("response"))
        elif kind == "error":
            self.outcome = _Outcome("error", _error_text(data, "the server reported an error"))

    def _item_added(self, data: Mapping[str, Any]) -> Iterator[AssistantMessageEvent]:
        item = data.get("item")
        if not isinstance(item, Mapping):
            return
        kind = _ITEM_KINDS.get(str(item.get("type")))
        if kind is None:
            return  # built-in tool calls and other items are not part of our message
        yield self._open(self._key(data), kind, item)
        arguments = item.get("arguments")
        if kind == "tool_call" and isinstance(arguments, str) and arguments:
            yield from self._delta(data, "tool_call", arguments)

    def _item_done(self, data: Mapping[str, Any]) -> Iterator[AssistantMessageEvent]:
        raw = data.get("item")
        if not isinstance(raw, Mapping):
            return
        key = self._key(data)
        entry = self.items.get(key)
        if entry is None or not self.builder.is_open(entry.index):
            # an item we never saw start: stream it now from its final form
            kind = _ITEM_KINDS.get(str(raw.get("type")))
            if kind is None:
                return
            yield self._open(key, kind, raw)
            entry = self.items[key]
        builder = self.builder
        index = entry.index
        if entry.kind == "thinking":
            if not entry.streamed:
                text = _reasoning_text(raw)
                if text:
                    yield builder.thinking_delta(index, text)
            yield builder.thinking_end(index, signature=json.dumps(dict(raw), ensure_ascii=False))
        elif entry.kind == "text":
            if not entry.streamed:
                text = _message_text(raw)
                if text:
                    yield builder.text_delta(index, text)
            item_id = raw.get("id")
            phase = raw.get("phase")
            signature = (
                _encode_text_signature(item_id, phase if isinstance(phase, str) else None)
                if isinstance(item_id, str) and item_id
                else None
            )
            yield builder.text_end(index, signature=signature)
        else:
            call_id = raw.get("call_id")
            item_id = raw.get("id")
            if isinstance(call_id, str) and call_id:
                builder.set_tool_call(
                    index,
                    id=f"{call_id}|{item_id}" if isinstance(item_id, str) and item_id else call_id,
                    name=raw.get("name") if isinstance(raw.get("name"), str) else None,
                )
            final = raw.get("arguments")
            if not isinstance(final, str):
                final = entry.arguments
            if not entry.streamed and final:
                yield builder.toolcall_delta(index, final)
            yield builder.toolcall_end(index)

    def _finish(self, response: Any) -> Iterator[AssistantMessageEvent]:
        if not isinstance(response, Mapping):
            raise _Malformed("a final event without its `response` object")
        usage = _usage(self.model, response.get("usage"))
        if usage is not None:
            self.builder.set_usage(usage)
        yield from self.builder.close_open_blocks()
        status = response.get("status")
        if status == "incomplete":
            details = response.get("incomplete_details")
            reason = details.get("reason") if isinstance(details, Mapping) else None
            if reason == "content_filter":
                self.outcome = _Outcome("error", "the response was cut off by the content filter")
            else:
                self.outcome = _Outcome("length")
        elif status in ("failed", "cancelled"):
            self.outcome = _Outcome(
                "error", _error_text(response.get("error"), f"the response {status}")
            )
        elif any(self.builder.kind(i) == "tool_call" for i in range(self.builder.block_count)):
            self.outcome = _Outcome("tool_use")
        else:
            self.outcome = _Outcome("stop")


def _reasoning_text(item: Mapping[str, Any]) -> str:
    for key in ("summary", "content"):
        parts = item.get(key)
        if isinstance(parts, list):
            texts = [
                p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
            ]
            if texts:
                return "\n\n".join(texts)
    return ""


def _message_text(item: Mapping[str, Any]) -> str:
    parts = item.get("content")
    if not isinstance(parts, list):
        return ""
    out: list[str] = []
    for part in parts:
        if isinstance(part, dict):
            text = part.get("text") if part.get("type") == "output_text" else part.get("refusal")
            if isinstance(text, str):
                out.append(text)
    return "".join(out)


class _Malformed(Exception):
    """The server's stream does not follow the Responses wire format."""


# -- sending --------------------------------------------------------------------------------


@functools.cache
def _create_params(create: Any) -> frozenset[str]:
    """The body fields `responses.create` takes as keyword arguments (others go in
    `extra_body`, so an `on_payload` hook may add fields the SDK does not know)."""
    names = set(inspect.signature(create).parameters)
    return frozenset(names - {"self", "extra_headers", "extra_query", "extra_body", "timeout"})


def _classify(sdk: ModuleType) -> Any:
    def classify(exc: BaseException) -> RetryInfo | None:
        if isinstance(exc, sdk.APIStatusError):
            if not is_retryable_status(exc.status_code):
                return None
            body = None if exc.body is None else json.dumps(exc.body, default=str)
            return RetryInfo(delay=parse_retry_after(dict(exc.response.headers), body))
        if isinstance(exc, sdk.APIConnectionError):
            return RetryInfo()
        return None

    return classify


def _failure_text(sdk: ModuleType, exc: BaseException, *, started: bool) -> str:
    """What went wrong, in words, for the error terminal."""
    if isinstance(exc, sdk.APIStatusError):
        body = exc.body
        if isinstance(body, Mapping):
            return f"{exc.status_code} {_error_text(body, exc.message)}"
        if isinstance(body, str) and body.strip():
            return f"{exc.status_code} {body.strip()[:500]}"
        return f"{exc.status_code} {exc.message}"
    if isinstance(exc, json.JSONDecodeError):
        return f"malformed server-sent event: invalid JSON in the data field ({exc})"
    if isinstance(exc, _Malformed):
        return f"malformed server-sent event: {exc}"
    if isinstance(exc, sdk.APITimeoutError):
        return "the request timed out" + (" mid-stream" if started else "")
    if isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__
        detail = f" ({type(cause).__name__}: {cause})" if cause is not None else ""
        what = "the connection was lost mid-stream" if started else "could not connect"
        return f"{what}{detail}"
    if isinstance(exc, sdk.APIError):
        return str(exc.message)
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def _notify(options: StreamOptions, model: Model, status: int, headers: Any) -> None:
    if options.on_response is None:
        return
    result = options.on_response(ResponseInfo(status=status, headers=dict(headers)), model)
    if inspect.isawaitable(result):
        await result


async def _events(
    sdk: ModuleType, api_key: str, model: Model, context: Context, options: StreamOptions
) -> AsyncIterator[AssistantMessageEvent]:
    builder = MessageBuilder(model)
    signal = options.signal
    client: Any = None
    events: Any = None
    started = False
    try:
        payload: Any = build_payload(model, context, options)
        if options.on_payload is not None:
            replaced = options.on_payload(payload, model)
            if inspect.isawaitable(replaced):
                replaced = await replaced
            if replaced is not None:
                payload = replaced
        if not isinstance(payload, Mapping):
            raise TypeError(
                f"on_payload returned {type(payload).__name__}; expected a dict (or None)"
            )
        client = sdk.AsyncOpenAI(
            api_key=api_key,
            base_url=model.base_url or None,
            max_retries=0,
            default_headers={**model.headers, **(options.headers or {})},
        )
        params = _create_params(type(client.responses).create)
        known = {k: v for k, v in payload.items() if k in params}
        extra = {k: v for k, v in payload.items() if k not in params}
        known["stream"] = True

        async def send() -> Any:
            try:
                raw = await client.responses.with_raw_response.create(
                    **known, extra_body=extra or None
                )
            except sdk.APIStatusError as exc:
                await _notify(options, model, exc.status_code, exc.response.headers)
                raise
            await _notify(options, model, raw.status_code, raw.headers)
            return raw

        with cancel_on_abort(signal) as scope:
            raw = await retry_request(
                send,
                signal=signal,
                max_retry_delay_ms=options.max_retry_delay_ms,
                classify=_classify(sdk),
            )
        if scope.cancelled_caught or (signal is not None and signal.aborted):
            yield builder.error("aborted", _ABORTED)
            return
        events = raw.parse(to=sdk.AsyncStream[object])
        translator = _Translator(model, builder)
        yield builder.start()
        started = True
        while True:
            data: Any = None
            ended = False
            with cancel_on_abort(signal) as scope:
                try:
                    data = await events.__anext__()
                except StopAsyncIteration:
                    ended = True
            if scope.cancelled_caught or (signal is not None and signal.aborted):
                yield builder.error("aborted", _ABORTED)
                return
            if ended:
                yield builder.error(
                    "error",
                    "malformed stream: it ended before a response.completed, "
                    "response.incomplete or response.failed event",
                )
                return
            for event in translator.handle(data):
                yield event
            outcome = translator.outcome
            if outcome is not None:
                if outcome.reason == "error":
                    yield builder.error("error", outcome.error or "the response failed")
                else:
                    yield builder.done(outcome.reason)
                return
    except RequestAborted:
        yield builder.error("aborted", _ABORTED)
    except Exception as exc:
        reason: Literal["error", "aborted"] = (
            "aborted" if signal is not None and signal.aborted else "error"
        )
        yield builder.error(
            reason, _ABORTED if reason == "aborted" else _failure_text(sdk, exc, started=started)
        )
    finally:
        with anyio.move_on_after(_CLOSE_TIMEOUT, shield=True):
            if events is not None:
                await _close_events(events)
            if client is not None:
                await client.close()


async def _close_events(events: Any) -> None:
    """Close the SDK's event stream and finish its generators.

    Stopping at the final event leaves the SDK's chain of async generators suspended; left to
    the garbage collector they are finalised late (and trio warns). Closing the response first
    makes the next read fail at once, which unwinds the whole chain here, in this task.
    """
    await events.close()
    for _ in range(_DRAIN_LIMIT):
        try:
            await events.__anext__()
        except Exception:  # StopAsyncIteration, or the read on a closed response failing
            return


# -- entry points ---------------------------------------------------------------------------


def _fallback(model: Model) -> AssistantMessage:
    return AssistantMessage(api=model.api, provider=model.provider, model=model.id)


def stream(
    model: Model, context: Context, options: StreamOptions | None = None
) -> AssistantMessageEventStream:
    """Stream one answer from the Responses API.

    Raises (before anything is sent):
        MissingExtraError: the `openai` package is not installed.
        MissingApiKeyError: no `api_key` option and no key in the provider's variable.
    """
    options = options or StreamOptions()
    sdk = import_sdk("openai", "openai")
    api_key = resolve_api_key(model, options)
    return AssistantMessageEventStream(
        _events(sdk, api_key, model, context, options), fallback=_fallback(model)
    )


def stream_simple(
    model: Model, context: Context, options: SimpleStreamOptions | None = None
) -> AssistantMessageEventStream:
    """`stream` with the thinking level mapped to `reasoning.effort` (xhigh only where
    supported; `off` sends no effort)."""
    options = options or SimpleStreamOptions()
    base = {f.name: getattr(options, f.name) for f in fields(StreamOptions)}
    effort: ReasoningEffort | None = None
    if model.reasoning and options.reasoning is not None and options.reasoning != "off":
        effort = cast(ReasoningEffort, clamp_level(options.reasoning, supports_xhigh(model)))
    return stream(model, context, OpenAIResponsesOptions(**base, reasoning_effort=effort))


PROVIDER = ApiProvider(api=API, stream=stream, stream_simple=stream_simple)
