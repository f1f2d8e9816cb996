"""Past `max_open_sessions`, with every open session in use: a session opened then stays open for
the reader that opened it (it was closed at once, and the reader followed a conversation no
prompt would reach)."""

from __future__ import annotations

import time
from pathlib import Path

from .web_support import open_events, start_server, stop_server


def test_a_session_opened_while_every_other_is_in_use_reaches_its_reader(tmp_path: Path) -> None:
    served = start_server(tmp_path, max_open_sessions=1, close_idle_after=60)
    try:
        with served.client() as client:
            first = client.post("/api/sessions", json={}).json()["id"]
            second = client.post("/api/sessions", json={}).json()["id"]
            with open_events(client, first) as busy, open_events(client, second) as reader:
                busy.next()  # the first session has a reader: it cannot be closed
                assert reader.next().type == "MESSAGES_SNAPSHOT"
                t0 = time.monotonic()
                started = client.post(f"/api/sessions/{second}/prompt", json={"text": "hi"})
                assert started.status_code == 202
                events = reader.until("RUN_FINISHED")
                assert any(e.type == "TEXT_MESSAGE_CONTENT" for e in events)
                assert time.monotonic() - t0 < 20
    finally:
        stop_server(served)
