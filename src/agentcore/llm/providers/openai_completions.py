"""The OpenAI Chat Completions adapter (`api="openai-completions"`).

Serves OpenAI and every server that speaks its Chat Completions wire format: llama.cpp's
llama-server, vLLM, Ollama, LM Studio, OpenRouter, Groq, DeepSeek, xAI, Mistral, Together,
Cerebras, ... Their differences are flags on the model's `OpenAICompletionsCompat`, never URL
checks (`prompt_cache_key`, which only OpenAI itself accepts, follows the API's profile:
`_profiles.on_api_service`).

The request is sent with the `openai` SDK's async client for OpenAI's own service and Azure, and
with httpx directly for a compatible server (`llm/_direct.py`: the SDK's import is most of a cold
start; the same headers, timeouts, error texts and retries). Either way the SDK's own retries are
off (`_retry` retries 429/5xx/connection failures before any output); the event stream is read
raw by the shared `EventSource` (the SDK's reader leaves its generators suspended at `[DONE]`)
and translated chunk by chunk, each a plain JSON object:

* `delta.content` becomes text (as a list of chunks, Magistral's: its `text` chunks text, its
  `thinking` chunks thinking), `delta.reasoning_content` / `reasoning` / `reasoning_text`
  becomes thinking (the field name is kept as the block's signature, so a later request to the
  same model can send the reasoning back in the field it came from);
* `delta.tool_calls` become tool-call blocks keyed by their `index`: the first fragment of a call
  carries its id and name, later ones only argument text, and several calls may interleave;
* `finish_reason` gives the stop reason and the usage chunk (`choices: []`) the token counts.

Usage is asked for in the stream (`stream_options.include_usage`, where the compat flag
`supports_usage_in_streaming` says the server takes it), but it comes last, so an answer that is
aborted, breaks off or comes from a server that never sends it has none. Such an answer, once
its first event arrived, gets an estimate instead of 0/0 (so usage limits and `--max-cost` see
what was spent): the prompt at four characters a token from the request sent, the output at
four characters a token from the deltas received, priced like reported usage. The `Usage`
fields are the same either way; the estimate is marked where it can be seen: every estimate is
logged (logger `agentcore.llm.usage`, INFO: "sent no usage: estimated ..."), and the error text
of an aborted answer (the common case: Ctrl-C, Stop) ends with `ESTIMATE_NOTE`. A failed answer
keeps its error text as it was: it says what failed.

A stream that ends without a `finish_reason`, breaks off, falls silent for longer than
`idle_timeout`, or carries malformed JSON ends with an `error` terminal that keeps what arrived.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Mapping
from typing import Any, Literal

from ...messages import (
    Usage,
)
from .._adapter import (
    apply_on_payload,
    as_int,
    exception_text,
    get_field,
    merged_headers,
    priced_usage,
    report_response,
)
from .._direct import StatusFailure as _StatusFailure
from .._direct import classify_direct, describe_direct, direct_client, open_direct, uses_direct
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
    DoneEvent,
    ErrorEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallDeltaEvent,
)
from ..model import AzureOpenAI, Model, OpenAICompletionsCompat
from ..registry import ApiProvider
from ..stream import AssistantMessageEventStream
from ..types import Context, SimpleStreamOptions, StreamOptions, ThinkingLevel
from ._azure import azure_api_key, azure_client, azure_settings, deployment
from ._openai_completions_request import REASONING_FIELDS as _REASONING_FIELDS
from ._openai_completions_request import build_payload as build_payload
from ._openai_completions_request import compat_of as _compat
from ._openai_completions_request import convert_messages as convert_messages
from ._openai_completions_request import response_format as response_format

__all__ = [
    "ESTIMATE_NOTE",
    "PROVIDER",
    "build_payload",
    "convert_messages",
    "stream",
    "stream_simple",
]

ESTIMATE_NOTE = " (usage estimated: the server reported no token counts)"
"""Appended to the error text of an aborted answer whose usage is an estimate."""

_StopReason = Literal["stop", "length", "tool_use"]


# --- response ---------------------------------------------------------------------------------


def _usage(model: Model, raw: Any) -> Usage:
    prompt = as_int(get_field(raw, "prompt_tokens"))
    details = get_field(raw, "prompt_tokens_details")
    cached = as_int(get_field(details, "cached_tokens")) or as_int(
        get_field(raw, "prompt_cache_hit_tokens")
    )
    output = as_int(get_field(raw, "completion_tokens"))
    return priced_usage(model, input=prompt - cached, output=output, cache_read=cached)


def _map_finish(reason: str) -> _StopReason | None:
    """Our stop reason for a `finish_reason`; None for one that means failure."""
    if reason in ("length", "model_length"):  # Mistral says model_length
        return "length"
    if reason in ("tool_calls", "function_call"):
        return "tool_use"
    if reason == "content_filter":
        return None
    return "stop"


def _stream_error(chunk: Any) -> str | None:
    """The error text of an error object sent in place of a chunk, or None for a chunk."""
    error = chunk.get("error") if type(chunk) is dict or isinstance(chunk, Mapping) else None
    if not error:
        return None
    return f"server error in the stream: {api_error_text(error) or 'the server reported an error'}"


def _text_chars(value: Any) -> int:
    """The characters of every string in a JSON value (keys and punctuation left out)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, Mapping):
        return sum(_text_chars(item) for item in value.values())
    if isinstance(value, list):
        return sum(_text_chars(item) for item in value)
    return 0


