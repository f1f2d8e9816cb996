"""The Anthropic Messages adapter (`api="anthropic-messages"`), through the official SDK.

The request body is built by `_anthropic_request` (transcript, prompt-cache markers, thinking),
sent with `AsyncAnthropic.post` with the SDK's own retries off (`retry_request` retries instead,
up to the first event), and the server-sent events, read raw by the shared `EventSource` as
plain JSON objects, are fed to a `MessageBuilder`:

* `message_start` / `message_delta` carry the usage (input, cache read/write, output) and the stop
  reason; `content_block_start/delta/stop` open, grow and close text, thinking (with its
  signature), redacted thinking (its data kept as the signature) and tool-use blocks (arguments
  streamed as JSON fragments); `ping` is skipped (a keep-alive: it does not reset `idle_timeout`)
  and an `error` event ends the stream.
* `stream_simple` maps a thinking level to adaptive thinking with an effort (Claude Opus/Sonnet
  4.6 and later) or to a token budget (older thinking models).

`session_id` and `transport` have no Anthropic counterpart and are ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from .._adapter import (
    apply_on_payload,
    get_field,
    priced_usage,
    report_response,
    stream_option_fields,
)
from .._driver import AnswerFailed, Wire, open_driven
from .._env import resolve_api_key
from .._failures import truncated_text
from .._http import ssl_context
from .._partial_json import parse_complete_json
from .._pool import close_unshared
from .._request import OpenedStream, Request, open_event_stream, release
from .._retry import RetryInfo
from .._sdk import (
    api_error_text,
    classify_sdk_error,
    import_sdk,
    sdk_client,
    sdk_failure_text,
)
from ..builder import MessageBuilder
from ..events import AssistantMessageEvent
from ..interception import intercept_http
from ..model import Model, VertexAI
from ..registry import ApiProvider
from ..stream import AssistantMessageEventStream
from ..types import Context, SimpleStreamOptions, StreamOptions
from ._anthropic_hosted import container_block, encode_block, hosted_codes, keeps, tool_caller
from ._anthropic_request import (
    AnthropicOptions,
    build_payload,
    convert_messages,
    request_headers,
    supports_adaptive_thinking,
    thinking_options,
)
from ._vertex import VertexAccess, fetch_vertex_access, vertex_settings

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
"""The `Model.api` this module serves."""

_STOP_REASONS: dict[str, Literal["stop", "length", "tool_use"]] = {
    "end_turn": "stop",
    "pause_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_use",
}
_RETRYABLE_EVENT_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error"})
_TRUNCATED = truncated_text("message_stop event")
# --- errors -----------------------------------------------------------------------------------


class _ErrorEvent(Exception):
    """An `error` event in the stream (retried when it comes first and says the server is busy)."""

    def __init__(self, event: Mapping[str, Any]) -> None:
        error = event.get("error")
        self.kind = error.get("type") if isinstance(error, Mapping) else None
        super().__init__(api_error_text(error) or "the server reported an error in the stream")


def _is_ping(event: Any) -> bool:
    """A `ping` event: a keep-alive, which neither starts the answer nor resets `idle_timeout`."""
    return (type(event) is dict or isinstance(event, Mapping)) and event.get("type") == "ping"


def _failure_text(sdk: Any, exc: BaseException, *, started: bool) -> str:
    if isinstance(exc, _ErrorEvent):
        return str(exc)
    return sdk_failure_text(sdk, exc, started=started)


def _classify(sdk: Any, exc: BaseException) -> RetryInfo | None:
    if isinstance(exc, _ErrorEvent):  # an `error` event as the stream's first event
        return RetryInfo() if exc.kind in _RETRYABLE_EVENT_ERRORS else None
    return classify_sdk_error(sdk, exc)


# --- streaming --------------------------------------------------------------------------------


class _Translator:
    """Turns Anthropic stream events into builder calls, remembering which API block is which."""

    def __init__(
        self, model: Model, builder: MessageBuilder, codes: dict[str, str] | None = None
    ) -> None:
        self.model = model
        self.builder = builder
        self.codes = codes if codes is not None else {}  # hosted code runs' code, by id
        self.kept: dict[int, tuple[dict[str, Any], list[str]]] = {}  # code-execution blocks
        self.container: str | None = None
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
            value = get_field(usage, theirs)
            if isinstance(value, int):
                self.counts[ours] = value
        counts = self.counts
        self.builder.set_usage(
            priced_usage(
                self.model,
                input=counts.get("input", 0),
                output=counts.get("output", 0),
                cache_read=counts.get("cache_read", 0),
                cache_write=counts.get("cache_write", 0),
            )
        )

    def feed(self, event: Any) -> list[AssistantMessageEvent]:
        """The protocol events for one Anthropic event."""
        kind = get_field(event, "type")
        b = self.builder
        if kind == "content_block_delta":  # the commonest event first
            index = self.blocks.get(get_field(event, "index"))
            if index is None or not b.is_open(index):
                return []
            return self._delta(index, get_field(event, "delta"))
        if kind == "message_start":
            message = get_field(event, "message")
            self._usage(get_field(message, "usage"))
            self._container(get_field(message, "container"))
        elif kind == "message_delta":
            delta = get_field(event, "delta")
            self.stop_reason = get_field(delta, "stop_reason") or self.stop_reason
            self._usage(get_field(event, "usage"))
            self._container(get_field(delta, "container"))
        elif kind == "message_stop":
            self.finished = True
        elif kind == "content_block_start":
            return self._start(get_field(event, "index"), get_field(event, "content_block"))
        elif kind == "content_block_stop":
            index = self.blocks.get(get_field(event, "index"))
            if index is None or not b.is_open(index):
                return []
            if index in self.kept:
                return [self._kept_end(index)]
            if b.kind(index) == "text":
                return [b.text_end(index)]
            if b.kind(index) == "thinking":
                return [b.thinking_end(index)]
            given = self.inputs.get(index)
            whole = None if index in self.streamed or not isinstance(given, dict) else given
            return [b.toolcall_end(index, arguments=whole)]
        return []  # ping, and event types added after this adapter was written

    def _container(self, container: Any) -> None:
        """The container the code runs in (hosted code execution), reported by the message."""
        found = get_field(container, "id") if container is not None else None
        if isinstance(found, str) and found:
            self.container = found

    def _kept_end(self, index: int) -> AssistantMessageEvent:
        """Close a kept code-execution block: its JSON, whole, as the text block's signature."""
        block, fragments = self.kept.pop(index)
        if fragments:
            block["input"] = parse_complete_json("".join(fragments)) or {}
        if block.get("type") == "server_tool_use":
            given = block.get("input")
            code = given.get("code") if isinstance(given, dict) else None
            if isinstance(code, str) and isinstance(block.get("id"), str):
                self.codes[block["id"]] = code
        return self.builder.text_end(index, signature=encode_block(block))

    def container_events(self) -> list[AssistantMessageEvent]:
        """The answer's container id, kept as an empty text block at its end (see
        `_anthropic_hosted`)."""
        if self.container is None:
            return []
        b = self.builder
        start = b.text_start()
        return [start, b.text_end(start.content_index, signature=container_block(self.container))]

    def _start(self, api_index: Any, block: Any) -> list[AssistantMessageEvent]:
        b = self.builder
        kind = get_field(block, "type")
        events: list[AssistantMessageEvent] = []
        if kind == "text":
            index = (start := b.text_start()).content_index
            events.append(start)
            if text := get_field(block, "text"):
                events.append(b.text_delta(index, text))
        elif kind == "thinking":
            index = (
                thinking := b.thinking_start(signature=get_field(block, "signature") or None)
            ).content_index
            events.append(thinking)
            if text := get_field(block, "thinking"):
                events.append(b.thinking_delta(index, text))
        elif kind == "redacted_thinking":
            redacted = b.thinking_start(signature=get_field(block, "data") or "", redacted=True)
            index = redacted.content_index
            events.append(redacted)
        elif kind == "tool_use":
            call = b.toolcall_start(
                id=get_field(block, "id") or "",
                name=get_field(block, "name") or "",
                caller=tool_caller(get_field(block, "caller"), self.codes),
            )
            index = call.content_index
            self.inputs[index] = get_field(block, "input")
            events.append(call)
        elif keeps(kind, get_field(block, "name")) and isinstance(block, Mapping):
            # the code execution's own blocks: not ours, but the API needs them again
            index = (start := b.text_start()).content_index
            self.kept[index] = (dict(block), [])
            events.append(start)
        else:
            return []  # other server tools, citations and the like are not part of our protocol
        self.blocks[api_index] = index
        return events

    def _delta(self, index: int, delta: Any) -> list[AssistantMessageEvent]:
        b = self.builder
        kind = get_field(delta, "type")
        if kind == "text_delta" and b.kind(index) == "text":
            text = get_field(delta, "text")
            return [b.text_delta(index, text)] if text else []
        if kind == "thinking_delta" and b.kind(index) == "thinking":
            text = get_field(delta, "thinking")
            return [b.thinking_delta(index, text)] if text else []
        if kind == "signature_delta" and b.kind(index) == "thinking":
            self.signatures[index] = self.signatures.get(index, "") + (
                get_field(delta, "signature") or ""
            )
            b.thinking_signature(index, self.signatures[index])
        elif kind == "input_json_delta" and index in self.kept:
            self.kept[index][1].append(get_field(delta, "partial_json") or "")
        elif kind == "input_json_delta" and b.kind(index) == "tool_call":
            fragment = get_field(delta, "partial_json")
            if fragment:
                self.streamed.add(index)
                return [b.toolcall_delta(index, fragment)]
        return []


