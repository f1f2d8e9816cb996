"""The Google Gemini adapter (`google-generative-ai`), on the `google-genai` SDK.

A request is built as a JSON-friendly payload in the SDK's own shape, `{"model", "contents",
"config"}` with snake_case keys and base64 strings for bytes (thought signatures, image data);
`on_payload` sees it and may replace it, and only then is it validated into the SDK's types and
sent with `client.aio.models.generate_content_stream`.

Each request gets its own `httpx.AsyncClient`, handed to the SDK: that keeps the SDK on httpx
(never aiohttp), lets an event hook report every response's status and headers to `on_response`,
and ties the connection's lifetime to the stream. The SDK's retries are off; `retry_request`
retries 408/429/5xx and connection failures until the first streamed chunk has arrived.

Gemini streams whole parts, not deltas of one: a text part extends the open text block (or opens
one), a part with `thought=True` does the same for thinking, and a `function_call` part is a
complete call whose arguments go out in a single `toolcall_delta` (`{}` when absent). Thought
signatures (bytes in the SDK) are kept as URL-safe base64, the encoding the SDK puts on the wire,
and replayed only to the model that made them. Gemini 3 rejects unsigned function calls in the
history, so calls without a signature get the documented skip-validation sentinel.

Not mapped: `session_id`, `cache_retention` and `metadata` (the Gemini API caches prompts
implicitly and has no request labels); `transport` (SSE only).
"""

from __future__ import annotations

import base64
import contextlib
import functools
import inspect
import json
import re
import ssl
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import anyio
import httpx
import pydantic

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
from ..thinking import budget_for, clamp_level
from ..transform import normalize_id_alnum, sanitize_surrogates, transform_messages
from ..types import (
    Context,
    ResponseInfo,
    SimpleStreamOptions,
    StreamOptions,
    ThinkingBudgets,
    ThinkingLevel,
    Tool,
)

__all__ = [
    "API",
    "PROVIDER",
    "SKIP_THOUGHT_SIGNATURE",
    "build_contents",
    "build_payload",
    "stream",
    "stream_simple",
    "thinking_config",
]

API = "google-generative-ai"
SKIP_THOUGHT_SIGNATURE = "skip_thought_signature_validator"
"""Stands in for a missing thought signature on a replayed Gemini 3 function call."""

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
DEFAULT_API_VERSION = "v1beta"
REQUEST_TIMEOUT_MS = 600_000
"""Longest wait for a connection or between two streamed chunks."""

_VERSION_SUFFIX = re.compile(r"^(?P<base>.*?)/(?P<version>v\d+(?:(?:alpha|beta)\d*)?)/?$")
_BASE64 = re.compile(r"^[A-Za-z0-9+/_-]+={0,2}$")

# Thinking budgets per level (minimal, low, medium, high) for the Gemini 2.5 models that take one.
_BUDGETS_25: tuple[tuple[str, ThinkingBudgets], ...] = (
    ("2.5-flash-lite", ThinkingBudgets(minimal=512, low=2048, medium=8192, high=24576)),
    ("2.5-pro", ThinkingBudgets(minimal=128, low=2048, medium=8192, high=32768)),
    ("2.5-flash", ThinkingBudgets(minimal=128, low=2048, medium=8192, high=24576)),
)
_DYNAMIC_BUDGET = -1
"""Lets the model decide how long to think (models without a known budget range)."""


# --- the request --------------------------------------------------------------------------------


def _is_gemini3(model_id: str) -> bool:
    return re.search(r"gemini-3(?:[.\-]|$)", model_id.lower()) is not None


def _requires_tool_call_id(model_id: str) -> bool:
    """Models served through Gemini APIs that match tool results to calls by id."""
    return model_id.startswith(("claude-", "gpt-oss-"))


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
    model_id = model.id.lower()
    if level is None or level == "off":
        if _is_gemini3(model_id):
            return {"thinking_level": "LOW" if "pro" in model_id else "MINIMAL"}
        if "2.5-pro" in model_id:  # cannot think less than 128 tokens
            return {"thinking_budget": 128}
        return {"thinking_budget": 0}
    level = clamp_level(level, supports_xhigh=False)
    if _is_gemini3(model_id):
        if "pro" in model_id:
            gemini_level = "LOW" if level in ("minimal", "low") else "HIGH"
        else:
            gemini_level = level.upper()
        return {"include_thoughts": True, "thinking_level": gemini_level}
    if budgets is not None:
        budget = budget_for(level, budgets)
    else:
        defaults = next((b for marker, b in _BUDGETS_25 if marker in model_id), None)
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
            if _requires_tool_call_id(model.id):
                call["id"] = block.id
            part = {"function_call": call}
            if _valid_signature(block.thought_signature):
                part["thought_signature"] = block.thought_signature
            elif _is_gemini3(model.id):
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
    if _requires_tool_call_id(model.id):
        response["id"] = message.tool_call_id
    if image_parts and _is_gemini3(model.id):
        response["parts"] = image_parts
    else:
        images.extend(image_parts)
    return {"function_response": response}


