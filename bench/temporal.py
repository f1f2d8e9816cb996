"""Durable runs on Temporal: 200 concurrent runs over 2 worker processes, against the same runs
in-process.

Each run has 3 turns (two answers calling a tool that returns at once, then a text answer) from
a faux model that waits 20 ms before each answer. Measured:

- one run at a time (10 in a row): the time per turn of a durable run and of an in-process run;
  the difference is what the workflow, the activities and the server add to a turn;
- 200 runs started at once: wall time and runs/s, durable (2 worker processes) and in-process
  (one event loop);
- the same with a bare Temporal workflow that runs the same 5 activities (three 20 ms "model"
  steps, two instant "tool" steps) without agentcore, on 2 worker processes too: what Temporal
  itself costs on this machine, to tell it from agentcore's share.

Needs the dev server (`scripts/temporal start`; `AGENTCORE_TEMPORAL_ADDRESS`, default
127.0.0.1:17233). This file is also the workers' `--module` (it registers the model and tool).

    .venv/bin/python bench/temporal.py
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
from temporalio import activity, workflow

from agentcore import AgentContext, AgentLoopConfig, UserMessage, run_agent_loop, tool
from agentcore.llm import Model
from agentcore.testing import FauxProvider, faux_text, faux_tool_call

ADDRESS = os.environ.get("AGENTCORE_TEMPORAL_ADDRESS", "127.0.0.1:17233")
TASK_QUEUE = f"bench-temporal-{os.getpid()}"
ROOT = Path(__file__).resolve().parent.parent
TURNS = 3
CONCURRENT = 200
SEQUENTIAL = 10
LATENCY = 0.020


@tool
async def noop(x: int) -> str:
    """Return at once."""
    return "ok"


SCRIPT = [faux_tool_call("noop", {"x": 1}, id="n1"), faux_tool_call("noop", {"x": 2}, id="n2")]
SCRIPT.append(faux_text("done"))


class _ByTurn(FauxProvider):
    """Answers by how many answers the request already holds (any number of runs at once)."""

    def stream(self, model, context, options=None):  # type: ignore[no-untyped-def]
        n = sum(1 for m in context.messages if m.role == "assistant")
        self.append_responses(SCRIPT[min(n, len(SCRIPT) - 1)])
        return super().stream(model, context, options)


_faux = _ByTurn(provider="faux-bench", latency=LATENCY)
models: dict[str, Model] = {"bench": _faux.model}
tools = [noop]


def start_worker(baseline: bool = False) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT / "bench")])}
    if baseline:
        command = [sys.executable, __file__, "--baseline-worker", BASELINE_QUEUE]
    else:
        command = [
            *(sys.executable, "-m", "agentcore.temporal", "worker", "--module", "temporal"),
            *("--task-queue", TASK_QUEUE, "--address", ADDRESS, "--max-activities", "200"),
        ]
    worker = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert worker.stdout is not None
    worker.stdout.readline()
    return worker


async def durable_run(client: Any) -> float:
    from agentcore.temporal import start_run

    started = time.perf_counter()
    run = await start_run(
        client,
        "go",
        id=f"bench-{uuid.uuid4().hex}",
        task_queue=TASK_QUEUE,
        model="bench",
        tools=["noop"],
    )
    messages = await run.result()
    assert len(messages) == 1 + 2 * (TURNS - 1) + 1, messages
    return time.perf_counter() - started


async def local_run() -> float:
    started = time.perf_counter()
    messages = await run_agent_loop(
        [UserMessage(content="go")],
        AgentContext(tools=[noop]),
        AgentLoopConfig(model=_faux.model),
        lambda event: None,
    )
    assert len(messages) == 1 + 2 * (TURNS - 1) + 1
    return time.perf_counter() - started


# --- the bare Temporal baseline ------------------------------------------------------------------

BASELINE_QUEUE = f"bench-baseline-{os.getpid()}"


@activity.defn(name="bench.step")
async def step(seconds: float) -> str:
    """A bare activity: sleep, return."""
    await anyio.sleep(seconds)
    return "ok"


@workflow.defn(name="bench.Baseline", sandboxed=False)
class Baseline:
    """The same five steps as a durable run (model, tool, model, tool, model), without agentcore."""

    @workflow.run
    async def run(self) -> int:
        for i in range(2 * TURNS - 1):
            seconds = LATENCY if i % 2 == 0 else 0.0
            await workflow.execute_activity(
                step, seconds, start_to_close_timeout=timedelta(seconds=60)
            )
        return 1


async def baseline_worker(queue: str) -> None:
    from temporalio.client import Client
    from temporalio.worker import Worker

    client = await Client.connect(ADDRESS)
    worker = Worker(
        client,
        task_queue=queue,
        workflows=[Baseline],
        activities=[step],
        max_concurrent_activities=200,
    )
    print("ready", flush=True)
    await worker.run()


async def baseline_run(client: Any) -> float:
    started = time.perf_counter()
    await client.execute_workflow(
        "bench.Baseline", id=f"baseline-{uuid.uuid4().hex}", task_queue=BASELINE_QUEUE
    )
    return time.perf_counter() - started


async def concurrently(count: int, run: Any, *args: Any) -> tuple[float, list[float]]:
    durations: list[float] = []

    async def one() -> None:
        durations.append(await run(*args))

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(count):
            group.start_soon(one)
    return time.perf_counter() - started, durations


async def main() -> None:
    from temporalio.client import Client

    client = await Client.connect(ADDRESS)
    workers = [start_worker(), start_worker(), start_worker(True), start_worker(True)]
    print(f"load average before: {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs)")
    try:
        await durable_run(client)  # warm up: the workers' sandboxes, the connections
        await local_run()
        durable_seq = [await durable_run(client) for _ in range(SEQUENTIAL)]
        local_seq = [await local_run() for _ in range(SEQUENTIAL)]
        d_turn = statistics.median(durable_seq) / TURNS
        l_turn = statistics.median(local_seq) / TURNS
        print(f"one run at a time ({SEQUENTIAL} runs of {TURNS} turns, {LATENCY * 1e3:g} ms model)")
        print(f"  in-process: {l_turn * 1000:6.1f} ms per turn")
        extra = (d_turn - l_turn) * 1000
        print(f"  durable:    {d_turn * 1000:6.1f} ms per turn (+{extra:.1f} ms)")
        await baseline_run(client)
        base_seq = [await baseline_run(client) for _ in range(SEQUENTIAL)]
        b_turn = statistics.median(base_seq) / TURNS
        print(f"  bare Temporal, same activities: {b_turn * 1000:6.1f} ms per turn")
        wall, durations = await concurrently(CONCURRENT, durable_run, client)
        base_wall, _ = await concurrently(CONCURRENT, baseline_run, client)
        local_wall, _ = await concurrently(CONCURRENT, local_run)
        print(f"{CONCURRENT} runs at once")
        print(f"  in-process: {local_wall:6.2f} s, {CONCURRENT / local_wall:7.1f} runs/s")
        print(
            f"  durable:    {wall:6.2f} s, {CONCURRENT / wall:7.1f} runs/s over 2 workers "
            f"(a run took {statistics.median(durations):.2f} s median, "
            f"{max(durations):.2f} s at most)"
        )
        print(f"  bare Temporal: {base_wall:6.2f} s, {CONCURRENT / base_wall:7.1f} runs/s")
        print(f"load average after: {os.getloadavg()[0]:.1f}")
    finally:
        for worker in workers:
            worker.send_signal(signal.SIGTERM)
        for worker in workers:
            worker.wait()
            if worker.stdout is not None:
                worker.stdout.close()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--baseline-worker"]:
        anyio.run(baseline_worker, sys.argv[2])
    else:
        anyio.run(main)
