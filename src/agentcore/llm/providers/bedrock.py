"""The Amazon Bedrock Converse adapter (`api="bedrock-converse-stream"`), through boto3.

The parameters are built by `_bedrock_request` and sent with the SDK's `converse_stream`, whose
answer is the binary AWS event stream, decoded by the SDK into one dict per event
(`messageStart`, `contentBlockStart/Delta/Stop`, `messageStop`, `metadata`, or an exception).

boto3 blocks, so every call into it runs in a worker thread (`anyio.to_thread`), and never on the
event loop: building the client (which reads the credential chain and the shared config files),
sending the request, and reading each event. A read that is cut off (abort, `idle_timeout`,
`request_timeout`) leaves its thread behind: the connection's socket is shut down so that the
thread ends at once, and a response that arrives for an attempt nobody waits for any more is
closed by the thread that got it.

The SDK's retries are off (`total_max_attempts=1`); `retry_request` retries throttling, 5xx,
`ServiceUnavailableException`, dropped connections and a retryable exception as the first event,
on the shared rules. Error texts carry the status, the AWS error code, its message and the
request id; they are redacted of the credentials (access key id, secret key, session token) the
chain resolved, whichever way they were found.

Not mapped: `session_id`, `transport`, `api_key` (Bedrock's credentials are AWS's: see
`BedrockOptions`; a Bedrock API key is read by the SDK itself from `AWS_BEARER_TOKEN_BEDROCK`).
"""

from __future__ import annotations

import base64
import contextlib
import os
import socket
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from types import ModuleType
from typing import Any, Literal, TypeVar

import anyio
import anyio.to_thread

from ..._clip import clip
from .._adapter import (
    ABORTED,
    apply_on_payload,
    as_int,
    connection_text,
    exception_text,
    fallback_message,
    is_aborted,
    merged_headers,
    priced_usage,
    report_response,
    stream_option_fields,
)
from .._failures import PREVIEW_CHARS, EmptyStream, MalformedEvent, NotEventStream, truncated_text
from .._redact import secret_values
from .._request import Request, next_item, send_with_retries
from .._retry import RequestAborted, RetryInfo, is_retryable_status, parse_retry_after
from .._sdk import import_sdk
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

T = TypeVar("T")

EVENT_STREAM_TYPE = "application/vnd.amazon.eventstream"
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
_RETRYABLE_CODES = frozenset(
    {
        "ThrottlingException",
        "ServiceUnavailableException",
        "InternalServerException",
        "ModelNotReadyException",
        "throttlingException",
        "serviceUnavailableException",
        "internalServerException",
        "modelStreamErrorException",
    }
)
_TRUNCATED = truncated_text("messageStop event")
_DEFAULT_READ_TIMEOUT = 600.0  # seconds; a backstop only, our own timers act first
_END: Any = object()

# --- the SDK ----------------------------------------------------------------------------------


class _Sdk:
    """boto3 and the botocore modules the adapter uses, imported on first use."""

    def __init__(self) -> None:
        self.boto3 = import_sdk("boto3", "bedrock")
        self.config = import_sdk("botocore.config", "bedrock")
        self.exceptions: ModuleType = import_sdk("botocore.exceptions", "bedrock")
        self.eventstream: ModuleType = import_sdk("botocore.eventstream", "bedrock")


_SESSION_ENV = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_DEFAULT_REGION",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_EC2_METADATA_DISABLED",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
)
"""The environment a boto3 session reads its credentials and settings from."""
_MAX_SESSIONS = 8
_sessions: dict[tuple[Any, ...], Any] = {}
# boto3 sessions are not thread-safe: clients are made from them under this lock
_sessions_lock = threading.Lock()


def _session(sdk: _Sdk, options: BedrockOptions) -> Any:
    """The boto3 session for these options and the current environment (call with
    `_sessions_lock` held). Sessions are kept: a new one loads the service's models again, a
    quarter of a second of work, where a client from a kept one takes a hundredth."""
    key = (
        options.profile,
        options.aws_access_key_id,
        options.aws_secret_access_key,
        options.aws_session_token,
        tuple(os.environ.get(name) for name in _SESSION_ENV),
    )
    session = _sessions.get(key)
    if session is None:
        if len(_sessions) >= _MAX_SESSIONS:
            _sessions.pop(next(iter(_sessions)))
        session = sdk.boto3.Session(
            profile_name=options.profile,
            aws_access_key_id=options.aws_access_key_id,
            aws_secret_access_key=options.aws_secret_access_key,
            aws_session_token=options.aws_session_token,
        )
        _sessions[key] = session
    return session


