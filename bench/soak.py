"""Soak: 2,000 concurrent `agent_loop` runs for minutes, with tools that fail in every way.

Each of 2,000 workers runs agents back to back until the time is up. A run is a faux model
(5-30 ms before each answer, text streamed in small chunks) asking for 0-3 batches of 1-3 tool
calls, then answering. The tools: `ok` (async) and `ok_sync` (a worker thread) succeed; `boom`
raises; `odd` returns a value JSON cannot hold as is (a datetime, a set, NaN, bytes, a Decimal,
a generator, tuple keys, a UUID); `slow` outlives its own `@tool(timeout=0.1)`; `stall` outlives
the run's `tool_timeout` (0.5 s). A tenth of the runs are aborted at a random point, half after
a random delay, half after a random number of events.

Every finished run is checked: its events are well formed (`check_well_formed`), `result()` is
`agent_end.messages`, and every tool call of an executed batch has exactly one result. Every
10 s: runs/s, RSS, live asyncio tasks and threads. At the end: the failures, the tool outcomes
(how many timeouts fired), the runs still going after the time was up, and the asyncio tasks and
threads left behind (tasks once the workers are done, threads once the event loop is closed).

    .venv/bin/python bench/soak.py                 # 3 minutes
    .venv/bin/python bench/soak.py --seconds 60
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import decimal
import itertools
import math
import random
import resource
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel
from common import clock

from agentcore import (
    AbortController,
    AgentContext,
    AgentEvent,
    AgentLoopConfig,
    AgentMessage,
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    agent_loop,
    tool,
)
from agentcore.testing import FauxProvider, check_well_formed, faux_message, faux_text

OWN_TIMEOUT = 0.1  # `slow`'s own timeout
RUN_TOOL_TIMEOUT = 0.5  # the runs' `tool_timeout`, which `stall` outlives
REPORT_EVERY = 10.0
GRACE = 30.0  # after the time is up, how long runs may take to finish before they are aborted


@tool
async def ok(n: int) -> str:
    """Succeed."""
    await anyio.lowlevel.checkpoint()
    return f"ok {n}"


@tool
def ok_sync(n: int) -> str:
    """Succeed in a worker thread."""
    time.sleep(0.001)
    return f"ok {n}"


@tool
async def boom(n: int) -> str:
    """Fail."""
    raise RuntimeError(f"boom {n}")


ODD_VALUES: list[Callable[[], Any]] = [
    lambda: datetime.datetime.now(datetime.UTC),
    lambda: {1, 2, 3},
    lambda: math.nan,
    lambda: b"\x00\xff",
    lambda: decimal.Decimal("1.10"),
    lambda: (i for i in range(3)),
    lambda: {(1, 2): "tuple key"},
    lambda: uuid.uuid4(),
]


@tool
async def odd(n: int) -> Any:
    """Return an odd value."""
    return ODD_VALUES[n % len(ODD_VALUES)]()


@tool(timeout=OWN_TIMEOUT)
async def slow(n: int) -> str:
    """Take ten times longer than this tool's own timeout."""
    await anyio.sleep(OWN_TIMEOUT * 10)
    return "slow but done"


@tool
async def stall(n: int) -> str:
    """Take ten times longer than the run's tool_timeout."""
    await anyio.sleep(RUN_TOOL_TIMEOUT * 10)
    return "stalled but done"


TOOLS = [ok, ok_sync, boom, odd, slow, stall]
WEIGHTS = [40, 10, 15, 20, 10, 5]


def _script(rng: random.Random) -> list[AssistantMessage]:
    answers = []
    for turn in range(rng.randint(0, 3)):
        calls = [
            ToolCall(
                id=f"call_{turn}_{k}",
                name=rng.choices(TOOLS, WEIGHTS)[0].name,
                arguments={"n": rng.randint(0, 999)},
            )
            for k in range(rng.randint(1, 3))
        ]
        answers.append(faux_message("Let me check. " * rng.randint(1, 3), *calls))
    answers.append(faux_text("All done: " + "the answer is here. " * rng.randint(1, 6)))
    return answers


