"""The web chat's endpoint with the real local model: a prompt over HTTP, the run streamed back as
AG-UI events over SSE (each validated against the `ag-ui-protocol` models), usage reported, the
session stored. Only the protocol is checked, never the model's wording."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest

from agentcore.builtin_tools import builtin_tools
from agentcore.sessions import JsonlSessionStore

from .local_server import LocalModel

pytestmark = [pytest.mark.local_llm, pytest.mark.timeout(600)]


def test_the_web_endpoint_streams_a_local_model_run_as_ag_ui(
    local_model: LocalModel, tmp_path: Path
) -> None:
    uvicorn = pytest.importorskip("uvicorn")
    ag_ui = pytest.importorskip("ag_ui.core")
    from pydantic import TypeAdapter

    from agentcore.web import create_app

    event_model: TypeAdapter[object] = TypeAdapter(ag_ui.Event)
    store = JsonlSessionStore(tmp_path / "sessions")
    app = create_app(
        store,
        model=local_model.model,
        tools=builtin_tools(str(tmp_path)),
        system_prompt="You are a terse assistant. Answer in one short sentence.",
        agent_options={"max_tokens": 96, "temperature": 0, "max_turns": 3},
    )
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    events: list[dict[str, object]] = []
    try:
        with httpx.Client(base_url=base, timeout=300) as client:
            sid = client.post("/api/sessions", json={}).json()["id"]
            with client.stream("GET", f"/api/sessions/{sid}/events") as stream:
                prompted = False
                for line in stream.iter_lines():
                    if not line.startswith("data: "):
                        continue
                    event = json.loads(line[len("data: ") :])
                    event_model.validate_python(event)
                    events.append(event)
                    if event["type"] == "STATE_SNAPSHOT" and not prompted:
                        prompted = True
                        response = client.post(
                            f"/api/sessions/{sid}/prompt", json={"text": "What is 6*7?"}
                        )
                        assert response.status_code == 202
                    if event["type"] in ("RUN_FINISHED", "RUN_ERROR"):
                        break
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        store.close()
    types = [e["type"] for e in events]
    assert types[-1] == "RUN_FINISHED", events[-1]
    assert "RUN_STARTED" in types and "TEXT_MESSAGE_START" in types
    answer = "".join(
        str(e["delta"])
        for e in events
        if e["type"] == "TEXT_MESSAGE_CONTENT" and e["messageId"] != "m0"
    )
    assert answer.strip()
    ends = [
        e["value"] for e in events if e["type"] == "CUSTOM" and e["name"] == "agentcore.message_end"
    ]
    assert ends and all(v["usage"]["output"] > 0 for v in ends)  # type: ignore[index]
    stored = JsonlSessionStore(tmp_path / "sessions").load(sid)
    assert stored.messages[0].role == "user" and stored.messages[-1].role == "assistant"
