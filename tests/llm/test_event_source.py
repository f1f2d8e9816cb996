"""The raw event-stream reader (`_http.EventSource`, `parse_event`): events that arrived in one
chunk are taken without waiting, a `[DONE]` ends them, and every event parses to what
`json.loads` gives (values and error texts), whichever JSON parser read it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest

from agentcore.llm._failures import MalformedEvent, malformed_json_text
from agentcore.llm._http import END, PENDING, EventSource, parse_event

pytestmark = pytest.mark.anyio


class _Body(httpx.AsyncByteStream):
    """A response body arriving in the given chunks, recording how many were read."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.read = 0
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            self.read += 1
            yield chunk

    async def aclose(self) -> None:
        self.closed = True


def _response(body: _Body) -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=body)


@pytest.mark.parametrize(
    "data",
    [
        b'{"a": 1}',
        b'{"a": NaN, "b": Infinity, "c": -Infinity}',
        b'{"a": 123456789012345678901234567890, "b": 1e400, "c": -0.0}',
        b'{"a": 1, "a": 2}',
        b'{"a": "\\ud800"}',  # a lone surrogate: jiter refuses it, json.loads keeps it
        b'{"a": "bad \xff\xfe bytes"}',  # not UTF-8: U+FFFD, as the text reader always did
        b'{"a": "\\u0000\\n\xc3\xa9"}',
        b"[1, 2]",
        b"null",
    ],
)
def test_values_are_those_of_json_loads(data: bytes) -> None:
    expected = json.loads(data.decode("utf-8", errors="replace"))
    assert json.dumps(parse_event(data)) == json.dumps(expected)


@pytest.mark.parametrize(
    "data", [b'{"a": 1} x', b'{"a": "\x01"}', b"[1, 2,]", b'\xef\xbb\xbf{"a": 1}', b"{", b"nul"]
)
def test_errors_are_those_of_json_loads(data: bytes) -> None:
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(data.decode("utf-8", errors="replace"))
    with pytest.raises(MalformedEvent) as raised:
        parse_event(data)
    assert str(raised.value) == str(MalformedEvent(malformed_json_text(expected.value)))


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_events_of_one_chunk_are_taken_without_reading_again() -> None:
    events = b"".join(b'data: {"n": %d}\n\n' % n for n in range(100))
    body = _Body([events, b": keep-alive\n\n", b'data: {"n": 100}\n\ndata: [DONE]\n\n', b"late"])
    source = EventSource(_response(body))
    assert source.poll() is PENDING  # nothing read yet
    await source.fill()
    assert body.read == 1
    taken = []
    while (item := source.poll()) is not PENDING:
        taken.append(item["n"])
    assert taken == list(range(100)) and body.read == 1
    assert await source.wait() == {"n": 100}  # the keep-alive chunk is read past
    assert body.read == 3
    assert source.poll() is END  # [DONE] ends the events
    await source.aclose()  # reads the rest of the body, then closes it
    assert body.read == 4 and body.closed


async def test_skipped_events_and_a_body_that_ends_without_its_blank_line() -> None:
    body = _Body([b'data: {"type": "ping"}\n\ndata: {"type": "a"}\n\ndata: {"type"', b': "b"}'])
    source = EventSource(_response(body), skip=lambda event: event.get("type") == "ping")
    assert [event async for event in source] == [{"type": "a"}, {"type": "b"}]
    assert source.poll() is END
    await source.aclose()
    assert body.closed


async def test_a_malformed_event_comes_after_the_good_ones_before_it() -> None:
    body = _Body([b'data: {"n": 1}\n\ndata: {oops\n\ndata: {"n": 2}\n\n'])
    source = EventSource(_response(body))
    assert await source.wait() == {"n": 1}
    with pytest.raises(MalformedEvent):
        source.poll()
    assert source.poll() == {"n": 2}
    await source.aclose()
