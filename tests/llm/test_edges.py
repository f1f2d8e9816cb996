"""The edges every adapter shares, beyond the fault suite: redaction of header secrets, the log,
an abort before the request, `max_retries=0`, a JSON body where events were expected, an empty
event stream, the shared SSE parser, and the faux provider's bounds.

Each adapter runs through its real SDK against the replay server (`test_faults.py` covers the
faults of a running answer).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import anyio
import pytest

from agentcore.abort import AbortController
from agentcore.llm import stream as llm_stream
from agentcore.llm._http import sse_events
from agentcore.llm._redact import REDACTED, is_secret_header, redact, secret_values
from agentcore.llm.events import ErrorEvent, StartEvent
from agentcore.llm.model import Model, ModelCost
from agentcore.llm.stream import AssistantMessageEventStream
from agentcore.llm.types import Context, ResponseInfo, StreamOptions
from agentcore.messages import AssistantMessage, TextContent, UserMessage
from agentcore.testing import FauxProvider

from .helpers import collect
from .replay_server import ReplayServer, ScriptedResponse, load_fixture, split_sse

pytestmark = pytest.mark.anyio

APIS = ("openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai")
KEY = "sk-edge-key-0123456789"
BEARER = "gw-bearer-token-abcdef"
GATEWAY = "gateway-token-987654321"
CUSTOM = "custom-secret-value-42"
PLAIN = "team-blue-requests"  # the value of a header that is not a secret


def make_model(api: str, server: ReplayServer, headers: dict[str, str] | None = None) -> Model:
    base_url = {
        "openai-completions": server.base_url(),
        "openai-responses": server.base_url(),
        "anthropic-messages": server.url,
        "google-generative-ai": server.base_url("/v1beta"),
    }[api]
    return Model(
        id="edge-model",
        api=api,  # type: ignore[arg-type]
        provider="edge",
        base_url=base_url,
        reasoning=False,
        cost=ModelCost(input=1.0, output=2.0),
        max_tokens=1024,
        headers=headers or {},
    )


def ask() -> Context:
    return Context(messages=[UserMessage(content="Hi")])


def text_answer(api: str) -> ScriptedResponse:
    return ScriptedResponse.sse(load_fixture(api, "text"))


def error_status(status: int, message: str, headers: dict[str, str] | None = None) -> Any:
    """An error body every API's SDK reads its message from."""
    error = {"code": status, "message": message, "status": "UNAVAILABLE", "type": "api_error"}
    return ScriptedResponse.json({"error": error}, status=status, headers=headers)


# --- redaction --------------------------------------------------------------------------------


def test_secret_headers_by_name() -> None:
    secret = ("Authorization", "api-key", "X-API-Key", "x-goog-api-key", "X-Gateway-Token")
    for name in (*secret, "x-client-secret", "Proxy-Authorization", "x-auth", "Cookie"):
        assert is_secret_header(name), name
    for name in ("Content-Type", "x-team", "anthropic-beta", "User-Agent"):
        assert not is_secret_header(name), name


def test_redact_finds_every_form_of_a_secret() -> None:
    secrets = secret_values(KEY, {"Authorization": f"Bearer {BEARER}", "x-team": PLAIN})
    text = (
        f"key {KEY}; upper {KEY.upper()}; header Bearer {BEARER}; bare {BEARER}; "
        f"url ?key={quote(KEY + '/+')}; json {json.dumps('a' + KEY)}; team {PLAIN}"
    )
    out = redact(text, secrets)
    assert KEY not in out and KEY.upper() not in out and BEARER not in out
    assert PLAIN in out  # not a secret header
    assert out.count(REDACTED) >= 6


def test_url_encoded_and_json_escaped_secrets() -> None:
    odd = 'tok/with+odd"chars=='
    secrets = secret_values(odd)
    for form in (quote(odd, safe=""), json.dumps(odd)[1:-1], odd):
        assert redact(f"<{form}>", secrets) == f"<{REDACTED}>", form


def test_short_values_are_not_secrets() -> None:
    # a one-letter key must not blank out every "k" of an error text
    assert secret_values("k", {"x-api-key": "abc"}) == ()
    assert redact("rate limit: tokens per minute", secret_values("k")) == (
        "rate limit: tokens per minute"
    )


