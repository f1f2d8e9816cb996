"""Helpers shared by the provider adapter tests: reading a stream to its end, and aborting it."""

from __future__ import annotations

from typing import Any

import anyio

from agentcore.abort import AbortController
from agentcore.llm.events import AssistantMessageEvent
from agentcore.messages import AssistantMessage


async def collect(stream: Any) -> tuple[list[AssistantMessageEvent], AssistantMessage]:
    """Every event of an `AssistantMessageEventStream`, and its final message."""
    events = [event async for event in stream]
    return events, await stream.result()


async def collect_aborting(
    stream: Any, controller: AbortController, *, delta: str | None = None
) -> tuple[list[AssistantMessageEvent], AssistantMessage]:
    """`collect`, aborting `controller` at the first `text_delta` (with `delta`: at the first
    whose text is `delta`) and reading on to the end."""
    events: list[AssistantMessageEvent] = []
    async for event in stream:
        events.append(event)
        if event.type == "text_delta" and (delta is None or event.delta == delta):
            controller.abort()
    return events, await stream.result()


async def abort_after(controller: AbortController, delay: float) -> None:
    """Abort `controller` after `delay` seconds (start it in a task group beside the reader)."""
    await anyio.sleep(delay)
    controller.abort()


def comparable(message: AssistantMessage) -> tuple[Any, ...]:
    """What two streams of the same answer must agree on, however the bytes were chunked."""
    return (message.content, message.usage, message.stop_reason, message.error_message)
