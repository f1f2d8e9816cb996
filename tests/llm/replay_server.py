"""A real HTTP server on 127.0.0.1 that replays scripted responses, for provider tests.

Tests queue `ScriptedResponse`s (status, headers, a body as a list of byte chunks written and
flushed one by one, optional delays, optional "drop the connection after chunk N") and point a
real SDK at `server.url`; every request is recorded (`server.requests`) for assertions.

Bodies without a `content-length` go out with chunked transfer encoding, so a dropped connection
looks to the client exactly like a server dying mid-stream. A client dropping its connection is
counted (`dropped_connections`), not printed as an error; any other failure in a handler thread
still prints its traceback.

SSE fixtures are plain files under `tests/llm/fixtures/<api>/<name>.sse`:
`load_fixture(api, name)` reads one, `split_sse` cuts a body into one chunk per event and
`rechunk` into chunks of given sizes.
"""

from __future__ import annotations

import json
import sys
import threading
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = [
    "FIXTURES",
    "RecordedRequest",
    "ReplayServer",
    "ScriptedResponse",
    "load_fixture",
    "rechunk",
    "split_sse",
]

FIXTURES = Path(__file__).parent / "fixtures"


def load_fixture(api: str, name: str) -> bytes:
    """The bytes of `fixtures/<api>/<name>` (`.sse` is added when `name` has no suffix)."""
    path = FIXTURES / api / name
    if not path.suffix:
        path = path.with_suffix(".sse")
    return path.read_bytes()


def split_sse(body: bytes) -> list[bytes]:
    """One chunk per SSE event (each keeps its blank-line terminator)."""
    normalized = body.replace(b"\r\n", b"\n")
    chunks: list[bytes] = []
    for part in normalized.split(b"\n\n"):
        if part.strip():
            chunks.append(part + b"\n\n")
    return chunks


def rechunk(body: bytes, sizes: Iterable[int]) -> list[bytes]:
    """`body` cut into chunks of the given sizes (cycled; a size < 1 counts as 1)."""
    chunks: list[bytes] = []
    sizes = list(sizes) or [len(body) or 1]
    i = 0
    k = 0
    while i < len(body):
        n = max(1, sizes[k % len(sizes)])
        chunks.append(body[i : i + n])
        i += n
        k += 1
    return chunks


@dataclass(slots=True, kw_only=True)
class ScriptedResponse:
    """One response the server will send.

    Attributes:
        status: the HTTP status.
        headers: response headers (`content-type` defaults to `text/event-stream`).
        chunks: the body, written and flushed chunk by chunk.
        delay: seconds to wait before each chunk after the first (or one value per chunk,
            the first included).
        drop_after: close the connection after writing this many chunks, without finishing
            the body.
    """

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    delay: float | Sequence[float] = 0.0
    drop_after: int | None = None

    @classmethod
    def sse(
        cls,
        body: bytes | Sequence[bytes],
        *,
        status: int = 200,
        headers: Mapping[str, str] | None = None,
        delay: float | Sequence[float] = 0.0,
        drop_after: int | None = None,
    ) -> ScriptedResponse:
        """An event stream; a `bytes` body is split into one chunk per event."""
        chunks = split_sse(body) if isinstance(body, bytes) else list(body)
        return cls(
            status=status,
            headers={"content-type": "text/event-stream", **(headers or {})},
            chunks=chunks,
            delay=delay,
            drop_after=drop_after,
        )

    @classmethod
    def json(
        cls, body: Any, *, status: int = 200, headers: Mapping[str, str] | None = None
    ) -> ScriptedResponse:
        """A JSON document, sent with a `content-length`."""
        data = json.dumps(body).encode()
        return cls(
            status=status,
            headers={
                "content-type": "application/json",
                "content-length": str(len(data)),
                **(headers or {}),
            },
            chunks=[data],
        )

    def delay_before(self, index: int) -> float:
        if isinstance(self.delay, int | float):
            return float(self.delay) if index > 0 else 0.0
        return float(self.delay[index]) if index < len(self.delay) else 0.0