async def test_the_stream_redacts_a_failure_of_its_source() -> None:
    async def source() -> AsyncIterator[Any]:
        yield StartEvent(partial=AssistantMessage())
        raise RuntimeError(f"boom with {KEY}")

    stream = AssistantMessageEventStream(source(), redact=lambda t: redact(t, (KEY,)))
    events, message = await collect(stream)
    assert isinstance(events[-1], ErrorEvent)
    assert message.error_message == f"RuntimeError: boom with {REDACTED}"


@pytest.mark.parametrize("api", APIS)
async def test_header_secrets_are_redacted_from_error_texts(
    api: str, replay_server: ReplayServer
) -> None:
    headers = {"Authorization": f"Bearer {BEARER}", "X-Gateway-Token": GATEWAY, "x-team": PLAIN}
    echoed = f"denied: {KEY} Bearer {BEARER} {quote(GATEWAY)} {CUSTOM} team {PLAIN}"
    replay_server.enqueue(error_status(401, echoed))
    options = StreamOptions(api_key=KEY, headers={"X-Custom-Secret": CUSTOM})
    _, message = await collect(llm_stream(make_model(api, replay_server, headers), ask(), options))
    assert message.stop_reason == "error"
    text = message.error_message or ""
    for secret in (KEY, BEARER, GATEWAY, CUSTOM):
        assert secret not in text, text
    assert "denied" in text and PLAIN in text and text.count(REDACTED) == 4


@pytest.mark.parametrize("api", ["openai-completions", "anthropic-messages"])
async def test_an_error_event_in_the_stream_is_redacted(
    api: str, replay_server: ReplayServer
) -> None:
    error = {"type": "error", "error": {"type": "api_error", "message": f"leaked {KEY}"}}
    start = load_fixture(api, "text").split(b"\n\n")[0] + b"\n\n"
    replay_server.enqueue(ScriptedResponse.sse([start, f"data: {json.dumps(error)}\n\n".encode()]))
    model = make_model(api, replay_server)
    _, message = await collect(llm_stream(model, ask(), StreamOptions(api_key=KEY)))
    assert message.stop_reason == "error"
    assert message.error_message is not None and message.error_message.endswith(
        f"leaked {REDACTED}"
    )


# --- the log ----------------------------------------------------------------------------------


@pytest.mark.parametrize("api", APIS)
async def test_each_retry_is_logged_without_secrets(
    api: str, replay_server: ReplayServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="agentcore")
    replay_server.enqueue(
        error_status(503, f"busy, key {KEY}", {"retry-after": "0"}), text_answer(api)
    )
    model = make_model(api, replay_server)
    _, message = await collect(llm_stream(model, ask(), StreamOptions(api_key=KEY)))
    assert message.stop_reason == "stop"
    (record,) = [r for r in caplog.records if r.name == "agentcore.llm"]
    assert record.levelno == logging.INFO
    text = record.getMessage()
    assert text.startswith("edge/edge-model: attempt 1 of 4 failed: ") and "503" in text
    assert text.endswith("retrying in 0 s")
    assert KEY not in caplog.text and REDACTED in text


