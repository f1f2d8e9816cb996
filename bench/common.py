"""Shared pieces of the benchmarks: a scripted model for agentcore and for the bare baseline.

Both sides stream the same events (text deltas, one tool call per turn) with no delay, so the
difference in time is what the loop itself costs.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio

from agentcore.llm import AssistantMessageEventStream, Context, MessageBuilder, Model
from agentcore.llm.events import AssistantMessageEvent
from agentcore.llm.types import SimpleStreamOptions
from agentcore.messages import TextContent, ToolCall, ToolResultMessage, UserMessage

MODEL = Model(id="scripted", api="scripted", provider="bench")


def scripted_stream_fn(
    turns: int,
    *,
    deltas: int = 3,
    delta_text: str = "word ",
    args_json: str = '{"x": 1}',
    args_chunk: int = 0,
    delay: float = 0.0,
    stamps: list[float] | None = None,
) -> Callable[[Model, Context, SimpleStreamOptions], AssistantMessageEventStream]:
    """A stream function answering `turns - 1` times with text + a tool call, then with text."""

    def stream_fn(
        model: Model, context: Context, options: SimpleStreamOptions
    ) -> AssistantMessageEventStream:
        turn = sum(1 for m in context.messages if m.role == "assistant")

        async def events() -> AsyncIterator[AssistantMessageEvent]:
            if delay:
                await anyio.sleep(delay)
            b = MessageBuilder(model)
            yield b.start()
            index = (start := b.text_start()).content_index
            yield start
            for _ in range(deltas):
                if stamps is not None:
                    stamps.append(time.perf_counter())
                yield b.text_delta(index, delta_text)
            yield b.text_end(index)
            if turn < turns - 1:
                call = b.toolcall_start(id=f"call_{turn}", name="noop")
                yield call
                i = call.content_index
                step = args_chunk or len(args_json)
                for k in range(0, len(args_json), step):
                    yield b.toolcall_delta(i, args_json[k : k + step])
                yield b.toolcall_end(i)
                yield b.done("tool_use")
            else:
                yield b.done("stop")

        return AssistantMessageEventStream(events())

    return stream_fn


async def bare_loop(
    prompt: str,
    tools: dict[str, Callable[..., Any]],
    stream_fn: Callable[[Model, Context, SimpleStreamOptions], AssistantMessageEventStream],
) -> AsyncIterator[dict[str, Any]]:
    """A bare hand-written agent loop over the same model stream: forward its events, collect
    the answer, run the tools it calls, feed the results back, repeat. No hooks, validation,
    abort handling or error recovery: the floor that agentcore's loop is measured against."""
    messages: list[Any] = [UserMessage(content=prompt)]
    options = SimpleStreamOptions()
    yield {"type": "agent_start"}
    while True:
        yield {"type": "turn_start"}
        stream = stream_fn(MODEL, Context(messages=messages), options)
        async for event in stream:
            yield {"type": "message_update", "event": event}
        message = await stream.result()
        messages.append(message)
        yield {"type": "message_end", "message": message}
        calls = [b for b in message.content if isinstance(b, ToolCall)]
        if not calls:
            yield {"type": "turn_end"}
            break
        for call in calls:
            yield {"type": "tool_execution_start", "id": call.id}
            text = await tools[call.name](**call.arguments)
            result = ToolResultMessage(
                tool_call_id=call.id, tool_name=call.name, content=[TextContent(text=text)]
            )
            messages.append(result)
            yield {"type": "tool_execution_end", "id": call.id, "result": result}
        yield {"type": "turn_end"}
    yield {"type": "agent_end", "messages": messages}


def best_of(n: int, fn: Callable[[], float]) -> float:
    """The smallest of `n` timings (the least disturbed run)."""
    return min(fn() for _ in range(n))


def clock() -> float:
    return time.perf_counter()
