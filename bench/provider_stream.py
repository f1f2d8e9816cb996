"""Per-delta cost through the provider adapters, against a bare reader of the same HTTP stream.

A server on 127.0.0.1 answers every request with one long text answer (20,000 deltas) in the
wire format of each API, built from the test suite's SSE fixtures (their first text delta
repeated). Two readers take the same body over the same kind of connection:

- agentcore: the adapter's `stream` (the vendor SDK sends the request; the shared driver reads
  the events under the abort signal and `idle_timeout`, the adapter maps each one into builder
  calls, the stream enforces the protocol);
- bare: httpx reading the SSE lines and `json.loads` of each event, nothing else.

Times run from the first text delta to the last (setting up a client and connecting are left
out: they are the SDK's). The ratio of the times per delta is what the model layer adds on top of
parsing the wire; it is reported per API as the median of `--runs` rounds (alternating the two
sides, so that load from other processes hits both alike). The rate in the first and last 10%
of the answer shows whether a delta costs more as the answer grows.

    .venv/bin/python bench/provider_stream.py [--runs 3] [--deltas 20000] [--guarded]

`--guarded` reads as an agent run does: under an abort signal and an `idle_timeout`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import anyio
import httpx

from agentcore.abort import AbortController
from agentcore.llm import Context, Model, StreamOptions
from agentcore.llm.providers import anthropic, openai_completions, openai_responses
from agentcore.messages import UserMessage

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "llm" / "fixtures"

APIS = {
    # api: (fixture directory, request path, the marker of a text-delta event, adapter)
    "openai-completions": ("openai-completions", "/v1/chat/completions", '"delta":{"content":"'),
    "openai-responses": ("openai-responses", "/v1/responses", "response.output_text.delta"),
    "anthropic-messages": ("anthropic-messages", "/v1/messages", '"text_delta"'),
}
ADAPTERS = {
    "openai-completions": openai_completions.stream,
    "openai-responses": openai_responses.stream,
    "anthropic-messages": anthropic.stream,
}


def long_body(api: str, deltas: int) -> bytes:
    """The fixture `text.sse` of `api` with its first text-delta event repeated `deltas` times
    (the other delta events dropped)."""
    folder, _, marker = APIS[api]
    events = (FIXTURES / folder / "text.sse").read_bytes().decode().split("\n\n")
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
    protocol_version = "HTTP/1.1"
    bodies: ClassVar[dict[str, bytes]] = {}

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = self.bodies[self.path]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


async def through_adapter(api: str, url: str, guarded: bool) -> tuple[int, float, list[float]]:
    """(text deltas, seconds from the first to the last, the time each came out) for one answer
    read through the adapter."""
    model = Model(id="bench", api=api, provider="bench", base_url=url + "/v1")
    if api == "anthropic-messages":
        model = Model(id="bench", api=api, provider="bench", base_url=url)
    context = Context(messages=[UserMessage(content="go")])
    stamps: list[float] = []
    options = StreamOptions(api_key="k")
    if guarded:  # as an agent run reads: under an abort signal and an idle timeout
        options = StreamOptions(api_key="k", signal=AbortController().signal, idle_timeout=60.0)
    async with ADAPTERS[api](model, context, options) as stream:
        async for event in stream:
            if event.type == "text_delta":
                stamps.append(time.perf_counter())
        message = await stream.result()
    assert message.stop_reason == "stop", message.error_message
    return len(stamps), stamps[-1] - stamps[0], stamps


async def bare(api: str, url: str) -> tuple[int, float]:
    """(text deltas, seconds from the first to the last) for the same answer read as SSE lines
    and JSON, nothing more."""
    _, path, marker = APIS[api]
    n = 0
    first = last = 0.0
    async with (
        httpx.AsyncClient() as client,
        client.stream("POST", url + path, json={"model": "bench"}) as response,
    ):
        async for line in response.aiter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                data = json.loads(line[6:])
                if marker in line:
                    n += 1
                    last = time.perf_counter()
                    if n == 1:
                        first = last
                del data
    return n, last - first


def _rate_drift(stamps: list[float]) -> float:
    """Last-10% rate over first-10% rate (1.0: flat)."""
    tenth = max(1, len(stamps) // 10)
    first = tenth / max(1e-9, stamps[tenth] - stamps[0])
    last = tenth / max(1e-9, stamps[-1] - stamps[-tenth - 1])
    return last / first


async def main(runs: int, deltas: int, guarded: bool) -> None:
    _Handler.bodies = {APIS[api][1]: long_body(api, deltas) for api in APIS}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        how = "under an abort signal and idle_timeout" if guarded else "no signal, no idle_timeout"
        print(f"{deltas} text deltas per answer ({how}), median of {runs} rounds")
        for api in APIS:
            ours: list[float] = []
            theirs: list[float] = []
            drifts: list[float] = []
            for _ in range(runs):
                n, seconds, stamps = await through_adapter(api, url, guarded)
                assert n == deltas, (api, n)
                ours.append(seconds / (n - 1) * 1e6)
                drifts.append(_rate_drift(stamps))
                m, bare_seconds = await bare(api, url)
                assert m == deltas, (api, m)
                theirs.append(bare_seconds / (m - 1) * 1e6)
            a, b = statistics.median(ours), statistics.median(theirs)
            print(
                f"{api:20} adapter {a:6.2f} µs/delta  bare {b:6.2f} µs/delta  "
                f"ratio {a / b:4.2f}x  last/first rate {statistics.median(drifts):4.2f}"
            )
    finally:
        server.shutdown()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--deltas", type=int, default=20_000)
    parser.add_argument(
        "--guarded", action="store_true", help="read under an abort signal and an idle timeout"
    )
    args = parser.parse_args()
    anyio.run(main, args.runs, args.deltas, args.guarded)
