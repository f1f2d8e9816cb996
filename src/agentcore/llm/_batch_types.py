"""The data of `agentcore.llm.batch` and the helpers its provider modules share (a module of its
own so that `batch` can pick a provider module and the provider modules can build its types
without an import circle)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import UsageError
from ..messages import AssistantMessage
from ._adapter import merged_headers
from ._env import resolve_api_key
from .model import Model
from .types import SimpleStreamOptions, StreamOptions, ThinkingLevel

BatchStatus = Literal["in_progress", "ending", "ended", "failed", "expired", "cancelled"]
"""A job's state, the same words for every provider: `in_progress` (validating or running),
`ending` (finalizing or cancelling), `ended` (completed: results can be read), `failed` (the
whole job was rejected), `expired` (the window passed: finished requests still have results),
`cancelled`."""

FINAL_STATUSES: frozenset[str] = frozenset({"ended", "failed", "expired", "cancelled"})

MAX_RESULTS_BYTES = 512 * 1024 * 1024
"""The most bytes read from one results file; a larger one is refused (it is untrusted input)."""

MAX_LINE_BYTES = 32 * 1024 * 1024
ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,64}")


class UnsupportedBatchError(UsageError):
    """The model's API (or the cloud it is reached through) has no batch support here."""


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
            Every request of one batch must have the same `api_key` and `headers` (one job is
            one authenticated upload).
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
        error: why the whole job failed, as the provider said (at most 1000 characters;
            empty when it did not fail).
    """

    id: str
    api: str
    provider: str
    model: str
    status: BatchStatus
    ids: tuple[str, ...]
    counts: Mapping[str, int] = field(default_factory=dict)
    raw_status: str = ""
    error: str = ""

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
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BatchJob:
        """A job from `to_dict` data.

        Raises:
            UsageError: a field is missing or of the wrong kind.
        """
        try:
            status = str(data["status"])
            if status not in (*FINAL_STATUSES, "in_progress", "ending"):
                raise ValueError(f"unknown status {status!r}")
            return cls(
                id=str(data["id"]),
                api=str(data["api"]),
                provider=str(data["provider"]),
                model=str(data["model"]),
                status=status,  # type: ignore[arg-type]  # checked above
                ids=tuple(str(i) for i in data["ids"]),
                counts={str(k): int(v) for k, v in dict(data.get("counts", {})).items()},
                raw_status=str(data.get("raw_status", "")),
                error=str(data.get("error", "")),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise UsageError(
                f"not a BatchJob (BatchJob.to_dict data expected): {type(exc).__name__} {exc}"
            ) from None


def error_message(model: Model, text: str) -> AssistantMessage:
    """An errored answer for one request."""
    return AssistantMessage(
        api=model.api,
        provider=model.provider,
        model=model.id,
        stop_reason="error",
        error_message=text,
    )


def reasoning_of(options: StreamOptions) -> ThinkingLevel | None:
    """The thinking level of `options` (a `SimpleStreamOptions`), or None."""
    return options.reasoning if isinstance(options, SimpleStreamOptions) else None


def shared_credentials(
    model: Model, requests: Sequence[BatchRequest]
) -> tuple[str, dict[str, str]]:
    """The API key and headers every request of the batch shares.

    Raises:
        UsageError: naming the first request whose key or headers differ from the first's.
    """
    first = requests[0]
    key = resolve_api_key(model, first.options)
    headers = merged_headers(model, first.options)
    for request in requests[1:]:
        if resolve_api_key(model, request.options) != key:
            raise UsageError(
                f"batch request {request.id!r} has another api_key than request {first.id!r}: "
                "one batch is one upload under one key; submit a batch per key"
            )
        if merged_headers(model, request.options) != headers:
            raise UsageError(
                f"batch request {request.id!r} has other headers than request {first.id!r}: "
                "one batch is sent with one set of headers; submit a batch per header set"
            )
    return key, headers


async def read_jsonl(
    chunks: AsyncIterator[bytes], max_bytes: int, where: str
) -> list[dict[str, Any]]:
    """The JSON objects of a results file read from `chunks`, at most `max_bytes`; a line that
    is not a JSON object is skipped (its request then has no result).

    Raises:
        UsageError: the file is larger than `max_bytes`.
    """
    total = 0
    buffer = bytearray()
    async for chunk in chunks:
        total += len(chunk)
        if total > max_bytes:
            raise UsageError(f"the {where} is larger than {max_bytes} bytes: refused")
        buffer += chunk
    objects: list[dict[str, Any]] = []
    for line in bytes(buffer).splitlines():
        if not line.strip() or len(line) > MAX_LINE_BYTES:
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            objects.append(value)
    return objects