@dataclass
class Stats:
    runs: int = 0
    aborts_requested: int = 0
    ended_aborted: int = 0
    failures: int = 0
    failure_texts: list[str] = field(default_factory=list)
    outcomes: Counter[tuple[str, str]] = field(default_factory=Counter)
    timeouts_fired: Counter[str] = field(default_factory=Counter)
    in_flight: dict[int, AbortController] = field(default_factory=dict)

    def fail(self, index: int, text: str) -> None:
        self.failures += 1
        if len(self.failure_texts) < 5:
            self.failure_texts.append(f"run {index}: {text[:300]}")


def check_run(events: list[AgentEvent], result: list[AgentMessage]) -> str | None:
    """What is wrong with a finished run, or None."""
    try:
        check_well_formed(events)
    except AssertionError as exc:
        return f"events not well formed: {exc}"
    end: Any = events[-1]
    if result != end.messages:
        return "result() differs from agent_end.messages"
    answered = Counter(m.tool_call_id for m in result if isinstance(m, ToolResultMessage))
    for message in result:
        if isinstance(message, AssistantMessage) and message.stop_reason == "tool_use":
            for block in message.content:
                if isinstance(block, ToolCall) and answered[block.id] != 1:
                    return f"tool call {block.id} has {answered[block.id]} results"
    return None


def _tally(stats: Stats, result: list[AgentMessage]) -> None:
    for message in result:
        if isinstance(message, ToolResultMessage):
            stats.outcomes[message.tool_name, "error" if message.is_error else "ok"] += 1
            text = "".join(b.text for b in message.content if isinstance(b, TextContent))
            if message.is_error and "time" in text.lower() and "out" in text.lower():
                stats.timeouts_fired[message.tool_name] += 1
        elif isinstance(message, AssistantMessage) and message.stop_reason == "aborted":
            stats.ended_aborted += 1


async def one_run(index: int, stats: Stats, abort_rate: float) -> None:
    rng = random.Random(index)
    faux = FauxProvider(_script(rng), latency=rng.uniform(0.005, 0.03), seed=index)
    controller = AbortController()
    abort_after_events: int | None = None
    timer: asyncio.TimerHandle | None = None
    if rng.random() < abort_rate:
        stats.aborts_requested += 1
        if rng.random() < 0.5:
            timer = asyncio.get_running_loop().call_later(rng.uniform(0, 0.4), controller.abort)
        else:
            abort_after_events = rng.randint(1, 80)
    config = AgentLoopConfig(model=faux.model, tool_timeout=RUN_TOOL_TIMEOUT)
    events: list[AgentEvent] = []
    stats.in_flight[index] = controller
    try:
        stream = agent_loop(
            [UserMessage(content="go")],
            AgentContext(tools=TOOLS),
            config,
            signal=controller.signal,
            stream_fn=faux.stream_fn,
        )
        async with stream:
            async for event in stream:
                events.append(event)
                if len(events) == abort_after_events:
                    controller.abort()
            result = await stream.result()
    except Exception as exc:
        stats.fail(index, f"the run raised {type(exc).__name__}: {exc}")
        return
    finally:
        del stats.in_flight[index]
        if timer is not None:
            timer.cancel()
    stats.runs += 1
    problem = check_run(events, result)
    if problem is not None:
        stats.fail(index, problem)
    _tally(stats, result)


