"""What compaction and fallbacks cost when they do nothing, and what a compaction costs.

1. One request after a long history (100, 1,000, 5,000 messages): `agent_loop` with and without
   `compaction` set (threshold far away, so nothing is compacted): the price of computing the
   compacted view and the estimate before each request.
2. The time of the compaction itself (`DropOldest`, the loop's whole path: view, cut, marker).
3. Streaming 20,000 events through `with_fallbacks` against the bare stream function.

    .venv/bin/python bench/compaction.py
"""

from __future__ import annotations

import dataclasses

import anyio
from common import MODEL, best_of, clock, scripted_stream_fn

from agentcore import AgentContext, AgentLoopConfig, Compaction, DropOldest, agent_loop
from agentcore.llm import (
    AssistantMessageEventStream,
    Context,
    MessageBuilder,
    SimpleStreamOptions,
    with_fallbacks,
)
from agentcore.messages import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

BIG = dataclasses.replace(MODEL, context_window=10**9)


def history(turns: int) -> list[object]:
    messages: list[object] = [UserMessage(content="go")]
    for t in range(turns):
        call = ToolCall(id=f"h{t}", name="read", arguments={"n": t})
        messages.append(
            AssistantMessage(content=[TextContent(text="x" * 200), call], stop_reason="tool_use")
        )
        messages.append(
            ToolResultMessage(
                tool_call_id=call.id, tool_name="read", content=[TextContent(text="y" * 2000)]
            )
        )
    messages.append(UserMessage(content="and now?"))
    return messages


async def one_request(messages: list[object], compaction: Compaction | None, window: int) -> float:
    model = dataclasses.replace(MODEL, context_window=window)
    config = AgentLoopConfig(model=model, compaction=compaction)
    context = AgentContext(messages=messages[:-1])  # type: ignore[arg-type]
    start = clock()
    async with agent_loop(
        [messages[-1]],  # type: ignore[list-item]
        context,
        config,
        stream_fn=scripted_stream_fn(1),
    ) as stream:
        async for _ in stream:
            pass
    return clock() - start


def fallback_events() -> float:
    b = MessageBuilder(MODEL)
    events = [b.start(), b.text_start()]
    events += [b.text_delta(0, "ab") for _ in range(20_000)]
    events += [b.text_end(0), b.done("stop")]

    def stream_fn(model: object, context: Context, options: SimpleStreamOptions) -> object:
        return AssistantMessageEventStream.from_events(events)

    async def read(fn: object) -> float:
        start = clock()
        async for _ in fn(MODEL, Context(), SimpleStreamOptions()):  # type: ignore[operator]
            pass
        return (clock() - start) / len(events)

    plain = best_of(10, lambda: anyio.run(read, stream_fn))
    wrapped = with_fallbacks([BIG], stream_fn=stream_fn)  # type: ignore[arg-type]
    fallback = best_of(10, lambda: anyio.run(read, wrapped))
    print(
        f"streaming: {plain * 1e6:.2f} us/event bare, {fallback * 1e6:.2f} us/event through "
        f"with_fallbacks (+{(fallback - plain) * 1e6:.2f} us)"
    )
    return fallback - plain


def main() -> None:
    far = Compaction(strategy=DropOldest(), threshold=1.0)
    for turns in (50, 500, 2500):
        messages = history(turns)
        off = best_of(5, lambda m=messages: anyio.run(one_request, m, None, 10**9))
        on = best_of(5, lambda m=messages: anyio.run(one_request, m, far, 10**9))
        near = best_of(5, lambda m=messages: anyio.run(one_request, m, far, 1000))
        print(
            f"{len(messages):5d} messages: one request {off * 1e3:.2f} ms without compaction, "
            f"{on * 1e3:.2f} ms with it (nothing to do, +{(on - off) * 1e3:.2f} ms), "
            f"{near * 1e3:.2f} ms compacting (DropOldest)"
        )
    fallback_events()


if __name__ == "__main__":
    main()
