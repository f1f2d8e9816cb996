"""The Amazon Bedrock Converse adapter (`api="bedrock-converse-stream"`), through boto3.

The parameters are built by `_bedrock_request` and sent with the SDK's `converse_stream`, whose
answer is the binary AWS event stream, decoded by the SDK into one dict per event
(`messageStart`, `contentBlockStart/Delta/Stop`, `messageStop`, `metadata`, or an exception).

Everything that touches the SDK (sessions kept between requests, clients, worker threads, the
words of its errors and which ones to retry) is in `_bedrock_sdk`: boto3 blocks, and no call
into it ever runs on the event loop. Error texts are redacted of the credentials (access key
id, secret key, session token) the chain resolved, whichever way they were found, and of those
in the options and the environment.

Each `contentBlockDelta` opens its block on first sight (text and reasoning have no start
event); `toolUse` input fragments are parsed strictly at the block's end; reasoning signatures
that arrive in pieces are joined; redacted reasoning is kept as base64 of its bytes. The answer
ends with the body: a stream without a `messageStop` is truncated.

Not mapped: `session_id`, `transport`, `api_key` (Bedrock's credentials are AWS's: see
`BedrockOptions`; a Bedrock API key is read by the SDK itself from `AWS_BEARER_TOKEN_BEDROCK`).
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping
from typing import Any, Literal

from ...errors import clip
from .._adapter import (
    apply_on_payload,
    as_int,
    merged_headers,
    priced_usage,
    report_response,
    stream_option_fields,
)
from .._driver import AnswerFailed, Wire, open_driven
from .._failures import PREVIEW_CHARS, EmptyStream, MalformedEvent, NotEventStream, truncated_text
from .._redact import secret_values
from .._request import Request
from .._retry import RetryInfo
from ..builder import MessageBuilder
from ..events import (
    AssistantMessageEvent,
    TextStartEvent,
    ThinkingStartEvent,
    ToolCallStartEvent,
)
from ..model import Model
from ..registry import ApiProvider
from ..stream import AssistantMessageEventStream
from ..types import Context, SimpleStreamOptions, StreamOptions
from ._bedrock_request import (
    BedrockCompat,
    BedrockOptions,
    build_payload,
    convert_messages,
    normalize_tool_call_id,
    thinking_fields,
)
from ._bedrock_sdk import (
    EVENT_STREAM_TYPE,
    NoRegion,
    Sdk,
    SdkEvents,
    classify,
    close_response,
    error_fields,
    failure_text,
    in_thread,
    make_client,
)

__all__ = [
    "API",
    "PROVIDER",
    "BedrockCompat",
    "BedrockOptions",
    "build_payload",
    "convert_messages",
    "normalize_tool_call_id",
    "stream",
    "stream_simple",
]

API = "bedrock-converse-stream"
"""The `Model.api` this module serves."""

_STOP_REASONS: dict[str, Literal["stop", "length", "tool_use"]] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_use",
}
_FAILED_STOPS = {
    "guardrail_intervened": "a guardrail blocked the answer (stopReason=guardrail_intervened)",
    "content_filtered": "the answer was filtered (stopReason=content_filtered)",
    "malformed_model_output": (
        "the model's output was malformed (stopReason=malformed_model_output)"
    ),
    "malformed_tool_use": "the model's tool call was malformed (stopReason=malformed_tool_use)",
}

_TRUNCATED = truncated_text("messageStop event")
# --- streaming --------------------------------------------------------------------------------


class _Translator:
    """Turns Converse stream events into builder calls, remembering which API block is which."""

    def __init__(self, model: Model, builder: MessageBuilder) -> None:
        self.model = model
        self.builder = builder
        self.blocks: dict[int, int] = {}  # contentBlockIndex -> our content index
        self.signatures: dict[int, str] = {}
        self.redacted: dict[int, bytes] = {}
        self.stop_reason: str | None = None

    def _malformed(self, kind: str, what: str, value: Any) -> MalformedEvent:
        return MalformedEvent(
            f"malformed {kind} event from the server (no {what}): {clip(repr(value), 200)}"
        )

    def _open(self, api_index: int, kind: str, **fields: Any) -> list[AssistantMessageEvent]:
        b = self.builder
        index = self.blocks.get(api_index)
        if index is not None and b.is_open(index) and b.kind(index) == kind:
            return []
        out: list[AssistantMessageEvent] = []
        if index is not None and b.is_open(index):
            out += self._close(api_index)
        start: TextStartEvent | ThinkingStartEvent | ToolCallStartEvent
        if kind == "text":
            start = b.text_start()
        elif kind == "thinking":
            start = b.thinking_start(**fields)
        else:
            start = b.toolcall_start(**fields)
        self.blocks[api_index] = start.content_index
        return [*out, start]

    def _close(self, api_index: int) -> list[AssistantMessageEvent]:
        b = self.builder
        index = self.blocks.get(api_index)
        if index is None or not b.is_open(index):
            return []
        kind = b.kind(index)
        if kind == "text":
            return [b.text_end(index)]
        if kind == "thinking":
            return [b.thinking_end(index)]
        return [b.toolcall_end(index)]

    def feed(self, event: Mapping[str, Any]) -> list[AssistantMessageEvent]:
        """The protocol events for one Converse event."""
        if "contentBlockDelta" in event:
            return self._delta(event["contentBlockDelta"])
        if "contentBlockStart" in event:
            value = event["contentBlockStart"]
            api_index = value.get("contentBlockIndex")
            tool = (value.get("start") or {}).get("toolUse")
            if not isinstance(api_index, int):
                raise self._malformed("contentBlockStart", "contentBlockIndex", value)
            if isinstance(tool, Mapping):
                return self._open(
                    api_index,
                    "tool_call",
                    id=str(tool.get("toolUseId") or ""),
                    name=str(tool.get("name") or ""),
                )
            return []
        if "contentBlockStop" in event:
            value = event["contentBlockStop"]
            api_index = value.get("contentBlockIndex")
            if not isinstance(api_index, int):
                raise self._malformed("contentBlockStop", "contentBlockIndex", value)
            return self._close(api_index)
        if "messageStop" in event:
            value = event["messageStop"]
            reason = value.get("stopReason")
            if not isinstance(reason, str):
                raise self._malformed("messageStop", "stopReason", value)
            self.stop_reason = reason
        elif "metadata" in event:
            self._usage(event["metadata"].get("usage"))
        return []  # messageStart, and event kinds added after this adapter was written

    def _delta(self, value: Mapping[str, Any]) -> list[AssistantMessageEvent]:
        b = self.builder
        api_index = value.get("contentBlockIndex")
        delta = value.get("delta")
        if not isinstance(api_index, int) or not isinstance(delta, Mapping) or not delta:
            raise self._malformed("contentBlockDelta", "delta", value)
        if "text" in delta:
            out = self._open(api_index, "text")
            text = delta["text"]
            index = self.blocks[api_index]
            return [*out, b.text_delta(index, text)] if text else out
        if "toolUse" in delta:
            fragment = (delta["toolUse"] or {}).get("input")
            known = self.blocks.get(api_index)
            if known is None or not b.is_open(known) or b.kind(known) != "tool_call":
                out = self._open(api_index, "tool_call", id="", name="")
            else:
                out = []
            index = self.blocks[api_index]
            return [*out, b.toolcall_delta(index, fragment)] if fragment else out
        if "reasoningContent" in delta:
            return self._reasoning(api_index, delta["reasoningContent"] or {})
        return []  # citations and the like are not part of our protocol

    def _reasoning(
        self, api_index: int, reasoning: Mapping[str, Any]
    ) -> list[AssistantMessageEvent]:
        b = self.builder
        if "redactedContent" in reasoning:
            data = reasoning["redactedContent"]
            data = data if isinstance(data, bytes) else str(data).encode()
            out = self._open(api_index, "thinking", redacted=True)
            index = self.blocks[api_index]
            self.redacted[index] = self.redacted.get(index, b"") + data
            b.thinking_signature(index, base64.b64encode(self.redacted[index]).decode("ascii"))
            return out
        out = self._open(api_index, "thinking")
        index = self.blocks[api_index]
        if "signature" in reasoning:
            self.signatures[index] = self.signatures.get(index, "") + str(reasoning["signature"])
            b.thinking_signature(index, self.signatures[index])
        text = reasoning.get("text")
        if isinstance(text, str) and text:
            out.append(b.thinking_delta(index, text))
        return out

    def _usage(self, usage: Any) -> None:
        if not isinstance(usage, Mapping):
            return
        self.builder.set_usage(
            priced_usage(
                self.model,
                input=as_int(usage.get("inputTokens")),
                output=as_int(usage.get("outputTokens")),
                cache_read=as_int(usage.get("cacheReadInputTokens")),
                cache_write=as_int(usage.get("cacheWriteInputTokens")),
            )
        )


class _Opened:
    """A response whose first event has been read."""

    def __init__(self, events: SdkEvents, first: Any) -> None:
        self.events = events
        self.first = first

    async def aclose(self) -> None:
        """Close the response (its reading thread wakes up)."""
        self.events.close()


async def _read_preview(events: SdkEvents) -> str:
    raw = events.raw

    def read() -> bytes:
        try:
            return bytes(raw.read(4 * PREVIEW_CHARS)) if raw is not None else b""
        except Exception:
            return b""

    body = await in_thread(read, lambda _: None)
    return clip(body.decode("utf-8", errors="replace").strip(), PREVIEW_CHARS)


async def _open(sdk: Sdk, client: Any, payload: Any, request: Request) -> _Opened:
    """One attempt: send the request and read its first event, so that whatever fails before any
    output (an error status, a dropped connection, an exception as the first event) can be
    retried."""
    options, model = request.options, request.model
    try:
        response = await in_thread(lambda: client.converse_stream(**payload), close_response)
    except sdk.exceptions.ClientError as exc:
        _, _, status, _, headers = error_fields(exc)
        if status is not None:
            await report_response(options, model, status, headers)
        raise
    events = SdkEvents(response)
    try:
        meta = response.get("ResponseMetadata") or {}
        headers = {str(k): str(v) for k, v in (meta.get("HTTPHeaders") or {}).items()}
        await report_response(options, model, int(meta.get("HTTPStatusCode") or 200), headers)
        content_type = {k.lower(): v for k, v in headers.items()}.get("content-type")
        if content_type is not None and content_type.split(";")[0].strip() != EVENT_STREAM_TYPE:
            raise NotEventStream(content_type, await _read_preview(events))
        first = await events.__anext__()
    except StopAsyncIteration:
        events.close()
        raise EmptyStream() from None
    except BaseException:
        events.close()
        raise
    return _Opened(events, first)


class _Wire(Wire):
    """The Converse wire, on boto3 (every call into it in a worker thread)."""

    def __init__(
        self, sdk: Sdk, request: Request, context: Context, headers: Mapping[str, str]
    ) -> None:
        super().__init__(request)
        self.sdk = sdk
        self.context = context
        self.headers = headers
        self.translator = _Translator(request.model, self.builder)
        self.client: Any = None
        self.payload: Any = None

    async def prepare(self) -> None:
        request, sdk = self.request, self.sdk
        model, options = request.model, request.options
        extra = options if isinstance(options, BedrockOptions) else BedrockOptions()
        self.payload = await apply_on_payload(
            build_payload(model, self.context, options), options, model
        )
        self.client, found = await in_thread(
            lambda: make_client(sdk, model, extra, self.headers), lambda made: made[0].close()
        )
        # the chain's credentials join the secrets ("key" marks each value as one)
        request.secrets = tuple(
            sorted(
                {*request.secrets, *secret_values(None, *({"key": v} for v in found))},
                key=lambda v: (-len(v), v),
            )
        )

    async def send(self) -> _Opened:
        return await _open(self.sdk, self.client, self.payload, self.request)

    def classify(self, exc: BaseException) -> RetryInfo | None:
        return classify(self.sdk, exc)

    def describe(self, exc: BaseException, *, started: bool) -> str:
        if isinstance(exc, NoRegion):
            return str(exc)
        return failure_text(self.sdk, exc, started=started)

    def feed(self, item: Any) -> list[AssistantMessageEvent]:
        return self.translator.feed(item)

    def finish(self) -> list[AssistantMessageEvent]:
        builder = self.builder
        reason = self.translator.stop_reason
        if reason is None:
            raise AnswerFailed(_TRUNCATED)
        events = builder.close_open_blocks()
        mapped = _STOP_REASONS.get(reason)
        if mapped is None:
            failed = _FAILED_STOPS.get(reason)
            raise AnswerFailed(failed or f"the model stopped with an unknown stopReason {reason!r}")
        events.append(builder.done(mapped))
        return events

    async def release(self) -> None:
        if self.client is not None:
            self.client.close()  # closes the connection pool: no I/O worth a thread


# --- entry points -----------------------------------------------------------------------------


def _known_secrets(options: BedrockOptions) -> tuple[str, ...]:
    """The credentials known before the chain runs: those given, and the environment's."""
    given = [options.aws_access_key_id, options.aws_secret_access_key, options.aws_session_token]
    names = (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK",
    )
    given += [os.environ.get(name) for name in names]
    return tuple(v for v in given if v)


