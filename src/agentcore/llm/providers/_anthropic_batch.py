"""Anthropic's Message Batches for `agentcore.llm.batch`, through the SDK's
`messages.batches`: the Messages bodies the adapter builds (`build_payload`), the job's
`processing_status`, and the results file read back (bounded, validated: untrusted input)."""

from __future__ import annotations

from typing import Any

from ...messages import AssistantMessage, StopReason, TextContent, ThinkingContent, ToolCall
from .._adapter import as_int, get_field, priced_usage, stream_option_fields
from .._batch_types import (
    BatchJob,
    BatchRequest,
    BatchStatus,
    error_message,
    read_jsonl,
    shared_credentials,
)
from .._env import resolve_api_key
from .._pool import close_unshared
from .._sdk import api_error_text, import_sdk, sdk_client
from ..model import Model
from ..types import SimpleStreamOptions, StreamOptions
from ._anthropic_request import (
    AnthropicOptions,
    build_payload,
    request_headers,
    thinking_options,
)

_COUNTS = ("processing", "succeeded", "errored", "canceled", "expired")
_STOP: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "tool_use": "tool_use",
}


async def _client(model: Model, key: str, headers: dict[str, str]) -> tuple[Any, bool]:
    sdk = import_sdk("anthropic", "anthropic")
    return await sdk_client(sdk.AsyncAnthropic, sdk, key, model.base_url, headers)


async def _options_client(model: Model, options: StreamOptions) -> tuple[Any, bool]:
    key = resolve_api_key(model, options)
    return await _client(model, key, request_headers(model, options, {}))


def _options(model: Model, options: StreamOptions) -> StreamOptions:
    """`options` as `stream_simple` reads them: a thinking level becomes thinking settings."""
    if isinstance(options, SimpleStreamOptions):
        fields = {**stream_option_fields(options), **thinking_options(model, options)}
        return AnthropicOptions(**fields)
    return options


def _betas(headers: dict[str, str]) -> list[str]:
    return [b.strip() for b in headers.get("anthropic-beta", "").split(",") if b.strip()]


def _job(model: Model, raw: Any, ids: tuple[str, ...]) -> BatchJob:
    word = str(get_field(raw, "processing_status") or "")
    counts_raw = get_field(raw, "request_counts")
    counts = {k: as_int(get_field(counts_raw, k)) for k in _COUNTS} if counts_raw else {}
    status: BatchStatus = "in_progress"
    if word == "canceling":
        status = "ending"
    elif word == "ended":
        status = "ended"
        if get_field(raw, "cancel_initiated_at") is not None:
            status = "cancelled"
        elif counts.get("expired"):
            status = "expired"
    return BatchJob(
        id=str(get_field(raw, "id")),
        api=model.api,
        provider=model.provider,
        model=model.id,
        status=status,
        ids=ids,
        counts=counts,
        raw_status=word,
    )


async def submit(model: Model, requests: list[BatchRequest]) -> BatchJob:
    """Create the batch. Every request has the same key and headers (`shared_credentials`);
    the `anthropic-beta` features any request needs (interleaved thinking) are sent for the
    whole batch."""
    key, headers = shared_credentials(model, requests)
    betas = _betas(headers)
    entries = []
    for request in requests:
        options = _options(model, request.options)
        params = build_payload(model, request.context, options)
        params.pop("stream", None)
        for beta in _betas(request_headers(model, options, params)):
            if beta not in betas:
                betas.append(beta)
        entries.append({"custom_id": request.id, "params": params})
    if betas:
        headers = {**headers, "anthropic-beta": ",".join(betas)}
    client, shared = await _client(model, key, headers)
    try:
        raw = await client.messages.batches.create(requests=entries)
    finally:
        await close_unshared(client, shared)
    return _job(model, raw, tuple(r.id for r in requests))