def build_contents(messages: Sequence[Message], model: Model) -> list[dict[str, Any]]:
    """The transcript as Gemini `contents` (after the cross-provider conversion)."""
    normalize = normalize_id_alnum if _requires_tool_call_id(model.id) else None
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
    return {
        "model": model.id,
        "contents": build_contents(context.messages, model),
        "config": config,
    }


# --- the connection -----------------------------------------------------------------------------


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One TLS context for every request (loading the CA bundle takes tens of milliseconds)."""
    return httpx.create_ssl_context()


def _split_base_url(base_url: str) -> tuple[str, str]:
    """`(base, api_version)`: a trailing `/v1beta`-like segment of `base_url` is the version."""
    if not base_url:
        return DEFAULT_BASE_URL, DEFAULT_API_VERSION
    match = _VERSION_SUFFIX.match(base_url)
    if match is None:
        return base_url.rstrip("/"), DEFAULT_API_VERSION
    return match["base"], match["version"]


def _sdk_args(types: ModuleType, payload: Any) -> tuple[str, list[Any], Any]:
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


def _classify(errors: ModuleType) -> Callable[[BaseException], RetryInfo | None]:
    def classify(exc: BaseException) -> RetryInfo | None:
        if isinstance(exc, errors.APIError):
            if not is_retryable_status(int(exc.code or 0)):
                return None
            response = getattr(exc, "response", None)
            headers = dict(response.headers.items()) if response is not None else {}
            return RetryInfo(delay=parse_retry_after(headers, json.dumps(exc.details)))
        if isinstance(exc, httpx.TransportError):
            return RetryInfo()
        return None

    return classify


def _describe(exc: BaseException, errors: ModuleType, streaming: bool) -> str:
    """The error text of a failed request."""
    if isinstance(exc, errors.APIError):
        status = f" {exc.status}" if exc.status else ""
        return f"Gemini API error {exc.code}{status}: {exc.message or json.dumps(exc.details)}"
    if isinstance(exc, errors.UnknownApiResponseError):
        return f"malformed stream event from Gemini: {exc}"
    if isinstance(exc, httpx.TimeoutException):
        return f"the Gemini request timed out ({type(exc).__name__})"
    if isinstance(exc, httpx.TransportError):
        where = "mid-stream" if streaming else "before the response"
        return f"connection to Gemini failed {where}: {type(exc).__name__}: {exc}"
    if isinstance(exc, RetryDelayTooLong):
        return str(exc)
    if isinstance(exc, pydantic.ValidationError):
        what = "response from Gemini" if streaming else "request payload"
        return f"malformed {what}: {exc}"
    return f"{type(exc).__name__}: {exc}" if str(exc) else repr(exc)


# --- the stream ---------------------------------------------------------------------------------


def _signature(raw: bytes | None) -> str | None:
    return base64.urlsafe_b64encode(raw).decode("ascii") if raw else None


@dataclass(slots=True)
class _Translator:
    """Turns Gemini response chunks into builder calls and protocol events."""

    builder: MessageBuilder
    model: Model
    open_index: int | None = None
    open_kind: str = ""
    text_signature: str | None = None
    finish_reason: str | None = None
    block_reason: str | None = None
    call_ids: set[str] = field(default_factory=set)

    def close(self) -> list[AssistantMessageEvent]:
        index, self.open_index = self.open_index, None
        if index is None:
            return []
        if self.open_kind == "text":
            signature, self.text_signature = self.text_signature, None
            return [self.builder.text_end(index, signature=signature)]
        return [self.builder.thinking_end(index)]

    def feed(self, chunk: Any) -> list[AssistantMessageEvent]:
        events: list[AssistantMessageEvent] = []
        if chunk.usage_metadata is not None:
            self.builder.set_usage(_usage(self.model, chunk.usage_metadata))
        feedback = chunk.prompt_feedback
        if feedback is not None and feedback.block_reason is not None:
            self.block_reason = _enum_name(feedback.block_reason)
        candidate = chunk.candidates[0] if chunk.candidates else None
        if candidate is None:
            return events
        parts = candidate.content.parts if candidate.content is not None else None
        for part in parts or ():
            if part.function_call is not None:
                events.extend(self._call(part))
            elif part.text is not None:
                events.extend(self._text(part))
        if candidate.finish_reason is not None:
            self.finish_reason = _enum_name(candidate.finish_reason)
        return events

    def _text(self, part: Any) -> list[AssistantMessageEvent]:
        kind = "thinking" if part.thought is True else "text"
        signature = _signature(part.thought_signature)
        events: list[AssistantMessageEvent] = []
        if self.open_index is None or self.open_kind != kind:
            if not part.text:  # an empty part opens nothing; it may only carry a signature
                return events
            events.extend(self.close())
            start = (
                self.builder.thinking_start() if kind == "thinking" else self.builder.text_start()
            )
            self.open_index, self.open_kind = start.content_index, kind
            events.append(start)
        index = self.open_index
        assert index is not None
        if signature is not None:  # a later part may renew it; an absent one keeps the last
            if kind == "thinking":
                self.builder.thinking_signature(index, signature)
            else:
                self.text_signature = signature
        if part.text:
            if kind == "thinking":
                events.append(self.builder.thinking_delta(index, part.text))
            else:
                events.append(self.builder.text_delta(index, part.text))
        return events

    def _call(self, part: Any) -> list[AssistantMessageEvent]:
        events = self.close()
        call = part.function_call
        call_id = call.id
        if not call_id or call_id in self.call_ids:
            call_id = f"call_{uuid.uuid4().hex[:24]}"
        self.call_ids.add(call_id)
        arguments: dict[str, Any] = dict(call.args) if call.args else {}
        start = self.builder.toolcall_start(
            id=call_id, name=call.name or "", thought_signature=_signature(part.thought_signature)
        )
        events.append(start)
        events.append(self.builder.toolcall_delta(start.content_index, json.dumps(arguments)))
        events.append(self.builder.toolcall_end(start.content_index, arguments=arguments))
        return events

    def finish(self) -> list[AssistantMessageEvent]:
        """The closing events and the terminal one, once the stream has ended."""
        events = self.close()
        reason = self.finish_reason
        if reason is None and self.block_reason is not None:
            events.append(
                self.builder.error("error", f"Gemini blocked the prompt: {self.block_reason}")
            )
        elif reason is None:
            truncated = "the Gemini stream ended without a finish reason (truncated)"
            events.append(self.builder.error("error", truncated))
        elif reason == "STOP":
            has_calls = any(
                self.builder.kind(i) == "tool_call" for i in range(self.builder.block_count)
            )
            events.append(self.builder.done("tool_use" if has_calls else "stop"))
        elif reason == "MAX_TOKENS":
            events.append(self.builder.done("length"))
        else:
            events.append(
                self.builder.error("error", f"Gemini stopped with finish reason {reason}")
            )
        return events


def _enum_name(value: Any) -> str:
    return str(getattr(value, "value", value))


def _usage(model: Model, metadata: Any) -> Usage:
    prompt = metadata.prompt_token_count or 0
    cached = metadata.cached_content_token_count or 0
    usage = Usage(
        input=max(0, prompt - cached),
        output=(metadata.candidates_token_count or 0) + (metadata.thoughts_token_count or 0),
        cache_read=cached,
    )
    return calculate_cost(model, usage)


_ABORTED = "request was aborted"


def _aborted(options: StreamOptions) -> bool:
    return options.signal is not None and options.signal.aborted


async def _request(
    genai: ModuleType,
    model: Model,
    context: Context,
    options: StreamOptions,
    thinking: dict[str, Any] | None,
) -> tuple[str, list[Any], Any]:
    """The arguments of `generate_content_stream`, after `on_payload` had its say."""
    payload: Any = build_payload(model, context, options, thinking)
    if options.on_payload is not None:
        replaced = options.on_payload(payload, model)
        if inspect.isawaitable(replaced):
            replaced = await replaced
        if replaced is not None:
            payload = replaced
    return _sdk_args(genai.types, payload)


def _client(
    genai: ModuleType,
    model: Model,
    options: StreamOptions,
    api_key: str,
    http: httpx.AsyncClient,
) -> Any:
    types = genai.types
    base_url, api_version = _split_base_url(model.base_url)
    return genai.Client(
        vertexai=False,  # whatever GOOGLE_GENAI_USE_VERTEXAI says: this is the Gemini API
        api_key=api_key,
        http_options=types.HttpOptions(
            base_url=base_url,
            api_version=api_version,
            headers={**model.headers, **(options.headers or {})},
            timeout=REQUEST_TIMEOUT_MS,
            retry_options=types.HttpRetryOptions(attempts=1),  # no retries: ours do it
            httpx_async_client=http,
            # the TLS context for the clients the SDK builds but never uses here
            client_args={"verify": _ssl_context()},
            async_client_args={"ssl": _ssl_context()},
        ),
    )


def _reporter(options: StreamOptions, model: Model) -> Callable[[httpx.Response], Awaitable[None]]:
    """An httpx response hook calling `on_response` with each response's status and headers."""

    async def report(response: httpx.Response) -> None:
        if options.on_response is not None:
            info = ResponseInfo(status=response.status_code, headers=dict(response.headers.items()))
            result = options.on_response(info, model)
            if inspect.isawaitable(result):
                await result

    return report


