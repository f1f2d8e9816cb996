"""Two `agentcore serve` replicas on one PostgreSQL database, serving 200 sessions at once.

Starts two real `agentcore serve --store postgresql://...` processes (a faux model answering ~40
words at `--tokens-per-second`), then for each of `--sessions` sessions, all at once: creates it
on one replica, follows its event stream (SSE) on the *other* one, and sends `--turns` prompts
that alternate between the replicas, so every turn is a hand-off of the session's lease and half
the turns reach the reader through the cross-replica relay (LISTEN/NOTIFY). Reported:

- turns per second over all sessions, and the wall time;
- prompt latency (POST to 202), and end-to-end turn latency (POST to the reader seeing
  RUN_FINISHED), apart for turns run on the reader's replica (local events) and on the other
  one (relayed events); median and 95th percentile;
- 409 answers (a prompt reaching a replica before the previous turn's replica gave the lease
  back: the client retries after 20 ms), and errors.

Bounded: every wait has a timeout; the whole bench stops after `--deadline` seconds.

    .venv/bin/python bench/replicas.py --postgres "$(scripts/postgres start)" [--sessions 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import psycopg

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "bench-replicas"
AUTH = {"Authorization": f"Bearer {TOKEN}"}

SERVE = """
import sys
from agentcore.cli import main
from agentcore.llm import register_model
from agentcore.messages import AssistantMessage, TextContent
from agentcore.testing import FauxProvider
rate = float(sys.argv[1])
answer = AssistantMessage(content=[TextContent(text=" ".join(f"word{i}" for i in range(40)))])
faux = FauxProvider([answer] * 1_000_000, provider="faux", model_id="bench",
                    tokens_per_second=rate or None)
register_model(faux.model)
sys.exit(main(["serve", "--model", "faux/bench", "--port", "0", "--token", sys.argv[2],
               "--store", sys.argv[3]]))
"""


def start_replica(store: str, rate: float) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("AGENTCORE_TOKEN", None)
    process = subprocess.Popen(
        [sys.executable, "-c", SERVE, str(rate), TOKEN, store],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("agentcore serve: http://"):
        process.kill()
        raise SystemExit(f"the replica did not start: {line!r}")
    return process, line.split(": ", 1)[1].strip().split("/?token=")[0]


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Stats:
    def __init__(self) -> None:
        self.post: list[float] = []
        self.local: list[float] = []
        self.relayed: list[float] = []
        self.conflicts = 0
        self.errors: list[str] = []


async def follow(client: httpx.AsyncClient, sid: str, queue: asyncio.Queue[str]) -> None:
    async with client.stream("GET", f"/api/sessions/{sid}/events") as response:
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                kind = json.loads(line[6:]).get("type", "")
                if kind in ("RUN_FINISHED", "RUN_ERROR", "MESSAGES_SNAPSHOT"):
                    await queue.put(kind)


async def one_session(
    index: int, clients: list[httpx.AsyncClient], turns: int, stats: Stats
) -> None:
    home = index % 2
    created = await clients[home].post("/api/sessions", json={})
    sid = created.json()["id"]
    reader_side = 1 - home
    queue: asyncio.Queue[str] = asyncio.Queue()
    reader = asyncio.create_task(follow(clients[reader_side], sid, queue))
    try:
        assert await asyncio.wait_for(queue.get(), 30) == "MESSAGES_SNAPSHOT"
        for turn in range(turns):
            side = (home + turn) % 2
            t0 = time.perf_counter()
            while True:
                answer = await clients[side].post(
                    f"/api/sessions/{sid}/prompt", json={"text": f"turn {turn}"}
                )
                if answer.status_code != 409 or time.perf_counter() - t0 > 30:
                    break
                stats.conflicts += 1
                await asyncio.sleep(0.02)
            if answer.status_code != 202:
                stats.errors.append(
                    f"{answer.status_code} {answer.text[-300:]} turn {turn} side {side} home {home}"
                )
                return
            stats.post.append(time.perf_counter() - t0)
            try:
                while (kind := await asyncio.wait_for(queue.get(), 60)) == "MESSAGES_SNAPSHOT":
                    pass
            except TimeoutError:
                where = "local" if side == reader_side else "relayed"
                shown = (await clients[reader_side].get(f"/api/sessions/{sid}")).json()["events"]
                running = shown[-1]["snapshot"]["running"]
                stats.errors.append(
                    f"no RUN_FINISHED in 60 s ({where}, turn {turn}, {sid}; the reader's replica "
                    f"shows {len(shown[0]['messages'])} messages, running={running})"
                )
                return
            if kind != "RUN_FINISHED":
                stats.errors.append(kind)
            (stats.local if side == reader_side else stats.relayed).append(time.perf_counter() - t0)
    finally:
        reader.cancel()


async def drive(urls: list[str], sessions: int, turns: int, deadline: float) -> None:
    limits = httpx.Limits(max_connections=2 * sessions + 20, max_keepalive_connections=100)
    timeout = httpx.Timeout(60, connect=30)
    clients = [
        httpx.AsyncClient(base_url=u, headers=AUTH, limits=limits, timeout=timeout) for u in urls
    ]
    stats = Stats()
    t0 = time.perf_counter()
    try:
        await asyncio.wait_for(
            asyncio.gather(*(one_session(i, clients, turns, stats) for i in range(sessions))),
            deadline,
        )
    finally:
        for client in clients:
            await client.aclose()
    wall = time.perf_counter() - t0
    done = len(stats.local) + len(stats.relayed)
    ms = 1000
    print(f"{sessions} sessions x {turns} turns over 2 replicas: {done} turns in {wall:.1f} s")
    print(f"  turns/s: {done / wall:.0f}")
    print(
        f"  POST prompt -> 202: median {statistics.median(stats.post) * ms:.0f} ms, "
        f"p95 {pct(stats.post, 0.95) * ms:.0f} ms"
    )
    for name, values in (("local", stats.local), ("relayed", stats.relayed)):
        if not values:
            continue
        print(
            f"  turn to RUN_FINISHED at the reader, {name} events: median "
            f"{statistics.median(values) * ms:.0f} ms, p95 {pct(values, 0.95) * ms:.0f} ms "
            f"({len(values)} turns)"
        )
    print(f"  409 (lease not yet given back, retried): {stats.conflicts}")
    print(f"  errors: {len(stats.errors)} {stats.errors[:3]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", required=True, help="the server's URL")
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--tokens-per-second", type=float, default=200.0)
    parser.add_argument("--deadline", type=float, default=600.0)
    parser.add_argument("--keep", action="store_true", help="keep the schema (to look at it)")
    args = parser.parse_args()
    schema = "bench_" + uuid.uuid4().hex[:8]
    store = f"{args.postgres}?schema={schema}"
    replicas = [start_replica(store, args.tokens_per_second) for _ in range(2)]
    try:
        asyncio.run(drive([url for _, url in replicas], args.sessions, args.turns, args.deadline))
    finally:
        for process, _ in replicas:
            process.terminate()
        for process, _ in replicas:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
        if args.keep:
            print(f"  schema kept: {schema}")
        else:
            with psycopg.connect(args.postgres, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


if __name__ == "__main__":
    main()