async def _vertex_client(
    sdk: Any, model: Model, access: VertexAccess, headers: dict[str, str]
) -> Any:
    """An `AsyncAnthropicVertex` client for one request: messages go to
    `<base>/projects/<project>/locations/<location>/publishers/anthropic/models/<id>:streamRawPredict`
    with the access token as a bearer token; the SDK's retries off, the shared TLS context."""
    http_client = intercept_http(sdk.DefaultAsyncHttpxClient(verify=await ssl_context()))
    return sdk.AsyncAnthropicVertex(
        project_id=access.project,
        region=access.location,
        access_token=access.token,
        base_url=model.base_url or None,  # None: the location's own endpoint
        max_retries=0,
        default_headers=headers,
        http_client=http_client,
    )


class _Wire(Wire):
    """The Messages wire, on the anthropic SDK (or its Vertex AI client)."""

    def __init__(
        self, request: Request, context: Context, sdk: Any, api_key: str, vertex: VertexAI | None
    ) -> None:
        super().__init__(request)
        self.context = context
        self.sdk = sdk
        self.api_key = api_key
        self.vertex = vertex
        self.translator = _Translator(request.model, self.builder, hosted_codes(context.messages))
        self.client: Any = None
        self.shared = False  # whether the client\'s HTTP client is the loop\'s (`shared_http`)
        self.payload: Any = None

    async def prepare(self) -> None:
        model, options, sdk = self.request.model, self.request.options, self.sdk
        self.payload = await apply_on_payload(
            build_payload(model, self.context, options), options, model
        )
        headers = request_headers(model, options, self.payload)
        if self.vertex is not None:
            access = await fetch_vertex_access(self.vertex, self.request, claude=True)
            self.client = await _vertex_client(sdk, model, access, headers)
        else:
            self.client, self.shared = await sdk_client(
                sdk.AsyncAnthropic, sdk, self.api_key, model.base_url, headers
            )

    async def send(self) -> OpenedStream:
        """One attempt: send the request and read its first event, so that whatever fails before
        any output (an error status, a dropped connection, an `error` event first thing) can be
        retried."""
        sdk, request = self.sdk, self.request
        try:
            response = await self.client.post(
                "/v1/messages",
                body=self.payload,
                cast_to=sdk.types.Message,
                stream=True,
                stream_cls=sdk.AsyncStream[object],
            )
        except sdk.APIStatusError as exc:
            await report_response(
                request.options, request.model, exc.status_code, exc.response.headers
            )
            raise
        # the body is read by `EventSource` (as in every adapter), not by the SDK's decoder
        opened = await open_event_stream(response.response, request, skip=_is_ping)
        if isinstance(opened.first, Mapping) and opened.first.get("type") == "error":
            await release(request, (opened.aclose,))
            raise _ErrorEvent(opened.first)
        return opened

    def classify(self, exc: BaseException) -> RetryInfo | None:
        return _classify(self.sdk, exc)

    def describe(self, exc: BaseException, *, started: bool) -> str:
        return _failure_text(self.sdk, exc, started=started)

    def feed(self, item: Any) -> list[AssistantMessageEvent]:
        if (type(item) is dict or isinstance(item, Mapping)) and item.get("type") == "error":
            raise _ErrorEvent(item)
        events = self.translator.feed(item)
        self.finished = self.translator.finished
        return events

    def finish(self) -> list[AssistantMessageEvent]:
        builder = self.builder
        if not self.finished:
            raise AnswerFailed(_TRUNCATED)
        events = builder.close_open_blocks()
        events.extend(self.translator.container_events())
        reason = self.translator.stop_reason
        mapped = _STOP_REASONS.get(reason or "end_turn")
        if mapped is not None:
            events.append(builder.done(mapped))
        elif reason == "refusal":
            raise AnswerFailed("the model refused to answer (stop_reason=refusal)")
        else:
            raise AnswerFailed(f"the model stopped with an unknown stop_reason {reason!r}")
        return events

    async def release(self) -> None:
        await close_unshared(self.client, self.shared)


