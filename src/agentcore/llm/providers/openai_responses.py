"""The `openai-responses` adapter: OpenAI's Responses API through the official `openai` SDK.

The request (`_openai_responses_request`) is stateless: the whole transcript goes in `input`
every time, and the model's reasoning is kept across turns by replaying its reasoning items,
which arrive with their `encrypted_content` because we ask for it.

This module reads the answer. The SDK sends the request; its event stream is read raw by the shared
`EventSource` as plain JSON objects, so unknown event types and fields are ignored rather
than failing validation:

* a `reasoning` item streams its summary as thinking; the finished item, JSON-encoded, becomes
  the block's `thinking_signature`, for replay to the same model;
* a `message` item streams as text; its item id (and `phase`, when the server sets one) becomes
  the block's `text_signature`;
* a `function_call` item streams its arguments; the block's id is `"<call_id>|<item_id>"`;
* `response.completed` / `incomplete` / `failed` give the usage and the stop reason.

The SDK's own retries are off; `retry_request` retries the send (before any output) the same way
for every provider.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Literal, cast

from ...messages import Usage
from .._adapter import (
    apply_on_payload,
    as_int,
    merged_headers,
    priced_usage,
    report_response,
    stream_option_fields,
)
from .._driver import AnswerFailed, Wire, open_driven
from .._env import resolve_api_key
from .._failures import truncated_text
from .._pool import close_unshared
from .._request import OpenedStream, Request, open_event_stream
from .._retry import RetryInfo
from .._sdk import (
    api_error_text,
    classify_sdk_error,
    import_sdk,
    sdk_client,
    sdk_failure_text,
)
from ..builder import MessageBuilder
from ..events import (
    AssistantMessageEvent,
    TextStartEvent,
    ThinkingStartEvent,
    ToolCallStartEvent,
)
from ..model import AzureOpenAI, Model
from ..registry import ApiProvider
from ..stream import AssistantMessageEventStream
from ..thinking import clamp_level, supports_xhigh
from ..types import Context, SimpleStreamOptions, StreamOptions
from ._azure import azure_api_key, azure_client, azure_settings, deployment
from ._openai_responses_request import (
    OpenAIResponsesOptions,
    ReasoningEffort,
    build_payload,
    convert_messages,
    encode_text_signature,
    normalize_tool_call_id,
)

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
"""The `Model.api` this module serves."""
_TRUNCATED = truncated_text("response.completed, response.incomplete or response.failed event")

# -- the response ---------------------------------------------------------------------------


def _usage(model: Model, data: Any) -> Usage | None:
    """Our usage from a Responses `usage` object (its `input_tokens` include cached ones)."""
    if not isinstance(data, Mapping):
        return None
    details = data.get("input_tokens_details")
    details = details if isinstance(details, Mapping) else {}
    cache_read = as_int(details.get("cached_tokens"))
    cache_write = as_int(details.get("cache_write_tokens"))
    return priced_usage(
        model,
        input=as_int(data.get("input_tokens")) - cache_read - cache_write,
        output=as_int(data.get("output_tokens")),
        cache_read=cache_read,
        cache_write=cache_write,
    )


def _error_text(data: Any, fallback: str) -> str:
    """`code: message` from an error object, or `fallback` (with the code, if there is one)."""
    text = api_error_text(data)
    if text is not None:
        return text
    code = (data.get("code") or data.get("type")) if isinstance(data, Mapping) else None
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
    streamed: bool = False
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
            if (separator := self._separator(item, data.get("summary_index"))) is not None:
                yield separator
            yield self.builder.thinking_delta(item.index, delta)
        elif kind == "text":
            yield self.builder.text_delta(item.index, delta)
        else:
            yield self.builder.toolcall_delta(item.index, delta)
        item.streamed = True

    def _separator(self, item: _Item, part: Any) -> AssistantMessageEvent | None:
        """The blank line between two reasoning summary parts, once, as part `part` begins."""
        if not isinstance(part, int) or part <= item.summary_part:
            return None
        item.summary_part = part
        return self.builder.thinking_delta(item.index, "\n\n") if item.streamed else None

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
            if (
                item is not None
                and item.kind == "thinking"
                and self.builder.is_open(item.index)
                and (separator := self._separator(item, data.get("summary_index"))) is not None
            ):
                yield separator
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
        elif kind is None and isinstance(data.get("error"), Mapping):  # an error object alone
            text = _error_text(data["error"], "the server reported an error")
            self.outcome = _Outcome("error", text)

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
                encode_text_signature(item_id, phase if isinstance(phase, str) else None)
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
        elif self.builder.has_tool_calls:
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


def _failure_text(sdk: ModuleType, exc: BaseException, *, started: bool) -> str:
    """What went wrong, in words, for the error terminal."""
    if isinstance(exc, _Malformed):
        return f"malformed server-sent event: {exc}"
    return sdk_failure_text(sdk, exc, started=started)


async def _send(
    sdk: ModuleType, client: Any, known: dict[str, Any], extra: dict[str, Any], request: Request
) -> OpenedStream:
    """One attempt: send the request and read the first event of its answer."""
    try:
        raw = await client.responses.with_raw_response.create(**known, extra_body=extra or None)
    except sdk.APIStatusError as exc:
        await report_response(request.options, request.model, exc.status_code, exc.response.headers)
        raise
    # the body is read by `EventSource` (as in every adapter), not by the SDK's decoder
    return await open_event_stream(raw.http_response, request)


class _Wire(Wire):
    """The Responses wire, on the openai SDK (or its Azure client)."""

    def __init__(
        self,
        request: Request,
        context: Context,
        sdk: ModuleType,
        api_key: str | None,
        azure: AzureOpenAI | None = None,
    ) -> None:
        super().__init__(request)
        self.context = context
        self.sdk = sdk
        self.api_key = api_key
        self.azure = azure
        self.translator = _Translator(request.model, self.builder)
        self.client: Any = None
        self.shared = False  # whether the client\'s HTTP client is the loop\'s (`shared_http`)
        self.known: dict[str, Any] = {}
        self.extra: dict[str, Any] = {}

    async def prepare(self) -> None:
        model, options, azure, sdk = self.request.model, self.request.options, self.azure, self.sdk
        payload = build_payload(model, self.context, options)
        if azure is not None:
            payload["model"] = deployment(model, azure)
        payload = await apply_on_payload(payload, options, model)
        headers = merged_headers(model, options)
        if azure is not None:
            self.client = await azure_client(
                sdk, model, azure, self.request, self.api_key, headers, responses=True
            )
        else:
            self.client, self.shared = await sdk_client(
                sdk.AsyncOpenAI, sdk, self.api_key or "", model.base_url, headers
            )
        params = _create_params(type(self.client.responses).create)
        self.known = {k: v for k, v in payload.items() if k in params}
        self.extra = {k: v for k, v in payload.items() if k not in params}
        self.known["stream"] = True

    async def send(self) -> OpenedStream:
        return await _send(self.sdk, self.client, self.known, self.extra, self.request)

    def classify(self, exc: BaseException) -> RetryInfo | None:
        return classify_sdk_error(self.sdk, exc)

    def describe(self, exc: BaseException, *, started: bool) -> str:
        return _failure_text(self.sdk, exc, started=started)

    @property
    def finished(self) -> bool:  # type: ignore[override]
        return self.translator.outcome is not None

    def feed(self, item: Any) -> Iterator[AssistantMessageEvent]:
        return self.translator.handle(item)

    def finish(self) -> list[AssistantMessageEvent]:
        outcome = self.translator.outcome
        if outcome is None:
            raise AnswerFailed(_TRUNCATED)
        if outcome.reason == "error":
            raise AnswerFailed(outcome.error or "the response failed")
        return [self.builder.done(outcome.reason)]

    async def release(self) -> None:
        await close_unshared(self.client, self.shared)


# -- entry points ---------------------------------------------------------------------------


def stream(
    model: Model, context: Context, options: StreamOptions | None = None
) -> AssistantMessageEventStream:
    """Stream one answer from the Responses API.

    Raises (before anything is sent):
        MissingExtraError: the `openai` package is not installed.
        MissingApiKeyError: no `api_key` option and no key in the provider's variable (for
            Azure: no token provider and no `AZURE_OPENAI_API_KEY` either).
    """
    options = options or StreamOptions()
    sdk = import_sdk("openai", "openai")
    azure = azure_settings(model)
    if azure is None:
        key = resolve_api_key(model, options)
        request = Request(model, options, key)
        return open_driven(_Wire(request, context, sdk, key))
    api_key = azure_api_key(model, options, azure)
    request = Request(model, options, api_key)
    return open_driven(_Wire(request, context, sdk, api_key, azure), always_redact=True)


def stream_simple(
    model: Model, context: Context, options: SimpleStreamOptions | None = None
) -> AssistantMessageEventStream:
    """`stream` with the thinking level mapped to `reasoning.effort` (xhigh only where
    supported; `off` sends no effort)."""
    options = options or SimpleStreamOptions()
    effort: ReasoningEffort | None = None
    if model.reasoning and options.reasoning is not None and options.reasoning != "off":
        effort = cast(ReasoningEffort, clamp_level(options.reasoning, supports_xhigh(model)))
    return stream(
        model,
        context,
        OpenAIResponsesOptions(**stream_option_fields(options), reasoning_effort=effort),
    )


PROVIDER = ApiProvider(api=API, stream=stream, stream_simple=stream_simple)
"""The OpenAI Responses adapter, as `get_api_provider` returns it."""