async def _events(
    genai: ModuleType,
    model: Model,
    context: Context,
    options: StreamOptions,
    api_key: str,
    thinking: dict[str, Any] | None,
) -> AsyncIterator[AssistantMessageEvent]:
    builder = MessageBuilder(model)
    errors: ModuleType = genai.errors
    streams: list[Any] = []  # every SDK stream opened, closed at the end
    http = httpx.AsyncClient(
        verify=_ssl_context(), event_hooks={"response": [_reporter(options, model)]}
    )
    client: Any = None
    try:
        opened: tuple[Any, Any] | None = None
        try:
            model_id, contents, config = await _request(genai, model, context, options, thinking)
            client = _client(genai, model, options, api_key, http)

            async def send() -> tuple[Any, Any]:
                # the SDK sends the request when its stream is first read
                sdk_stream = await client.aio.models.generate_content_stream(
                    model=model_id, contents=contents, config=config
                )
                streams.append(sdk_stream)
                return sdk_stream, await anext(sdk_stream, None)

            with cancel_on_abort(options.signal):
                opened = await retry_request(
                    send,
                    signal=options.signal,
                    max_retry_delay_ms=options.max_retry_delay_ms,
                    classify=_classify(errors),
                )
        except RequestAborted:
            pass
        except Exception as exc:
            if not _aborted(options):
                yield builder.error("error", _describe(exc, errors, streaming=False))
                return
        if opened is None or _aborted(options):
            yield builder.error("aborted", _ABORTED)
            return

        sdk_stream, chunk = opened
        translator = _Translator(builder, model)
        yield builder.start()
        while chunk is not None:
            try:
                events = translator.feed(chunk)
            except Exception as exc:  # a chunk the translation does not expect
                yield builder.error("error", f"unexpected Gemini response: {exc!r}")
                return
            for event in events:
                yield event
            failure: Exception | None = None
            with cancel_on_abort(options.signal):
                try:
                    chunk = await anext(sdk_stream, None)
                except Exception as exc:
                    failure = exc
            if _aborted(options):
                yield builder.error("aborted", _ABORTED)
                return
            if failure is not None:
                yield builder.error("error", _describe(failure, errors, streaming=True))
                return
        for event in translator.finish():
            yield event
    finally:
        await _close(client, streams, http)


