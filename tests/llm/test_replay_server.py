"""The replay server itself: ordering, recording, chunking, delays and dropped connections."""

from __future__ import annotations

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
