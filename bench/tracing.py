"""Tracing overhead: µs per turn of `agent_loop` (as in `loop_overhead.py`: 10 turns of one
trivial tool call, then a text answer, a scripted model with no delay) with

- tracing off (no instrumentation installed: must stay within noise of `loop_overhead.py`),
- `agentcore.tracing.instrument()` on OpenTelemetry's default no-op tracer provider,
- `instrument()` on an SDK `TracerProvider` + `MeterProvider` exporting to memory,
- the dependency-free `TraceTree` (what `agentcore run --trace` uses).

    .venv/bin/python bench/tracing.py

Needs opentelemetry-api and opentelemetry-sdk (the `dev` extra).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from common import MODEL, best_of, clock, scripted_stream_fn
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentcore import (
    AgentContext,
    AgentLoopConfig,
    UserMessage,
    agent_loop,
    set_instrumentation,
    tool,
)
from agentcore.tracing import TraceTree, instrument

TURNS = 10
RUNS = 300


@tool
async def noop(x: int) -> str:
    """Do nothing."""
    return "ok"


async def run_agentcore(after_run: Callable[[], None]) -> float:
    context = AgentContext(tools=[noop])
    config = AgentLoopConfig(model=MODEL)
    stream_fn = scripted_stream_fn(TURNS)
    t0 = clock()
    for _ in range(RUNS):
        events = agent_loop([UserMessage(content="go")], context, config, stream_fn=stream_fn)
        async for _event in events:
            pass
        messages = await events.result()
        assert len(messages) == 2 * TURNS, len(messages)
        after_run()
    return (clock() - t0) / (RUNS * TURNS) * 1e6


def measure(setup: Callable[[], Callable[[], None]]) -> float:
    def once() -> float:
        after_run = setup()
        try:
            return asyncio.run(run_agentcore(after_run))
        finally:
            set_instrumentation(None)

    return best_of(5, once)


def off() -> Callable[[], None]:
    set_instrumentation(None)
    return lambda: None


def noop_provider() -> Callable[[], None]:
    instrument()  # the API's default: no SDK installed, non-recording spans
    return lambda: None


def in_memory() -> Callable[[], None]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrument(
        tracer_provider=provider,
        meter_provider=MeterProvider(metric_readers=[InMemoryMetricReader()]),
    )
    return exporter.clear  # keep memory flat between runs


def tree() -> Callable[[], None]:
    recorder = TraceTree()
    set_instrumentation(recorder)
    return recorder.clear


def main() -> None:
    base = measure(off)
    print(f"tracing off              : {base:8.1f} µs/turn")
    for name, setup in [
        ("otel, no-op provider", noop_provider),
        ("otel, SDK to memory", in_memory),
        ("TraceTree (--trace)", tree),
    ]:
        us = measure(setup)
        print(f"{name:<25}: {us:8.1f} µs/turn  (+{us - base:.1f} µs, {us / base:.2f}x)")


if __name__ == "__main__":
    main()
