"""Durable runs on DBOS (SQLite system database): the cost of a turn against the same run
in-process, and N runs at once over 2 worker processes.

Each run has 3 turns (two answers calling a tool that returns at once, then a text answer) from
a faux model that waits 20 ms before each answer, as in bench/temporal.py (run that one for the
Temporal figures on the same machine). Measured:

- one run at a time (10 in a row): wall time per run and per turn, durable and in-process; the
  durable per-turn figure is also taken between the run's first and last `turn_start`-to-end
  events as the watcher sees them, which leaves out the queue's dequeue delay (a run waits up to
  the queue's polling interval, 0.1 s, before a worker takes it);
- N runs started at once (default 50) over 2 worker processes on one SQLite file: wall time.

This file is also the workers' `--module` (it registers the model and tool).

    .venv/bin/python bench/dbos_turn.py [N]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import anyio

from agentcore import AgentContext, AgentLoopConfig, UserMessage, run_agent_loop, tool
from agentcore.llm import Model
from agentcore.testing import FauxProvider, faux_text, faux_tool_call

ROOT = Path(__file__).resolve().parent.parent
TURNS = 3
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


def start_worker(url: str, executor: str, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT / "bench")])}
    command = [
        *(sys.executable, "-m", "agentcore.dbos", "worker", "--module", "dbos_turn"),
        *("--database-url", url, "--executor-id", executor),
    ]
    with open(log, "ab") as out:
        worker = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
    for _ in range(1200):
        if log.exists() and b"agentcore dbos worker" in log.read_bytes():
            return worker
        time.sleep(0.05)
    raise RuntimeError(f"the worker did not start: {log.read_text(errors='replace')}")


async def durable_run(client: Any) -> tuple[float, float]:
    from agentcore.dbos import start_run

    started = time.perf_counter()
    run = await start_run(
        client, "go", id=f"bench-{uuid.uuid4().hex}", model="bench", tools=["noop"]
    )
    first = last = None
    async for event in run.events():
        if event.type == "turn_start" and first is None:
            first = time.perf_counter()
        if event.type == "agent_end":
            last = time.perf_counter()
    messages = await run.result()
    assert len(messages) == 1 + 2 * (TURNS - 1) + 1, messages
    assert first is not None and last is not None
    return time.perf_counter() - started, last - first


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


async def main(concurrent: int) -> None:
    from dbos import DBOSClient

    folder = Path(tempfile.mkdtemp(prefix="bench-dbos-"))
    url = f"sqlite:///{folder / 'system.sqlite'}"
    workers = [start_worker(url, "bench-1", folder / "w1.log")]
    client = DBOSClient(system_database_url=url)
    try:
        await durable_run(client)  # warm up
        await local_run()
        local = [await local_run() for _ in range(SEQUENTIAL)]
        durable = [await durable_run(client) for _ in range(SEQUENTIAL)]
        walls = [d[0] for d in durable]
        watched = [d[1] for d in durable]
        in_process = statistics.median(local) / TURNS * 1000
        print(f"in-process: {in_process:.1f} ms per turn (median of {SEQUENTIAL} runs)")
        print(
            f"dbos, wall from start_run: {statistics.median(walls) / TURNS * 1000:.1f} ms per turn "
            f"({statistics.median(walls) * 1000:.0f} ms per run)"
        )
        print(
            f"dbos, as the watcher sees the turns: {statistics.median(watched) / TURNS * 1000:.1f}"
            " ms per turn"
        )
        workers.append(start_worker(url, "bench-2", folder / "w2.log"))
        started = time.perf_counter()
        async with anyio.create_task_group() as group:
            for _ in range(concurrent):
                group.start_soon(durable_run, client)
        wall = time.perf_counter() - started
        rate = concurrent / wall
        print(f"{concurrent} runs at once over 2 workers: {wall:.2f} s ({rate:.1f} runs/s)")
    finally:
        for worker in workers:
            worker.terminate()
            worker.wait(timeout=30)
        client.destroy()


if __name__ == "__main__":
    anyio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 50)