def _region(options: BedrockOptions, session: Any) -> str | None:
    return (
        options.region
        or os.environ.get("AWS_REGION")
        or os.environ.get("AWS_DEFAULT_REGION")
        or session.region_name
    )


class _NoRegion(Exception):
    def __init__(self) -> None:
        super().__init__(
            "no AWS region for Bedrock: set AWS_REGION (or AWS_DEFAULT_REGION), a region in "
            "the AWS profile, or BedrockOptions(region=...)"
        )


def _client(
    sdk: _Sdk, model: Model, options: BedrockOptions, headers: Mapping[str, str]
) -> tuple[Any, tuple[str, ...]]:
    """A `bedrock-runtime` client for one request, and the values of the credentials the chain
    found for it (blocking: run in a worker thread)."""
    with _sessions_lock:
        return _client_of(_session(sdk, options), sdk, model, options, headers)


def _client_of(
    session: Any, sdk: _Sdk, model: Model, options: BedrockOptions, headers: Mapping[str, str]
) -> tuple[Any, tuple[str, ...]]:
    region = _region(options, session)
    if not region:
        raise _NoRegion()
    bounds = [t for t in (options.request_timeout, options.idle_timeout) if t is not None]
    read_timeout = max(bounds) + 5.0 if bounds else _DEFAULT_READ_TIMEOUT
    config = sdk.config.Config(
        retries={"total_max_attempts": 1, "mode": "standard"},
        read_timeout=read_timeout,
        connect_timeout=min(read_timeout, 60.0),
        user_agent_extra="agentcore",
    )
    client = session.client(
        "bedrock-runtime",
        region_name=region,
        endpoint_url=model.base_url or None,
        config=config,
    )
    if headers:

        def add_headers(request: Any, **_: Any) -> None:
            for name, value in headers.items():
                request.headers[name] = value

        client.meta.events.register("before-sign.bedrock-runtime.ConverseStream", add_headers)
    credentials = session.get_credentials()
    if credentials is None:
        return client, ()
    frozen = credentials.get_frozen_credentials()
    values = (frozen.access_key, frozen.secret_key, frozen.token)
    return client, tuple(v for v in values if isinstance(v, str) and v)


# --- worker threads ---------------------------------------------------------------------------


async def _in_thread(call: Callable[[], T], abandoned: Callable[[T], None]) -> T:
    """`call()` in a worker thread; if the caller is cancelled first, its result, when it
    comes, is handed to `abandoned` (to close it) by whichever side sees it last."""
    lock = threading.Lock()
    state: dict[str, Any] = {"abandoned": False, "done": False}

    def run() -> T:
        result = call()
        with lock:
            late = state["abandoned"]
            state["done"], state["result"] = True, result
        if late:
            abandoned(result)
        return result

    try:
        return await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
    except BaseException:
        with lock:
            state["abandoned"] = True
            done = state["done"]
        if done:
            abandoned(state["result"])
        raise


def _shut_down(raw: Any) -> None:
    """Shut down the socket under a urllib3 response, so that a thread blocked reading it wakes
    up now (closing alone does not wake a blocked read), then close the response."""
    connection = getattr(raw, "_connection", None) or getattr(raw, "connection", None)
    sock = getattr(connection, "sock", None)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(Exception):
        raw.close()


class _Events:
    """The SDK's event iterator, read in worker threads, as an async iterator."""

    def __init__(self, response: Any) -> None:
        self.stream = response["stream"]
        self.raw = getattr(self.stream, "_raw_stream", None)
        self._iterator = iter(self.stream)
        self.closed = False

    def __aiter__(self) -> _Events:
        return self

    def _next(self) -> Any:
        return next(self._iterator, _END)

    async def __anext__(self) -> Any:
        try:
            item = await anyio.to_thread.run_sync(self._next, abandon_on_cancel=True)
        except BaseException:
            self.close()  # the thread is left reading: wake it
            raise
        if item is _END:
            raise StopAsyncIteration
        return item

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            if self.raw is not None:
                _shut_down(self.raw)
            else:
                self.stream.close()