async def status(model: Model, job: BatchJob, options: StreamOptions) -> BatchJob:
    """The job's state now."""
    client, shared = await _options_client(model, options)
    try:
        raw = await client.messages.batches.retrieve(job.id)
    finally:
        await close_unshared(client, shared)
    return _job(model, raw, job.ids)


async def cancel(model: Model, job: BatchJob, options: StreamOptions) -> BatchJob:
    """Ask for the batch to be cancelled."""
    client, shared = await _options_client(model, options)
    try:
        raw = await client.messages.batches.cancel(job.id)
    finally:
        await close_unshared(client, shared)
    return _job(model, raw, job.ids)


def _message(model: Model, message: Any) -> AssistantMessage:
    blocks = message.get("content") if isinstance(message, dict) else None
    if not isinstance(blocks, list):
        return error_message(model, "malformed result: a message without content")
    content: list[Any] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            content.append(TextContent(text=block["text"]))
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            content.append(
                ThinkingContent(
                    thinking=block["thinking"], thinking_signature=block.get("signature")
                )
            )
        elif kind == "redacted_thinking" and isinstance(block.get("data"), str):
            content.append(
                ThinkingContent(thinking="", thinking_signature=block["data"], redacted=True)
            )
        elif kind == "tool_use":
            arguments = block.get("input")
            content.append(
                ToolCall(
                    id=str(block.get("id") or ""),
                    name=str(block.get("name") or ""),
                    arguments=arguments if isinstance(arguments, dict) else {},
                    invalid_arguments=None
                    if isinstance(arguments, dict)
                    else repr(arguments)[:1000],
                )
            )
    raw = message.get("usage")
    usage = priced_usage(
        model,
        input=as_int(get_field(raw, "input_tokens")),
        output=as_int(get_field(raw, "output_tokens")),
        cache_read=as_int(get_field(raw, "cache_read_input_tokens")),
        cache_write=as_int(get_field(raw, "cache_creation_input_tokens")),
    )
    reason = _STOP.get(str(message.get("stop_reason")))
    common: dict[str, Any] = {
        "content": content,
        "api": model.api,
        "provider": model.provider,
        "model": model.id,
        "usage": usage,
    }
    if reason is None:
        return AssistantMessage(
            **common,
            stop_reason="error",
            error_message="the provider stopped the answer "
            f"(stop_reason: {message.get('stop_reason')})",
        )
    return AssistantMessage(**common, stop_reason=reason)


def _parse(model: Model, line: dict[str, Any]) -> AssistantMessage:
    raw = line.get("result")
    result: dict[str, Any] = raw if isinstance(raw, dict) else {}
    kind = result.get("type")
    if kind == "succeeded":
        return _message(model, result.get("message"))
    if kind == "errored":
        error = result.get("error")
        inner = error.get("error") if isinstance(error, dict) else None
        text = api_error_text(inner if isinstance(inner, dict) else error) or "the request failed"
        return error_message(model, f"errored: {text}"[:1000])
    if kind == "canceled":
        return error_message(model, "canceled: the batch was cancelled before this request ran")
    if kind == "expired":
        return error_message(model, "expired: the batch ended before this request ran")
    return error_message(model, f"malformed result line (result type {kind!r})")


async def results(
    model: Model, job: BatchJob, options: StreamOptions, max_bytes: int
) -> dict[str, AssistantMessage]:
    """The answers in the batch's results file, keyed by custom id (ids the job did not submit
    are ignored)."""
    client, shared = await _options_client(model, options)
    wanted = set(job.ids)
    found: dict[str, AssistantMessage] = {}
    try:
        async with client.messages.batches.with_streaming_response.results(job.id) as response:
            lines = await read_jsonl(response.iter_bytes(), max_bytes, f"results of batch {job.id}")
    finally:
        await close_unshared(client, shared)
    for line in lines:
        custom_id = line.get("custom_id")
        if isinstance(custom_id, str) and custom_id in wanted and custom_id not in found:
            found[custom_id] = _parse(model, line)
    return found