async def test_timeouts_are_logged_as_warnings(
    replay_server: ReplayServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="agentcore")
    first = load_fixture("openai-completions", "text").split(b"\n\n")[:2]
    replay_server.enqueue(
        ScriptedResponse.sse([b": ..\n\n"], delay=[5.0]),  # no first event in time
        ScriptedResponse.sse([e + b"\n\n" for e in first] + [b"{}"], delay=[0, 0, 5.0]),
    )
    options = StreamOptions(  # see test_idle_and_request_timeouts_release_everything
        api_key=KEY, request_timeout=1.0, idle_timeout=0.2, max_retries=1, max_retry_delay_ms=1
    )
    model = make_model("openai-completions", replay_server)
    _, message = await collect(llm_stream(model, ask(), options))
    assert message.error_message == "the stream was silent for longer than idle_timeout (0.2 s)"
    records = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "agentcore.llm"]
    assert [level for level, _ in records] == [logging.WARNING, logging.WARNING]
    assert records[0][1].startswith(
        "edge/edge-model: attempt 1 of 2 failed: no response within request_timeout (1 s); "
        "retrying in"
    )
    assert records[1][1] == (
        "edge/edge-model: the stream was silent for longer than idle_timeout (0.2 s); "
        "ending the answer"
    )


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
@pytest.mark.parametrize("api", APIS)
async def test_idle_and_request_timeouts_release_everything(
    api: str, replay_server: ReplayServer
) -> None:
    """Both timeouts cut a read short; trio reports any generator or connection left behind."""
    events = split_sse(load_fixture(api, "text"))
    replay_server.enqueue(
        ScriptedResponse.sse([b": ..\n\n"] * 2, delay=[0, 5.0]),
        ScriptedResponse.sse(events[:2] + [b": ..\n\n"] * 2, delay=[0, 0, 0, 5.0]),
    )
    # request_timeout is generous enough that a loaded machine still gets the second attempt's
    # first event in time (it answers at once); the first attempt never answers at all
    options = StreamOptions(
        api_key=KEY, request_timeout=1.0, idle_timeout=0.2, max_retries=1, max_retry_delay_ms=1
    )
    with anyio.fail_after(8):
        _, message = await collect(llm_stream(make_model(api, replay_server), ask(), options))
    assert message.error_message == "the stream was silent for longer than idle_timeout (0.2 s)"
    assert message.stop_reason == "error" and len(replay_server.requests) == 2


# --- before, between and around the attempts --------------------------------------------------


@pytest.mark.parametrize("api", APIS)
async def test_an_abort_before_the_request_calls_nothing(
    api: str, replay_server: ReplayServer
) -> None:
    calls: list[str] = []
    controller = AbortController()
    controller.abort()
    options = StreamOptions(
        api_key=KEY,
        signal=controller.signal,
        on_payload=lambda payload, model: calls.append("on_payload"),
        on_response=lambda info, model: calls.append("on_response"),
    )
    events, message = await collect(llm_stream(make_model(api, replay_server), ask(), options))
    assert [e.type for e in events] == ["error"] and message.stop_reason == "aborted"
    assert calls == [] and replay_server.requests == []


@pytest.mark.parametrize("api", APIS)
async def test_no_retries_when_max_retries_is_zero(api: str, replay_server: ReplayServer) -> None:
    replay_server.enqueue(error_status(503, "busy", {"retry-after": "0"}), text_answer(api))
    options = StreamOptions(api_key=KEY, max_retries=0)
    _, message = await collect(llm_stream(make_model(api, replay_server), ask(), options))
    assert message.stop_reason == "error" and "503" in (message.error_message or "")
    assert len(replay_server.requests) == 1


@pytest.mark.parametrize("api", APIS)
async def test_on_response_sees_every_attempt(api: str, replay_server: ReplayServer) -> None:
    seen: list[int] = []

    async def on_response(info: ResponseInfo, model: Model) -> None:
        seen.append(info.status)

    replay_server.enqueue(error_status(429, "slow down", {"retry-after": "0.01"}), text_answer(api))
    options = StreamOptions(api_key=KEY, on_response=on_response)
    events, message = await collect(llm_stream(make_model(api, replay_server), ask(), options))
    assert message.stop_reason == "stop" and [e.type for e in events].count("start") == 1
    assert seen == [429, 200]
    assert replay_server.requests[0].body == replay_server.requests[1].body


