"""OpenAI's Batch API for `agentcore.llm.batch`: a JSONL file of Chat Completions bodies
(built by the adapter's `build_payload`) uploaded to `/v1/files`, a job on `/v1/batches`, and
the output and error files read back (bounded, validated: they are untrusted input)."""

from __future__ import annotations

import json
from typing import Any

from ...messages import AssistantMessage, StopReason, TextContent, ThinkingContent, ToolCall
from .._adapter import as_int, get_field, merged_headers, priced_usage
from .._batch_types import (
    BatchJob,
    BatchRequest,
    BatchStatus,
    error_message,
    read_jsonl,
    reasoning_of,
    shared_credentials,
)
from .._env import resolve_api_key
from .._pool import close_unshared
from .._sdk import import_sdk, sdk_client
from ..model import Model
from ..types import StreamOptions
from ._openai_completions_request import REASONING_FIELDS, build_payload

_ENDPOINT = "/v1/chat/completions"
_STATUS: dict[str, BatchStatus] = {
    "validating": "in_progress",
    "in_progress": "in_progress",
    "finalizing": "ending",
    "cancelling": "ending",
    "completed": "ended",
    "failed": "failed",
    "expired": "expired",
    "cancelled": "cancelled",
}


async def _client(model: Model, key: str, headers: dict[str, str]) -> tuple[Any, bool]:
    sdk = import_sdk("openai", "openai")
    return await sdk_client(sdk.AsyncOpenAI, sdk, key, model.base_url, headers)


async def _options_client(model: Model, options: StreamOptions) -> tuple[Any, bool]:
    return await _client(model, resolve_api_key(model, options), merged_headers(model, options))


def _body(model: Model, request: BatchRequest) -> dict[str, Any]:
    body = build_payload(
        model, request.context, request.options, reasoning=reasoning_of(request.options)
    )
    body.pop("stream", None)
    body.pop("stream_options", None)
    return body


def _job(model: Model, raw: Any, ids: tuple[str, ...]) -> BatchJob:
    word = str(get_field(raw, "status") or "")
    counts = get_field(raw, "request_counts")
    return BatchJob(
        id=str(get_field(raw, "id")),
        api=model.api,
        provider=model.provider,
        model=model.id,
        status=_STATUS.get(word, "in_progress"),
        ids=ids,
        counts={
            k: as_int(get_field(counts, k)) for k in ("total", "completed", "failed") if counts
        },
        raw_status=word,
        error=_job_error(get_field(raw, "errors")),
    )


def _job_error(errors: Any) -> str:
    """The reasons a whole job failed (`errors.data`: code, message, line of the input)."""
    texts = []
    for item in get_field(errors, "data") or []:
        line = get_field(item, "line")
        where = f" (line {line})" if isinstance(line, int) else ""
        texts.append(f"{get_field(item, 'code') or 'error'}: {get_field(item, 'message')}{where}")
    return "; ".join(texts)[:1000]


async def submit(model: Model, requests: list[BatchRequest]) -> BatchJob:
    """Upload the requests and create the job (every request has the same key and headers:
    `shared_credentials`)."""
    key, headers = shared_credentials(model, requests)
    lines = [
        json.dumps(
            {"custom_id": r.id, "method": "POST", "url": _ENDPOINT, "body": _body(model, r)},
            ensure_ascii=False,
        )
        for r in requests
    ]
    data = ("\n".join(lines) + "\n").encode()
    client, shared = await _client(model, key, headers)
    try:
        uploaded = await client.files.create(file=("batch.jsonl", data), purpose="batch")
        raw = await client.batches.create(
            input_file_id=uploaded.id, endpoint=_ENDPOINT, completion_window="24h"
        )
    finally:
        await close_unshared(client, shared)
    return _job(model, raw, tuple(r.id for r in requests))


async def status(model: Model, job: BatchJob, options: StreamOptions) -> BatchJob:
    """The job's state now."""
    client, shared = await _options_client(model, options)
    try:
        raw = await client.batches.retrieve(job.id)
    finally:
        await close_unshared(client, shared)
    return _job(model, raw, job.ids)


