"""The Google Gemini adapter (`google-generative-ai`), on the `google-genai` SDK.

The payload is built by `_google_request` in the SDK's own JSON-friendly shape; `on_payload`
sees it and may replace it, and only then is it validated into the SDK's types and sent with
`client.aio.models.generate_content_stream`.

Each request gets its own `httpx.AsyncClient` (on the shared TLS context), handed to the SDK:
that keeps the SDK on httpx (never aiohttp), lets an event hook report every response's status
and headers to `on_response`, refuse a successful body that is not an event stream, and replace
the body with the events the shared `sse_events` parser finds in it (the SDK reads event streams
itself and fails on a comment line), and ties the connection's lifetime to the stream. The SDK's
retries are off; `retry_request` retries 408/429/5xx and connection failures until the first
streamed chunk has arrived; `idle_timeout` is timed where the SDK hands over each chunk.

Gemini streams whole parts, not deltas of one: a text part extends the open text block (or opens
one), a part with `thought=True` does the same for thinking, and a `function_call` part is a
complete call whose arguments go out in a single `toolcall_delta` (`{}` when absent). Thought
signatures (bytes in the SDK) are kept as URL-safe base64, the encoding the SDK puts on the wire.

Not mapped: `session_id`, `cache_retention` and `metadata` (the Gemini API caches prompts
implicitly and has no request labels); `transport` (SSE only).
"""

from __future__ import annotations

import base64
import json
import re
import ssl
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import httpx
import pydantic

from ...messages import Usage
from .._adapter import (
    apply_on_payload,
    as_int,
    connection_text,
    exception_text,
    merged_headers,
    priced_usage,
    report_response,
)
from .._driver import AnswerFailed, Wire, open_driven
from .._env import resolve_api_key
from .._failures import EmptyStream, malformed_json_text, truncated_text
from .._http import check_event_stream, finish_iterator, sse_events, ssl_context
from .._request import Request
from .._retry import RetryInfo, is_retryable_status, parse_retry_after
from .._sdk import import_sdk
from ..builder import MessageBuilder
from ..events import AssistantMessageEvent
from ..interception import intercept_http, made_up_id
from ..model import Model, VertexAI
from ..registry import ApiProvider
from ..stream import AssistantMessageEventStream
from ..types import Context, SimpleStreamOptions, StreamOptions
from ._google_request import (
    SKIP_THOUGHT_SIGNATURE,
    build_contents,
    build_payload,
    sdk_arguments,
    thinking_config,
)
from ._vertex import VertexAccess, fetch_vertex_access, vertex_settings

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
"""The `Model.api` this module serves."""
DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
DEFAULT_API_VERSION = "v1beta"
VERTEX_API_VERSION = "v1"
REQUEST_TIMEOUT_MS = 600_000
"""Longest wait for a connection or between two streamed chunks."""

_VERSION_SUFFIX = re.compile(r"^(?P<base>.*?)/(?P<version>v\d+(?:(?:alpha|beta)\d*)?)/?$")


# --- the connection -----------------------------------------------------------------------------


def _split_base_url(base_url: str, default: str = DEFAULT_API_VERSION) -> tuple[str, str]:
    """`(base, api_version)`: a trailing `/v1beta`-like segment of `base_url` is the version
    (`default` without one)."""
    if not base_url:
        return DEFAULT_BASE_URL, default
    match = _VERSION_SUFFIX.match(base_url)
    if match is None:
        return base_url.rstrip("/"), default
    return match["base"], match["version"]


def _classify(errors: ModuleType, exc: BaseException) -> RetryInfo | None:
    if isinstance(exc, errors.APIError):
        if not is_retryable_status(int(exc.code or 0)):
            return None
        response = getattr(exc, "response", None)
        headers = dict(response.headers.items()) if response is not None else {}
        return RetryInfo(delay=parse_retry_after(headers, json.dumps(exc.details)))
    if isinstance(exc, httpx.TransportError):
        return RetryInfo()
    return None


