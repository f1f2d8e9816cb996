"""Instantiation: 1,000 `Agent`s built, µs and KiB each (the figures Agno publishes).

Each Agent gets a model, a system prompt and one `@tool`, as Agno's benchmark gives its agent a
model and a tool. Time: the best of 7 rounds of 1,000 Agents built and dropped. Memory: the
bytes `tracemalloc` sees allocated and still held once 1,000 Agents are built and kept, per
Agent (the model and the tool are shared, as in a real program: only the Agent's own state
counts).

The side-by-side baseline is a bare agent written by hand, `BareAgent`: the state a minimal
hand-written agent keeps (model, system prompt, tools by name, a transcript, listeners, an
`asyncio.Lock` for one run at a time). Its figures are what a Python object holding that state
costs; the ratio is what agentcore's Agent adds (the run options, queues, approvals, the
session link and their checks).

    .venv/bin/python bench/instantiation.py
"""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
from collections.abc import Callable
from typing import Any

from common import MODEL, best_of, clock

from agentcore import Agent, tool

AGENTS = 1000
SYSTEM = "You are a helpful assistant."


@tool
async def get_weather(city: str) -> str:
    """The weather in a city."""
    return "sunny"


async def bare_get_weather(city: str) -> str:
    return "sunny"


class BareAgent:
    """What a hand-written agent keeps."""

    __slots__ = ("listeners", "lock", "messages", "model", "system_prompt", "tools")

    def __init__(self, model: Any, system_prompt: str, tools: list[Any]) -> None:
        self.model = model
        self.system_prompt = system_prompt
        self.tools = {t.__name__: t for t in tools}
        self.messages: list[Any] = []
        self.listeners: list[Any] = []
        self.lock = asyncio.Lock()


def build_agentcore() -> Agent:
    return Agent(initial_state={"model": MODEL, "system_prompt": SYSTEM, "tools": [get_weather]})


def build_bare() -> BareAgent:
    return BareAgent(MODEL, SYSTEM, [bare_get_weather])


def time_each(build: Callable[[], object]) -> float:
    """µs per object: the best of 7 rounds of `AGENTS` built and dropped."""

    def round_() -> float:
        t0 = clock()
        for _ in range(AGENTS):
            build()
        return (clock() - t0) / AGENTS * 1e6

    return best_of(7, round_)


def memory_each(build: Callable[[], object]) -> float:
    """KiB per object: what `AGENTS` of them, kept, hold (`tracemalloc`)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = [build() for _ in range(AGENTS)]
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert len(kept) == AGENTS
    return (after - before) / AGENTS / 1024


def main() -> None:
    build_agentcore(), build_bare()  # first-use work (lazy imports) is not per Agent
    bare_us, ours_us = time_each(build_bare), time_each(build_agentcore)
    bare_kib, ours_kib = memory_each(build_bare), memory_each(build_agentcore)
    print(f"{AGENTS:,} agents built (a model, a system prompt, one tool each)")
    print(f"bare hand-written agent : {bare_us:7.2f} µs  {bare_kib:6.2f} KiB each")
    print(f"agentcore Agent         : {ours_us:7.2f} µs  {ours_kib:6.2f} KiB each")
    print(
        f"ratio                   : {ours_us / bare_us:7.2f}x time, "
        f"{ours_kib / bare_kib:.2f}x memory"
    )


if __name__ == "__main__":
    main()
