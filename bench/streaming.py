"""Streaming throughput: text deltas per second through `agent_loop`'s events.

One answer of 100,000 text deltas, read event by event, against the bare loop reading the same
model stream (target, issue 9: at most 1.5x its time per delta). The rate in the first and last
10% of the message must be the same: no per-delta cost that grows with the message. Then one
tool call whose arguments stream as JSON in 4-character deltas, at 256 KB and 1 MB: the time must
grow linearly.

    .venv/bin/python bench/streaming.py
"""

from __future__ import annotations

import asyncio
import json
import statistics

from common import MODEL, bare_loop, best_of, clock, scripted_stream_fn

from agentcore import AgentContext, AgentLoopConfig, UserMessage, agent_loop, tool

DELTAS = 100_000


@tool
async def noop(x: int = 0, blob: str = "") -> str:
    """Do nothing."""
    return "ok"


async def bare_noop(**kwargs: object) -> str:
    return "ok"


async def agentcore_rates() -> tuple[float, float, float]:
    """(overall, first 10%, last 10%) deltas per second."""
    stamps: list[float] = []  # when the loop pulled each delta from the model
    stream_fn = scripted_stream_fn(1, deltas=DELTAS, delta_text="tok ", stamps=stamps)
    config = AgentLoopConfig(model=MODEL)
    received = 0
    t0 = clock()
    async for event in agent_loop(
        [UserMessage(content="go")], AgentContext(), config, stream_fn=stream_fn
    ):
        if event.type == "message_update" and event.assistant_message_event.type == "text_delta":
            received += 1
    total = clock() - t0
    assert received == len(stamps) == DELTAS
    # Rates of 1,000-delta windows: the median of those in the first and in the last 10% of
    # the message (a median, so that one garbage-collection pause does not decide the figure).
    window = 1000
    rates = [window / (stamps[i + window] - stamps[i]) for i in range(0, DELTAS - window, window)]
    tenth = len(rates) // 10
    first = statistics.median(rates[:tenth])
    last = statistics.median(rates[-tenth:])
    return DELTAS / total, first, last


async def bare_rate() -> float:
    stream_fn = scripted_stream_fn(1, deltas=DELTAS, delta_text="tok ")
    n = 0
    t0 = clock()
    async for event in bare_loop("go", {}, stream_fn):
        if event["type"] == "message_update" and event["event"].type == "text_delta":
            n += 1
    assert n == DELTAS
    return DELTAS / (clock() - t0)


async def big_arguments(size: int) -> float:
    """Seconds to stream one tool call whose JSON arguments are `size` bytes, 4 chars a delta."""
    args = json.dumps({"x": 1, "blob": "a" * (size - 20)})
    stream_fn = scripted_stream_fn(2, deltas=1, args_json=args, args_chunk=4)
    config = AgentLoopConfig(model=MODEL)
    t0 = clock()
    events = agent_loop(
        [UserMessage(content="go")], AgentContext(tools=[noop]), config, stream_fn=stream_fn
    )
    async for _ in events:
        pass
    messages = await events.result()
    assert messages[1].tool_calls[0].arguments["blob"].startswith("aaa")
    return clock() - t0


def main() -> None:
    bare = max(asyncio.run(bare_rate()) for _ in range(3))
    runs = [asyncio.run(agentcore_rates()) for _ in range(3)]
    ours, first, last = max(runs, key=lambda r: r[0])
    print(f"bare asyncio loop : {bare:12,.0f} deltas/s")
    print(
        f"agentcore         : {ours:12,.0f} deltas/s  "
        f"({bare / ours:.2f}x the bare time per delta, target <= 1.5x)"
    )
    print(f"  first 10%       : {first:12,.0f} deltas/s")
    print(
        f"  last 10%        : {last:12,.0f} deltas/s  (last/first = {last / first:.2f}, flat = ~1)"
    )
    small = best_of(3, lambda: asyncio.run(big_arguments(256 * 1024)))
    large = best_of(3, lambda: asyncio.run(big_arguments(1024 * 1024)))
    print(f"tool arguments 256 KB in 4-char deltas: {small:6.2f} s")
    print(
        f"tool arguments   1 MB in 4-char deltas: {large:6.2f} s  "
        f"(x{large / small:.2f} for 4x the size, linear = ~4)"
    )


if __name__ == "__main__":
    main()
