"""An agent served to the browser: the chat page of `agentcore.web`, on 127.0.0.1.

    pip install 'agentcore-loop[web]'
    python examples/web_agent.py              # serves until Ctrl-C; open the URL it prints
    python examples/web_agent.py --local      # the same with the built-in local model
    python examples/web_agent.py --check      # serves, sends one prompt over HTTP, prints the
                                              # streamed answer, stops (the tests use this)

`create_app(store, model=..., tools=...)` builds the ASGI app: the page, and an HTTP API whose
runs stream to the page as AG-UI events over Server-Sent Events. `serve(app, ...)` runs it with
uvicorn. Sessions are stored as they happen in a JSONL store (a temporary directory here, so each
start is a clean slate; pass `--sessions DIR` to keep them).

`--check` starts this script as the server in a child process and plays the browser with httpx:
it creates a session (`POST /api/sessions`), follows the session's event stream
(`GET /api/sessions/{id}/events`), sends a prompt (`POST /api/sessions/{id}/prompt`), prints the
answer's text as it streams until `RUN_FINISHED`, then stops the server with Ctrl-C (SIGINT).

By default the model is scripted (`agentcore.testing.FauxProvider`): it sends arithmetic to the
`calculator` tool of `agentcore.builtin_tools` and answers with its result, and otherwise says
what it is. With `--local` it is the local model served by `scripts/local-model` (on
`AGENTCORE_LOCAL_PORT` when set).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from dataclasses import replace
from typing import Any

import anyio
import httpx

from agentcore import AssistantMessage, TextContent, ToolResultMessage, UserMessage
from agentcore.builtin_tools import calculator
from agentcore.llm import Model, get_model
from agentcore.sessions import JsonlSessionStore
from agentcore.testing import FauxCall, FauxProvider, faux_text, faux_tool_call
from agentcore.web import create_app, serve

CHECK_PROMPT = "What is 17 * 23 + 4?"
SYSTEM_PROMPT = "You are a helpful assistant. Use the calculator for any arithmetic."


def scripted_model() -> FauxProvider:
    """A scripted model for any number of prompts: arithmetic goes to the calculator."""

    def respond(call: FauxCall) -> AssistantMessage:
        last = call.context.messages[-1]
        if isinstance(last, ToolResultMessage):
            result = "".join(b.text for b in last.content if isinstance(b, TextContent))
            return faux_text(f"The calculator says **{result.split(' = ')[-1]}** ({result}).")
        text = last.content if isinstance(last, UserMessage) else ""
        expression = re.search(r"[\d(][\d\s+\-*/().]*", text if isinstance(text, str) else "")
        if expression and any(op in expression.group() for op in "+-*/"):
            return faux_tool_call("calculator", {"expression": expression.group().strip()})
        return faux_text(
            "I am a scripted model: ask me some arithmetic, or restart me with `--local`."
        )

    return FauxProvider([respond] * 10_000)  # one scripted answer per request


def local_model() -> Model:
    """The built-in local model (`scripts/local-model`), on `AGENTCORE_LOCAL_PORT` when set."""
    model = get_model("local", "qwen2.5-coder-1.5b")
    port = os.environ.get("AGENTCORE_LOCAL_PORT", "").strip()
    return replace(model, base_url=f"http://127.0.0.1:{port}/v1") if port.isdigit() else model


# --- --check: one prompt through the HTTP API, as the page sends it ----------------------------


async def send_one_prompt(base_url: str, prompt: str) -> bool:
    """Create a session, follow its events, send `prompt`, print the streamed answer; True when
    the run finished with an answer."""
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:
        session = (await client.post("/api/sessions", json={})).raise_for_status().json()["id"]
        print(f"session {session}")
        async with client.stream("GET", f"/api/sessions/{session}/events") as events:
            events.raise_for_status()  # the stream is open: nothing the run sends is missed
            sent = await client.post(f"/api/sessions/{session}/prompt", json={"text": prompt})
            print(f"you: {prompt} ({sent.raise_for_status().json()['status']})")
            with anyio.fail_after(60):
                return await print_the_run(events)


async def print_the_run(events: httpx.Response) -> bool:
    """Print a run's AG-UI events as they arrive, until it finishes; True when it finished with
    an answer."""
    answer: list[str] = []
    streaming = False  # inside the assistant's text (a user's prompt is echoed as text too)
    async for line in events.aiter_lines():
        if not line.startswith("data: "):
            continue
        event: dict[str, Any] = json.loads(line.removeprefix("data: "))
        kind = event["type"]
        if kind == "TOOL_CALL_START":
            print(f"  → {event['toolCallName']}")
        elif kind == "TOOL_CALL_RESULT":
            print(f"  ✓ {event['content']}")
        elif kind == "TEXT_MESSAGE_START":
            streaming = event.get("role") == "assistant"
            print("agent: " if streaming else "", end="", flush=True)
        elif kind == "TEXT_MESSAGE_CONTENT" and streaming:
            answer.append(event["delta"])
            print(event["delta"], end="", flush=True)  # as it streams
        elif kind == "TEXT_MESSAGE_END" and streaming:
            print()
            streaming = False
        elif kind in ("RUN_FINISHED", "RUN_ERROR"):
            print(kind)
            return kind == "RUN_FINISHED" and bool("".join(answer).strip())
    return False


async def serve_until_interrupted(argv: list[str]) -> None:
    """Serve the chat on 127.0.0.1 (port 8765, or `--port N`; 0 picks a free one)."""
    faux = scripted_model()  # kept in a variable: the model lives as long as its provider
    model = local_model() if "--local" in argv else faux.model
    port = int(argv[argv.index("--port") + 1]) if "--port" in argv else 8765
    with tempfile.TemporaryDirectory(prefix="web-agent-") as scratch:
        directory = argv[argv.index("--sessions") + 1] if "--sessions" in argv else scratch
        with JsonlSessionStore(directory) as store:
            app = create_app(store, model=model, tools=[calculator()], system_prompt=SYSTEM_PROMPT)

            def ready(host: str, port: int) -> None:
                print(f"serving the chat on http://{host}:{port}/  (Ctrl-C stops)", flush=True)

            await serve(app, host="127.0.0.1", port=port, on_ready=ready)


def check(argv: list[str]) -> int:
    """Start this script as a server in a child process, send it one prompt as the page would,
    then stop it with Ctrl-C (SIGINT), as a person would."""
    server = subprocess.Popen(
        [sys.executable, __file__, "--port", "0", *(a for a in argv if a == "--local")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()  # "serving the chat on http://127.0.0.1:PORT/ ..."
        print(line, end="")
        url = re.search(r"http://\S+/", line)
        ok = url is not None and anyio.run(send_one_prompt, url.group().rstrip("/"), CHECK_PROMPT)
    finally:
        server.send_signal(signal.SIGINT)
        code = server.wait(timeout=30)
        server.stdout.close()  # type: ignore[union-attr]
    print(f"server stopped by Ctrl-C (exit code {code})")
    return 0 if ok and code == 130 else 1


if __name__ == "__main__":
    if "--check" in sys.argv[1:]:
        sys.exit(check(sys.argv[1:]))
    try:
        anyio.run(serve_until_interrupted, sys.argv[1:])
    except KeyboardInterrupt:
        sys.exit(130)
