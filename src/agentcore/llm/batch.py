"""Provider batch APIs: many single requests for one model, answered within hours at batch
prices (OpenAI's Batch API, Anthropic's Message Batches).

Submit a list of `BatchRequest`s (each a caller id, a `Context` and the options the stream
functions take), keep the returned `BatchJob` (plain data: `to_dict` / `BatchJob.from_dict`
persist it), then `batch_status` or `wait_batch`, and `batch_results` once it has ended, or
`cancel_batch`. Results are keyed by the caller's id, never by order; a request that failed,
expired or was cancelled gets an `AssistantMessage` with `stop_reason="error"` and an
`error_message`, never an exception. The request bodies are the ones the streaming adapters
build (`build_payload`), without the streaming fields.

Prices: `batch_prices(model)` is half the catalogue's per-token prices (both providers bill
batches at 50%); pass `prices=` to `batch_results` where your contract says otherwise.

The engine never imports this module: a multi-turn agent run would pay one batch round trip per
model request. Use it for bulk single-request work (evaluations, classification, judges).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

from ..errors import UsageError
from ..messages import AssistantMessage
from .model import Model, ModelCost
from .types import SimpleStreamOptions, StreamOptions

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

BatchStatus = Literal["in_progress", "ending", "ended", "failed", "expired", "cancelled"]
"""A job's state, the same words for every provider: `in_progress` (validating or running),
`ending` (finalizing or cancelling), `ended` (completed: results can be read), `failed` (the
whole job was rejected), `expired` (the window passed: finished requests still have results),
`cancelled`."""

FINAL_STATUSES: frozenset[str] = frozenset({"ended", "failed", "expired", "cancelled"})

MAX_RESULTS_BYTES = 512 * 1024 * 1024
"""The most bytes read from one results file; a larger one is refused (it is untrusted input)."""

_MAX_LINE_BYTES = 32 * 1024 * 1024
_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_BATCH_APIS = ("openai-completions", "anthropic-messages")


class UnsupportedBatchError(UsageError):
    """The model's API (or endpoint) has no batch support."""


class BatchTimeoutError(TimeoutError):
    """`wait_batch` gave up before the job ended; the job keeps running (`job` is its last
    known state)."""

    def __init__(self, message: str, job: BatchJob) -> None:
        super().__init__(message)
        self.job = job


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchRequest:
    """One request of a batch.

    Attributes:
        id: the caller's id, 1-64 characters of `A-Z a-z 0-9 _ -` (Anthropic's rule, applied to
            every provider), unique in the batch; results are keyed by it.
        context: the conversation, as for `stream`.
        options: the options `stream` / `stream_simple` take (`SimpleStreamOptions.reasoning`
            is honoured); callbacks that watch a live stream (`on_response`) are not called.
    """

    id: str
    context: Any
    options: StreamOptions = field(default_factory=StreamOptions)


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchJob:
    """A submitted batch: plain data, safe to persist and to hand to another process.

    Attributes:
        id: the provider's batch id.
        api: the model API it was submitted through.
        provider: the model's provider.
        model: the model id.
        status: the last known `BatchStatus`.
        ids: the caller ids submitted, in order (requests missing from the results get an
            error message).
        counts: per-request counts the provider reported (`succeeded`, `errored`, ...).
        raw_status: the provider's own status word.
    """

    id: str
    api: str
    provider: str
    model: str
    status: BatchStatus
    ids: tuple[str, ...]
    counts: Mapping[str, int] = field(default_factory=dict)
    raw_status: str = ""

    @property
    def done(self) -> bool:
        """The job will change no more."""
        return self.status in FINAL_STATUSES

    def to_dict(self) -> dict[str, Any]:
        """The job as JSON-ready data (`from_dict` reads it back)."""
        return {
            "id": self.id,
            "api": self.api,
            "provider": self.provider,
            "model": self.model,
            "status": self.status,
            "ids": list(self.ids),
            "counts": dict(self.counts),
            "raw_status": self.raw_status,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BatchJob:
        """A job from `to_dict` data."""
        return cls(
            id=str(data["id"]),
            api=str(data["api"]),
            provider=str(data["provider"]),
            model=str(data["model"]),
            status=data["status"],
            ids=tuple(str(i) for i in data["ids"]),
            counts={str(k): int(v) for k, v in dict(data.get("counts", {})).items()},
            raw_status=str(data.get("raw_status", "")),
        )


def batch_prices(model: Model) -> ModelCost:
    """The model's batch prices: half of each catalogue price (OpenAI and Anthropic bill batch
    requests at 50%, cache reads and writes included)."""
    c = model.cost
    return ModelCost(
        input=c.input / 2,
        output=c.output / 2,
        cache_read=c.cache_read / 2,
        cache_write=c.cache_write / 2,
    )


def _wire(model: Model) -> Any:
    if model.api not in _BATCH_APIS or model.cloud is not None:
        where = f" through {type(model.cloud).__name__}" if model.cloud is not None else ""
        raise UnsupportedBatchError(
            f"model {model.provider}/{model.id} (api {model.api!r}{where}) has no batch API: "
            f"batches are supported for the {' and '.join(_BATCH_APIS)} APIs on their own "
            "services; send the requests with stream() instead"
        )
    if model.api == "openai-completions":
        from .providers import _openai_batch

        return _openai_batch
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
        if not isinstance(request.id, str) or not _ID.fullmatch(request.id):
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
    timeout: float,
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
    for request_id in current.ids:
        out[request_id] = found.get(request_id) or error_message(
            model, f"no result for request {request_id!r} (batch {current.status})"
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
    from dataclasses import replace

    return replace(model, cost=prices)


def error_message(model: Model, text: str) -> AssistantMessage:
    """An errored answer for one request."""
    return AssistantMessage(
        api=model.api,
        provider=model.provider,
        model=model.id,
        stop_reason="error",
        error_message=text,
    )


def reasoning_of(options: StreamOptions) -> Any:
    """The thinking level of `options` (a `SimpleStreamOptions`), or None."""
    return options.reasoning if isinstance(options, SimpleStreamOptions) else None


async def read_jsonl(chunks: Any, max_bytes: int, where: str) -> list[Any]:
    """The JSON objects of a results file read from `chunks` (async bytes), at most
    `max_bytes`; a line that is not a JSON object is skipped (its request then has no
    result)."""
    import json

    total = 0
    buffer = bytearray()
    async for chunk in chunks:
        total += len(chunk)
        if total > max_bytes:
            raise UsageError(f"the {where} is larger than {max_bytes} bytes: refused")
        buffer += chunk
    objects: list[Any] = []
    for line in bytes(buffer).splitlines():
        if not line.strip() or len(line) > _MAX_LINE_BYTES:
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            objects.append(value)
    return objects
