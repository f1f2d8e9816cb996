"""Loop overhead: µs per turn of `agent_loop` against a bare asyncio loop doing the same work.

Runs of 10 turns (one trivial tool call per turn, then a text answer), a scripted model with no
delay. Target (issue 9): agentcore at most 1.5x the bare loop.

    .venv/bin/python bench/loop_overhead.py
"""

from __future__ import annotations

import asyncio

from common import MODEL, bare_loop, best_of, clock, scripted_stream_fn

from agentcore import AgentContext, AgentLoopConfig, UserMessage, agent_loop, tool

TURNS = 10
RUNS = 300


@tool
async def noop(x: int) -> str:
    """Do nothing."""
    return "ok"


async def bare_noop(x: int) -> str:
    return "ok"


async def run_agentcore() -> float:
    context = AgentContext(tools=[noop])
    config = AgentLoopConfig(model=MODEL)
    stream_fn = scripted_stream_fn(TURNS)
    t0 = clock()
    for _ in range(RUNS):
        events = agent_loop([UserMessage(content="go")], context, config, stream_fn=stream_fn)
        async for _event in events:
            pass
        messages = await events.result()
        assert len(messages) == 2 * TURNS, len(messages)
    return (clock() - t0) / (RUNS * TURNS) * 1e6


async def run_bare() -> float:
    tools = {"noop": bare_noop}
    stream_fn = scripted_stream_fn(TURNS)
    t0 = clock()
    for _ in range(RUNS):
        async for _event in bare_loop("go", tools, stream_fn):
            pass
    return (clock() - t0) / (RUNS * TURNS) * 1e6


def main() -> None:
    bare = best_of(5, lambda: asyncio.run(run_bare()))
    ours = best_of(5, lambda: asyncio.run(run_agentcore()))
    print(f"bare asyncio loop : {bare:8.1f} µs/turn")
    print(f"agentcore         : {ours:8.1f} µs/turn")
    print(f"ratio             : {ours / bare:8.2f}x  (target <= 1.5x)")


if __name__ == "__main__":
    main()
