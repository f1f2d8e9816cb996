"""Gemini batch mode for `agentcore.llm.batch`, through the `google-genai` SDK's `aio.batches`
on the Gemini API: the requests go inline (`models/<id>:batchGenerateContent`, each with its
caller id in `metadata.key`), the job is polled at `batches/<id>`, cancelled at
`batches/<id>:cancel`, and its inline responses are read back matched by that key (untrusted
input: bounded, validated).

Each answer is translated by the streaming adapter's own translator (`_Translator`): a batch
response is a whole `GenerateContentResponse`, the same object a stream hands over in parts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx

from ...errors import UsageError
from ...messages import AssistantMessage
from .._batch_types import (
    MAX_RESULTS_BYTES,
    BatchJob,
    BatchRequest,
    BatchStatus,
    error_message,
    shared_credentials,
)
from .._env import resolve_api_key
from .._http import ssl_context
from .._sdk import import_sdk
from ..builder import MessageBuilder
from ..events import DoneEvent, ErrorEvent
from ..interception import intercept_http
from ..model import Model
from ..types import SimpleStreamOptions, StreamOptions
from ._google_request import build_payload, sdk_arguments, thinking_config
from .google import _client, _Translator

MAX_INLINE_BYTES = 20 * 1024 * 1024
"""Gemini's limit on a batch sent inline; a larger one is refused before anything is sent."""

_STATES: dict[str, BatchStatus] = {
    "JOB_STATE_SUCCEEDED": "ended",
    "JOB_STATE_PARTIALLY_SUCCEEDED": "ended",
    "JOB_STATE_FAILED": "failed",
    "JOB_STATE_CANCELLED": "cancelled",
    "JOB_STATE_CANCELLING": "ending",
    "JOB_STATE_EXPIRED": "expired",
}


class _BoundedBody(httpx.AsyncByteStream):
    """A response body that refuses to be read past `max_bytes` (the SDK reads whole bodies)."""

    def __init__(self, raw: httpx.AsyncByteStream, max_bytes: int, where: str) -> None:
        self.raw, self.max_bytes, self.where = raw, max_bytes, where

    async def __aiter__(self) -> AsyncIterator[bytes]:
        total = 0
        async for chunk in self.raw:
            total += len(chunk)
            if total > self.max_bytes:
                raise UsageError(f"the {self.where} is larger than {self.max_bytes} bytes: refused")
            yield chunk

    async def aclose(self) -> None:
        await self.raw.aclose()


class _Session:
    """One genai client on its own httpx client (each response body read at most `max_bytes`),
    closed with the `async with`."""

    def __init__(
        self,
        model: Model,
        options: StreamOptions,
        key: str,
        max_bytes: int = MAX_RESULTS_BYTES,
        where: str = "Gemini batch response",
    ) -> None:
        self.model, self.options, self.key = model, options, key
        self.max_bytes, self.where = max_bytes, where
        self.http: httpx.AsyncClient | None = None
        self.client: Any = None

    async def _bound(self, response: httpx.Response) -> None:
        stream = response.stream
        assert isinstance(stream, httpx.AsyncByteStream)
        response.stream = _BoundedBody(stream, self.max_bytes, self.where)

    async def __aenter__(self) -> Any:
        genai = import_sdk("google.genai", "google")
        tls = await ssl_context()
        self.http = httpx.AsyncClient(verify=tls, event_hooks={"response": [self._bound]})
        intercept_http(self.http)
        self.client = _client(genai, self.model, self.options, self.key, self.http, tls)
        return self.client

    async def __aexit__(self, *exc: object) -> None:
        if self.client is not None:
            self.client.close()
        if self.http is not None:
            await self.http.aclose()


def _session(model: Model, options: StreamOptions) -> _Session:
    return _Session(model, options, resolve_api_key(model, options))


def _state(raw: Any) -> str:
    state = getattr(raw, "state", None)
    return str(getattr(state, "value", state) or "")


def _job(model: Model, raw: Any, ids: tuple[str, ...]) -> BatchJob:
    word = _state(raw)
    error = getattr(raw, "error", None)
    text = ""
    if error is not None:
        text = f"{getattr(error, 'code', None) or 'error'}: {getattr(error, 'message', '')}"
    return BatchJob(
        id=str(raw.name),
        api=model.api,
        provider=model.provider,
        model=model.id,
        status=_STATES.get(word, "in_progress"),
        ids=ids,
        raw_status=word,
        error=text[:1000],
    )


