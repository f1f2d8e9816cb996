"""A whole agent run on the real wire, against a bare reader doing the same two requests.

A server on 127.0.0.1 (a process of its own) speaks the wire format of each API: the first
request of a run is answered with a streamed tool call (the test suite's `tool_call.sse`
fixture), the second, which carries the tool's result, with one text answer of `--deltas` text
deltas (`text.sse` with its first text delta repeated). Two sides make the same two requests:

- agentcore: `agent_loop` with its defaults (the run's own abort signal, no timeouts set), one
  `@tool`, the provider adapter through the vendor SDK, every event read with `async for`;
- bare: one `httpx.AsyncClient` for the whole process (its connection reused from run to run, as
  agentcore's adapters reuse the event loop's shared client; `--bare-client-per-run`: a client of
  its own for each run, the comparison before the shared clients), the SSE lines, `json.loads` of
  each event, the tool's arguments joined and parsed, the function called, the second request
  sent; nothing else.

Two ratios per API, measured in one process alternating the sides so that load from other
processes hits both alike (the median of `--runs` rounds): per delta (the first text delta of the
answer to its last, as each side sees it) and per run (from the call to the end of the answer,
client set-up and both requests included).

    .venv/bin/python bench/provider_run.py [--runs 5] [--deltas 2000] [--apis a,b]
        [--bare-client-per-run]
    .venv/bin/python bench/provider_run.py --instructions   # callgrind: per run and per delta

`--instructions` counts CPU instructions with valgrind's callgrind, in a fresh process per
count with the server in another one: per delta from answers of 20,000 and 2,000 deltas, per run
from 5 runs and 1 run (the difference cancels start-up and imports, as `instructions.py` does).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import anyio
import httpx

from agentcore import AgentContext, AgentLoopConfig, agent_loop, tool
from agentcore.llm import Model
from agentcore.messages import UserMessage

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "llm" / "fixtures"

# api: (request path, the marker of a text-delta event)
APIS = {
    "openai-completions": ("/v1/chat/completions", '"delta":{"content":"'),
    "openai-responses": ("/v1/responses", "response.output_text.delta"),
    "anthropic-messages": ("/v1/messages", '"text_delta"'),
}


def _text_body(api: str, deltas: int) -> bytes:
    events = (FIXTURES / api / "text.sse").read_bytes().decode().split("\n\n")
    marker = APIS[api][1]
    out: list[str] = []
    repeated = False
    for event in events:
        if marker in event:
            if not repeated:
                out.extend([event] * deltas)
                repeated = True
            continue
        out.append(event)
    return "\n\n".join(out).encode()


class _Handler(BaseHTTPRequestHandler):
    """`POST /d<deltas>/v1/...`: the tool call, or (once the request carries the tool's result,
    which repeats the call's arguments) the text answer of `<deltas>` deltas."""

    protocol_version = "HTTP/1.1"
    cache: ClassVar[dict[tuple[str, int, bool], bytes]] = {}

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        request = self.rfile.read(int(self.headers.get("content-length") or 0))
        match = re.fullmatch(r"/d(\d+)(/v1/.*)", self.path)
        api = next((a for a, (p, _) in APIS.items() if match and match.group(2) == p), None)
        if match is None or api is None:
            self.send_error(404)
            return
        answer = b"Paris" in request or b"San Francisco" in request  # the tool's result
        key = (api, int(match.group(1)), answer)
        if key not in self.cache:
            self.cache[key] = (
                _text_body(api, key[1])
                if answer
                else (FIXTURES / api / "tool_call.sse").read_bytes()
            )
        body = self.cache[key]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def weather(
    location: str = "", city: str = "", unit: str = "", units: str = "", days: int = 1
) -> str:
    """The tool both sides run: a fixed forecast."""
    return f"sunny in {location or city}, 21 degrees {unit or units or 'celsius'}, {days} day(s)"


@tool(name="get_weather")
async def get_weather(
    location: str = "", city: str = "", unit: str = "", units: str = "", days: int = 1
) -> str:
    """The weather for a place."""
    return weather(location, city, unit, units, days)


async def agentcore_run(api: str, url: str, deltas: int) -> tuple[int, float, float]:
    """(text deltas, seconds first to last delta, seconds for the run) through `agent_loop`."""
    start = time.perf_counter()
    base = f"{url}/d{deltas}" + ("" if api == "anthropic-messages" else "/v1")
    model = Model(id="bench", api=api, provider="bench", base_url=base)
    config = AgentLoopConfig(model=model, api_key="k")
    n = 0
    first = last = 0.0
    events = agent_loop([UserMessage(content="go")], AgentContext(tools=[get_weather]), config)
    async for event in events:
        if event.type == "tool_execution_end":  # count the answer's deltas, not the first turn's
            n = 0
        elif event.type == "message_update" and event.assistant_message_event.type == "text_delta":
            n += 1
            last = time.perf_counter()
            if n == 1:
                first = last
    messages = await events.result()
    end = time.perf_counter()
    final = messages[-1]
    assert getattr(final, "stop_reason", None) == "stop", getattr(final, "error_message", None)
    assert [m.role for m in messages].count("tool_result") == 1, [m.role for m in messages]
    return n, last - first, end - start


def _sse_json(line: str) -> Any:
    return json.loads(line[6:]) if line.startswith("data: ") and line != "data: [DONE]" else None


async def _bare_tool_call(api: str, response: httpx.Response) -> tuple[str, str, str]:
    """(call id, name, arguments) of the streamed tool call."""
    call_id = name = ""
    arguments: list[str] = []
    async for line in response.aiter_lines():
        data = _sse_json(line)
        if data is None:
            continue
        if api == "openai-completions":
            for choice in data["choices"]:
                for call in choice["delta"].get("tool_calls") or ():
                    call_id = call.get("id") or call_id
                    name = call["function"].get("name") or name
                    arguments.append(call["function"].get("arguments") or "")
        elif api == "openai-responses":
            if data["type"] == "response.output_item.added":
                call_id, name = data["item"]["call_id"], data["item"]["name"]
            elif data["type"] == "response.function_call_arguments.delta":
                arguments.append(data["delta"])
        elif data["type"] == "content_block_start" and data["content_block"]["type"] == "tool_use":
            call_id, name = data["content_block"]["id"], data["content_block"]["name"]
        elif data["type"] == "content_block_delta" and data["delta"]["type"] == "input_json_delta":
            arguments.append(data["delta"]["partial_json"])
    return call_id, name, "".join(arguments)


def _bare_second_body(api: str, call: tuple[str, str, str], result: str) -> dict[str, Any]:
    call_id, name, arguments = call
    if api == "openai-completions":
        return {
            "model": "bench",
            "stream": True,
            "messages": [
                {"role": "user", "content": "go"},
                {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": name, "arguments": arguments},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": call_id, "content": result},
            ],
        }
    if api == "openai-responses":
        return {
            "model": "bench",
            "stream": True,
            "input": [
                {"role": "user", "content": "go"},
                {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments},
                {"type": "function_call_output", "call_id": call_id, "output": result},
            ],
        }
    return {
        "model": "bench",
        "stream": True,
        "max_tokens": 1024,
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": call_id,
                        "name": name,
                        "input": json.loads(arguments),
                    }
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call_id, "content": result}],
            },
        ],
    }