# --- entry points -----------------------------------------------------------------------------


def stream(
    model: Model, context: Context, options: StreamOptions | None = None
) -> AssistantMessageEventStream:
    """Stream one Messages request (pass `AnthropicOptions` for thinking and effort).

    Raises (before anything is sent):
        MissingExtraError: the `anthropic` package is not installed.
        MissingApiKeyError: no `api_key` and no `ANTHROPIC_API_KEY` (on Vertex AI, the
            credentials are read once the request is under way: a failure is an error terminal).
    """
    options = options or StreamOptions()
    sdk = import_sdk("anthropic", "anthropic")
    vertex = vertex_settings(model)
    if vertex is not None:  # the token is fetched once the request is under way
        request = Request(model, options, options.api_key)
        return open_driven(_Wire(request, context, sdk, "", vertex), always_redact=True)
    api_key = resolve_api_key(model, options)
    request = Request(model, options, api_key)
    return open_driven(_Wire(request, context, sdk, api_key, None))


def stream_simple(
    model: Model, context: Context, options: SimpleStreamOptions | None = None
) -> AssistantMessageEventStream:
    """`stream` with `options.reasoning` mapped to adaptive thinking or a thinking budget."""
    options = options or SimpleStreamOptions()
    fields = {**stream_option_fields(options), **thinking_options(model, options)}
    return stream(model, context, AnthropicOptions(**fields))


PROVIDER = ApiProvider(api=API, stream=stream, stream_simple=stream_simple)
"""The Anthropic Messages adapter, as `get_api_provider` returns it."""
