"""Fallback models (issue 11): the first model is served by a real HTTP server on 127.0.0.1 (the
fault server, through the OpenAI SDK) that refuses or fails; the fallback (the faux provider)
answers. Driven by `agent_loop` with `fallback_models`, and `with_fallbacks` on its own.

What is checked: a refused connection, a 5xx after the retries, a rate limit beyond the retry
cap, an authentication failure and an overflow fall back, per request, and the answer names the
model that gave it; an overflow skips a fallback whose window is not larger; nothing falls back
once content has streamed, nor on an abort; every failed attempt is logged; the primary's API key
never reaches a fallback of another provider.
"""

from __future__ import annotations

import dataclasses
import logging
import socket
from collections.abc import Sequence
from typing import Any

import anyio
import pytest

from agentcore import (
    AbortController,
    Agent,
    AgentContext,
    AgentLoopConfig,
    agent_loop,
    set_instrumentation,
)
from agentcore.events import AgentEvent
from agentcore.llm import (
    AssistantMessageEventStream,
    Context,
    ErrorEvent,
    Model,
    SimpleStreamOptions,
    with_fallbacks,
)
from agentcore.messages import AgentMessage, AssistantMessage, UserMessage
from agentcore.testing import FauxProvider, check_well_formed, faux_error, faux_text

from .fault_server import API_KEY, CompletionsWire, FaultResponse, FaultServer

pytestmark = pytest.mark.anyio

WIRE = CompletionsWire()
BOUNDS: dict[str, Any] = {
    "request_timeout": 5.0,
    "idle_timeout": 5.0,
    "max_retries": 1,
    "max_retry_delay_ms": 50,
}
OVERFLOW_TEXT = "This model's maximum context length is 8192 tokens. However, you requested 9000."