_TLS: list[ssl.SSLContext] = []


def _bare_tls() -> ssl.SSLContext:
    """One TLS context for every bare run (agentcore's adapters share one too: building it
    loads the CA bundle, tens of milliseconds)."""
    if not _TLS:
        _TLS.append(httpx.create_ssl_context())
    return _TLS[0]


_BARE_CLIENT: list[httpx.AsyncClient] = []  # the process's one client (one event loop per process)
_BARE_PER_RUN = "--bare-client-per-run" in sys.argv


@contextlib.asynccontextmanager
async def _bare_client() -> AsyncIterator[httpx.AsyncClient]:
    """The bare reader's client: the process's one (kept open), or one per run if asked."""
    if _BARE_PER_RUN:
        async with httpx.AsyncClient(verify=_bare_tls()) as client:
            yield client
        return
    if not _BARE_CLIENT:
        _BARE_CLIENT.append(httpx.AsyncClient(verify=_bare_tls()))
    yield _BARE_CLIENT[0]


async def close_bare_client() -> None:
    """Close the process's bare client (at the end of `main` and `_child`)."""
    while _BARE_CLIENT:
        await _BARE_CLIENT.pop().aclose()


async def bare_run(api: str, url: str, deltas: int) -> tuple[int, float, float]:
    """(text deltas, seconds first to last delta, seconds for the run): the same two requests
    with httpx, SSE lines and `json.loads`."""
    start = time.perf_counter()
    path, marker = APIS[api]
    endpoint = f"{url}/d{deltas}{path}"
    n = 0
    first = last = 0.0
    async with _bare_client() as client:
        body = {"model": "bench", "stream": True, "messages": [{"role": "user", "content": "go"}]}
        async with client.stream("POST", endpoint, json=body) as response:
            call = await _bare_tool_call(api, response)
        result = weather(**json.loads(call[2]))
        async with client.stream(
            "POST", endpoint, json=_bare_second_body(api, call, result)
        ) as response:
            async for line in response.aiter_lines():
                data = _sse_json(line)
                if data is not None and marker in line:
                    n += 1
                    last = time.perf_counter()
                    if n == 1:
                        first = last
    return n, last - first, time.perf_counter() - start