def _close_response(response: Any) -> None:
    stream = response.get("stream") if isinstance(response, Mapping) else None
    if stream is not None:
        _Events(response).close()


# --- errors -----------------------------------------------------------------------------------


def _error_fields(exc: Any) -> tuple[str, str, int | None, str | None, dict[str, str]]:
    response = getattr(exc, "response", None) or {}
    error = response.get("Error") or {}
    meta = response.get("ResponseMetadata") or {}
    code = str(error.get("Code") or "")
    message = str(error.get("Message") or response.get("message") or "").strip()
    status = meta.get("HTTPStatusCode")
    headers = {str(k): str(v) for k, v in (meta.get("HTTPHeaders") or {}).items()}
    return (
        code,
        message,
        status if isinstance(status, int) else None,
        meta.get("RequestId"),
        headers,
    )


def _is_connection_error(sdk: _Sdk, exc: BaseException) -> bool:
    errors = sdk.exceptions
    if isinstance(exc, errors.HTTPClientError | errors.ConnectionError):
        return True
    module = type(exc).__module__
    return module.startswith("urllib3") or isinstance(exc, OSError)


def _is_timeout(sdk: _Sdk, exc: BaseException) -> bool:
    errors = sdk.exceptions
    return isinstance(exc, errors.ReadTimeoutError | errors.ConnectTimeoutError | TimeoutError)


def _failure_text(sdk: _Sdk, exc: BaseException, *, started: bool) -> str:
    errors = sdk.exceptions
    if isinstance(exc, errors.EventStreamError):
        code, message, _, _, _ = _error_fields(exc)
        return f"server error in the stream: {code or 'error'}: {message or '(no message)'}"
    if isinstance(exc, errors.ClientError):
        code, message, status, request_id, _ = _error_fields(exc)
        text = f"{code}: {message}" if code and message else (code or message or "(no body)")
        if status:
            text = f"{status} {text}"
        return clip(f"{text} (request id {request_id})" if request_id else text, 2000)
    if isinstance(exc, errors.NoCredentialsError | errors.PartialCredentialsError):
        return (
            f"no AWS credentials for Bedrock ({exc}): set AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or pass them in BedrockOptions"
        )
    if isinstance(exc, errors.ParamValidationError):
        return f"the AWS SDK refused the request parameters: {exc}"
    if isinstance(exc, sdk.eventstream.ParserError):
        return f"malformed event-stream frame from the server ({type(exc).__name__}: {exc})"
    if _is_connection_error(sdk, exc):
        cause = getattr(exc, "kwargs", {}).get("error") if hasattr(exc, "kwargs") else None
        connect = isinstance(exc, errors.EndpointConnectionError | errors.ConnectTimeoutError)
        detail = cause if isinstance(cause, BaseException) else exc
        if connect and not started:
            return connection_text(
                detail if type(detail).__name__.startswith("Connect") else None,
                started=False,
                timeout=_is_timeout(sdk, exc),
            ) + ("" if type(detail).__name__.startswith("Connect") else f" ({exc})")
        return connection_text(exc, started=started, timeout=_is_timeout(sdk, exc))
    return exception_text(exc)


def _classify(sdk: _Sdk, exc: BaseException) -> RetryInfo | None:
    errors = sdk.exceptions
    if isinstance(exc, errors.EventStreamError):  # an exception as the stream's first event
        code, *_ = _error_fields(exc)
        return RetryInfo() if code in _RETRYABLE_CODES else None
    if isinstance(exc, errors.ClientError):
        code, message, status, _, headers = _error_fields(exc)
        if code in _RETRYABLE_CODES or (status is not None and is_retryable_status(status)):
            return RetryInfo(delay=parse_retry_after(headers, message))
        return None
    if _is_connection_error(sdk, exc):
        return RetryInfo()
    return None


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

    def __init__(self, events: _Events, first: Any) -> None:
        self.events = events
        self.first = first


