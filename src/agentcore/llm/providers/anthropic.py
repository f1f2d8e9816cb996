"""The Anthropic Messages adapter (`api="anthropic-messages"`), through the official SDK.

A request is built as a plain JSON body (so `on_payload` can see and replace all of it), sent with
`AsyncAnthropic.post` with the SDK's own retries off (`retry_request` retries instead), and the
typed server-sent events are fed to a `MessageBuilder`:

* `message_start` / `message_delta` carry the usage (input, cache read/write, output) and the stop
  reason; `content_block_start/delta/stop` open, grow and close text, thinking (with its
  signature), redacted thinking (its data kept as the signature) and tool-use blocks (arguments
  streamed as JSON fragments); `ping` is skipped and an `error` event ends the stream.
* Prompt caching follows `cache_retention`: `short` marks the system prompt and the last user
  message as ephemeral cache breakpoints, `long` asks api.anthropic.com for a one-hour TTL, `none`
  sends no markers.
* `stream_simple` maps a thinking level to adaptive thinking with an effort (Claude Opus/Sonnet
  4.6 and later) or to a token budget (older thinking models).

`session_id` and `transport` have no Anthropic counterpart and are ignored.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import json
import re
import ssl
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias
from urllib.parse import urlsplit

import anyio
import anyio.to_thread
import httpx

from ...abort import cancel_on_abort
from ...messages import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from .._env import resolve_api_key
from .._retry import (
    RequestAborted,
    RetryDelayTooLong,
    RetryInfo,
    is_retryable_status,
    parse_retry_after,
    retry_request,
)
from .._sdk import import_sdk
from ..builder import MessageBuilder
from ..events import AssistantMessageEvent
from ..model import Model
from ..models import calculate_cost
from ..registry import ApiProvider
from ..stream import AssistantMessageEventStream
from ..thinking import (
    DEFAULT_BUDGETS,
    adjust_max_tokens_for_thinking,
    clamp_level,
    supports_xhigh,
)
from ..transform import normalize_id_alnum, sanitize_surrogates, transform_messages
from ..types import Context, ResponseInfo, SimpleStreamOptions, StreamOptions, ThinkingLevel

__all__ = [
    "PROVIDER",
    "AnthropicOptions",
    "build_payload",
    "convert_messages",
    "stream",
    "stream_simple",
    "supports_adaptive_thinking",
]

API = "anthropic-messages"

Effort: TypeAlias = Literal["low", "medium", "high", "xhigh", "max"]
ThinkingMode: TypeAlias = Literal["off", "enabled", "adaptive"]

_ABORTED = "request was aborted"
_INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"
_MIN_BUDGET = 1024  # the API rejects smaller thinking budgets
_EFFORTS: dict[ThinkingLevel, Effort] = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
}
_STOP_REASONS: dict[str, Literal["stop", "length", "tool_use"]] = {
    "end_turn": "stop",
    "pause_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_use",
}
_MAX_BODY_TEXT = 500  # of a non-JSON error body quoted in an error message
_RETRYABLE_EVENT_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error"})
_TRUNCATED = (
    "malformed server stream: it ended before the message_stop event (the response was cut off)"
)
_CLAUDE_VERSION = re.compile(r"claude-([a-z]+)-(\d+)(?:[-.](\d{1,2}))?(?:-\d{8})?(?:$|[-@:])")


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


def _claude_version(model: Model) -> tuple[str, int, int] | None:
    match = _CLAUDE_VERSION.search(model.id.lower())
    if match is None:
        return None
    return match.group(1), int(match.group(2)), int(match.group(3) or 0)


def supports_adaptive_thinking(model: Model) -> bool:
    """Whether the model takes `thinking={"type": "adaptive"}`: Claude Opus/Sonnet 4.6 and later,
    and every Claude 5 model."""
    version = _claude_version(model)
    if version is None:
        return False
    family, major, minor = version
    return major >= 5 or (family in ("opus", "sonnet") and (major, minor) >= (4, 6))


def _thinking_options(model: Model, options: SimpleStreamOptions) -> dict[str, Any]:
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
        clamp_level(level, supports_xhigh=False),
        options.thinking_budgets or DEFAULT_BUDGETS,
    )
    if budget < _MIN_BUDGET:  # no room for the smallest budget the API takes
        return {"thinking": "off"}
    return {"thinking": "enabled", "thinking_budget": budget, "max_tokens": max_tokens}


# --- the request body -------------------------------------------------------------------------


def _cache_control(model: Model, retention: str) -> dict[str, str] | None:
    if retention == "none":
        return None
    host = urlsplit(model.base_url).hostname if model.base_url else "api.anthropic.com"
    if retention == "long" and host == "api.anthropic.com":
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


def _tool_result(message: ToolResultMessage, images: bool) -> dict[str, Any]:
    content: str | list[dict[str, Any]]
    if images and any(isinstance(b, ImageContent) for b in message.content):
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
        content = sanitize_surrogates(
            "\n".join(b.text for b in message.content if isinstance(b, TextContent))
        )
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
            if block.text.strip():
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
            blocks.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": block.arguments}
            )
    return blocks


def convert_messages(messages: list[Message], model: Model) -> list[dict[str, Any]]:
    """Our transcript as Anthropic `messages` (after the cross-provider transform).

    Consecutive tool results become one user message of `tool_result` blocks; empty text is
    dropped (the API rejects it), and so are images for models that do not take them.
    """
    images = "image" in model.input
    params: list[dict[str, Any]] = []
    results: list[dict[str, Any]] | None = None  # the tool_result blocks of the last message
    for message in transform_messages(messages, model, normalize_id_alnum):
        if isinstance(message, ToolResultMessage):
            if results is None:
                results = []
                params.append({"role": "user", "content": results})
            results.append(_tool_result(message, images))
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
    messages = convert_messages(context.messages, model)
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
        payload["tools"] = [
            {
                "name": tool.name,
                "description": tool.description,
                "input_schema": {"type": "object", **tool.parameters},
            }
            for tool in context.tools
        ]
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


def _headers(model: Model, options: StreamOptions, payload: Mapping[str, Any]) -> dict[str, str]:
    headers = {**model.headers, **(options.headers or {})}
    thinking = payload.get("thinking")
    if isinstance(thinking, Mapping) and thinking.get("type") == "enabled":
        betas = [b.strip() for b in headers.get("anthropic-beta", "").split(",") if b.strip()]
        if _INTERLEAVED_BETA not in betas:
            headers["anthropic-beta"] = ",".join([*betas, _INTERLEAVED_BETA])
    return headers


# --- errors -----------------------------------------------------------------------------------


class _EmptyStream(Exception):
    """The server answered 200 but sent no event (retried like a dropped connection)."""

    def __init__(self) -> None:
        super().__init__("malformed server stream: the response had no events")


def _error_field(body: object, name: str) -> Any:
    error = body.get("error") if isinstance(body, Mapping) else None
    return error.get(name) if isinstance(error, Mapping) else None


def _error_type(body: object) -> Any:
    return _error_field(body, "type")


def _is_transport_error(exc: BaseException) -> bool:
    """A network failure below the SDK (its exceptions come from httpx or httpx2)."""
    module = type(exc).__module__.split(".")[0]
    return module in ("httpx", "httpx2", "httpcore") or isinstance(exc, OSError)


def _status_error_text(exc: Any) -> str:
    """`429 rate_limit_error: <message>` from an SDK status error (also an SSE `error` event)."""
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    kind = _error_type(body)
    message = _error_field(body, "message")
    if not isinstance(message, str):  # not Anthropic's JSON error (a proxy's page, say)
        message = body if isinstance(body, str) and body else getattr(exc, "message", str(exc))
        message = message if len(message) <= _MAX_BODY_TEXT else message[:_MAX_BODY_TEXT] + "…"
    prefix = f"{status} " if status and status != 200 else ""
    text = f"{prefix}{kind}: {message}" if isinstance(kind, str) else f"{prefix}{message}"
    request_id = getattr(exc, "request_id", None)
    return f"{text} (request id {request_id})" if request_id else text


def _failure_text(sdk: Any, exc: BaseException) -> str:
    if isinstance(exc, RetryDelayTooLong | _EmptyStream):
        return str(exc)
    if isinstance(exc, sdk.APIStatusError):
        return _status_error_text(exc)
    if isinstance(exc, json.JSONDecodeError):
        return f"malformed server stream: an event's data is not valid JSON ({exc})"
    if isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__
        detail = f" ({type(cause).__name__}: {cause})" if cause is not None else ""
        return f"{str(exc).rstrip('.')}{detail}"
    if _is_transport_error(exc):
        return f"the connection was lost mid-stream ({type(exc).__name__}: {exc})"
    return f"{type(exc).__name__}: {exc}" if str(exc) else repr(exc)


def _classify(sdk: Any) -> Any:
    def classify(exc: BaseException) -> RetryInfo | None:
        if isinstance(exc, sdk.APIStatusError):
            if exc.status_code == 200:  # an `error` event as the stream's first event
                return RetryInfo() if _error_type(exc.body) in _RETRYABLE_EVENT_ERRORS else None
            if not is_retryable_status(exc.status_code):
                return None
            body = exc.body if isinstance(exc.body, str) else json.dumps(exc.body)
            return RetryInfo(delay=parse_retry_after(exc.response.headers, body))
        if isinstance(exc, sdk.APIConnectionError | _EmptyStream) or _is_transport_error(exc):
            return RetryInfo()
        return None

    return classify


# --- streaming --------------------------------------------------------------------------------


def _get(obj: Any, name: str) -> Any:
    """A field of an SDK event object (or of a raw dict, for event types the SDK does not know)."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


