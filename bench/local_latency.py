"""Latency on a real model: time to first token and tokens per second through `agent_loop`, against
raw streaming HTTP to the same server with the same request body.

The local model server (`scripts/local-model start`) must be running. Each round sends the same
request twice, once raw (httpx, reading the SSE lines itself) and once through `agent_loop` (the
whole stack: the OpenAI SDK, the adapter, the loop, its events), in alternating order so that load
from other processes hits both sides alike. The raw body is the adapter's own (`build_payload`),
so both ask for exactly the same thing; at temperature 0 both get the same answer. Both open a
new connection per request (llama-server closes idle keep-alive connections after a few seconds);
the raw side builds its httpx client before its clock starts, while `agent_loop` builds an SDK
client per request inside its timing.

- time to first token: from starting the request (or the run) to the first text delta in the
  consumer's hands;
- tokens per second: output tokens after the first, over the time from the first to the last
  text delta (the decode rate the consumer sees);
- the loop's own latency, free of the server's noise: for every text delta, the time from the
  adapter handing it out to the consumer of `agent_loop` holding its event.

    .venv/bin/python bench/local_latency.py [--runs 7] [--max-tokens 64] [--no-prompt-cache]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace

import anyio
import httpx

from agentcore import AgentContext, AgentLoopConfig, UserMessage, agent_loop
from agentcore.llm import (
    AssistantMessageEvent,
    AssistantMessageEventStream,
    Context,
    Model,
    SimpleStreamOptions,
    StreamFn,
    StreamOptions,
    get_model,
    stream_simple,
)
from agentcore.llm.providers.openai_completions import build_payload

SYSTEM_PROMPT = "You are a helpful assistant."
PROMPT = "Write a short poem about the sea."


@dataclass(frozen=True, slots=True)
class Sample:
    ttft: float  # seconds to the first text delta
    decode: float  # seconds from the first to the last text delta
    tokens: int  # output tokens, as the server counted them
    deltas: int  # text deltas received
    hops: tuple[float, ...] = ()  # agent_loop only: seconds from adapter to consumer, per delta

    @property
    def tokens_per_second(self) -> float:
        return (self.tokens - 1) / self.decode if self.decode > 0 and self.tokens > 1 else 0.0


def local_model() -> Model:
    model = get_model("local", "qwen2.5-coder-1.5b")
    port = os.environ.get("AGENTCORE_LOCAL_PORT", "").strip()
    return replace(model, base_url=f"http://127.0.0.1:{port}/v1") if port.isdigit() else model


async def raw(model: Model, payload: dict[str, object]) -> Sample:
    """One request with httpx, parsing the server-sent events by hand. The client is built before
    the clock starts (building one costs tens of milliseconds); the connection is opened inside
    the timing, as `agent_loop` does."""
    first = last = 0.0
    deltas = tokens = 0
    async with httpx.AsyncClient(timeout=120) as client:
        t0 = time.perf_counter()
        async with client.stream(
            "POST", f"{model.base_url}/chat/completions", json=payload
        ) as response:
            response.raise_for_status()
            async for line in response.aiter_lines():
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                chunk = json.loads(line[6:])
                if chunk.get("usage"):
                    tokens = chunk["usage"]["completion_tokens"]
                for choice in chunk.get("choices") or ():
                    if (choice.get("delta") or {}).get("content"):
                        now = time.perf_counter()
                        first = first or now
                        last = now
                        deltas += 1
    return Sample(ttft=first - t0, decode=last - first, tokens=tokens, deltas=deltas)


def stamping_stream_fn(
    produced: dict[int, tuple[AssistantMessageEvent, float]],
) -> StreamFn:
    """`stream_simple`, noting when the adapter hands out each event (keyed by the event's id;
    the event is kept alive, so ids are not reused)."""

    def stream_fn(
        model: Model, context: Context, options: SimpleStreamOptions
    ) -> AssistantMessageEventStream:
        inner = stream_simple(model, context, options)

        async def source() -> AsyncIterator[AssistantMessageEvent]:
            async with inner:
                async for event in inner:
                    produced[id(event)] = (event, time.perf_counter())
                    yield event

        return AssistantMessageEventStream(source())

    return stream_fn


async def through_loop(model: Model, max_tokens: int, extra: dict[str, object]) -> Sample:
    """The same request as a run of `agent_loop`, reading its events. Also measures the loop's
    own latency: from the adapter yielding a text delta to the consumer holding its event."""

    def add_extra(payload: dict[str, object], model: Model) -> dict[str, object]:
        return {**payload, **extra}

    config = AgentLoopConfig(
        model=model, temperature=0, max_tokens=max_tokens, on_payload=add_extra if extra else None
    )
    context = AgentContext(system_prompt=SYSTEM_PROMPT)
    produced: dict[int, tuple[AssistantMessageEvent, float]] = {}
    stream_fn = stamping_stream_fn(produced)
    hops: list[float] = []
    first = last = 0.0
    deltas = 0
    t0 = time.perf_counter()
    async with agent_loop(
        [UserMessage(content=PROMPT)], context, config, stream_fn=stream_fn
    ) as events:
        async for event in events:
            if (
                event.type == "message_update"
                and event.assistant_message_event.type == "text_delta"
            ):
                now = time.perf_counter()
                first = first or now
                last = now
                deltas += 1
                hops.append(now - produced[id(event.assistant_message_event)][1])
        messages = await events.result()
    answer = messages[-1]
    assert getattr(answer, "stop_reason", None) in ("stop", "length"), answer
    tokens = answer.usage.output  # type: ignore[union-attr]
    return Sample(
        ttft=first - t0, decode=last - first, tokens=tokens, deltas=deltas, hops=tuple(hops)
    )


def median(values: list[float]) -> float:
    return statistics.median(values)


async def main(runs: int, max_tokens: int, prompt_cache: bool) -> int:
    model = local_model()
    context = Context(system_prompt=SYSTEM_PROMPT, messages=[UserMessage(content=PROMPT)])
    # llama.cpp reuses the KV cache of an identical prompt prefix; without it, the time to the
    # first token includes processing the whole prompt
    extra: dict[str, object] = {} if prompt_cache else {"cache_prompt": False}
    payload = build_payload(
        model, context, StreamOptions(temperature=0, max_tokens=max_tokens), reasoning=None
    )
    payload.update(extra)
    try:
        with anyio.fail_after(300):  # warm-up: the model is loaded, the prompt prefix cached
            await raw(model, payload)
            await through_loop(model, max_tokens, extra)
    except httpx.HTTPError as exc:
        print(
            f"error: the local model at {model.base_url} is not reachable ({exc!r}); "
            "start it with `scripts/local-model start`",
            file=sys.stderr,
        )
        return 2

    raws: list[Sample] = []
    loops: list[Sample] = []
    print(
        f"{runs} runs each against {model.base_url}, max_tokens {max_tokens}, temperature 0, "
        f"prompt cache {'on' if prompt_cache else 'off'}"
    )
    print(f"{'run':>3}  {'side':<10} {'TTFT ms':>8} {'tok/s':>7} {'tokens':>6} {'deltas':>6}")
    for i in range(runs):
        order = ("raw", "agent_loop") if i % 2 == 0 else ("agent_loop", "raw")
        for side in order:
            with anyio.fail_after(300):
                if side == "raw":
                    sample = await raw(model, payload)
                    raws.append(sample)
                else:
                    sample = await through_loop(model, max_tokens, extra)
                    loops.append(sample)
            print(
                f"{i + 1:>3}  {side:<10} {sample.ttft * 1000:8.0f} "
                f"{sample.tokens_per_second:7.2f} {sample.tokens:6d} {sample.deltas:6d}"
            )

    raw_ttft = median([s.ttft for s in raws]) * 1000
    loop_ttft = median([s.ttft for s in loops]) * 1000
    raw_rate = median([s.tokens_per_second for s in raws])
    loop_rate = median([s.tokens_per_second for s in loops])
    print()
    print(f"{'median':<22} {'raw httpx':>10} {'agent_loop':>11} {'difference':>11}")
    print(
        f"{'time to first token':<22} {raw_ttft:8.0f}ms {loop_ttft:9.0f}ms "
        f"{loop_ttft - raw_ttft:+9.0f}ms"
    )
    print(
        f"{'tokens per second':<22} {raw_rate:10.2f} {loop_rate:11.2f} "
        f"{loop_rate - raw_rate:+11.2f}  ({(loop_rate / raw_rate - 1) * 100:+.1f}%)"
    )
    hops = sorted(h for s in loops for h in s.hops)
    p99 = hops[min(len(hops) - 1, int(len(hops) * 0.99))]
    gap = median([s.decode / (s.deltas - 1) for s in loops if s.deltas > 1])
    print(
        f"agent_loop's own latency per text delta (adapter -> consumer, {len(hops)} deltas): "
        f"median {median(hops) * 1e6:.0f} us, p99 {p99 * 1e6:.0f} us, max {hops[-1] * 1e6:.0f} us "
        f"(the model's gap between tokens: {gap * 1000:.0f} ms)"
    )
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="requests per side (default 7)")
    parser.add_argument("--max-tokens", type=int, default=64, help="output limit (default 64)")
    parser.add_argument(
        "--no-prompt-cache",
        action="store_true",
        help="send cache_prompt=false, so every request processes its whole prompt",
    )
    arguments = parser.parse_args()
    sys.exit(anyio.run(main, arguments.runs, arguments.max_tokens, not arguments.no_prompt_cache))