def rss_mb() -> float:
    """The resident set size now (Linux), else the peak."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * resource.getpagesize() / 2**20
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def report(stats: Stats, start: float, baseline_threads: int) -> None:
    last_runs, last_time = 0, start
    for tick in itertools.count(1):
        await asyncio.sleep(max(0.0, start + tick * REPORT_EVERY - clock()))
        now = clock()
        rate = (stats.runs - last_runs) / (now - last_time)
        last_runs, last_time = stats.runs, now
        print(
            f"{now - start:6.0f} s  {rate:7.1f} runs/s  runs {stats.runs:8,}  "
            f"RSS {rss_mb():6.0f} MB  tasks {len(asyncio.all_tasks()):5}  "
            f"threads +{threading.active_count() - baseline_threads:<3}  "
            f"failures {stats.failures}",
            flush=True,
        )


async def soak(seconds: float, concurrency: int, abort_rate: float, baseline_threads: int) -> Stats:
    stats = Stats()
    start = clock()
    deadline = start + seconds
    indices = itertools.count()

    async def worker() -> None:
        while clock() < deadline:
            await one_run(next(indices), stats, abort_rate)

    reporter = asyncio.create_task(report(stats, start, baseline_threads))
    workers = [asyncio.create_task(worker()) for _ in range(concurrency)]
    _, pending = await asyncio.wait(workers, timeout=seconds)
    finished_in_time = stats.runs  # the rate is over the full period; the drain comes after
    if pending:
        _, pending = await asyncio.wait(pending, timeout=GRACE)
    drained = clock() - deadline
    late = len(stats.in_flight)
    for controller in list(stats.in_flight.values()):
        controller.abort()
    _, hung = await asyncio.wait(pending, timeout=10) if pending else (set(), set())
    for task in hung:
        task.cancel()
    reporter.cancel()
    await asyncio.gather(reporter, *hung, return_exceptions=True)
    await asyncio.sleep(1)  # let finished runs' own tasks wind down before counting leftovers
    leftovers = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]

    print(
        f"\n{finished_in_time:,} runs finished in {seconds:.0f} s: "
        f"{finished_in_time / seconds:.1f} runs/s ({stats.runs:,} with the {drained:.1f} s "
        "it took the runs in progress to finish)"
    )
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    print(
        f"aborts requested {stats.aborts_requested:,}; runs with an aborted answer "
        f"{stats.ended_aborted:,}"
    )
    print(f"failed checks: {stats.failures}")
    for text in stats.failure_texts:
        print(f"  {text}")
    print("tool results (ok / error):")
    for t in TOOLS:
        ok_count, errors = stats.outcomes[t.name, "ok"], stats.outcomes[t.name, "error"]
        fired = stats.timeouts_fired[t.name]
        timeouts = f", {fired:,} timeouts fired" if t.name in ("slow", "stall") else ""
        print(f"  {t.name:8s} {ok_count:8,} / {errors:8,}{timeouts}")
    print(
        f"runs still going {GRACE:.0f} s after the time was up: {late} "
        f"(aborted; {len(hung)} did not end 10 s after the abort)"
    )
    names = Counter(getattr(t.get_coro(), "__qualname__", "?") for t in leftovers)
    print(f"asyncio tasks left when all runs were done: {len(leftovers)} {dict(names) or ''}")
    return stats


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=180, help="how long (default 180)")
    parser.add_argument("--concurrency", type=int, default=2000, help="runs at once (default 2000)")
    parser.add_argument(
        "--abort-rate", type=float, default=0.1, help="share of runs aborted (default 0.1)"
    )
    arguments = parser.parse_args()
    baseline = {t.ident for t in threading.enumerate()}
    baseline_threads = len(baseline)
    print(
        f"{arguments.concurrency:,} concurrent agent_loop runs for {arguments.seconds:.0f} s, "
        f"{arguments.abort_rate:.0%} aborted; RSS {rss_mb():.0f} MB, "
        f"{baseline_threads} thread(s) at the start"
    )
    stats = asyncio.run(
        soak(arguments.seconds, arguments.concurrency, arguments.abort_rate, baseline_threads)
    )
    time.sleep(0.5)  # worker threads are told to stop when the loop closes; let them exit
    extra = [t.name for t in threading.enumerate() if t.ident not in baseline]
    print(f"threads left after the event loop closed: {len(extra)} {extra or ''}")
    return 1 if stats.failures else 0


if __name__ == "__main__":
    sys.exit(main())