class _Translator:
    """Turns Anthropic stream events into builder calls, remembering which API block is which."""

    def __init__(self, model: Model, builder: MessageBuilder) -> None:
        self.model = model
        self.builder = builder
        self.blocks: dict[int, int] = {}  # API content index -> our content index
        self.signatures: dict[int, str] = {}
        self.inputs: dict[int, Any] = {}  # tool_use input given whole at block start
        self.streamed: set[int] = set()  # tool calls that received JSON fragments
        self.counts: dict[str, int] = {}
        self.stop_reason: str | None = None
        self.finished = False

    def _usage(self, usage: Any) -> None:
        if usage is None:
            return
        names = (
            ("input", "input_tokens"),
            ("cache_read", "cache_read_input_tokens"),
            ("cache_write", "cache_creation_input_tokens"),
            ("output", "output_tokens"),
        )
        for ours, theirs in names:
            value = _get(usage, theirs)
            if isinstance(value, int):
                self.counts[ours] = value
        counts = self.counts
        usage = Usage(
            input=counts.get("input", 0),
            output=counts.get("output", 0),
            cache_read=counts.get("cache_read", 0),
            cache_write=counts.get("cache_write", 0),
        )
        self.builder.set_usage(calculate_cost(self.model, usage))

    def feed(self, event: Any) -> list[AssistantMessageEvent]:
        """The protocol events for one Anthropic event."""
        kind = _get(event, "type")
        b = self.builder
        if kind == "message_start":
            self._usage(_get(_get(event, "message"), "usage"))
        elif kind == "message_delta":
            self.stop_reason = _get(_get(event, "delta"), "stop_reason") or self.stop_reason
            self._usage(_get(event, "usage"))
        elif kind == "message_stop":
            self.finished = True
        elif kind == "content_block_start":
            return self._start(_get(event, "index"), _get(event, "content_block"))
        elif kind == "content_block_delta":
            index = self.blocks.get(_get(event, "index"))
            if index is None or not b.is_open(index):
                return []
            return self._delta(index, _get(event, "delta"))
        elif kind == "content_block_stop":
            index = self.blocks.get(_get(event, "index"))
            if index is None or not b.is_open(index):
                return []
            if b.kind(index) == "text":
                return [b.text_end(index)]
            if b.kind(index) == "thinking":
                return [b.thinking_end(index)]
            given = self.inputs.get(index)
            whole = None if index in self.streamed or not isinstance(given, dict) else given
            return [b.toolcall_end(index, arguments=whole)]
        return []  # ping, and event types added after this adapter was written

    def _start(self, api_index: Any, block: Any) -> list[AssistantMessageEvent]:
        b = self.builder
        kind = _get(block, "type")
        events: list[AssistantMessageEvent] = []
        if kind == "text":
            index = (start := b.text_start()).content_index
            events.append(start)
            if text := _get(block, "text"):
                events.append(b.text_delta(index, text))
        elif kind == "thinking":
            index = (
                thinking := b.thinking_start(signature=_get(block, "signature") or None)
            ).content_index
            events.append(thinking)
            if text := _get(block, "thinking"):
                events.append(b.thinking_delta(index, text))
        elif kind == "redacted_thinking":
            redacted = b.thinking_start(signature=_get(block, "data") or "", redacted=True)
            index = redacted.content_index
            events.append(redacted)
        elif kind == "tool_use":
            call = b.toolcall_start(id=_get(block, "id") or "", name=_get(block, "name") or "")
            index = call.content_index
            self.inputs[index] = _get(block, "input")
            events.append(call)
        else:
            return []  # server tools, citations and the like are not part of our protocol
        self.blocks[api_index] = index
        return events

    def _delta(self, index: int, delta: Any) -> list[AssistantMessageEvent]:
        b = self.builder
        kind = _get(delta, "type")
        if kind == "text_delta" and b.kind(index) == "text":
            text = _get(delta, "text")
            return [b.text_delta(index, text)] if text else []
        if kind == "thinking_delta" and b.kind(index) == "thinking":
            text = _get(delta, "thinking")
            return [b.thinking_delta(index, text)] if text else []
        if kind == "signature_delta" and b.kind(index) == "thinking":
            self.signatures[index] = self.signatures.get(index, "") + (
                _get(delta, "signature") or ""
            )
            b.thinking_signature(index, self.signatures[index])
        elif kind == "input_json_delta" and b.kind(index) == "tool_call":
            fragment = _get(delta, "partial_json")
            if fragment:
                self.streamed.add(index)
                return [b.toolcall_delta(index, fragment)]
        return []


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One TLS context for every request: loading the CA bundle takes tens of milliseconds, which
    a client made per request would otherwise spend blocking the event loop."""
    return httpx.create_ssl_context()


async def _client(sdk: Any, api_key: str, model: Model, headers: dict[str, str]) -> Any:
    context = await anyio.to_thread.run_sync(_ssl_context)  # cached after the first call
    return sdk.AsyncAnthropic(
        api_key=api_key,
        base_url=model.base_url or None,
        max_retries=0,
        default_headers=headers,
        http_client=sdk.DefaultAsyncHttpxClient(verify=context),
    )


async def _call(hook: Any, *args: Any) -> Any:
    result = hook(*args)
    if inspect.isawaitable(result):
        result = await result
    return result


async def _close(resource: Any) -> None:
    if resource is not None:
        with anyio.CancelScope(shield=True):
            await resource.close()


async def _finish(iterator: Any) -> None:
    """End the SDK's chain of event generators, none of which closes the one it reads from.

    Each would otherwise be garbage-collected while suspended (trio warns about every one). A
    read cancelled at once raises inside the innermost generator and unwinds them all; the
    response itself is closed afterwards.
    """
    with anyio.CancelScope() as scope, contextlib.suppress(Exception):
        scope.cancel()
        async for _ in iterator:
            pass


async def _open(sdk: Any, client: Any, payload: Any, model: Model, options: StreamOptions) -> Any:
    """Send the request and read its first event, so that whatever fails before any output (an
    error status, a dropped connection, an `error` event first thing) can be retried.

    Returns:
        `(sdk_stream, iterator, first_event)`.
    """
    try:
        response = await client.post(
            "/v1/messages",
            body=payload,
            cast_to=sdk.types.Message,
            stream=True,
            stream_cls=sdk.AsyncStream[sdk.types.RawMessageStreamEvent],
        )
    except sdk.APIStatusError as exc:
        await _notify(exc.response, model, options)
        raise
    await _notify(response.response, model, options)
    iterator = aiter(response)
    try:
        first = await anext(iterator)
    except StopAsyncIteration:
        await _close(response)
        raise _EmptyStream() from None
    except BaseException:
        await _close(response)
        raise
    return response, iterator, first


async def _notify(http: Any, model: Model, options: StreamOptions) -> None:
    if options.on_response is not None:
        info = ResponseInfo(status=http.status_code, headers=dict(http.headers))
        await _call(options.on_response, info, model)


async def _events(
    sdk: Any, api_key: str, model: Model, context: Context, options: StreamOptions
) -> AsyncIterator[AssistantMessageEvent]:
    builder = MessageBuilder(model)
    translator = _Translator(model, builder)
    signal = options.signal
    client: Any = None
    response: Any = None
    iterator: Any = None
    try:
        payload: Any = build_payload(model, context, options)
        if options.on_payload is not None:
            replaced = await _call(options.on_payload, payload, model)
            if replaced is not None:
                if not isinstance(replaced, Mapping):
                    text = f"on_payload returned {type(replaced).__name__}; expected a dict or None"
                    yield builder.error("error", text)
                    return
                payload = replaced
        client = await _client(sdk, api_key, model, _headers(model, options, payload))
        with cancel_on_abort(signal) as scope:
            response, iterator, event = await retry_request(
                lambda: _open(sdk, client, payload, model, options),
                signal=signal,
                max_retry_delay_ms=options.max_retry_delay_ms,
                classify=_classify(sdk),
            )
        if scope.cancelled_caught or (signal is not None and signal.aborted):
            yield builder.error("aborted", _ABORTED)
            return
        yield builder.start()
        while True:
            for out in translator.feed(event):
                yield out
            if translator.finished:
                break
            with cancel_on_abort(signal) as scope:
                try:
                    event = await anext(iterator)
                except StopAsyncIteration:
                    event = None
            if scope.cancelled_caught or (signal is not None and signal.aborted):
                yield builder.error("aborted", _ABORTED)
                return
            if event is None:
                yield builder.error("error", _TRUNCATED)
                return
    except RequestAborted:
        yield builder.error("aborted", _ABORTED)
        return
    except Exception as exc:
        aborted = signal is not None and signal.aborted
        yield builder.error("aborted" if aborted else "error", _failure_text(sdk, exc))
        return
    finally:
        with anyio.CancelScope(shield=True):
            if iterator is not None:
                await _finish(iterator)
            if response is not None:
                await response.close()
            if client is not None:
                await client.close()

    for out in builder.close_open_blocks():
        yield out
    reason = translator.stop_reason
    mapped = _STOP_REASONS.get(reason or "end_turn")
    if mapped is not None:
        yield builder.done(mapped)
    elif reason == "refusal":
        yield builder.error("error", "the model refused to answer (stop_reason=refusal)")
    else:
        yield builder.error("error", f"the model stopped with an unknown stop_reason {reason!r}")


# --- entry points -----------------------------------------------------------------------------


def _import_sdk() -> Any:
    return import_sdk("anthropic", "anthropic")


def stream(
    model: Model, context: Context, options: StreamOptions | None = None
) -> AssistantMessageEventStream:
    """Stream one Messages request (pass `AnthropicOptions` for thinking and effort).

    Raises (before anything is sent):
        MissingExtraError: the `anthropic` package is not installed.
        MissingApiKeyError: no `api_key` and no `ANTHROPIC_API_KEY`.
    """
    options = options or StreamOptions()
    sdk = _import_sdk()
    api_key = resolve_api_key(model, options)
    fallback = AssistantMessage(api=model.api, provider=model.provider, model=model.id)
    return AssistantMessageEventStream(
        _events(sdk, api_key, model, context, options), fallback=fallback
    )


def stream_simple(
    model: Model, context: Context, options: SimpleStreamOptions | None = None
) -> AssistantMessageEventStream:
    """`stream` with `options.reasoning` mapped to adaptive thinking or a thinking budget."""
    options = options or SimpleStreamOptions()
    fields = {f.name: getattr(options, f.name) for f in dataclasses.fields(StreamOptions)}
    fields.update(_thinking_options(model, options))
    return stream(model, context, AnthropicOptions(**fields))


PROVIDER = ApiProvider(api=API, stream=stream, stream_simple=stream_simple)
