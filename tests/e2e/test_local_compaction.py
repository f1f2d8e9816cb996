"""Compaction and fallback against the real local model (Qwen2.5-Coder-1.5B on llama.cpp).

* A prompt larger than the server's context fails as llama.cpp words it ("exceeds the available
  context size"); the run compacts and the retried request is answered.
* `Summarize` with the real model writes the summary that the next request carries.
* A primary whose server refuses the connection falls back to the local model.

Only the protocol is checked, never the model's judgement (a summary is some text).
"""

from __future__ import annotations

import dataclasses
import socket
from typing import Any

import anyio
import pytest

from agentcore import (
    AgentContext,
    AgentEvent,
    AgentLoopConfig,
    AgentMessage,
    AssistantMessage,
    Compaction,
    CompactionSummary,
    DropOldest,
    Summarize,
    UserMessage,
    agent_loop,
    tool,
)
from agentcore.llm import openai_compatible_model
from agentcore.testing import FauxProvider, check_well_formed, faux_text, faux_tool_call

from .local_server import LocalModel

pytestmark = [pytest.mark.local_llm, pytest.mark.anyio]

REQUEST_TIMEOUT = 120


async def run(config: AgentLoopConfig, context: AgentContext, prompt: str, requests: int) -> Any:
    events: list[AgentEvent] = []
    with anyio.fail_after(REQUEST_TIMEOUT * requests):
        async with agent_loop([UserMessage(content=prompt)], context, config) as stream:
            async for event in stream:
                events.append(event)
            result: list[AgentMessage] = await stream.result()
    check_well_formed(events)
    return result


@pytest.mark.timeout(REQUEST_TIMEOUT * 2 + 30)
async def test_a_real_overflow_is_compacted_and_retried(local_model: LocalModel) -> None:
    huge = "The quick brown fox jumps over the lazy dog. " * 4000  # ~40k tokens > 16k context
    history = [UserMessage(content=huge), faux_text("Noted.")]
    config = AgentLoopConfig(
        model=local_model.model,
        temperature=0,
        max_tokens=16,
        compaction=Compaction(strategy=DropOldest(), threshold=None, keep_recent_turns=0),
    )
    result = await run(
        config, AgentContext(system_prompt="Answer in one word.", messages=history), "Say hi.", 2
    )
    failed, marker, answer = result[1:]
    assert isinstance(failed, AssistantMessage) and failed.stop_reason == "error"
    assert "context" in (failed.error_message or "")
    assert isinstance(marker, CompactionSummary) and marker.reason == "overflow"
    assert isinstance(answer, AssistantMessage) and answer.stop_reason in ("stop", "length")
    assert answer.text.strip()


@tool
def read(n: int) -> str:
    """Read page n of the logbook."""
    return f"Logbook page {n}: the ship sailed {n * 10} miles north. " * 12


@pytest.mark.timeout(REQUEST_TIMEOUT * 3 + 30)
async def test_the_real_model_writes_the_summary(local_model: LocalModel) -> None:
    main = FauxProvider(
        [faux_tool_call("read", {"n": n}) for n in range(1, 6)] + [faux_text("done")],
        context_window=900,
    )
    summariser = dataclasses.replace(local_model.model)
    config = AgentLoopConfig(
        model=main.model,
        temperature=0,
        compaction=Compaction(
            strategy=Summarize(model=summariser, max_tokens=60), keep_recent_turns=1
        ),
    )
    result = await run(config, AgentContext(tools=[read]), "Read the logbook.", 3)
    markers = [m for m in result if isinstance(m, CompactionSummary)]
    assert markers and markers[0].summary and markers[0].summary.strip()
    assert markers[0].usage is not None and markers[0].usage.output > 0
    after = [c for c in main.calls if markers[0].summary in str(c.context.messages[0].content)]
    assert after, "the next request did not carry the summary"


@pytest.mark.timeout(REQUEST_TIMEOUT + 30)
async def test_a_refused_primary_falls_back_to_the_local_model(local_model: LocalModel) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    primary = openai_compatible_model(f"http://127.0.0.1:{port}/v1", "down", provider="down")
    config = AgentLoopConfig(
        model=primary,
        api_key="sk-down",
        temperature=0,
        max_tokens=16,
        max_retries=0,
        fallback_models=[local_model.model],
    )
    result = await run(config, AgentContext(system_prompt="Answer in one word."), "Say hi.", 1)
    answer = result[-1]
    assert isinstance(answer, AssistantMessage) and answer.stop_reason in ("stop", "length")
    assert (answer.provider, answer.model) == (local_model.model.provider, local_model.model.id)
    assert answer.text.strip()