def _describe(exc: BaseException, errors: ModuleType, streaming: bool) -> str:
    """The error text of a failed request."""
    if isinstance(exc, errors.APIError):
        status = f" {exc.status}" if exc.status else ""
        return f"Gemini API error {exc.code}{status}: {exc.message or json.dumps(exc.details)}"
    if isinstance(exc, errors.UnknownApiResponseError):
        if isinstance(exc.__cause__, json.JSONDecodeError):  # worded as in every adapter
            return malformed_json_text(exc.__cause__)
        return f"malformed stream event from Gemini: {exc}"
    if isinstance(exc, httpx.TransportError):
        timeout = isinstance(exc, httpx.TimeoutException)
        return connection_text(exc, started=streaming, timeout=timeout)
    if isinstance(exc, pydantic.ValidationError):
        what = "response from Gemini" if streaming else "request payload"
        return f"malformed {what}: {exc}"
    return exception_text(exc)


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
            call_id = made_up_id("call_", lambda: uuid.uuid4().hex[:24])
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
            events.append(self.builder.error("error", truncated_text("finish reason")))
        elif reason == "STOP":
            events.append(self.builder.done("tool_use" if self.builder.has_tool_calls else "stop"))
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
    prompt = as_int(metadata.prompt_token_count)
    cached = as_int(metadata.cached_content_token_count)
    output = as_int(metadata.candidates_token_count) + as_int(metadata.thoughts_token_count)
    return priced_usage(model, input=prompt - cached, output=output, cache_read=cached)


async def _request(
    genai: ModuleType,
    model: Model,
    context: Context,
    options: StreamOptions,
    thinking: dict[str, Any] | None,
) -> tuple[str, list[Any], Any]:
    """The arguments of `generate_content_stream`, after `on_payload` had its say."""
    payload = await apply_on_payload(
        build_payload(model, context, options, thinking), options, model
    )
    return sdk_arguments(genai.types, payload)


def _client(
    genai: ModuleType,
    model: Model,
    options: StreamOptions,
    api_key: str,
    http: httpx.AsyncClient,
    tls: ssl.SSLContext,
) -> Any:
    types = genai.types
    base_url, api_version = _split_base_url(model.base_url)
    return genai.Client(
        vertexai=False,  # whatever GOOGLE_GENAI_USE_VERTEXAI says: this is the Gemini API
        api_key=api_key,
        http_options=types.HttpOptions(
            base_url=base_url,
            api_version=api_version,
            headers=merged_headers(model, options),
            timeout=REQUEST_TIMEOUT_MS,
            retry_options=types.HttpRetryOptions(attempts=1),  # no retries: ours do it
            httpx_async_client=http,
            # the TLS context for the clients the SDK builds but never uses here
            client_args={"verify": tls},
            async_client_args={"ssl": tls},
        ),
    )


def _vertex_client(
    genai: ModuleType,
    model: Model,
    options: StreamOptions,
    access: VertexAccess,
    http: httpx.AsyncClient,
    tls: ssl.SSLContext,
) -> Any:
    """A genai client in Vertex mode: requests go to
    `<base>/<version>/projects/<project>/locations/<location>/publishers/google/models/<id>`
    with the access token as a bearer token."""
    types = genai.types
    base_url, api_version = _split_base_url(model.base_url, VERTEX_API_VERSION)
    return genai.Client(
        vertexai=True,
        project=access.project,
        location=access.location,
        credentials=access.credentials,
        http_options=types.HttpOptions(
            # the location's own endpoint unless the model names one
            base_url=base_url if model.base_url else None,
            api_version=api_version,
            headers=merged_headers(model, options),
            timeout=REQUEST_TIMEOUT_MS,
            retry_options=types.HttpRetryOptions(attempts=1),  # no retries: ours do it
            httpx_async_client=http,
            client_args={"verify": tls},
            async_client_args={"ssl": tls},
        ),
    )


class CanonicalEventBody(httpx.AsyncByteStream):
    """An event-stream body re-emitted as plain `data:` events, as `sse_events` reads them.

    For an SDK that parses event streams itself, less leniently (google-genai fails on a comment
    line): it then sees exactly the events the other adapters see. The wrapped body must not be
    content-encoded (ask for `accept-encoding: identity`).
    """

    def __init__(self, raw: httpx.AsyncByteStream) -> None:
        self._raw = raw

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for text in sse_events(self._raw):
            yield "".join(f"data: {line}\n" for line in text.split("\n")).encode() + b"\n"

    async def aclose(self) -> None:
        await self._raw.aclose()


def _on_response(request: Request) -> Callable[[httpx.Response], Awaitable[None]]:
    """An httpx response hook: shows each response to `on_response`, refuses a successful body
    that is not an event stream, and hands the SDK an event stream as the shared parser reads it
    (the SDK's own reader fails on comment lines such as `: keep-alive`)."""

    async def on_response(response: httpx.Response) -> None:
        await report_response(
            request.options, request.model, response.status_code, response.headers
        )
        if not 200 <= response.status_code < 300:
            return
        await check_event_stream(response)
        if response.headers.get("content-encoding", "identity").lower() == "identity":
            response.stream = CanonicalEventBody(response.stream)  # type: ignore[arg-type]

    return on_response


