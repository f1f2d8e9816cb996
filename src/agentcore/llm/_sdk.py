"""The vendor SDKs: lazy imports, and what the `openai` and `anthropic` SDKs have in common.

Both SDKs are generated from one template, so they raise the same exceptions (`APIStatusError`
with `status_code`, `body` and `request_id`; `APIConnectionError`, `APITimeoutError`) and stream
through the same `AsyncStream`. The helpers here serve both: the client, the error text of a
failed request, and which failures to retry.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from ..errors import MissingExtraError
from ._adapter import connection_text, exception_text
from ._http import is_timeout, is_transport_error
from ._pool import shared_http
from ._retry import RetryInfo, is_retryable_status, parse_retry_after

__all__ = [
    "api_error_text",
    "classify_sdk_error",
    "describe_sdk_error",
    "import_sdk",
    "sdk_client",
    "sdk_failure_text",
    "status_error_text",
]

_MAX_BODY_TEXT = 500  # characters of a non-JSON error body quoted in an error message


def import_sdk(module: str, extra: str) -> ModuleType:
    """Import a provider SDK on first use.

    Args:
        module: the import name (`openai`, `anthropic`, `google.genai`).
        extra: the agentcore extra that installs it (`openai`, `anthropic`, `google`).

    Raises:
        MissingExtraError: the SDK is not installed; the message says
            `pip install 'agentcore-loop[extra]'`.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(
            f"the {module!r} package is needed for this model but is not installed: "
            f"pip install 'agentcore-loop[{extra}]'"
        ) from exc


async def sdk_client(
    client_class: Any, sdk: ModuleType, api_key: str, base_url: str, headers: Mapping[str, str]
) -> tuple[Any, bool]:
    """An `AsyncOpenAI` or `AsyncAnthropic` client for one request, and whether its HTTP client
    is shared (`shared_http`: the loop's, whose connections outlive the request; the request
    ends with `close_unshared`). The SDK's own retries are off (`retry_request` does them).

    Args:
        client_class: `sdk.AsyncOpenAI` or `sdk.AsyncAnthropic`.
        sdk: the SDK module (for its HTTP client class, which keeps the SDK's timeouts).
        api_key: the request's key.
        base_url: the endpoint; empty for the SDK's default.
        headers: sent with every request.
    """
    http_client, shared = await shared_http(sdk)
    client = client_class(
        api_key=api_key,
        base_url=base_url or None,
        max_retries=0,
        default_headers=dict(headers),
        http_client=http_client,
    )
    return client, shared


def _brief(text: str) -> str:
    return text if len(text) <= _MAX_BODY_TEXT else text[:_MAX_BODY_TEXT] + "…"


def api_error_text(error: object) -> str | None:
    """`code: message` from an API error object (`type: message` without a string code, the
    message alone without either), or None when it has no message."""
    if not isinstance(error, Mapping):
        return None
    message = error.get("message")
    if not isinstance(message, str) or not message.strip():
        return None
    code = error.get("code")
    kind = code if isinstance(code, str) and code else error.get("type")
    message = message.strip()
    return f"{kind}: {message}" if isinstance(kind, str) and kind else message


def status_error_text(exc: Any) -> str:
    """`<status> <code>: <message> (request id <id>)` from an SDK's `APIStatusError`.

    The body's error object gives the code and message (OpenAI's SDK hands over the object
    itself, Anthropic's the whole `{"type": "error", "error": {...}}`); a body that is not JSON
    (a proxy's error page) is quoted briefly. Status 200 is left out: that is an `error` event in
    the stream, not a failed request.
    """
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    inner = body.get("error") if isinstance(body, Mapping) else None
    text = api_error_text(inner if isinstance(inner, Mapping) else body)
    if text is None:
        if isinstance(body, str) and body.strip():
            text = _brief(body.strip())
        elif body is None or body == "":
            text = "status code (no body)"
        else:
            text = _brief(json.dumps(body, default=str))
    if status and status != 200:
        text = f"{status} {text}"
    request_id = getattr(exc, "request_id", None)
    return f"{text} (request id {request_id})" if request_id else text


def describe_sdk_error(sdk: ModuleType, exc: BaseException, *, started: bool) -> str | None:
    """The error text of an SDK exception (status, timeout, connection, stream error), or None
    for an exception that is not the SDK's."""
    if isinstance(exc, sdk.APIStatusError):
        return status_error_text(exc)
    if isinstance(exc, sdk.APITimeoutError):
        return connection_text(exc.__cause__, started=started, timeout=True)
    if isinstance(exc, sdk.APIConnectionError):
        return connection_text(exc.__cause__, started=started)
    if isinstance(exc, sdk.APIError):  # an error event in the stream
        return f"server error in the stream: {api_error_text(exc.body) or exc.message}"
    return None


def sdk_failure_text(sdk: ModuleType, exc: BaseException, *, started: bool) -> str:
    """The error text of a failure the adapter has no words of its own for: the SDK's exception
    as `describe_sdk_error` words it, a transport error the SDK let through unwrapped (it does not
    wrap failures while the body streams), or anything else with its type name."""
    text = describe_sdk_error(sdk, exc, started=started)
    if text is not None:
        return text
    if is_transport_error(exc):
        return connection_text(exc, started=started, timeout=is_timeout(exc))
    return exception_text(exc)


def classify_sdk_error(sdk: ModuleType, exc: BaseException) -> RetryInfo | None:
    """How to retry an SDK failure: retryable statuses wait what the server asked for (headers or
    body), connection failures back off; anything else is final (None)."""
    if isinstance(exc, sdk.APIStatusError):
        if not is_retryable_status(exc.status_code):
            return None
        body = exc.body if isinstance(exc.body, str) else json.dumps(exc.body, default=str)
        return RetryInfo(delay=parse_retry_after(dict(exc.response.headers.items()), body))
    if isinstance(exc, sdk.APIConnectionError):
        return RetryInfo()
    return None
