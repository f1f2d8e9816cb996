"""Concurrency: 1,000 and 10,000 runs at once, 3 tool turns each, the model taking 20 ms per
answer.

Prints wall time and peak memory of agentcore against the bare loop doing the same work
(targets, issue 9: at most 1.3x its wall time and 1.5x its peak RSS), best of 3 fresh processes
for 1,000 runs and of 2 for 10,000.
Give run counts to measure only those:

    .venv/bin/python bench/concurrency.py
    .venv/bin/python bench/concurrency.py 10000
"""

from __future__ import annotations

import asyncio
import resource
import subprocess
import sys

from common import MODEL, bare_loop, clock, scripted_stream_fn

from agentcore import (
    AgentContext,
    AgentLoopConfig,
    UserMessage,
    agent_loop,
    run_agent_loop,
    tool,
)

RUNS = (1000, 10_000)
TURNS = 4  # 3 tool turns, then the answer
DELAY = 0.020


@tool
async def noop(x: int) -> str:
    """Do nothing."""
    return "ok"


async def bare_noop(x: int) -> str:
    return "ok"


async def agentcore_all(runs: int) -> float:
    stream_fn = scripted_stream_fn(TURNS, delay=DELAY)
    context = AgentContext(tools=[noop])
    config = AgentLoopConfig(model=MODEL)

    async def one() -> None:
        events = agent_loop([UserMessage(content="go")], context, config, stream_fn=stream_fn)
        async for _ in events:
            pass
        assert len(await events.result()) == 2 * TURNS

    t0 = clock()
    await asyncio.gather(*(one() for _ in range(runs)))
    return clock() - t0


async def agentcore_callback_all(runs: int) -> float:
    """The same runs through `run_agent_loop`, events delivered to a callback (no reader task)."""
    stream_fn = scripted_stream_fn(TURNS, delay=DELAY)
    context = AgentContext(tools=[noop])
    config = AgentLoopConfig(model=MODEL)

    def ignore(event: object) -> None:  # a consumer that keeps nothing, as the bare loop's
        pass

    async def one() -> None:
        messages = await run_agent_loop(
            [UserMessage(content="go")], context, config, ignore, stream_fn=stream_fn
        )
        assert len(messages) == 2 * TURNS

    t0 = clock()
    await asyncio.gather(*(one() for _ in range(runs)))
    return clock() - t0


async def bare_all(runs: int) -> float:
    stream_fn = scripted_stream_fn(TURNS, delay=DELAY)

    async def one() -> None:
        async for _ in bare_loop("go", {"noop": bare_noop}, stream_fn):
            pass

    t0 = clock()
    await asyncio.gather(*(one() for _ in range(runs)))
    return clock() - t0


def child(which: str, runs: int) -> None:
    runner = {"agentcore": agentcore_all, "callback": agentcore_callback_all, "bare": bare_all}
    seconds = asyncio.run(runner[which](runs))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{seconds} {peak_mb}")


def measure(which: str, runs: int) -> tuple[float, float]:
    """Best wall time (and its peak RSS) of 3 fresh processes, 2 from 10,000 runs up."""
    best = (float("inf"), 0.0)
    for _ in range(3 if runs < 10_000 else 2):
        out = subprocess.run(
            [sys.executable, __file__, "--child", which, str(runs)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        best = min(best, (float(out[0]), float(out[1])))
    return best


def main(counts: tuple[int, ...]) -> None:
    for runs in counts:
        report(runs)


def report(runs: int) -> None:
    bare_s, bare_mb = measure("bare", runs)
    ours_s, ours_mb = measure("agentcore", runs)
    cb_s, cb_mb = measure("callback", runs)
    print(f"{runs:,} runs x {TURNS - 1} tool turns, model latency {DELAY * 1000:.0f} ms")
    print(f"bare asyncio loop           : {bare_s:6.2f} s  peak RSS {bare_mb:6.0f} MB")
    print(
        f"agentcore, agent_loop       : {ours_s:6.2f} s  peak RSS {ours_mb:6.0f} MB  "
        f"({ours_s / bare_s:.2f}x, target <= 1.3x)"
    )
    print(
        f"agentcore, run_agent_loop   : {cb_s:6.2f} s  peak RSS {cb_mb:6.0f} MB  "
        f"({cb_s / bare_s:.2f}x, target <= 1.3x)"
    )
    print(
        f"peak RSS over bare's        : agent_loop {ours_mb / bare_mb:.2f}x, "
        f"run_agent_loop {cb_mb / bare_mb:.2f}x (target <= 1.5x)",
        flush=True,
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]))
    else:
        main(tuple(int(n) for n in sys.argv[1:]) or RUNS)
