"""Provider batch APIs: many single requests for one model, answered within hours at batch
prices (OpenAI's Batch API, Anthropic's Message Batches, Gemini's batch mode).

Submit a list of `BatchRequest`s (each a caller id, a `Context` and the options the stream
functions take), keep the returned `BatchJob` (plain data: `to_dict` / `BatchJob.from_dict`
persist it), then `batch_status` or `wait_batch`, and `batch_results` once it has ended, or
`cancel_batch`. Results are keyed by the caller's id, never by order; a request that failed,
expired or was cancelled gets an `AssistantMessage` with `stop_reason="error"` and an
`error_message`, never an exception. The request bodies are the ones the streaming adapters
build (`build_payload`), without the streaming fields.

Prices: `batch_prices(model)` is half the catalogue's per-token prices (the three providers bill
batches at 50%); pass `prices=` to `batch_results` where your contract says otherwise.

The engine never imports this module: a multi-turn agent run would pay one batch round trip per
model request. Use it for bulk single-request work (evaluations, classification, judges).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import anyio

from ..errors import UsageError
from ..messages import AssistantMessage
from ._batch_types import (
    ID_PATTERN,
    MAX_RESULTS_BYTES,
    BatchJob,
    BatchRequest,
    BatchStatus,
    BatchTimeoutError,
    UnsupportedBatchError,
    error_message,
)
from .model import Model, ModelCost
from .types import StreamOptions

__all__ = [
    "MAX_RESULTS_BYTES",
    "BatchJob",
    "BatchRequest",
    "BatchStatus",
    "BatchTimeoutError",
    "UnsupportedBatchError",
    "batch_prices",
    "batch_results",
    "batch_status",
    "cancel_batch",
    "submit_batch",
    "wait_batch",
]

_BATCH_APIS = ("openai-completions", "anthropic-messages", "google-generative-ai")


def batch_prices(model: Model) -> ModelCost:
    """The model's batch prices: the catalogue's `batch_cost` where it states one, else half of
    each of the model's prices (the 50% rate OpenAI, Anthropic and Google publish for their
    batch APIs, cache reads and writes included)."""
    if model.batch_cost is not None:
        return model.batch_cost
    c = model.cost
    return ModelCost(
        input=c.input / 2,
        output=c.output / 2,
        cache_read=c.cache_read / 2,
        cache_write=c.cache_write / 2,
    )


def _wire(model: Model) -> Any:
    vertex = model.provider in ("google-vertex", "google-vertex-anthropic")
    if model.api not in _BATCH_APIS or model.cloud is not None or vertex:
        where = f" through {type(model.cloud).__name__}" if model.cloud is not None else ""
        where = " through Vertex AI" if vertex and not where else where
        raise UnsupportedBatchError(
            f"model {model.provider}/{model.id} (api {model.api!r}{where}) has no batch API: "
            f"batches are supported for the {', '.join(_BATCH_APIS)} APIs on their own "
            "services; send the requests with stream() instead"
        )
    if model.api == "openai-completions":
        from .providers import _openai_batch

        return _openai_batch
    if model.api == "google-generative-ai":
        from .providers import _google_batch

        return _google_batch
    from .providers import _anthropic_batch

    return _anthropic_batch


def _check_requests(requests: Sequence[BatchRequest]) -> None:
    if not requests:
        raise UsageError("an empty batch: submit_batch needs at least one BatchRequest")
    seen: set[str] = set()
    for request in requests:
        if not isinstance(request, BatchRequest):
            raise UsageError(
                f"batch requests must be BatchRequest objects, got {type(request).__name__}"
            )
        if not isinstance(request.id, str) or not ID_PATTERN.fullmatch(request.id):
            raise UsageError(
                f"batch request id {request.id!r} is invalid: expected 1-64 characters of "
                "A-Z, a-z, 0-9, '_' and '-'"
            )
        if request.id in seen:
            raise UsageError(f"duplicate batch request id {request.id!r}: ids must be unique")
        seen.add(request.id)


def _check_job(model: Model, job: BatchJob) -> None:
    if (job.api, job.provider, job.model) != (model.api, model.provider, model.id):
        raise UsageError(
            f"batch {job.id} was submitted to {job.provider}/{job.model} ({job.api}), "
            f"not to {model.provider}/{model.id}"
        )


async def submit_batch(model: Model, requests: Sequence[BatchRequest]) -> BatchJob:
    """Submit `requests` to `model`'s batch API and return the job.

    Raises:
        UnsupportedBatchError: the model's API has no batch support.
        UsageError: an empty batch, an invalid or duplicate id.
        MissingExtraError / MissingApiKeyError: as for `stream`.
    """
    wire = _wire(model)
    _check_requests(requests)
    job: BatchJob = await wire.submit(model, list(requests))
    return job


async def batch_status(
    model: Model, job: BatchJob, *, options: StreamOptions | None = None
) -> BatchJob:
    """The job's current state (a new `BatchJob`). `options` gives the key and headers
    (default: the environment)."""
    wire = _wire(model)
    _check_job(model, job)
    new: BatchJob = await wire.status(model, job, options or StreamOptions())
    return new


async def wait_batch(
    model: Model,
    job: BatchJob,
    *,
    timeout: float,  # noqa: ASYNC109 (the timeout error carries the last job state)
    poll_interval: float = 30.0,
    options: StreamOptions | None = None,
) -> BatchJob:
    """Poll until the job has ended (any final status), at most `timeout` seconds.

    Raises:
        BatchTimeoutError: the job had not ended in time (it keeps running; poll again later).
        UsageError: a timeout or poll interval that is not positive.
    """
    if not timeout > 0 or not poll_interval > 0:
        raise UsageError(
            f"wait_batch needs a positive timeout and poll_interval, got {timeout} and "
            f"{poll_interval}"
        )
    current = job
    with anyio.move_on_after(timeout):
        while True:
            current = await batch_status(model, current, options=options)
            if current.done:
                return current
            await anyio.sleep(poll_interval)
    raise BatchTimeoutError(
        f"batch {job.id} had not ended after {timeout} s (status {current.status})", current
    )


async def batch_results(
    model: Model,
    job: BatchJob,
    *,
    prices: ModelCost | None = None,
    options: StreamOptions | None = None,
    max_bytes: int = MAX_RESULTS_BYTES,
) -> dict[str, AssistantMessage]:
    """The answers of an ended job, keyed by request id; every submitted id has one.

    A request that failed, expired, was cancelled or has no line in the results gets an
    `AssistantMessage` with `stop_reason="error"` and an `error_message`. Usage is priced at
    `prices` (default `batch_prices(model)`).

    Raises:
        UsageError: the job has not ended (`in_progress` / `ending`), or a results file is
            larger than `max_bytes`.
    """
    wire = _wire(model)
    _check_job(model, job)
    current = await batch_status(model, job, options=options)
    if not current.done:
        raise UsageError(
            f"batch {job.id} has not ended (status {current.status}): wait_batch first"
        )
    priced = _priced_model(model, prices if prices is not None else batch_prices(model))
    found: dict[str, AssistantMessage] = await wire.results(
        priced, current, options or StreamOptions(), max_bytes
    )
    out: dict[str, AssistantMessage] = {}
    why = f": {current.error}" if current.error else ""
    for request_id in current.ids:
        out[request_id] = found.get(request_id) or error_message(
            model, f"no result for request {request_id!r} (batch {current.status}{why})"
        )
    return out


async def cancel_batch(
    model: Model, job: BatchJob, *, options: StreamOptions | None = None
) -> BatchJob:
    """Ask the provider to cancel the job; returns its new state (usually `ending`, then
    `cancelled`; requests finished before the cancel keep their results)."""
    wire = _wire(model)
    _check_job(model, job)
    new: BatchJob = await wire.cancel(model, job, options or StreamOptions())
    return new


def _priced_model(model: Model, prices: ModelCost) -> Model:
    return replace(model, cost=prices)