def _tokens(chars: int) -> int:
    return (chars + 3) // 4  # four characters a token, as the agent layer estimates


def _prompt_chars(payload: Any) -> int:
    """The size of a request's prompt: its messages' text and its tool definitions."""
    if not isinstance(payload, Mapping):
        return 0
    tools = payload.get("tools")
    return _text_chars(payload.get("messages")) + (len(json.dumps(tools)) if tools else 0)


class _EstimatingBuilder(MessageBuilder):
    """A `MessageBuilder` that estimates the usage of an answer the server sent none for.

    `prompt_chars` is set once the answer's first event arrived (the prompt was read); an answer
    stopped before that counts nothing, rather than a prompt the server may not have read. The
    output is counted from the deltas received.
    """

    def __init__(self, model: Model) -> None:
        super().__init__(model)
        self.model = model
        self.reported = False
        self.prompt_chars: int | None = None
        self.output_chars = 0

    def set_usage(self, usage: Usage) -> None:
        self.reported = True
        super().set_usage(usage)

    def text_delta(self, index: int, delta: str) -> TextDeltaEvent:
        self.output_chars += len(delta)
        return super().text_delta(index, delta)

    def thinking_delta(self, index: int, delta: str) -> ThinkingDeltaEvent:
        self.output_chars += len(delta)
        return super().thinking_delta(index, delta)

    def toolcall_delta(self, index: int, delta: str) -> ToolCallDeltaEvent:
        self.output_chars += len(delta)
        return super().toolcall_delta(index, delta)

    def _estimate(self) -> bool:
        """Fill in the estimate when the server reported nothing (logged); True when it did."""
        if self.reported or self.prompt_chars is None:
            return False
        self.usage = priced_usage(
            self.model, input=_tokens(self.prompt_chars), output=_tokens(self.output_chars)
        )
        logging.getLogger("agentcore.llm.usage").info(
            "%s/%s sent no usage: estimated %d input and %d output tokens",
            self.model.provider,
            self.model.id,
            self.usage.input,
            self.usage.output,
        )
        return True

    def done(self, reason: Literal["stop", "length", "tool_use"]) -> DoneEvent:
        self._estimate()
        return super().done(reason)

    def error(self, reason: Literal["error", "aborted"], message: str) -> ErrorEvent:
        if self._estimate() and reason == "aborted":
            message += ESTIMATE_NOTE
        return super().error(reason, message)