async def _close(client: Any, streams: list[Any], http: httpx.AsyncClient) -> None:
    with anyio.CancelScope(shield=True):
        for sdk_stream in streams:
            with contextlib.suppress(Exception):  # a broken stream: closed with the client below
                await sdk_stream.aclose()
        await http.aclose()
    if client is not None:
        client.close()  # the sync httpx client the SDK made for itself


# --- entry points -------------------------------------------------------------------------------


def _start(
    model: Model, context: Context, options: StreamOptions, thinking: dict[str, Any] | None
) -> AssistantMessageEventStream:
    genai = import_sdk("google.genai", "google")
    api_key = resolve_api_key(model, options)
    fallback = AssistantMessage(api=model.api, provider=model.provider, model=model.id)
    return AssistantMessageEventStream(
        _events(genai, model, context, options, api_key, thinking), fallback=fallback
    )


def stream(
    model: Model, context: Context, options: StreamOptions | None = None
) -> AssistantMessageEventStream:
    """Stream a Gemini answer. Thinking is left at the model's default.

    Raises (before anything is sent):
        MissingApiKeyError: no `api_key` and no GEMINI_API_KEY/GOOGLE_API_KEY.
        MissingExtraError: `google-genai` is not installed (`pip install 'agentcore[google]'`).
    """
    return _start(model, context, options or StreamOptions(), None)


def stream_simple(
    model: Model, context: Context, options: SimpleStreamOptions | None = None
) -> AssistantMessageEventStream:
    """Like `stream`, mapping `options.reasoning` to a thinking budget or level."""
    options = options or SimpleStreamOptions()
    thinking = thinking_config(model, options.reasoning, options.thinking_budgets)
    return _start(model, context, options, thinking)


PROVIDER = ApiProvider(api=API, stream=stream, stream_simple=stream_simple)
