"""`first_request`: the request a run would send first (what `agentcore eval --batch` sends),
built by the run's own request path: the same model, context and options a stream function
receives, hooks, skills-free tools and the key of `get_api_key` included; nothing is emitted."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from agentcore import (
    AgentContext,
    AgentLoopConfig,
    AssistantMessage,
    ConfigError,
    TextContent,
    UserMessage,
    agent_loop,
    first_request,
    tool,
)
from agentcore.llm import AssistantMessageEventStream, Context, Model
from agentcore.llm.events import DoneEvent

pytestmark = pytest.mark.anyio

MODEL = Model(id="m", api="openai-completions", provider="openai", base_url="http://127.0.0.1:1")


@tool
def lookup(city: str) -> str:
    """Look a city up."""
    return city


def _config(**options: Any) -> AgentLoopConfig:
    async def transform(messages: list[Any], signal: Any) -> list[Any]:
        return [*messages, UserMessage(content="(added by transform_context)", timestamp=7)]

    return AgentLoopConfig(
        model=MODEL,
        temperature=0.25,
        max_tokens=77,
        transform_context=transform,
        get_api_key=lambda provider: f"key-for-{provider}",
        **options,
    )


def _context() -> AgentContext:
    return AgentContext(
        system_prompt="Be brief.",
        messages=[UserMessage(content="earlier", timestamp=3)],
        tools=[lookup],
    )


async def test_the_first_request_is_the_one_a_run_sends() -> None:
    sent: list[tuple[Model, Context, Any]] = []

    def stream_fn(model: Model, context: Context, options: Any) -> AssistantMessageEventStream:
        sent.append((model, context, options))
        message = AssistantMessage(
            content=[TextContent(text="ok")],
            api=model.api,
            provider=model.provider,
            model=model.id,
            stop_reason="stop",
        )
        return AssistantMessageEventStream.from_events([DoneEvent(reason="stop", message=message)])

    prompt = [UserMessage(content="Capital of Peru?", timestamp=5)]
    async with agent_loop(prompt, _context(), _config(), stream_fn=stream_fn) as events:
        async for _ in events:
            pass
    [(model, context, options)] = sent
    built = await first_request(prompt, _context(), _config())
    assert built[0] == model
    assert built[1] == context
    assert context.system_prompt == "Be brief."
    assert [getattr(m, "content", None) for m in context.messages] == [
        "earlier",
        "Capital of Peru?",
        "(added by transform_context)",
    ]
    assert [t.name for t in context.tools] == ["lookup"]
    # the options a request gets (the run's signal aside: first_request has none)
    assert replace(built[2], signal=None) == replace(options, signal=None)
    assert built[2].api_key == "key-for-openai" and built[2].max_tokens == 77


async def test_misuse_is_refused_before_anything() -> None:
    with pytest.raises(ConfigError):
        await first_request([UserMessage(content="x")], _context(), "not a config")  # type: ignore[arg-type]