class _Translator:
    """Feeds chunks to a `MessageBuilder` and returns the events to yield."""

    def __init__(
        self, model: Model, compat: OpenAICompletionsCompat, builder: MessageBuilder
    ) -> None:
        self.model = model
        self.builder = builder
        self.fields = (
            (compat.thinking_format, *(f for f in _REASONING_FIELDS if f != compat.thinking_format))
            if compat.thinking_format != "none"
            else _REASONING_FIELDS
        )
        self.current: int | None = None  # the open text or thinking block
        self.calls: dict[int, int] = {}  # stream tool-call index -> content index
        self.call_ids: dict[int, str] = {}
        self.finish_reason: str | None = None

    def _close_current(self, events: list[AssistantMessageEvent]) -> None:
        if self.current is not None and self.builder.is_open(self.current):
            if self.builder.kind(self.current) == "text":
                events.append(self.builder.text_end(self.current))
            else:
                events.append(self.builder.thinking_end(self.current))
        self.current = None

    def _append(
        self, kind: str, delta: str, signature: str | None, events: list[AssistantMessageEvent]
    ) -> None:
        builder = self.builder
        if self.current is None or builder.kind(self.current) != kind:
            self._close_current(events)
            start = (
                builder.text_start()
                if kind == "text"
                else builder.thinking_start(signature=signature)
            )
            self.current = start.content_index
            events.append(start)
        if kind == "text":
            events.append(builder.text_delta(self.current, delta))
        else:
            events.append(builder.thinking_delta(self.current, delta))

    def feed(self, chunk: Any) -> list[AssistantMessageEvent]:
        text = self._plain_text(chunk)
        if text is not None:
            return [self.builder.text_delta(self.current, text)]  # type: ignore[arg-type]
        events: list[AssistantMessageEvent] = []
        usage = get_field(chunk, "usage") or get_field(get_field(chunk, "x_groq"), "usage")
        if usage is not None:
            self.builder.set_usage(_usage(self.model, usage))
        for choice in get_field(chunk, "choices") or []:
            if (get_field(choice, "index") or 0) != 0:
                continue
            delta = get_field(choice, "delta")
            if delta is not None:
                self._feed_delta(delta, events)
            reason = get_field(choice, "finish_reason")
            if reason:
                self.finish_reason = str(reason)
        return events

    def _plain_text(self, chunk: Any) -> str | None:
        """The text of the commonest chunk, one more piece of the text block already open and
        nothing else (no usage, reasoning, tool call or finish reason), read with plain dict
        lookups; None for any other chunk, which `feed` reads field by field. Either way the
        events are the same."""
        if type(chunk) is not dict or chunk.get("usage") is not None or "x_groq" in chunk:
            return None
        choices = chunk.get("choices")
        if type(choices) is not list or len(choices) != 1:
            return None
        choice = choices[0]
        if type(choice) is not dict or choice.get("index") or choice.get("finish_reason"):
            return None
        delta = choice.get("delta")
        if type(delta) is not dict or delta.get("tool_calls"):
            return None
        content = delta.get("content")
        if type(content) is not str or not content:
            return None
        current = self.current
        if current is None or self.builder.kind(current) != "text":
            return None
        for name in self.fields:
            if delta.get(name):
                return None
        return content

    def _feed_delta(self, delta: Any, events: list[AssistantMessageEvent]) -> None:
        for name in self.fields:
            value = get_field(delta, name)
            if isinstance(value, str) and value:
                self._append("thinking", value, name, events)
                break
        content = get_field(delta, "content")
        if isinstance(content, str) and content:
            self._append("text", content, None, events)
        elif isinstance(content, list):
            self._feed_chunks(content, events)
        for position, call in enumerate(get_field(delta, "tool_calls") or []):
            index = get_field(call, "index")
            key = index if isinstance(index, int) else position
            function = get_field(call, "function")
            call_id = get_field(call, "id") or ""
            name = get_field(function, "name") or ""
            arguments = get_field(function, "arguments") or ""
            if call_id:
                self.call_ids[key] = call_id
            block = self.calls.get(key)
            if block is None:
                self._close_current(events)
                start = self.builder.toolcall_start(id=call_id, name=name)
                block = self.calls[key] = start.content_index
                events.append(start)
            elif call_id or name:
                self.builder.set_tool_call(block, id=call_id or None, name=name or None)
            if isinstance(arguments, str) and arguments:
                events.append(self.builder.toolcall_delta(block, arguments))
            elif isinstance(arguments, Mapping):  # a server that sends parsed arguments
                events.append(self.builder.toolcall_delta(block, json.dumps(arguments)))

    def _feed_chunks(self, chunks: list[Any], events: list[AssistantMessageEvent]) -> None:
        """Content as a list of typed chunks (Mistral's Magistral): `text` chunks are text,
        `thinking` chunks (their `thinking` a list of text chunks, or a string) are thinking.
        Chunks of other types (a reference, say) carry nothing to show and are skipped."""
        for chunk in chunks:
            kind = get_field(chunk, "type")
            if kind == "text":
                text = get_field(chunk, "text")
                if isinstance(text, str) and text:
                    self._append("text", text, None, events)
            elif kind == "thinking":
                inner = get_field(chunk, "thinking")
                parts = [inner] if isinstance(inner, str) else inner or []
                for part in parts:
                    text = part if isinstance(part, str) else get_field(part, "text")
                    if isinstance(text, str) and text:
                        self._append("thinking", text, None, events)

    def finish(self) -> list[AssistantMessageEvent]:
        """Close every open block (a tool call that got no id from the server gets one)."""
        for key, block in self.calls.items():
            if self.builder.is_open(block) and not self.call_ids.get(key):
                self.builder.set_tool_call(block, id=f"call_{secrets.token_hex(12)}")
        self.current = None
        return self.builder.close_open_blocks()