SIDES = {"agentcore": agentcore_run, "bare": bare_run}


def _serve() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


def _start_server() -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve"], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    return process, f"http://127.0.0.1:{process.stdout.readline().strip()}"


async def main(runs: int, deltas: int, apis: list[str]) -> None:
    process, url = _start_server()
    try:
        print(f"whole runs: a tool call, the tool, then {deltas} text deltas; median of {runs}")
        for api in apis:
            for side in SIDES.values():  # warm-up: imports, the server's cache
                await side(api, url, deltas)
            per: dict[str, tuple[list[float], list[float]]] = {s: ([], []) for s in SIDES}
            for _ in range(runs):
                for name, side in SIDES.items():
                    n, seconds, whole = await side(api, url, deltas)
                    assert n == deltas, (api, name, n)
                    per[name][0].append(seconds / (n - 1) * 1e6)
                    per[name][1].append(whole * 1e3)
            ours = [statistics.median(x) for x in per["agentcore"]]
            theirs = [statistics.median(x) for x in per["bare"]]
            print(
                f"{api:20} per delta: agentcore {ours[0]:6.2f} µs, bare {theirs[0]:6.2f} µs, "
                f"ratio {ours[0] / theirs[0]:4.2f}x | per run: agentcore {ours[1]:6.1f} ms, "
                f"bare {theirs[1]:6.1f} ms, ratio {ours[1] / theirs[1]:4.2f}x",
                flush=True,
            )
    finally:
        await close_bare_client()
        process.terminate()
        process.wait()


# --- instruction counts -------------------------------------------------------------------------


async def _child(side: str, api: str, url: str, deltas: int, runs: int) -> None:
    for _ in range(runs):
        n, _, _ = await SIDES[side](api, url, deltas)
        assert n == deltas, (side, api, n)
    await close_bare_client()


def _count(url: str, side: str, api: str, deltas: int, runs: int) -> int:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.setdefault("PYTHONPYCACHEPREFIX", os.path.join(tempfile.gettempdir(), "agentcore-pyc"))
    child = [sys.executable, __file__, "--child", side, api, url, str(deltas), str(runs)]
    if _BARE_PER_RUN:
        child.append("--bare-client-per-run")
    subprocess.run([*child[:7], "1", *child[8:]], env=env, check=True)  # writes the bytecode cache
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *child],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
    match = re.search(r"Collected : (\d+)", done.stderr)
    assert match, done.stderr[-2000:]
    return int(match.group(1))


def count_instructions(apis: list[str]) -> None:
    process, url = _start_server()
    try:
        for api in apis:
            figures: dict[str, tuple[float, float]] = {}
            for side in SIDES:
                delta = (
                    _count(url, side, api, 20_000, 1) - _count(url, side, api, 2_000, 1)
                ) / 18_000
                run = (_count(url, side, api, 2_000, 5) - _count(url, side, api, 2_000, 1)) / 4
                figures[side] = (delta, run)
            (d, r), (bd, br) = figures["agentcore"], figures["bare"]
            print(
                f"{api:20} instructions per delta: agentcore {d:,.0f}, bare {bd:,.0f} "
                f"({d / bd:.2f}x); per run of 2,000 deltas: agentcore {r:,.0f}, bare {br:,.0f} "
                f"({r / br:.2f}x)",
                flush=True,
            )
    finally:
        process.terminate()
        process.wait()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        _serve()
    elif sys.argv[1:2] == ["--child"]:
        side, api, url, deltas, runs = sys.argv[2:7]
        anyio.run(_child, side, api, url, int(deltas), int(runs))
    else:
        parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
        parser.add_argument("--runs", type=int, default=5)
        parser.add_argument("--deltas", type=int, default=2_000)
        parser.add_argument("--apis", default=",".join(APIS))
        parser.add_argument("--instructions", action="store_true", help="count with callgrind")
        parser.add_argument(
            "--bare-client-per-run", action="store_true", help="the bare reader's client per run"
        )
        args = parser.parse_args()
        chosen = args.apis.split(",")
        if args.instructions:
            count_instructions(chosen)
        else:
            anyio.run(main, args.runs, args.deltas, chosen)
