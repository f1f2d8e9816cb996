"""`agentcore.web.serve` on a real socket: requests on a kept-alive connection are answered at
once (Nagle is off on the server's connections)."""

from __future__ import annotations

import statistics
import threading
import time
from pathlib import Path

import anyio
import httpx
import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from agentcore.sessions import JsonlSessionStore
from agentcore.testing import FauxProvider, faux_text
from agentcore.web import create_app, serve


def test_requests_on_a_kept_alive_connection_get_no_delayed_ack_wait(tmp_path: Path) -> None:
    faux = FauxProvider([faux_text("hi")])
    store = JsonlSessionStore(tmp_path)
    app = create_app(store, model=faux.model)
    ready: list[int] = []

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(
                lambda: serve(app, port=0, on_ready=lambda host, port: ready.append(port))
            )
            await anyio.to_thread.run_sync(done.wait)
            group.cancel_scope.cancel()

    done = threading.Event()
    thread = threading.Thread(target=anyio.run, args=(main,), daemon=True)
    thread.start()
    try:
        for _ in range(500):
            if ready:
                break
            time.sleep(0.01)
        with httpx.Client(base_url=f"http://127.0.0.1:{ready[0]}", timeout=10) as client:
            for _ in range(50):  # until the server's lifespan has started
                if client.get("/api/info").status_code == 200:
                    break
                time.sleep(0.05)
            times = []
            for _ in range(15):
                t0 = time.perf_counter()
                assert client.get("/api/info").status_code == 200
                times.append(time.perf_counter() - t0)
    finally:
        done.set()
        thread.join(15)
        store.close()
    # with Nagle on, each answer waited for the client's delayed ACK: 40 ms or more every time
    assert statistics.median(times) < 0.02, times