async def _read_preview(events: _Events) -> str:
    raw = events.raw

    def read() -> bytes:
        try:
            return bytes(raw.read(4 * PREVIEW_CHARS)) if raw is not None else b""
        except Exception:
            return b""

    body = await _in_thread(read, lambda _: None)
    return clip(body.decode("utf-8", errors="replace").strip(), PREVIEW_CHARS)


async def _open(sdk: _Sdk, client: Any, payload: Any, request: Request) -> _Opened:
    """One attempt: send the request and read its first event, so that whatever fails before any
    output (an error status, a dropped connection, an exception as the first event) can be
    retried."""
    options, model = request.options, request.model
    try:
        response = await _in_thread(lambda: client.converse_stream(**payload), _close_response)
    except sdk.exceptions.ClientError as exc:
        _, _, status, _, headers = _error_fields(exc)
        if status is not None:
            await report_response(options, model, status, headers)
        raise
    events = _Events(response)
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


async def _events(
    sdk: _Sdk, request: Request, context: Context, headers: Mapping[str, str]
) -> AsyncIterator[AssistantMessageEvent]:
    model, options = request.model, request.options
    extra = options if isinstance(options, BedrockOptions) else BedrockOptions()
    builder = MessageBuilder(model)
    translator = _Translator(model, builder)
    signal = options.signal
    if is_aborted(signal):  # nothing is called for a request aborted before it began
        yield builder.error("aborted", ABORTED)
        return
    client: Any = None
    opened: _Opened | None = None
    started = False
    try:
        payload = await apply_on_payload(build_payload(model, context, options), options, model)

        client, found = await _in_thread(
            lambda: _client(sdk, model, extra, headers), lambda made: made[0].close()
        )
        request.secrets = tuple(
            sorted(
                {*request.secrets, *secret_values(None, *({"key": v} for v in found))},
                key=lambda v: (-len(v), v),
            )
        )
        opened = await send_with_retries(
            lambda: _open(sdk, client, payload, request),
            request,
            lambda exc: _classify(sdk, exc),
            lambda exc: _failure_text(sdk, exc, started=False),
        )
        if is_aborted(signal):
            yield builder.error("aborted", ABORTED)
            return
        event: Any = opened.first
        yield builder.start()
        started = True
        while True:
            for out in translator.feed(event):
                yield out
            event = await next_item(opened.events, request)
            if event is None:
                break
        if translator.stop_reason is None:
            yield builder.error("error", _TRUNCATED)
            return
    except RequestAborted:
        yield builder.error("aborted", ABORTED)
        return
    except _NoRegion as exc:
        yield builder.error("error", str(exc))
        return
    except Exception as exc:
        if is_aborted(signal):
            yield builder.error("aborted", ABORTED)
        else:
            yield builder.error("error", _failure_text(sdk, exc, started=started))
        return
    finally:
        if opened is not None:
            opened.events.close()
        if client is not None:
            client.close()  # closes the connection pool: no I/O worth a thread

    for out in builder.close_open_blocks():
        yield out
    reason = translator.stop_reason
    mapped = _STOP_REASONS.get(reason or "end_turn")
    if mapped is not None:
        yield builder.done(mapped)
    else:
        failed = _FAILED_STOPS.get(reason or "")
        yield builder.error(
            "error", failed or f"the model stopped with an unknown stopReason {reason!r}"
        )


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
        MissingExtraError: boto3 is not installed (`pip install 'agentcore[bedrock]'`).
    """
    options = options or BedrockOptions()
    sdk = _Sdk()
    extra = options if isinstance(options, BedrockOptions) else BedrockOptions()
    headers = merged_headers(model, options)
    request = Request(model, options, None)
    request.secrets = secret_values(None, headers, *({"key": v} for v in _known_secrets(extra)))
    return AssistantMessageEventStream(
        _events(sdk, request, context, headers),
        fallback=fallback_message(model),
        redact=request.redact,  # always: the chain's credentials are known only later
    )


def stream_simple(
    model: Model, context: Context, options: SimpleStreamOptions | None = None
) -> AssistantMessageEventStream:
    """`stream` with `options.reasoning` mapped to Claude's thinking settings."""
    options = options or SimpleStreamOptions()
    fields = {**stream_option_fields(options), **thinking_fields(model, options)}
    return stream(model, context, BedrockOptions(**fields))


PROVIDER = ApiProvider(api=API, stream=stream, stream_simple=stream_simple)
