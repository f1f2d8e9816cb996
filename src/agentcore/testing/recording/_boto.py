"""Recording Bedrock's traffic at botocore's HTTP layer.

botocore emits `before-send` with the signed request just before it goes out, and sends nothing
when a handler returns a response. Replaying returns an `AWSResponse` whose raw body re-encodes
the recorded event-stream frames (the SDK's own decoder reads them, CRCs and all); recording
sends the request through the client's own HTTP session and returns its response with the raw
body read through a tee. Replays are not signed (nothing is sent, no credentials are needed).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..._optional import import_sdk

if TYPE_CHECKING:
    from ._exchange import Pending, Router

__all__ = ["wrap_botocore_client"]

_SERVICE = "bedrock-runtime"


class _ReplayRaw:
    """A recorded body, read the way botocore reads a urllib3 response."""

    def __init__(self, chunks: list[bytes], cut: str | None) -> None:
        self._chunks = list(chunks)
        self._buffer = b""
        self._cut = cut
        self._closed = False

    def stream(self, amt: int | None = None, decode_content: bool | None = None) -> Iterator[bytes]:
        while not self._closed and (self._buffer or self._chunks):
            if self._buffer:
                chunk, self._buffer = self._buffer, b""
            else:
                chunk = self._chunks.pop(0)
            yield chunk
        if self._cut is not None and not self._closed:
            raise ConnectionError(self._cut)

    def read(self, amt: int | None = None, decode_content: bool | None = None) -> bytes:
        data = self._buffer + b"".join(self._chunks)
        self._chunks = []
        if amt is None:
            self._buffer = b""
            return data
        self._buffer = data[amt:]
        return data[:amt]

    def close(self) -> None:
        self._closed = True


class _TeeRaw:
    """A urllib3 response whose bytes are kept as they are read."""

    def __init__(self, inner: Any, pending: Pending) -> None:
        self._inner = inner
        self._pending = pending
        self._body = pending.body
        self._lock = threading.Lock()

    @property
    def _connection(self) -> Any:  # for the adapter's shutdown of a blocked read
        return getattr(self._inner, "_connection", None) or getattr(self._inner, "connection", None)

    def stream(
        self, amt: int | None = 2**16, decode_content: bool | None = None
    ) -> Iterator[bytes]:
        try:
            for chunk in self._inner.stream(amt, decode_content=decode_content):
                with self._lock:
                    self._body += chunk
                yield chunk
        except Exception as exc:
            self._pending.finish_body(bytes(self._body), cut=f"{type(exc).__name__}: {exc}")
            raise
        self._pending.finish_body(bytes(self._body))

    def read(self, amt: int | None = None, decode_content: bool | None = None) -> bytes:
        data = self._inner.read(amt, decode_content=decode_content)
        with self._lock:
            self._body += data
        if amt is None or not data:
            self._pending.finish_body(bytes(self._body))
        return bytes(data)

    def close(self) -> None:
        self._pending.finish_body(bytes(self._body))
        self._inner.close()


def wrap_botocore_client(recording: Router, client: Any) -> None:
    """Answer a Bedrock runtime client's requests from `recording` (or record them)."""
    unsigned_marker = import_sdk("botocore", "bedrock", needed_by="recording Bedrock").UNSIGNED
    response_class = import_sdk(
        "botocore.awsrequest", "bedrock", needed_by="recording Bedrock"
    ).AWSResponse

    events = client.meta.events

    def unsigned(**_: Any) -> Any:
        if recording.mode == "replay":
            return unsigned_marker
        signer = getattr(client, "_request_signer", None)
        if getattr(signer, "_credentials", True) is None:  # none to sign with: replay only
            return unsigned_marker
        return None

    def before_send(request: Any, **_: Any) -> Any:
        body = request.body
        if hasattr(body, "read"):
            body = body.read()
        if isinstance(body, str):
            body = body.encode("utf-8")
        headers = [(str(k), str(v)) for k, v in request.headers.items()]
        outcome = recording.answer(
            request.method,
            request.url,
            headers,
            bytes(body or b""),
            has_credentials=any(k.lower() == "authorization" for k, _ in headers),
        )
        if outcome.pending is None:
            status, response_headers, chunks, cut = outcome.response_parts()
            return response_class(request.url, status, response_headers, _ReplayRaw(chunks, cut))
        try:
            response = client._endpoint.http_session.send(request)
        except Exception as exc:
            outcome.pending.fail(f"{type(exc).__name__}: {exc}")
            raise
        outcome.pending.start(response.status_code, [(k, v) for k, v in response.headers.items()])
        return response_class(
            response.url,
            response.status_code,
            response.headers,
            _TeeRaw(response.raw, outcome.pending),
        )

    events.register(f"choose-signer.{_SERVICE}", unsigned)
    events.register(f"before-send.{_SERVICE}", before_send)
