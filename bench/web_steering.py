"""Steering over HTTP: how long `POST /api/sessions/{id}/steer` takes, and how long until the run
takes the message, with the app served by uvicorn on 127.0.0.1 and a scripted model answering
in 20 ms.

- round trip: 200 steers sent one after another to a run that waits (p50, p95, max of the 202),
  beside `GET /api/info` on the same connection (what the HTTP stack costs here);
- to the transcript: one steer at a time into a run whose turns take 20 ms, from the POST to the
  user message's TEXT_MESSAGE_END read by a second client on the event stream (p50, p95);
- none lost: 4 clients x 50 steers at once; every message arrives once, in the order accepted.

    .venv/bin/python bench/web_steering.py
"""

from __future__ import annotations

import json
import multiprocessing
import socket
import statistics
import tempfile
import threading
import time
from typing import Any

import anyio
import httpx
import uvicorn

from agentcore.sessions import JsonlSessionStore
from agentcore.testing import FauxCall, FauxProvider, faux_text
from agentcore.web import create_app

TURN = 0.020
CTX = multiprocessing.get_context("fork")
gate = CTX.Event()  # shared with the server process: the first answer of a "wait" run waits


async def answer(call: FauxCall) -> Any:
    messages = call.context.messages
    first_answer = not any(m.role == "assistant" for m in messages)
    if first_answer and getattr(messages[0], "content", "") == "wait":  # held until the gate
        await anyio.to_thread.run_sync(gate.wait, 60)
    await anyio.sleep(TURN)
    return faux_text("ok")


def _serve(port: Any) -> None:
    faux = FauxProvider([answer] * 100_000)
    store = JsonlSessionStore(tempfile.mkdtemp())
    app = create_app(store, model=faux.model, agent_options={"max_turns": 1000})
    # proto given: asyncio sets TCP_NODELAY on accepted sockets only when it is IPPROTO_TCP
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port.put(sock.getsockname()[1])
    uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on")).run(sockets=[sock])


def serve() -> tuple[str, Any]:
    """The app in a process of its own (clients in this one: what a deployment sees)."""
    port = CTX.Queue()
    process = CTX.Process(target=_serve, args=(port,), daemon=True)
    process.start()
    base = f"http://127.0.0.1:{port.get(timeout=60)}"
    for _ in range(500):
        try:
            httpx.get(base + "/api/info", timeout=1)
            break
        except httpx.TransportError:
            time.sleep(0.02)
    return base, process


def wait_idle(client: httpx.Client, sid: str) -> list[dict[str, Any]]:
    while True:
        events = client.get(f"/api/sessions/{sid}").json()["events"]
        if not events[1]["snapshot"]["running"]:
            return list(events[0]["messages"])
        time.sleep(0.01)


def users(messages: list[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in messages if m["role"] == "user"]


def steer(client: httpx.Client, sid: str, text: str) -> dict[str, Any]:
    response = client.post(f"/api/sessions/{sid}/steer", json={"text": text})
    assert response.status_code == 202, response.text
    return dict(response.json())


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def round_trip(base: str) -> None:
    gate.clear()
    with httpx.Client(base_url=base, timeout=60) as client:
        sid = client.post("/api/sessions", json={}).json()["id"]
        steer(client, sid, "wait")
        base_times = []
        for _ in range(50):
            t0 = time.perf_counter()
            client.get("/api/info")
            base_times.append((time.perf_counter() - t0) * 1000)
        times = []
        for i in range(200):
            t0 = time.perf_counter()
            assert steer(client, sid, f"s{i}")["became"] == "queued"
            times.append((time.perf_counter() - t0) * 1000)
        gate.set()
        assert users(wait_idle(client, sid)) == ["wait", *(f"s{i}" for i in range(200))]
    print(
        f"round trip of a steer (200, sequential): p50 {statistics.median(times):.2f} ms, "
        f"p95 {pct(times, 0.95):.2f} ms, max {max(times):.2f} ms; GET /api/info: p50 "
        f"{statistics.median(base_times):.2f} ms"
    )


def to_transcript(base: str) -> None:
    landed: dict[str, float] = {}
    with httpx.Client(base_url=base, timeout=60) as client:
        sid = client.post("/api/sessions", json={}).json()["id"]

        def watch() -> None:
            texts: dict[str, str] = {}
            with (
                httpx.Client(base_url=base, timeout=60) as reader,
                reader.stream("GET", f"/api/sessions/{sid}/events") as stream,
            ):
                for line in stream.iter_lines():
                    if not line.startswith("data: "):
                        continue
                    e = json.loads(line[6:])
                    if e["type"] == "TEXT_MESSAGE_START" and e["role"] == "user":
                        texts[e["messageId"]] = ""
                    elif e["type"] == "TEXT_MESSAGE_CONTENT" and e["messageId"] in texts:
                        texts[e["messageId"]] += e["delta"]
                    elif e["type"] == "TEXT_MESSAGE_END" and e["messageId"] in texts:
                        landed[texts[e["messageId"]]] = time.perf_counter()
                        if texts[e["messageId"]] == "last":
                            return

        watcher = threading.Thread(target=watch)
        watcher.start()
        time.sleep(0.2)
        sent: dict[str, float] = {}
        for i in range(100):
            text = f"t{i}" if i < 99 else "last"
            sent[text] = time.perf_counter()
            steer(client, sid, text)  # the first starts the run; each next one steers it
            while text not in landed:
                time.sleep(0.001)
        watcher.join(30)
        wait_idle(client, sid)
    delays = [(landed[t] - sent[t]) * 1000 for t in sent]
    print(
        f"steer to the transcript (100, turns of {TURN * 1000:.0f} ms): "
        f"p50 {statistics.median(delays):.1f} ms, p95 {pct(delays, 0.95):.1f} ms"
    )


def none_lost(base: str) -> None:
    gate.clear()
    with httpx.Client(base_url=base, timeout=60) as client:
        sid = client.post("/api/sessions", json={}).json()["id"]
        steer(client, sid, "wait")
        accepted: list[str] = []

        def send(n: int) -> None:
            with httpx.Client(base_url=base, timeout=60) as mine:
                for i in range(50):
                    assert steer(mine, sid, f"c{n}.{i}")["became"] == "queued"

        threads = [threading.Thread(target=send, args=(n,)) for n in range(4)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        elapsed = time.perf_counter() - t0
        state = client.get(f"/api/sessions/{sid}").json()["events"][1]["snapshot"]
        accepted = state["queued"]["steering"]
        gate.set()
        got = users(wait_idle(client, sid))[1:]
    ok = got == accepted and sorted(got) == sorted(f"c{n}.{i}" for n in range(4) for i in range(50))
    print(
        f"4 clients x 50 steers at once: {len(got)} arrived, in the order accepted: {ok} "
        f"({200 / elapsed:.0f} steers/s)"
    )
    assert ok


def main() -> None:
    base, process = serve()
    try:
        round_trip(base)
        to_transcript(base)
        none_lost(base)
    finally:
        gate.set()
        process.terminate()
        process.join(15)


if __name__ == "__main__":
    main()
