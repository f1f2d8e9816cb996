"""Helpers of the web tests: the app served by a real uvicorn on 127.0.0.1 in a thread, with a
faux model that answers by the prompt (`faux_script.answer`), and an SSE reader.

The server and its agents run on the server thread's event loop; the tests talk to it over HTTP
only, like a browser would.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("ag_ui")

import uvicorn

from agentcore.builtin_tools import builtin_tools
from agentcore.sessions import JsonlSessionStore, SessionStore
from agentcore.testing import FauxProvider
from agentcore.web import create_app

from .faux_script import answer


@dataclass
class Served:
    """A running server: its address, store directory and faux provider."""

    base_url: str
    store_dir: Path
    faux: FauxProvider
    server: uvicorn.Server
    thread: threading.Thread
    app: Any
    store: SessionStore

    def client(self, **kwargs: Any) -> httpx.Client:
        return httpx.Client(base_url=self.base_url, timeout=30, **kwargs)


def start_server(
    tmp_path: Path,
    *,
    tokens_per_second: float | None = None,
    store: SessionStore | None = None,
    **options: Any,
) -> Served:
    """Serve `create_app` with a fresh store (a JSONL one unless given) and faux model on a free
    loopback port."""
    faux = FauxProvider([answer] * 1000, tokens_per_second=tokens_per_second)
    store_dir = tmp_path / "sessions"
    store = JsonlSessionStore(store_dir) if store is None else store
    options.setdefault("tools", builtin_tools(str(tmp_path)))
    app = create_app(store, model=faux.model, **options)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # as `serve`
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    for _ in range(500):
        if server.started:
            break
        threading.Event().wait(0.01)
    return Served(base, store_dir, faux, server, thread, app, store)


def stop_server(served: Served) -> None:
    served.server.should_exit = True
    served.thread.join(timeout=15)
    assert not served.thread.is_alive(), "the server did not stop"
    served.store.close()  # the app never closes the store it was given


@dataclass
class SseEvent:
    """One Server-Sent Event: its id and its AG-UI event (as JSON)."""

    id: str | None
    data: dict[str, Any]

    @property
    def type(self) -> str:
        return str(self.data["type"])


@dataclass
class SseReader:
    """Reads a session's event stream event by event."""

    response: httpx.Response
    lines: Iterator[str]
    seen: list[SseEvent] = field(default_factory=list)

    def next(self) -> SseEvent:
        event_id = None
        data: list[str] = []
        for line in self.lines:
            if line == "":
                if data:
                    event = SseEvent(event_id, json.loads("\n".join(data)))
                    self.seen.append(event)
                    return event
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "id":
                event_id = value
            elif name == "data":
                data.append(value)
        raise EOFError("the event stream ended")

    def until(self, *types: str) -> list[SseEvent]:
        """Read events up to and including the first of one of `types`."""
        out = []
        while True:
            event = self.next()
            out.append(event)
            if event.type in types:
                return out

    def until_custom(self, name: str) -> list[SseEvent]:
        out = []
        while True:
            event = self.next()
            out.append(event)
            if event.type == "CUSTOM" and event.data["name"] == name:
                return out


class open_events:
    """`with open_events(client, session_id, last_event_id=None) as reader:`"""

    def __init__(self, client: httpx.Client, session_id: str, last_event_id: str | None = None):
        headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
        self._cm = client.stream("GET", f"/api/sessions/{session_id}/events", headers=headers)

    def __enter__(self) -> SseReader:
        response = self._cm.__enter__()
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        return SseReader(response, response.iter_lines())

    def __exit__(self, *exc: object) -> None:
        self._cm.__exit__(*exc)
