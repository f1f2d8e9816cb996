"""The replay server itself: ordering, recording, chunking, delays and dropped connections."""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Callable

import httpx
import pytest

from .replay_server import ReplayServer, ScriptedResponse, rechunk, split_sse

pytestmark = pytest.mark.anyio


async def test_serves_in_order_and_records(replay_server: ReplayServer) -> None:
    replay_server.enqueue(
        ScriptedResponse.json({"a": 1}, status=201, headers={"x-test": "yes"}),
        ScriptedResponse.sse(b"data: one\n\ndata: two\n\n"),
    )
    async with httpx.AsyncClient(base_url=replay_server.url) as client:
        first = await client.post("/v1/x", json={"hello": "world"}, headers={"X-Key": "k"})
        second = await client.get("/v1/y")
        third = await client.get("/v1/z")
    assert (first.status_code, first.json(), first.headers["x-test"]) == (201, {"a": 1}, "yes")
    assert second.text == "data: one\n\ndata: two\n\n"
    assert second.headers["content-type"] == "text/event-stream"
    assert third.status_code == 500 and "no response queued" in third.text
    recorded = replay_server.requests
    assert [r.path for r in recorded] == ["/v1/x", "/v1/y", "/v1/z"]
    assert recorded[0].json == {"hello": "world"} and recorded[0].headers["x-key"] == "k"


async def test_dropped_connection_is_a_protocol_error(replay_server: ReplayServer) -> None:
    replay_server.enqueue(ScriptedResponse.sse([b"data: 1\n\n", b"data: 2\n\n"], drop_after=1))
    received: list[bytes] = []
    async with httpx.AsyncClient(base_url=replay_server.url) as client:
        with pytest.raises(httpx.RemoteProtocolError):
            async with client.stream("GET", "/") as response:
                async for chunk in response.aiter_raw():
                    received.append(chunk)
    assert b"".join(received) == b"data: 1\n\n"


async def test_delays_between_chunks(replay_server: ReplayServer) -> None:
    replay_server.enqueue(ScriptedResponse.sse([b"data: 1\n\n", b"data: 2\n\n"], delay=0.2))
    async with (
        httpx.AsyncClient(base_url=replay_server.url) as client,
        client.stream("GET", "/") as response,
    ):
        chunks = [c async for c in response.aiter_raw()]
    assert b"".join(chunks) == b"data: 1\n\ndata: 2\n\n"


def test_split_and_rechunk() -> None:
    body = b"event: a\ndata: 1\n\ndata: 2\r\n\r\n"
    assert split_sse(body) == [b"event: a\ndata: 1\n\n", b"data: 2\n\n"]
    assert rechunk(b"abcdefg", [2, 3]) == [b"ab", b"cde", b"fg"]
    assert b"".join(rechunk(body, [0])) == body


def _reset(server: ReplayServer, data: bytes) -> None:
    """Send `data`, then drop the connection with a TCP reset."""
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as sock:
        if data:
            sock.sendall(data)
            time.sleep(0.05)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def _wait_for(condition: Callable[[], object], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_a_dropped_connection_is_not_reported(
    replay_server: ReplayServer, capsys: pytest.CaptureFixture[str]
) -> None:
    replay_server.enqueue(ScriptedResponse.sse([b"data: 1\n\n"] * 50, delay=0.01))
    _reset(replay_server, b"")  # before the request line
    _reset(replay_server, b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")  # while the answer streams
    _wait_for(lambda: replay_server.dropped_connections >= 2)
    assert httpx.get(replay_server.url).status_code == 500  # still serving
    assert "Traceback" not in capsys.readouterr().err


def test_a_failing_handler_is_still_reported(
    replay_server: ReplayServer, capsys: pytest.CaptureFixture[str]
) -> None:
    replay_server.enqueue(ScriptedResponse(chunks=["not bytes"]))  # type: ignore[list-item]
    with pytest.raises(httpx.HTTPError):
        httpx.get(replay_server.url)
    printed: list[str] = []
    _wait_for(lambda: printed.append(capsys.readouterr().err) or "TypeError" in "".join(printed))
    assert "Traceback" in "".join(printed)