def refused_model() -> Model:
    """A model whose server refuses connections (a port nothing listens on)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return dataclasses.replace(WIRE.model(_Nowhere()), base_url=f"http://127.0.0.1:{port}/v1")


class _Nowhere:
    def base_url(self, prefix: str = "/v1") -> str:
        return "http://127.0.0.1:9" + prefix


async def run(
    model: Model,
    fallbacks: Sequence[Model],
    caplog: pytest.LogCaptureFixture,
    gate: FaultServer | None = None,
    **options: Any,
) -> tuple[list[AgentEvent], list[AgentMessage]]:
    config = AgentLoopConfig(
        model=model, api_key=API_KEY, fallback_models=fallbacks, **{**BOUNDS, **options}
    )
    events: list[AgentEvent] = []
    caplog.set_level(logging.DEBUG, logger="agentcore")
    with anyio.fail_after(20):
        async with agent_loop([UserMessage(content="hi")], AgentContext(), config) as stream:
            async for event in stream:
                events.append(event)
                if (
                    gate is not None
                    and event.type == "message_update"
                    and event.assistant_message_event.type == "text_delta"
                ):
                    gate.gate.set()
            messages = await stream.result()
    check_well_formed(events)
    assert API_KEY not in caplog.text
    return events, messages


def answer_of(messages: Sequence[AgentMessage]) -> AssistantMessage:
    last = messages[-1]
    assert isinstance(last, AssistantMessage)
    return last


def assert_answered_by(message: AssistantMessage, faux: FauxProvider) -> None:
    assert message.stop_reason == "stop", message.error_message
    assert message.text == "from the fallback"
    assert (message.api, message.provider, message.model) == ("faux", faux.provider_id, "faux-1")


async def test_a_refused_connection_falls_back(caplog: pytest.LogCaptureFixture) -> None:
    faux = FauxProvider([faux_text("from the fallback")])
    _, messages = await run(refused_model(), [faux.model], caplog)
    assert_answered_by(answer_of(messages), faux)
    assert [m.role for m in messages] == ["user", "assistant"]  # the failure is no message
    assert "openai/gpt-fault failed before its first event" in caplog.text
    # the primary's key is not the key of another provider
    assert faux.calls[0].options.api_key is None


async def test_5xx_after_the_retries_falls_back(caplog: pytest.LogCaptureFixture) -> None:
    faux = FauxProvider([faux_text("from the fallback")])
    with FaultServer() as server:
        server.enqueue(*[WIRE.error(503, "overloaded")] * 2)
        _, messages = await run(WIRE.model(server), [faux.model], caplog)
        assert len(server.requests) == 2  # the attempt and its one retry, then the fallback
    assert_answered_by(answer_of(messages), faux)
    assert "overloaded" in caplog.text


async def test_a_rate_limit_beyond_the_retry_cap_falls_back(
    caplog: pytest.LogCaptureFixture,
) -> None:
    faux = FauxProvider([faux_text("from the fallback")])
    with FaultServer() as server:
        server.enqueue(WIRE.error(429, "slow down", {"retry-after": "120"}))
        _, messages = await run(WIRE.model(server), [faux.model], caplog)
        assert len(server.requests) == 1  # the wait asked for is beyond the cap: no retry
    assert_answered_by(answer_of(messages), faux)


async def test_an_authentication_failure_falls_back(caplog: pytest.LogCaptureFixture) -> None:
    faux = FauxProvider([faux_text("from the fallback")])
    with FaultServer() as server:
        server.enqueue(WIRE.error(401, "invalid api key"))
        _, messages = await run(WIRE.model(server), [faux.model], caplog)
    assert_answered_by(answer_of(messages), faux)


async def test_an_overflow_goes_to_a_larger_window(caplog: pytest.LogCaptureFixture) -> None:
    small = FauxProvider([faux_text("too small")], context_window=4096)
    large = FauxProvider([faux_text("from the fallback")], context_window=100_000)
    with FaultServer() as server:
        server.enqueue(WIRE.error(400, OVERFLOW_TEXT))
        primary = dataclasses.replace(WIRE.model(server), context_window=8192)
        _, messages = await run(primary, [small.model, large.model], caplog)
    assert_answered_by(answer_of(messages), large)
    assert small.call_count == 0
    assert "skipped after a context overflow" in caplog.text


async def test_fallback_is_per_request(caplog: pytest.LogCaptureFixture) -> None:
    """Each request starts again from the primary: the second request is answered by it."""
    faux = FauxProvider([faux_text("from the fallback")])
    with FaultServer() as server:
        server.enqueue(
            WIRE.error(401, "invalid api key"), WIRE.sse(WIRE.answer(["primary"]).events)
        )
        agent = Agent(
            initial_state={"model": WIRE.model(server)},
            api_key=API_KEY,
            fallback_models=[faux.model],
            **BOUNDS,
        )
        await agent.prompt("one")
        await agent.prompt("two")
    answers = [m for m in agent.state.messages if isinstance(m, AssistantMessage)]
    assert [a.provider for a in answers] == [faux.provider_id, "openai"]
    assert answers[1].text == "primary"


async def test_no_fallback_once_content_streamed(caplog: pytest.LogCaptureFixture) -> None:
    faux = FauxProvider([faux_text("from the fallback")])
    answer = WIRE.answer(["Hello", ", wor", "ld"])
    with FaultServer() as server:
        server.enqueue(
            FaultResponse(
                headers={"content-type": "text/event-stream"},
                chunks=answer.events,
                gate_after=answer.first,
                reset_after=answer.first,
            )
        )
        _, messages = await run(
            WIRE.model(server), [faux.model], caplog, gate=server, max_retries=0
        )
    last = answer_of(messages)
    assert last.stop_reason == "error" and last.text == "Hello"
    assert last.provider == "openai"
    assert faux.call_count == 0


async def test_an_abort_never_falls_back(caplog: pytest.LogCaptureFixture) -> None:
    faux = FauxProvider([faux_text("from the fallback")])
    controller = AbortController()
    with FaultServer() as server:
        server.enqueue(FaultResponse(headers={"content-type": "text/event-stream"}, stall=True))
        config = AgentLoopConfig(
            model=WIRE.model(server),
            api_key=API_KEY,
            fallback_models=[faux.model],
            on_response=lambda response, model: controller.abort(),
            **BOUNDS,
        )
        events: list[AgentEvent] = []
        with anyio.fail_after(20):
            async with agent_loop(
                [UserMessage(content="hi")], AgentContext(), config, signal=controller.signal
            ) as stream:
                async for event in stream:
                    events.append(event)
                messages = await stream.result()
    check_well_formed(events)
    assert answer_of(messages).stop_reason == "aborted"
    assert faux.call_count == 0


async def test_every_model_failing_names_every_failure(caplog: pytest.LogCaptureFixture) -> None:
    faux = FauxProvider([faux_error("the fallback is down too")])
    _, messages = await run(refused_model(), [faux.model], caplog, max_retries=0)
    last = answer_of(messages)
    assert last.stop_reason == "error"
    assert last.error_message is not None
    assert last.error_message.startswith("the fallback is down too (after openai/gpt-fault:")
    assert last.provider == faux.provider_id


# --- with_fallbacks on its own ------------------------------------------------------------------


def scripted(outcomes: dict[str, str | None], seen: list[tuple[str, str | None]]) -> Any:
    """A stream function failing before its first event for the models named in `outcomes`
    with a text, answering for the others (None)."""

    def stream_fn(model: Model, context: Context, options: SimpleStreamOptions) -> Any:
        seen.append((model.id, options.api_key))
        failure = outcomes.get(model.id)
        if failure is None:
            faux = FauxProvider([faux_text(f"answer of {model.id}")])
            return faux.stream(model, context, options)
        error = AssistantMessage(
            api=model.api,
            provider=model.provider,
            model=model.id,
            stop_reason="error",
            error_message=failure,
        )
        return AssistantMessageEventStream.from_events([ErrorEvent(reason="error", error=error)])

    return stream_fn


def model(id: str, provider: str) -> Model:
    return Model(id=id, api="faux", provider=provider)


async def test_keys_follow_the_provider() -> None:
    seen: list[tuple[str, str | None]] = []
    fn = with_fallbacks(
        [model("b", "same"), model("c", "other"), model("d", "third")],
        stream_fn=scripted({"a": "down", "b": "down", "c": "down"}, seen),
        get_api_key=lambda provider: {"other": "key-of-other"}.get(provider),
    )
    stream = await_stream(fn(model("a", "same"), Context(), SimpleStreamOptions(api_key="key-a")))
    final = await stream.result()
    assert final.model == "d" and final.stop_reason == "stop"
    assert seen == [("a", "key-a"), ("b", "key-a"), ("c", "key-of-other"), ("d", None)]


def await_stream(value: Any) -> AssistantMessageEventStream:
    assert isinstance(value, AssistantMessageEventStream)
    return value


async def test_content_then_error_is_not_a_fallback() -> None:
    primary = FauxProvider(
        [
            AssistantMessage(
                content=faux_text("partial").content, stop_reason="error", error_message="cut"
            )
        ]
    )
    fallback = FauxProvider([faux_text("from the fallback")])
    fn = with_fallbacks([fallback.model])
    final = await await_stream(fn(primary.model, Context(), SimpleStreamOptions())).result()
    assert final.stop_reason == "error" and final.text == "partial"
    assert fallback.call_count == 0


async def test_a_raising_stream_function_falls_back() -> None:
    fallback = FauxProvider([faux_text("from the fallback")])

    def stream_fn(model: Model, context: Context, options: SimpleStreamOptions) -> Any:
        if model.provider != fallback.provider_id:
            raise RuntimeError("no key for the primary")
        return fallback.stream(model, context, options)

    fn = with_fallbacks([fallback.model], stream_fn=stream_fn)
    final = await await_stream(fn(model("x", "missing"), Context(), SimpleStreamOptions())).result()
    assert final.text == "from the fallback"


class _Requests:
    """An instrumentation recording what its request observers hear."""

    def __init__(self) -> None:
        self.retries: list[str] = []
        self.ended: list[AssistantMessage | None] = []

    def start_run(self, run: Any) -> Any:
        return self

    def start_request(self, model: Model, context: Context) -> Any:
        return self

    def start_tool(self, call: Any) -> None:
        return None

    def end_run(self, messages: Any, limit: Any, error: Any) -> None:
        pass

    def on_retry(self, attempt: int, error: str, delay: float) -> None:
        self.retries.append(error)

    def on_first_event(self) -> None:
        pass

    def end_request(self, message: AssistantMessage | None, error: Any) -> None:
        self.ended.append(message)


async def test_the_instrumentation_sees_each_fallback(caplog: pytest.LogCaptureFixture) -> None:
    faux = FauxProvider([faux_text("from the fallback")])
    seen = _Requests()
    previous = set_instrumentation(seen)
    try:
        with FaultServer() as server:
            server.enqueue(WIRE.error(401, "invalid api key"))
            await run(WIRE.model(server), [faux.model], caplog)
    finally:
        set_instrumentation(previous)
    assert len(seen.retries) == 1
    assert seen.retries[0].startswith("openai/gpt-fault: 401")
    assert "falling back to the next model" in seen.retries[0]
    (final,) = seen.ended
    assert final is not None and final.provider == faux.provider_id
    # the request's log line names the model that answered
    assert f"request to {faux.provider_id}/faux-1: stop" in caplog.text
