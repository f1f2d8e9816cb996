"""The SDK side of the Bedrock adapter: boto3 sessions and clients, worker threads, errors.

boto3 blocks, so every call into it runs in a worker thread (`anyio.to_thread`), never on the
event loop: building the client (which reads the credential chain and the shared config files),
sending the request, and reading each event. A read that is cut off (abort, `idle_timeout`,
`request_timeout`) leaves its thread behind: the connection's socket is shut down so that the
thread ends at once, and a response that arrives for an attempt nobody waits for any more is
closed by the thread that got it.

The SDK's retries are off (`total_max_attempts=1`); `classify` tells the shared retry rules which
failures to retry: throttling, 5xx, `ServiceUnavailableException`, dropped connections, and a
retryable exception as the first event. `failure_text` words every failure: the status, the AWS
error code, its message and the request id.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from ...errors import clip
from .._adapter import connection_text, exception_text
from .._retry import RetryInfo, is_retryable_status, parse_retry_after
from .._sdk import import_sdk
from ..interception import intercept_botocore
from ..model import Model
from ._bedrock_request import BedrockOptions

__all__ = [
    "EVENT_STREAM_TYPE",
    "NoRegion",
    "Sdk",
    "SdkEvents",
    "classify",
    "close_response",
    "error_fields",
    "failure_text",
    "in_thread",
    "make_client",
]

T = TypeVar("T")

EVENT_STREAM_TYPE = "application/vnd.amazon.eventstream"
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
_DEFAULT_READ_TIMEOUT = 600.0  # seconds of silence the SDK allows when idle_timeout is None
_END: Any = object()

# --- the SDK ----------------------------------------------------------------------------------


class Sdk:
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


def _session(sdk: Sdk, options: BedrockOptions) -> Any:
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


class NoRegion(Exception):
    """No region was given or found: the request cannot be signed (never retried)."""

    def __init__(self) -> None:
        super().__init__(
            "no AWS region for Bedrock: set AWS_REGION (or AWS_DEFAULT_REGION), a region in "
            "the AWS profile, or BedrockOptions(region=...)"
        )


def make_client(
    sdk: Sdk, model: Model, options: BedrockOptions, headers: Mapping[str, str]
) -> tuple[Any, tuple[str, ...]]:
    """A `bedrock-runtime` client for one request, and the values of the credentials the chain
    found for it (blocking: run in a worker thread)."""
    with _sessions_lock:
        return _client_of(_session(sdk, options), sdk, model, options, headers)


def _client_of(
    session: Any, sdk: Sdk, model: Model, options: BedrockOptions, headers: Mapping[str, str]
) -> tuple[Any, tuple[str, ...]]:
    region = _region(options, session)
    if not region:
        raise NoRegion()
    # the SDK's read timeout bounds every socket read, the wait for the response included: a
    # backstop behind our own timers, never shorter than a silence the options allow
    idle = options.idle_timeout if options.idle_timeout is not None else _DEFAULT_READ_TIMEOUT
    read_timeout = max(idle, options.request_timeout or 0.0) + 5.0
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
    intercept_botocore(client)
    credentials = session.get_credentials()
    if credentials is None:
        return client, ()
    frozen = credentials.get_frozen_credentials()
    values = (frozen.access_key, frozen.secret_key, frozen.token)
    return client, tuple(v for v in values if isinstance(v, str) and v)


# --- worker threads ---------------------------------------------------------------------------


async def in_thread(call: Callable[[], T], abandoned: Callable[[T], None]) -> T:
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


class SdkEvents:
    """The SDK's event iterator, read in worker threads, as an async iterator."""

    def __init__(self, response: Any) -> None:
        self.stream = response["stream"]
        self.raw = getattr(self.stream, "_raw_stream", None)
        self._iterator = iter(self.stream)
        self.closed = False

    def __aiter__(self) -> SdkEvents:
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


def close_response(response: Any) -> None:
    """Close the body of a `converse_stream` response nobody will read."""
    stream = response.get("stream") if isinstance(response, Mapping) else None
    if stream is not None:
        SdkEvents(response).close()


# --- errors -----------------------------------------------------------------------------------


def error_fields(exc: Any) -> tuple[str, str, int | None, str | None, dict[str, str]]:
    """`(code, message, status, request id, headers)` of a botocore `ClientError`."""
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


def _is_connection_error(sdk: Sdk, exc: BaseException) -> bool:
    errors = sdk.exceptions
    if isinstance(exc, errors.HTTPClientError | errors.ConnectionError):
        return True
    module = type(exc).__module__
    return module.startswith("urllib3") or isinstance(exc, OSError)


def _is_timeout(sdk: Sdk, exc: BaseException) -> bool:
    errors = sdk.exceptions
    return isinstance(exc, errors.ReadTimeoutError | errors.ConnectTimeoutError | TimeoutError)


def failure_text(sdk: Sdk, exc: BaseException, *, started: bool) -> str:
    """The error text of a failure, before the first event or (`started`) during the answer."""
    errors = sdk.exceptions
    if isinstance(exc, errors.EventStreamError):
        code, message, _, _, _ = error_fields(exc)
        return f"server error in the stream: {code or 'error'}: {message or '(no message)'}"
    if isinstance(exc, errors.ClientError):
        code, message, status, request_id, _ = error_fields(exc)
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
        timeout = _is_timeout(sdk, exc)
        if not started and not timeout and isinstance(exc, errors.EndpointConnectionError):
            return f"could not connect ({type(exc).__name__}: {exc})"
        return connection_text(exc, started=started, timeout=timeout)
    return exception_text(exc)


def classify(sdk: Sdk, exc: BaseException) -> RetryInfo | None:
    """How to retry a failure the shared rules leave open (None: never)."""
    errors = sdk.exceptions
    if isinstance(exc, errors.EventStreamError):  # an exception as the stream's first event
        code, *_ = error_fields(exc)
        return RetryInfo() if code in _RETRYABLE_CODES else None
    if isinstance(exc, errors.ClientError):
        code, message, status, _, headers = error_fields(exc)
        if code in _RETRYABLE_CODES or (status is not None and is_retryable_status(status)):
            return RetryInfo(delay=parse_retry_after(headers, message))
        return None
    if _is_connection_error(sdk, exc):
        return RetryInfo()
    return None
