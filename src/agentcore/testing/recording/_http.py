"""Recording at the HTTP layer of the openai, anthropic and google-genai SDKs.

Each adapter hands its SDK an httpx `AsyncClient` (the openai and anthropic SDKs use httpx2, a
fork with the same interface); the model layer shows that client to the active recording, which
puts `RecordingTransport` in front of the client's transports. Everything above the transport
(the SDK's request building, headers, retries off, its stream parsing, the adapter's own event
hooks) runs as it does against a server.

Replaying answers from the recording with a response built from it, never opening a connection.
Recording forwards the request to the real transport (asking for an uncompressed body) and reads
the body through a tee that keeps what passed, so the SDK sees the server's response as it came.
"""

from __future__ import annotations

import importlib
import zlib
from collections.abc import AsyncIterator
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._exchange import Pending, Router

__all__ = ["RecordingTransport", "wrap_client"]

_classes: dict[str, tuple[type[Any], type[Any]]] = {}


def _module_of(request: Any) -> ModuleType:
    """`httpx` or `httpx2`, whichever built this request."""
    return importlib.import_module(type(request).__module__.split(".")[0])


def _stream_classes(module: ModuleType) -> tuple[type[Any], type[Any]]:
    """The replay and tee byte streams for this httpx flavour (its `Response` insists on its own
    `AsyncByteStream`)."""
    found = _classes.get(module.__name__)
    if found is not None:
        return found
    base: Any = module.AsyncByteStream

    class ReplayStream(base):  # type: ignore[misc]
        def __init__(self, chunks: list[bytes], cut: str | None) -> None:
            self.chunks = chunks
            self.cut = cut

        async def __aiter__(self) -> AsyncIterator[bytes]:
            for chunk in self.chunks:
                yield chunk
            if self.cut is not None:
                raise module.ReadError(self.cut)

    class TeeStream(base):  # type: ignore[misc]
        def __init__(self, inner: Any, pending: Pending, decode: str) -> None:
            self.inner = inner
            self.pending = pending
            self.body = pending.body
            self.decoder = _decoder(decode)

        async def __aiter__(self) -> AsyncIterator[bytes]:
            try:
                async for chunk in self.inner:
                    self.body += self.decoder(chunk)
                    yield chunk
            except Exception as exc:
                self.pending.finish_body(bytes(self.body), cut=f"{type(exc).__name__}: {exc}")
                raise
            self.pending.finish_body(bytes(self.body))

        async def aclose(self) -> None:
            self.pending.finish_body(bytes(self.body))  # no-op when finished
            await self.inner.aclose()

    _classes[module.__name__] = (ReplayStream, TeeStream)
    return ReplayStream, TeeStream


def _decoder(encoding: str) -> Any:
    """Bytes of a body as sent, to bytes as meant (for the record only)."""
    encoding = encoding.strip().lower()
    if encoding in ("gzip", "deflate"):
        inflater = zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib header, detected
        return inflater.decompress
    return lambda chunk: chunk


class RecordingTransport:
    """An httpx/httpx2 transport that answers from a recording, or records what the transport
    it wraps answers."""

    def __init__(self, recording: Router, inner: Any) -> None:
        self.recording = recording
        self.inner = inner

    async def handle_async_request(self, request: Any) -> Any:
        module = _module_of(request)
        body = await request.aread()
        headers = list(request.headers.multi_items())
        outcome = self.recording.answer(
            request.method,
            str(request.url),
            headers,
            body,
            has_credentials=not any(self.recording.stand_in in v for _, v in headers),
        )
        replay_stream, tee_stream = _stream_classes(module)
        if outcome.pending is None:
            status, response_headers, chunks, cut = outcome.response_parts()
            return module.Response(
                status,
                headers=response_headers,
                stream=replay_stream(chunks, cut),
                request=request,
            )
        request.headers["accept-encoding"] = "identity"
        try:
            response = await self.inner.handle_async_request(request)
        except Exception as exc:
            outcome.pending.fail(f"{type(exc).__name__}: {exc}")
            raise
        outcome.pending.start(response.status_code, list(response.headers.multi_items()))
        encoding = response.headers.get("content-encoding", "identity")
        return module.Response(
            response.status_code,
            headers=response.headers,
            stream=tee_stream(response.stream, outcome.pending, encoding),
            request=request,
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> RecordingTransport:
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *args: Any) -> None:
        await self.inner.__aexit__(*args)


def wrap_client(recording: Router, client: Any) -> None:
    """Put a `RecordingTransport` in front of every transport of an httpx/httpx2 `AsyncClient`
    (its default one and those mounted for proxies)."""
    transport = getattr(client, "_transport", None)
    mounts = getattr(client, "_mounts", None)
    if transport is None or not isinstance(mounts, dict):
        raise TypeError(
            f"cannot record the traffic of {type(client).__name__}: not an httpx AsyncClient "
            "with a transport"
        )
    if isinstance(transport, RecordingTransport):
        return
    client._transport = RecordingTransport(recording, transport)
    for pattern, mounted in list(mounts.items()):
        if mounted is not None:
            mounts[pattern] = RecordingTransport(recording, mounted)
