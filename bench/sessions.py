"""Sessions: append and load speed of each store, and what a session costs a run.

1. Appends: messages per second for 10,000 appends to one session (a mix of user, assistant
   with a tool call, and tool-result messages of a few hundred bytes each).
2. Load: time to load a 10,000-message session (decode and repair included).
3. The record format: µs per record to encode a message record as a JSONL line and to read it
   back, with the CRC-32 of format 2 and without it (format 1), in one process, so the cost of
   the checksum is measured apart from the disk and the machine's noise.
4. Runs: an Agent doing the 10-turn scripted run of `loop_overhead.py`, with and without a
   session; reported as µs per turn, as a ratio, and as the latency of `message_update` delivery
   (from the model yielding a delta to the listener receiving it). Once with no model latency
   (the worst case for a session: each message is written before the run goes on, and nothing
   else takes time), once with 5 ms per answer (a very fast model; real ones take 100s of ms).
5. Many sessions (SQLite, and PostgreSQL with `--postgres`): 10,000 sessions of 4 messages each;
   sessions created per second, then the latency of listing them (all headers; with PostgreSQL
   also one page of 50 from the middle) and of loading one (median of 200 random ones).
6. The web session list (`--part weblist`; `--sessions N`): `GET /api/sessions` of
   `agentcore.web` over HTTP (a page of 100) on N sessions of 4 messages in SQLite (and
   PostgreSQL): the first view of a fresh server and the median of 20 more, with how many
   sessions each loaded (before the listing carried titles, each listed session was loaded).

With `--postgres URL` (e.g. the URL `scripts/postgres start` prints), the PostgreSQL store is
measured too, in a schema of its own dropped at the end; `--part` runs one part only.

    .venv/bin/python bench/sessions.py [--postgres URL] [--part storage|format|runs|many|weblist]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import MODEL, clock, scripted_stream_fn

from agentcore import (
    Agent,
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    tool,
)
from agentcore.messages import to_json
from agentcore.sessions import (
    JsonlSessionStore,
    PostgresSessionStore,
    SessionStore,
    SqliteSessionStore,
)
from agentcore.sessions._jsonl_format import decode_line, encode_line

APPENDS = 10_000
SESSIONS = 10_000
POSTGRES_URL: str | None = None
POSTGRES_SCHEMA = f"bench_{os.getpid()}"
TURNS = 10
RUNS = 200


def messages(n: int) -> list[Any]:
    out: list[Any] = []
    for i in range(n):
        kind = i % 3
        if kind == 0:
            out.append(UserMessage(content=f"Please look at item {i} and summarise what it says."))
        elif kind == 1:
            out.append(
                AssistantMessage(
                    content=[
                        TextContent(text="Let me read that item first. " * 3),
                        ToolCall(id=f"call_{i}", name="read", arguments={"item": i, "full": True}),
                    ],
                    api="openai-completions",
                    provider="openai",
                    model="gpt-4o-mini",
                    usage=Usage(input=1200 + i, output=40, cache_read=1000),
                    stop_reason="tool_use",
                )
            )
        else:
            out.append(
                ToolResultMessage(
                    tool_call_id=f"call_{i - 1}",
                    tool_name="read",
                    content=[TextContent(text=f"Item {i}: " + "lorem ipsum dolor " * 10)],
                    details={"bytes": 180},
                )
            )
    return out


def stores(tmp: Path) -> dict[str, Callable[[], SessionStore]]:
    return {
        "jsonl": lambda: JsonlSessionStore(tmp / "jsonl"),
        "sqlite": lambda: SqliteSessionStore(tmp / "sessions.db"),
        "jsonl fsync": lambda: JsonlSessionStore(tmp / "jsonl-fsync", fsync=True),
        "sqlite fsync": lambda: SqliteSessionStore(tmp / "fsync.db", fsync=True),
        **postgres_store("postgres"),
    }


def postgres_store(name: str) -> dict[str, Callable[[], SessionStore]]:
    """The PostgreSQL store under `name`, when `--postgres` was given."""
    url = POSTGRES_URL
    if url is None:
        return {}
    return {name: lambda: PostgresSessionStore(url, schema=POSTGRES_SCHEMA)}


def drop_postgres_schema() -> None:
    if POSTGRES_URL is None:
        return
    import psycopg

    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{POSTGRES_SCHEMA}" CASCADE')


def bench_many_sessions(tmp: Path) -> None:
    sample = messages(4)
    print(f"many sessions: {SESSIONS:,} sessions of {len(sample)} messages")
    makers = {"sqlite": lambda: SqliteSessionStore(tmp / "many.db"), **postgres_store("postgres")}
    drop_postgres_schema()
    for name, make in makers.items():
        with make() as store:
            t0 = clock()
            ids = []
            for _ in range(SESSIONS):
                session = store.create(messages=sample, metadata={"title": "a chat"})
                session.close()
                ids.append(session.id)
            created = SESSIONS / (clock() - t0)
            lists = []
            for _ in range(3):
                t1 = clock()
                infos = store.list()
                lists.append(clock() - t1)
            assert len(infos) == SESSIONS
            page = ""
            if isinstance(store, PostgresSessionStore):
                pages = []
                for _ in range(20):
                    t1 = clock()
                    got = store.list_page(limit=50, after=ids[SESSIONS // 2])
                    pages.append(clock() - t1)
                assert len(got) == 50
                page = f"   page of 50: {statistics.median(pages) * 1e3:6.2f} ms"
            rng = random.Random(1)
            loads = []
            for _ in range(200):
                sid = rng.choice(ids)
                t1 = clock()
                data = store.load(sid)
                loads.append(clock() - t1)
            assert len(data.messages) == len(sample)
        print(
            f"  {name:9s} {created:8,.0f} sessions created/s   list of {SESSIONS:,}: "
            f"{min(lists) * 1e3:7.1f} ms{page}   load of one: "
            f"median {statistics.median(loads) * 1e3:5.2f} ms"
        )


def bench_web_list(tmp: Path) -> None:
    """`GET /api/sessions` (a page of 100) of `agentcore.web` over HTTP, on SESSIONS sessions of
    4 messages: the first page view of a fresh server (what every replica pays, and what any
    view pays for the sessions changed since) and the median of 20 more."""
    import http.client
    import socket
    import threading

    import uvicorn

    from agentcore.testing import FauxProvider
    from agentcore.web import create_app

    sample = messages(4)
    print(f"web session list: GET /api/sessions (100 of {SESSIONS:,} sessions of 4 messages)")
    makers = {"sqlite": lambda: SqliteSessionStore(tmp / "web.db"), **postgres_store("postgres")}
    drop_postgres_schema()
    for name, make in makers.items():
        with make() as store:
            for _ in range(SESSIONS):
                store.create(messages=sample).close()
            reads = 0
            read = store._read  # counted: how many sessions a page view loads

            def counted(session_id: str, read: Any = read) -> Any:
                nonlocal reads
                reads += 1
                return read(session_id)

            store._read = counted  # type: ignore[method-assign]
            app = create_app(store, model=FauxProvider([]).model)
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sock.listen(64)
            server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
            thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
            thread.start()
            while not server.started:
                time.sleep(0.01)
            port = sock.getsockname()[1]

            def view(port: int = port) -> float:
                """One page view on a new connection (as a browser's page load), in seconds."""
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                t0 = clock()
                conn.request("GET", "/api/sessions?limit=100")
                response = conn.getresponse()
                body = response.read()
                took = clock() - t0
                conn.close()
                assert response.status == 200 and len(json.loads(body)) == 100, body[:200]
                return took

            try:
                cold = view()
                cold_reads = reads
                warm = [view() for _ in range(20)]
            finally:
                server.should_exit = True
                thread.join(timeout=15)
        print(
            f"  {name:9s} first view {cold * 1e3:8.1f} ms ({cold_reads} sessions loaded)   "
            f"then median {statistics.median(warm) * 1e3:7.1f} ms "
            f"({reads - cold_reads} loaded in 20 views)"
        )


def bench_storage(tmp: Path) -> None:
    sample = messages(APPENDS)
    print(f"appends ({APPENDS:,} messages to one session) and load of that session")
    for name, make in stores(tmp).items():
        n = APPENDS if "fsync" not in name else 1_000
        with make() as store:
            session = store.create()
            t0 = clock()
            for message in sample[:n]:
                session.append(message)
            elapsed = clock() - t0
            loads = [0.0] * 3
            for k in range(3):
                t1 = clock()
                data = store.load(session.id)
                loads[k] = clock() - t1
            assert len(data.messages) == n
        print(
            f"  {name:13s} {n / elapsed:10,.0f} appends/s   "
            f"load of {n:,}: {min(loads) * 1e3:7.1f} ms"
        )


def bench_record_format() -> None:
    records = [{"type": "message", "message": to_json(m)} for m in messages(APPENDS)]

    def plain(record: dict[str, Any]) -> bytes:  # format 1: the JSON alone
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.encode() + b"\n"

    def best(pairs: list[tuple[Callable[[Any], Any], list[Any]]]) -> list[float]:
        """µs per item of each (fn, items), timed in turns (the machine is shared: the least
        disturbed of 9 rounds counts)."""
        times = [float("inf")] * len(pairs)
        for _ in range(9):
            for k, (fn, items) in enumerate(pairs):
                t0 = clock()
                for item in items:
                    fn(item)
                times[k] = min(times[k], (clock() - t0) / len(items) * 1e6)
        return times

    old_lines = [plain(r).strip() for r in records]
    new_lines = [encode_line(r).strip() for r in records]
    assert [decode_line(line, True) for line in new_lines] == records
    size = sum(map(len, new_lines)) / sum(map(len, old_lines)) - 1
    write_old, write_new, read_old, read_new = best(
        [
            (plain, records),
            (encode_line, records),
            (lambda line: decode_line(line, False), old_lines),
            (lambda line: decode_line(line, True), new_lines),
        ]
    )
    print(f"\nJSONL record format ({APPENDS:,} records; the checksum adds {size:.1%} to the file)")
    print(f"  encode a record: {write_old:5.2f} µs without a checksum, {write_new:5.2f} µs with")
    print(f"  read a record:   {read_old:5.2f} µs without a checksum, {read_new:5.2f} µs with")


@tool
async def noop(x: int) -> str:
    """Do nothing."""
    return "ok"


async def run_agent(
    make_store: Callable[[], SessionStore] | None, *, runs: int = RUNS, delay: float = 0.0
) -> tuple[float, list[float]]:
    """µs per turn over `runs` runs, and message_update delivery latencies (µs)."""
    stamps: list[float] = []
    latencies: list[float] = []
    stream_fn = scripted_stream_fn(TURNS, stamps=stamps, delay=delay)
    store = make_store() if make_store is not None else None
    total = 0.0
    for _ in range(runs):
        session = store.create() if store is not None else None
        agent = Agent(
            initial_state={"model": MODEL, "tools": [noop]}, stream_fn=stream_fn, session=session
        )

        def listener(event: Any) -> None:
            if event.type == "message_update" and event.assistant_message_event.type == (
                "text_delta"
            ):
                latencies.append((time.perf_counter() - stamps.pop(0)) * 1e6)

        agent.subscribe(listener)
        stamps.clear()
        t0 = clock()
        added = await agent.prompt("go")
        total += clock() - t0
        assert len(added) == 2 * TURNS, len(added)
        if session is not None:
            session.close()
    if store is not None:
        store.close()
    return total / (runs * TURNS) * 1e6, latencies


def bench_runs(tmp: Path, delay: float, runs: int) -> None:
    what = f"{delay * 1e3:g} ms model latency per answer" if delay else "no model latency"
    print(f"\nAgent runs ({TURNS} turns, {what}), with and without a session")
    results: dict[str, tuple[float, float]] = {}

    def measure(make: Callable[[], SessionStore] | None) -> tuple[float, float]:
        measured = [asyncio.run(run_agent(make, runs=runs, delay=delay)) for _ in range(3)]
        per_turn = min(r[0] for r in measured)
        latency = statistics.median(x for r in measured for x in r[1])
        return per_turn, latency

    results["no session"] = measure(None)
    results["jsonl"] = measure(lambda: JsonlSessionStore(tmp / f"runs-jsonl-{delay}"))
    results["sqlite"] = measure(lambda: SqliteSessionStore(tmp / f"runs-{delay}.db"))
    base_turn, base_latency = results["no session"]
    for name, (per_turn, latency) in results.items():
        print(
            f"  {name:11s} {per_turn:8.1f} µs/turn ({per_turn / base_turn:4.2f}x)   "
            f"message_update delivery: median {latency:6.1f} µs ({latency / base_latency:4.2f}x)"
        )


def main() -> None:
    global POSTGRES_URL, SESSIONS
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--postgres", metavar="URL", help="measure PostgresSessionStore too")
    parser.add_argument("--part", choices=["storage", "format", "runs", "many", "weblist"])
    parser.add_argument("--sessions", type=int, default=SESSIONS, help="for --part many")
    args = parser.parse_args()
    POSTGRES_URL, SESSIONS = args.postgres, args.sessions
    part = args.part
    try:
        with tempfile.TemporaryDirectory() as tmp:
            if part in (None, "storage"):
                bench_storage(Path(tmp))
            if part in (None, "format"):
                bench_record_format()
            if part in (None, "runs"):
                bench_runs(Path(tmp), delay=0.0, runs=RUNS)
                bench_runs(Path(tmp), delay=0.005, runs=20)
            if part in (None, "many"):
                bench_many_sessions(Path(tmp))
            if part in (None, "weblist"):
                bench_web_list(Path(tmp))
    finally:
        drop_postgres_schema()


if __name__ == "__main__":
    main()
