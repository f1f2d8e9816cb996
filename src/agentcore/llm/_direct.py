"""Sending a Chat Completions request without the `openai` SDK: the direct path.

`import openai` costs about half a second of CPU (the SDK loads all of its pydantic types with
its package), more than the rest of `agentcore run` up to its first request. For a compatible
server (a `base_url` that is not OpenAI's own service: llama.cpp, vLLM, Ollama, OpenRouter, ...)
the SDK does nothing the adapter needs beyond one POST, so the adapter sends it with httpx
itself, as the SDK would:

- `POST {base_url}/chat/completions`, the payload as JSON, `Authorization: Bearer <key>` when
  there is a key, `Accept: application/json`, the model's and request's headers on top;
- the SDK's timeouts (600 s, 5 s to connect) and its redirects, on the loop's shared client
  (`_pool.shared_client`; a recording sees the client as it sees the SDK's);
- a status of 400 or more becomes `StatusFailure`, with the body's `error` object (or the body)
  and the `x-request-id`, as the SDK's `APIStatusError` carries them, so the error text
  (`_sdk.status_error_text`) and the retries (`classify`) are the same;
- transport errors are left as httpx raised them; their text names the same cause the SDK's
  `APIConnectionError` wrapped.

The SDK's own retries were off on this path already (`_retry` retries). OpenAI's own service
and Azure keep the SDK (its organisation and project headers, base-URL and identity options).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ._adapter import connection_text, exception_text
from ._http import is_timeout, is_transport_error
from ._pool import shared_client
from ._profiles import on_api_service
from ._retry import RetryInfo, is_retryable_status, parse_retry_after
from ._sdk import status_error_text
from .model import Model

__all__ = [
    "StatusFailure",
    "classify_direct",
    "describe_direct",
    "direct_client",
    "open_direct",
    "uses_direct",
]

_TIMEOUT = 600.0  # seconds, the openai SDK's default
_CONNECT_TIMEOUT = 5.0


class StatusFailure(Exception):
    """A response with a status of 400 or more, shaped as the SDK's `APIStatusError`."""

    def __init__(self, status_code: int, body: object, headers: Mapping[str, str]) -> None:
        super().__init__(f"Error code: {status_code} - {body}")
        self.status_code = status_code
        self.body = body.get("error", body) if isinstance(body, Mapping) else body
        self.headers = dict(headers.items())
        self.request_id = self.headers.get("x-request-id")


def uses_direct(model: Model, *, azure: bool) -> bool:
    """Whether a Chat Completions request to `model` is sent directly: a compatible server (a
    `base_url` that is not OpenAI's own service), not Azure."""
    return not azure and bool(model.base_url) and not on_api_service(model)


def _factory(**kwargs: Any) -> Any:
    import httpx

    return httpx.AsyncClient(
        timeout=httpx.Timeout(_TIMEOUT, connect=_CONNECT_TIMEOUT), follow_redirects=True, **kwargs
    )


async def direct_client() -> tuple[Any, bool]:
    """The httpx client for one direct request, and whether it is the loop's shared one."""
    return await shared_client("agentcore-direct", _factory)


async def open_direct(
    client: Any, base_url: str, api_key: str, headers: Mapping[str, str], payload: Any
) -> Any:
    """Send the request and return the streaming httpx response (status below 400).

    Raises:
        StatusFailure: the server answered with an error status (the body is read and closed).
        httpx.TransportError: the request did not get a response.
    """
    sent = {"Accept": "application/json", "Content-Type": "application/json"}
    if api_key:
        sent["Authorization"] = f"Bearer {api_key}"
    sent.update(headers)
    request = client.build_request(
        "POST",
        base_url.rstrip("/") + "/chat/completions",
        content=json.dumps(payload).encode(),
        headers=sent,
    )
    response = await client.send(request, stream=True)
    if response.status_code < 400:
        return response
    try:
        raw = await response.aread()
    finally:
        await response.aclose()
    text = raw.decode("utf-8", "replace")
    try:
        body: object = json.loads(text) if text else None
    except ValueError:
        body = text
    raise StatusFailure(response.status_code, body, response.headers)


def classify_direct(exc: BaseException) -> RetryInfo | None:
    """How to retry a direct request's failure: as `_sdk.classify_sdk_error` does the SDK's."""
    if isinstance(exc, StatusFailure):
        if not is_retryable_status(exc.status_code):
            return None
        body = exc.body if isinstance(exc.body, str) else json.dumps(exc.body, default=str)
        return RetryInfo(delay=parse_retry_after(exc.headers, body))
    if is_transport_error(exc):
        return RetryInfo()
    return None


def describe_direct(exc: BaseException, *, started: bool) -> str:
    """The error text of a direct request's failure, worded as `_sdk.sdk_failure_text` words the
    SDK's: the status and the server's error, or the network failure and its cause."""
    if isinstance(exc, StatusFailure):
        return status_error_text(exc)
    if is_transport_error(exc):
        return connection_text(exc, started=started, timeout=is_timeout(exc))
    return exception_text(exc)
