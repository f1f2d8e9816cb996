"""Retries made by the model layer reach the `chat` span (its count, one event per retry with
the redacted failure), through each provider's real SDK against the fault server; the request
is also logged with its retries. No key or header value reaches a span or a log record."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from agentcore import AgentContext, AgentLoopConfig, UserMessage, run_agent_loop
from llm.fault_server import API_KEY, APIS, CREDENTIALS, WIRES, FaultResponse, Wire
from support.tracing import Traces

pytestmark = pytest.mark.anyio


def echoing(wire: Wire, status: int) -> FaultResponse:
    """A retryable error whose body quotes the request's credentials, asking for a short wait."""
    message = b"Request with " + CREDENTIALS + b" failed; try again later."
    return wire.error(status, message.decode(), {"retry-after-ms": "10"})


@pytest.mark.parametrize("api", APIS)
async def test_retries_are_counted_on_the_chat_span(
    api: str, traces: Traces, caplog: pytest.LogCaptureFixture
) -> None:
    from llm.fault_server import FaultServer

    wire = WIRES[api]
    caplog.set_level(logging.DEBUG, logger="agentcore")
    with FaultServer() as server:
        server.enqueue(
            echoing(wire, 503), echoing(wire, 429), wire.sse(wire.answer(["Hello"]).events)
        )
        config = AgentLoopConfig(
            model=wire.model(server),
            api_key=API_KEY,
            headers={"X-Team": "team-HEADER-VALUE-42"},
            max_retries=3,
        )
        events: list[Any] = []
        with anyio.fail_after(60):
            messages = await run_agent_loop(
                [UserMessage(content="hi")], AgentContext(), config, events.append
            )
    assert messages[-1].stop_reason == "stop", messages[-1].error_message
    chat = traces.one("chat")
    attributes = dict(chat.attributes or {})
    assert attributes["agentcore.retries"] == 2
    retries = [e for e in chat.events if e.name == "retry"]
    assert [e.attributes["attempt"] for e in retries] == [1, 2]  # type: ignore[index]
    assert "503" in str(retries[0].attributes["error"])  # type: ignore[index]
    assert "429" in str(retries[1].attributes["error"])  # type: ignore[index]
    assert attributes["gen_ai.response.finish_reasons"] == ("stop",)
    everything = repr(
        [(dict(s.attributes or {}), [e.attributes for e in s.events]) for s in traces.spans]
    )
    assert API_KEY not in everything and "HEADER-VALUE" not in everything
    requests = [r.getMessage() for r in caplog.records if r.getMessage().startswith("request to ")]
    assert len(requests) == 1 and "(2 retries)" in requests[0], requests
    assert all(API_KEY not in r.getMessage() for r in caplog.records)