async def cancel(model: Model, job: BatchJob, options: StreamOptions) -> BatchJob:
    """Ask for the job to be cancelled."""
    client, shared = await _options_client(model, options)
    try:
        raw = await client.batches.cancel(job.id)
    finally:
        await close_unshared(client, shared)
    return _job(model, raw, job.ids)


def _stop(reason: Any, calls: bool) -> StopReason | None:
    if reason == "stop":
        return "tool_use" if calls else "stop"
    if reason in ("length", "model_length"):
        return "length"
    if reason in ("tool_calls", "function_call"):
        return "tool_use"
    return None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _message(model: Model, body: Any) -> AssistantMessage:
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return error_message(model, "malformed result: a response body without choices")
    choice: dict[str, Any] = choices[0]
    message = _dict(choice.get("message"))
    content: list[Any] = []
    for name in REASONING_FIELDS:
        value = message.get(name)
        if isinstance(value, str) and value:
            content.append(ThinkingContent(thinking=value, thinking_signature=name))
            break
    text = message.get("content")
    if isinstance(text, str) and text:
        content.append(TextContent(text=text))
    listed = message.get("tool_calls")
    calls: list[Any] = listed if isinstance(listed, list) else []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            continue
        arguments = function.get("arguments") or "{}"
        try:
            parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
        except ValueError:
            parsed = None
        content.append(
            ToolCall(
                id=str(call.get("id") or ""),
                name=str(function.get("name") or ""),
                arguments=parsed if isinstance(parsed, dict) else {},
                invalid_arguments=None if isinstance(parsed, dict) else str(arguments),
            )
        )
    raw = body.get("usage")
    prompt = as_int(get_field(raw, "prompt_tokens"))
    cached = as_int(get_field(get_field(raw, "prompt_tokens_details"), "cached_tokens"))
    usage = priced_usage(
        model,
        input=prompt - cached,
        output=as_int(get_field(raw, "completion_tokens")),
        cache_read=cached,
    )
    reason = _stop(choice.get("finish_reason"), bool(calls))
    if reason is None:
        return AssistantMessage(
            content=content,
            api=model.api,
            provider=model.provider,
            model=model.id,
            usage=usage,
            stop_reason="error",
            error_message=f"the provider stopped the answer "
            f"(finish_reason: {choice.get('finish_reason')})",
        )
    return AssistantMessage(
        content=content,
        api=model.api,
        provider=model.provider,
        model=model.id,
        usage=usage,
        stop_reason=reason,
    )


def _error_text(line: dict[str, Any]) -> str:
    error = line.get("error")
    response = _dict(line.get("response"))
    if not isinstance(error, dict):
        body = response.get("body")
        error = body.get("error") if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    text = error.get("message") if isinstance(error, dict) else None
    status_code = response.get("status_code")
    head = f"{status_code} " if isinstance(status_code, int) else ""
    return f"{head}{code or 'error'}: {text or 'the request failed'}"[:1000]


def _parse(model: Model, line: dict[str, Any], into: dict[str, AssistantMessage]) -> None:
    custom_id = line.get("custom_id")
    if not isinstance(custom_id, str) or custom_id in into:
        return
    response = line.get("response")
    if (
        line.get("error") is None
        and isinstance(response, dict)
        and response.get("status_code") == 200
    ):
        into[custom_id] = _message(model, response.get("body"))
    else:
        into[custom_id] = error_message(model, _error_text(line))


async def results(
    model: Model, job: BatchJob, options: StreamOptions, max_bytes: int
) -> dict[str, AssistantMessage]:
    """The answers in the job's output and error files, keyed by custom id (ids the job did
    not submit are ignored)."""
    client, shared = await _options_client(model, options)
    wanted = set(job.ids)
    found: dict[str, AssistantMessage] = {}
    try:
        raw = await client.batches.retrieve(job.id)
        for kind in ("output_file_id", "error_file_id"):
            file_id = get_field(raw, kind)
            if not file_id:
                continue
            async with client.files.with_streaming_response.content(file_id) as response:
                lines = await read_jsonl(
                    response.iter_bytes(), max_bytes, f"results file {file_id}"
                )
            for line in lines:
                if line.get("custom_id") in wanted:
                    _parse(model, line, found)
    finally:
        await close_unshared(client, shared)
    return found