@dataclass(slots=True, kw_only=True)
class RecordedRequest:
    """A request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def setup(self) -> None:
        super().setup()
        self.server.replay._connection(+1)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.replay._connection(-1)

    def _serve(self) -> None:
        try:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            replay = self.server.replay
            replay._record(
                RecordedRequest(
                    method=self.command,
                    path=self.path,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                )
            )
            self._respond(replay._next())
        except ConnectionError:  # the client went away (reset, broken pipe)
            self.close_connection = True
            self.server.replay._dropped()

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _serve

    def _respond(self, response: ScriptedResponse) -> None:
        headers = {k.lower(): v for k, v in response.headers.items()}
        chunked = "content-length" not in headers
        self.send_response(response.status)
        for name, value in headers.items():
            self.send_header(name, value)
        if chunked:
            self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        stopping = self.server.replay._stopping
        for index, chunk in enumerate(response.chunks):
            if response.drop_after is not None and index >= response.drop_after:
                break
            wait = response.delay_before(index)
            if wait > 0 and stopping.wait(wait):
                break
            if chunked:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            else:
                self.wfile.write(chunk)
            self.wfile.flush()
        else:
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            return
        # dropped (or the server is stopping): end the connection mid-body
        self.close_connection = True
        self.connection.close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    replay: ReplayServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Print a handler's traceback, unless the client merely dropped the connection (SDKs
        do that when a stream is closed early, a retry gives up, or a test aborts)."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            self.replay._dropped()
            return
        super().handle_error(request, client_address)


class ReplayServer:
    """Serves queued `ScriptedResponse`s in order on 127.0.0.1 and records every request.

    With an empty queue it answers 500 with a JSON error saying so.
    """

    def __init__(self) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.replay = self
        self._queue: deque[ScriptedResponse] = deque()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._dropped_connections = 0
        self._connections = 0
        self._open_connections = 0

    @property
    def url(self) -> str:
        """`http://127.0.0.1:<port>`."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def base_url(self, prefix: str = "/v1") -> str:
        """The server's URL plus an API prefix, for an SDK's `base_url`."""
        return self.url + prefix

    @property
    def requests(self) -> list[RecordedRequest]:
        """The requests received so far, in order."""
        with self._lock:
            return list(self._requests)

    def enqueue(self, *responses: ScriptedResponse) -> None:
        """Queue responses, served one per request in order."""
        with self._lock:
            self._queue.extend(responses)

    @property
    def pending(self) -> int:
        """How many queued responses have not been served."""
        with self._lock:
            return len(self._queue)

    @property
    def dropped_connections(self) -> int:
        """How many connections clients dropped while a handler read or wrote them (not
        reported as errors)."""
        with self._lock:
            return self._dropped_connections

    @property
    def connections(self) -> int:
        """How many TCP connections clients opened so far."""
        with self._lock:
            return self._connections

    @property
    def open_connections(self) -> int:
        """How many of them are still open (their handler still serving)."""
        with self._lock:
            return self._open_connections

    def _connection(self, change: int) -> None:
        with self._lock:
            self._connections += max(change, 0)
            self._open_connections += change

    def _dropped(self) -> None:
        with self._lock:
            self._dropped_connections += 1

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _next(self) -> ScriptedResponse:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        return ScriptedResponse.json(
            {"error": {"message": "replay server: no response queued", "type": "test_error"}},
            status=500,
        )

    def start(self) -> ReplayServer:
        """Serve in a background thread."""
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, end delayed responses, and close the socket."""
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve(*responses: ScriptedResponse) -> Iterator[ReplayServer]:
    """A started server with `responses` queued (a generator for fixtures)."""
    server = ReplayServer().start()
    server.enqueue(*responses)
    try:
        yield server
    finally:
        server.stop()