# --- the stream -------------------------------------------------------------------------------


class _Wire(Wire):
    """The Chat Completions wire, on the openai SDK (or its Azure client)."""

    def __init__(
        self,
        request: Request,
        context: Context,
        *,
        reasoning: ThinkingLevel | None,
        sdk: Any,
        api_key: str | None,
        azure: AzureOpenAI | None,
    ) -> None:
        super().__init__(request)
        self.builder = self.estimating = _EstimatingBuilder(request.model)
        self.context = context
        self.reasoning = reasoning
        self.sdk = sdk
        self.api_key = api_key
        self.azure = azure
        self.translator = _Translator(request.model, _compat(request.model), self.builder)
        self.direct = sdk is None  # sent with httpx, without the SDK (`_direct`)
        self.client: Any = None
        self.shared = False  # whether the client\'s HTTP client is the loop\'s (`shared_http`)
        self.payload: Any = None

    async def prepare(self) -> None:
        model, options, azure, sdk = self.request.model, self.request.options, self.azure, self.sdk
        payload = build_payload(model, self.context, options, reasoning=self.reasoning)
        if azure is not None:
            payload["model"] = deployment(model, azure)
        self.payload = await apply_on_payload(payload, options, model)
        headers = merged_headers(model, options)
        if self.direct:
            self.client, self.shared = await direct_client()
        elif azure is not None:
            self.client = await azure_client(
                sdk, model, azure, self.request, self.api_key, headers, responses=False
            )
        else:
            self.client, self.shared = await sdk_client(
                sdk.AsyncOpenAI, sdk, self.api_key or "", model.base_url, headers
            )

    async def send(self) -> OpenedStream:
        sdk, request = self.sdk, self.request
        if self.direct:
            model = request.model
            try:
                response = await open_direct(
                    self.client,
                    model.base_url,
                    self.api_key or "",
                    merged_headers(model, request.options),
                    self.payload,
                )
            except _StatusFailure as exc:
                await report_response(request.options, model, exc.status_code, exc.headers)
                raise
            answer = await open_event_stream(response, request)
            self.estimating.prompt_chars = _prompt_chars(self.payload)
            return answer
        try:
            opened = await self.client.post(
                "/chat/completions",
                cast_to=object,
                body=self.payload,
                stream=True,
                stream_cls=sdk.AsyncStream[object],
            )
        except sdk.APIStatusError as exc:
            await report_response(
                request.options, request.model, exc.status_code, exc.response.headers
            )
            raise
        # the body is read here rather than by the SDK, whose reader leaves generators suspended
        answer = await open_event_stream(opened.response, request)
        self.estimating.prompt_chars = _prompt_chars(
            self.payload
        )  # the answer began: the prompt counts
        return answer

    def classify(self, exc: BaseException) -> RetryInfo | None:
        if self.direct:
            return classify_direct(exc)
        return classify_sdk_error(self.sdk, exc)

    def describe(self, exc: BaseException, *, started: bool) -> str:
        if self.direct:
            return describe_direct(exc, started=started)
        return sdk_failure_text(self.sdk, exc, started=started)

    def feed(self, item: Any) -> list[AssistantMessageEvent]:
        failure = None if type(item) is dict and "error" not in item else _stream_error(item)
        if failure is not None:
            raise AnswerFailed(failure)
        try:
            return self.translator.feed(item)
        except Exception as exc:  # an unexpected chunk shape
            raise AnswerFailed(f"malformed chunk from the server: {exception_text(exc)}") from exc

    def finish(self) -> list[AssistantMessageEvent]:
        translator, builder = self.translator, self.builder
        if translator.finish_reason is None:
            raise AnswerFailed(truncated_text("finish_reason"))
        events = translator.finish()
        reason = _map_finish(translator.finish_reason)
        if reason is None:
            raise AnswerFailed(
                f"the provider stopped the answer (finish_reason: {translator.finish_reason})"
            )
        if reason == "stop" and translator.calls:
            reason = "tool_use"
        events.append(builder.done(reason))
        return events

    async def release(self) -> None:
        if self.direct:
            if self.client is not None and not self.shared:
                await self.client.aclose()
            return
        await close_unshared(self.client, self.shared)