def stream(
    model: Model, context: Context, options: StreamOptions | None = None
) -> AssistantMessageEventStream:
    """Stream one Converse request (pass `BedrockOptions` for region, credentials, thinking).

    Raises (before anything is sent):
        MissingExtraError: boto3 is not installed (`pip install 'agentcore-loop[bedrock]'`).
    """
    options = options or BedrockOptions()
    sdk = Sdk()
    extra = options if isinstance(options, BedrockOptions) else BedrockOptions()
    headers = merged_headers(model, options)
    request = Request(model, options, None)
    request.secrets = secret_values(None, headers, *({"key": v} for v in _known_secrets(extra)))
    # always redacted: the chain's credentials are known only once the request is under way
    return open_driven(_Wire(sdk, request, context, headers), always_redact=True)


def stream_simple(
    model: Model, context: Context, options: SimpleStreamOptions | None = None
) -> AssistantMessageEventStream:
    """`stream` with `options.reasoning` mapped to Claude's thinking settings."""
    options = options or SimpleStreamOptions()
    fields = {**stream_option_fields(options), **thinking_fields(model, options)}
    return stream(model, context, BedrockOptions(**fields))


PROVIDER = ApiProvider(api=API, stream=stream, stream_simple=stream_simple)
"""The Amazon Bedrock Converse adapter, as `get_api_provider` returns it."""