def _inline(model: Model, request: BatchRequest, types: Any) -> Any:
    """One request as `stream_simple` (a `SimpleStreamOptions`) or `stream` would send it."""
    options = request.options
    thinking = (
        thinking_config(model, options.reasoning, options.thinking_budgets)
        if isinstance(options, SimpleStreamOptions)
        else None
    )
    payload = build_payload(model, request.context, request.options, thinking)
    model_id, contents, config = sdk_arguments(types, payload)
    config.automatic_function_calling = None  # a client-side SDK feature: not sent in a batch
    return types.InlinedRequest(
        model=model_id, contents=contents, config=config, metadata={"key": request.id}
    )


async def submit(model: Model, requests: list[BatchRequest]) -> BatchJob:
    """Create the batch with the requests inline (every request has the same key and headers:
    `shared_credentials`).

    Raises:
        UsageError: the requests are larger than Gemini's inline limit (20 MB).
    """
    key, _ = shared_credentials(model, requests)
    types = import_sdk("google.genai", "google").types
    inlined = [_inline(model, r, types) for r in requests]
    size = sum(len(r.model_dump_json(exclude_none=True)) for r in inlined)
    if size > MAX_INLINE_BYTES:
        raise UsageError(
            f"a Gemini batch of {size} bytes is larger than the {MAX_INLINE_BYTES} bytes "
            "Gemini takes inline: split it into smaller batches"
        )
    async with _Session(model, requests[0].options, key) as client:
        raw = await client.aio.batches.create(
            model=model.id, src=inlined, config={"display_name": f"agentcore-{requests[0].id}"}
        )
    return _job(model, raw, tuple(r.id for r in requests))


async def status(model: Model, job: BatchJob, options: StreamOptions) -> BatchJob:
    """The job's state now."""
    async with _session(model, options) as client:
        raw = await client.aio.batches.get(name=job.id)
    return _job(model, raw, job.ids)


async def cancel(model: Model, job: BatchJob, options: StreamOptions) -> BatchJob:
    """Ask for the job to be cancelled (the API answers with nothing: its state is read
    after)."""
    async with _session(model, options) as client:
        await client.aio.batches.cancel(name=job.id)
        raw = await client.aio.batches.get(name=job.id)
    return _job(model, raw, job.ids)


def _message(model: Model, response: Any) -> AssistantMessage:
    """A whole `GenerateContentResponse` as the message its stream would have built."""
    builder = MessageBuilder(model)
    translator = _Translator(builder, model)
    try:
        translator.feed(response)
        events = translator.finish()
    except Exception as exc:  # a response the translation does not expect
        return error_message(model, f"malformed result: {type(exc).__name__}: {exc}"[:1000])
    last = events[-1]
    assert isinstance(last, DoneEvent | ErrorEvent)
    return last.message if isinstance(last, DoneEvent) else last.error


def _error_text(error: Any) -> str:
    code = getattr(error, "code", None) or "error"
    message = getattr(error, "message", None) or "the request failed"
    return f"{code}: {message}"[:1000]


async def results(
    model: Model, job: BatchJob, options: StreamOptions, max_bytes: int
) -> dict[str, AssistantMessage]:
    """The inline responses of the job, keyed by `metadata.key` (keys the job did not submit
    are ignored, a second response for a key does not replace the first).

    Raises:
        UsageError: the job's response is larger than `max_bytes`.
    """
    key = resolve_api_key(model, options)
    async with _Session(model, options, key, max_bytes, f"response of batch {job.id}") as client:
        raw = await client.aio.batches.get(name=job.id)
    wanted = set(job.ids)
    found: dict[str, AssistantMessage] = {}
    dest = raw.dest
    for item in (dest.inlined_responses if dest is not None else None) or ():
        tag: Any = (item.metadata or {}).get("key")
        if not isinstance(tag, str) or tag not in wanted or tag in found:
            continue
        if item.error is not None:
            found[tag] = error_message(model, f"errored: {_error_text(item.error)}")
        elif item.response is not None:
            found[tag] = _message(model, item.response)
        else:
            found[tag] = error_message(model, "malformed result: neither a response nor an error")
    return found
