"""One exchange as a transport sees it: answered from the recording (`Outcome.response`) or sent
and recorded (`Outcome.pending`), and the `Router` protocol the transports ask.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from ._format import response_chunks, response_record, scrub

__all__ = ["Outcome", "Pending", "Router", "drift_response"]


class Router(Protocol):
    """What the transports need of a recording."""

    @property
    def mode(self) -> str:
        """`replay`, `missing` or `rerecord`."""
        ...

    @property
    def stand_in(self) -> str:
        """The stand-in key a request without a key of its own carries."""
        ...

    def answer(
        self,
        method: str,
        url: str,
        headers: Iterable[tuple[str, str]],
        body: bytes,
        *,
        has_credentials: bool,
    ) -> Outcome:
        """How to answer one request."""
        ...


class Pending:
    """An exchange being recorded: the request, then the response as its body is read."""

    def __init__(self, lock: threading.RLock, request: dict[str, Any], secrets: set[str]) -> None:
        self.lock = lock
        self.request = request
        self.secrets = secrets
        self.status: int | None = None
        self.headers: list[tuple[str, str]] = []
        self.response: dict[str, Any] | None = None
        self.body = bytearray()  # what has been read of the response body so far
        self.failed: str | None = None

    def start(self, status: int, headers: list[tuple[str, str]]) -> None:
        """The response's status and headers arrived."""
        self.status, self.headers = status, headers

    def finish_body(self, body: bytes, *, cut: str | None = None) -> None:
        """The body has been read (to its end, to a failure `cut`, or until the reader left)."""
        with self.lock:
            if self.response is not None or self.status is None:
                return
            record = response_record(self.status, self.headers, body)
            if cut is not None:
                record["cut"] = cut
            # a body the client closed early (it had what it needed) ends where reading stopped:
            # a replay reads no further either, and nothing timing-dependent is written
            self.response = record

    def fail(self, text: str) -> None:
        """No response: the request failed to reach the server (nothing is recorded)."""
        self.failed = text

    def exchange(self) -> dict[str, Any] | None:
        """The exchange as the file keeps it; a body nobody finished or closed is kept as far
        as it was read. None when no response came."""
        if self.response is None and self.status is not None:
            self.finish_body(bytes(self.body))
        if self.response is None:
            return None
        exchange: dict[str, Any] = scrub(
            {"request": self.request, "response": self.response}, self.secrets
        )
        return exchange


@dataclass(slots=True)
class Outcome:
    """What to do with one request: answer it with `response`, or send it and record (`pending`)."""

    response: dict[str, Any] | None = None
    pending: Pending | None = None

    def response_parts(self) -> tuple[int, dict[str, str], list[bytes], str | None]:
        """Status, headers, body chunks and the failure that cut it, of the response to give."""
        record = self.response or {}
        headers = {str(k): str(v) for k, v in (record.get("headers") or {}).items()}
        return int(record.get("status", 200)), headers, response_chunks(record), record.get("cut")


def drift_response(text: str) -> dict[str, Any]:
    """A 400 whose JSON every adapter words as an error (OpenAI's and Anthropic's `error`
    object, Gemini's `status`, an AWS error type)."""
    error = {"code": 400, "message": text, "status": "RECORDING_DRIFT", "type": "recording_drift"}
    return {
        "status": 400,
        "headers": {
            "content-type": "application/json",
            "x-amzn-errortype": "RecordingDriftException",
        },
        "body": {"error": error, "message": text, "type": "error"},
    }