def _open(
    model: Model, context: Context, options: StreamOptions, reasoning: ThinkingLevel | None
) -> AssistantMessageEventStream:
    azure = azure_settings(model)
    # a compatible server is sent to without the SDK (`_direct`: its import is most of a cold
    # start); OpenAI's own service and Azure keep it
    sdk = None if uses_direct(model, azure=azure is not None) else import_sdk("openai", "openai")
    api_key = azure_api_key(model, options, azure) if azure else resolve_api_key(model, options)
    request = Request(model, options, api_key)
    wire = _Wire(request, context, reasoning=reasoning, sdk=sdk, api_key=api_key, azure=azure)
    return open_driven(wire, always_redact=azure is not None)


def stream(model: Model, context: Context, options: StreamOptions) -> AssistantMessageEventStream:
    """Stream one Chat Completions request (no reasoning effort is sent).

    Raises:
        MissingExtraError: the `openai` package is not installed (needed for OpenAI's own
            service and Azure; a compatible server's `base_url` is sent to with httpx).
        MissingApiKeyError: no key in the options or the provider's environment variable.
    """
    return _open(model, context, options, None)


def stream_simple(
    model: Model, context: Context, options: SimpleStreamOptions
) -> AssistantMessageEventStream:
    """Like `stream`, sending `reasoning_effort` for `options.reasoning` where the model and
    server support it."""
    return _open(model, context, options, options.reasoning)


PROVIDER = ApiProvider(api="openai-completions", stream=stream, stream_simple=stream_simple)
"""The OpenAI Chat Completions adapter, as `get_api_provider` returns it."""