@dataclass(slots=True)
class _Opened:
    """An SDK stream whose first chunk has been read."""

    events: Any
    first: Any

    async def aclose(self) -> None:
        await finish_iterator(self.events)


class _Wire(Wire):
    """The Gemini wire, on the google-genai SDK (the Gemini API or Vertex AI)."""

    def __init__(
        self,
        genai: ModuleType,
        request: Request,
        context: Context,
        api_key: str | None,
        thinking: dict[str, Any] | None,
        vertex: VertexAI | None = None,
    ) -> None:
        super().__init__(request)
        self.genai = genai
        self.errors: ModuleType = genai.errors
        self.context = context
        self.api_key = api_key
        self.thinking = thinking
        self.vertex = vertex
        self.translator = _Translator(self.builder, request.model)
        self.streams: list[Any] = []  # every SDK stream opened, closed at the end
        self.http: httpx.AsyncClient | None = None
        self.client: Any = None
        self.arguments: tuple[str, list[Any], Any] | None = None

    async def prepare(self) -> None:
        genai, request = self.genai, self.request
        model, options = request.model, request.options
        self.arguments = await _request(genai, model, self.context, options, self.thinking)
        tls = await ssl_context()
        self.http = httpx.AsyncClient(
            verify=tls,
            # the shared parser reads the body as it arrives, so it must not be compressed
            headers={"accept-encoding": "identity"},
            event_hooks={"response": [_on_response(request)]},
        )
        intercept_http(self.http)
        if self.vertex is not None:
            access = await fetch_vertex_access(self.vertex, request, claude=False)
            self.client = _vertex_client(genai, model, options, access, self.http, tls)
        else:
            self.client = _client(genai, model, options, self.api_key or "", self.http, tls)

    async def send(self) -> _Opened:
        assert self.arguments is not None
        model_id, contents, config = self.arguments
        # the SDK sends the request when its stream is first read
        sdk_stream = await self.client.aio.models.generate_content_stream(
            model=model_id, contents=contents, config=config
        )
        self.streams.append(sdk_stream)
        first = await anext(sdk_stream, None)
        if first is None:
            raise EmptyStream()
        return _Opened(sdk_stream, first)

    def classify(self, exc: BaseException) -> RetryInfo | None:
        return _classify(self.errors, exc)

    def describe(self, exc: BaseException, *, started: bool) -> str:
        return _describe(exc, self.errors, streaming=started)

    def feed(self, item: Any) -> list[AssistantMessageEvent]:
        try:
            return self.translator.feed(item)
        except Exception as exc:  # a chunk the translation does not expect
            raise AnswerFailed(f"unexpected Gemini response: {exc!r}") from exc

    def finish(self) -> list[AssistantMessageEvent]:
        return self.translator.finish()

    async def release(self) -> None:
        if self.client is not None:
            self.client.close()  # the sync httpx client the SDK made for itself
        for sdk_stream in self.streams:  # the SDK's generators, unwound, not left suspended
            await finish_iterator(sdk_stream)
        if self.http is not None:
            await self.http.aclose()


# --- entry points -------------------------------------------------------------------------------


def _start(
    model: Model, context: Context, options: StreamOptions, thinking: dict[str, Any] | None
) -> AssistantMessageEventStream:
    genai = import_sdk("google.genai", "google")
    vertex = vertex_settings(model)
    if vertex is not None:  # the token is fetched once the request is under way
        request = Request(model, options, options.api_key)
        wire = _Wire(genai, request, context, None, thinking, vertex)
        return open_driven(wire, always_redact=True)
    api_key = resolve_api_key(model, options)
    request = Request(model, options, api_key)
    return open_driven(_Wire(genai, request, context, api_key, thinking))


def stream(
    model: Model, context: Context, options: StreamOptions | None = None
) -> AssistantMessageEventStream:
    """Stream a Gemini answer. Thinking is left at the model's default.

    Raises (before anything is sent):
        MissingApiKeyError: no `api_key` and no GEMINI_API_KEY/GOOGLE_API_KEY (on Vertex AI,
            the credentials are read once the request is under way: a failure is an error
            terminal).
        MissingExtraError: `google-genai` is not installed (`pip install 'agentcore-loop[google]'`).
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
"""The Google Gemini adapter, as `get_api_provider` returns it."""