@pytest.mark.parametrize("api", APIS)
async def test_a_json_document_where_events_were_expected(
    api: str, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(ScriptedResponse.json({"id": "x", "note": "not streamed " * 40}))
    events, message = await collect(
        llm_stream(make_model(api, replay_server), ask(), StreamOptions(api_key=KEY))
    )
    assert [e.type for e in events] == ["error"]
    assert (message.error_message or "").startswith(
        'expected an event stream, got application/json: {"id": "x", "note": "not streamed'
    )
    assert (message.error_message or "").endswith("more characters")
    assert len(replay_server.requests) == 1  # not retried


@pytest.mark.parametrize("api", APIS)
async def test_an_empty_event_stream_is_retried(api: str, replay_server: ReplayServer) -> None:
    replay_server.enqueue(ScriptedResponse.sse([b": nothing\n\n"]), ScriptedResponse.sse([]))
    options = StreamOptions(api_key=KEY, max_retries=1, max_retry_delay_ms=1)
    events, message = await collect(llm_stream(make_model(api, replay_server), ask(), options))
    assert [e.type for e in events] == ["error"]
    assert message.error_message == "the event stream ended before its first event"
    assert len(replay_server.requests) == 2


@pytest.mark.parametrize("api", APIS)
async def test_a_stream_cut_short_is_named_alike(api: str, replay_server: ReplayServer) -> None:
    events = split_sse(load_fixture(api, "text"))
    replay_server.enqueue(ScriptedResponse.sse(events[:2]))
    _, message = await collect(
        llm_stream(make_model(api, replay_server), ask(), StreamOptions(api_key=KEY))
    )
    assert message.stop_reason == "error"
    assert (message.error_message or "").startswith(
        "the stream ended before the response finished (no "
    )


@pytest.mark.parametrize("api", APIS)
async def test_a_line_separator_inside_a_json_string(api: str, replay_server: ReplayServer) -> None:
    # U+2028 may stand unescaped in JSON; it does not end an SSE line
    body = load_fixture(api, "text")
    word = b"world" if b"world" in body else b"Hello"
    odd = word[:2] + "\u2028".encode() + word[2:]
    replay_server.enqueue(ScriptedResponse.sse(body.replace(word, odd, 1)))
    _, message = await collect(
        llm_stream(make_model(api, replay_server), ask(), StreamOptions(api_key=KEY))
    )
    assert message.stop_reason == "stop", message.error_message
    assert odd.decode() in message.text


# --- the shared parser ------------------------------------------------------------------------


async def parse(chunks: list[bytes]) -> list[str]:
    async def source() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    return [data async for data in sse_events(source())]


@pytest.mark.parametrize("size", [1, 2, 3, 5, 1000])
async def test_sse_events_however_the_bytes_are_cut(size: int) -> None:
    body = (
        b"\xef\xbb\xbf: opening comment\r\n\r\n"
        b"event: a\r\nid: 1\r\ndata: first\r\n\r\n"
        b": keep-alive\n\n"
        b"data:no space\rdata:  two spaces\r\r"
        b"retry: 100\ndata\n\n"  # a field without a colon, empty: no event
        b"data: bad \xff\xfe bytes\n\n"
        b'data: {"s": "a\xe2\x80\xa8b"}\n\n'
        b"data: last, unterminated"
    )
    chunks = [body[i : i + size] for i in range(0, len(body), size)]
    assert await parse(chunks) == [
        "first",
        "no space\n two spaces",
        "bad \ufffd\ufffd bytes",
        '{"s": "a\u2028b"}',
        "last, unterminated",
    ]


# --- the faux provider ------------------------------------------------------------------------


def faux_answer(text: str) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)])


async def test_faux_request_timeout() -> None:
    faux = FauxProvider([faux_answer("hi")], latency=5.0)
    with anyio.fail_after(3):
        events, message = await collect(
            faux.stream(faux.model, ask(), StreamOptions(request_timeout=0.05))
        )
    assert [e.type for e in events] == ["error"]
    assert message.error_message == "no response within request_timeout (0.05 s)"


async def test_faux_idle_timeout_keeps_what_streamed() -> None:
    # at 50 tokens a second the 4-character block takes 0.02 s, the 400-character one 2 s
    answer = AssistantMessage(content=[TextContent(text="a" * 4), TextContent(text="b" * 400)])
    faux = FauxProvider([answer], chunk_chars=400, tokens_per_second=50)
    with anyio.fail_after(3):
        _, message = await collect(faux.stream(faux.model, ask(), StreamOptions(idle_timeout=0.1)))
    assert message.stop_reason == "error"
    assert message.error_message == "the stream was silent for longer than idle_timeout (0.1 s)"
    assert message.content[0] == TextContent(text="aaaa") and message.usage.output == 1


async def test_faux_abort_before_the_request_calls_nothing() -> None:
    seen: list[int] = []
    faux = FauxProvider([faux_answer("hi")])
    controller = AbortController()
    controller.abort()
    options = StreamOptions(
        signal=controller.signal, on_response=lambda info, model: seen.append(info.status)
    )
    _, message = await collect(faux.stream(faux.model, ask(), options))
    assert message.stop_reason == "aborted" and seen == [] and faux.pending == 1
