"""CPU instructions per turn, per delta and per concurrent run, counted with valgrind's callgrind.

Wall time on a shared machine scatters by 20-50%; instruction counts repeat to within 0.1%.
Each scenario runs twice under `valgrind --tool=callgrind` in a fresh process, with a long and
a short count; the difference divided by the extra units cancels start-up and imports.

    .venv/bin/python bench/instructions.py                    # every scenario
    .venv/bin/python bench/instructions.py turn scale         # per turn; 1,000 runs at once
    LOOPS=stream,sink .venv/bin/python bench/instructions.py scale   # some loops only
    .venv/bin/python bench/instructions.py --child stream turn 40   # one process (no valgrind)

Scenarios (each for the bare loop, `agent_loop` read as a stream, and `run_agent_loop` with a
sink that keeps nothing):
- `turn`: 10-turn runs one after another (loop_overhead.py's), per turn;
- `delta`: one answer of many text deltas (streaming.py's), per delta;
- `scale`: runs at once, 3 tool turns each, 20 ms model latency (concurrency.py's), per run;
- `switch`: `turn`'s runs, but each tool call is a handoff to the next of three agents in a ring
  (9 switches a run, each with its `agent_switch` and the next agent's view of the transcript),
  per turn; the bare loop runs `turn`'s (a plain tool turn), so the difference from `turn` is
  the cost of a switch over a plain turn.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import tempfile

from common import MODEL, bare_loop, scripted_stream_fn

from agentcore import (
    AgentContext,
    AgentLoopConfig,
    AgentSpec,
    UserMessage,
    agent_loop,
    handoff,
    run_agent_loop,
    tool,
)
from agentcore.llm import AssistantMessageEventStream, Context, MessageBuilder, Model
from agentcore.llm.types import SimpleStreamOptions

# scenario -> (short count, long count, units per count, unit)
SCENARIOS = {
    "turn": (20, 60, 10, "turn"),
    "delta": (5_000, 45_000, 1, "delta"),
    "scale": (500, 1_000, 1, "run"),
    "switch": (20, 60, 10, "turn"),
}
LOOPS = ("bare", "stream", "sink")


@tool
async def noop(x: int = 0) -> str:
    """Do nothing."""
    return "ok"


async def bare_noop(x: int = 0) -> str:
    return "ok"


def _switch_stream_fn():  # type: ignore[no-untyped-def]
    """`scripted_stream_fn(10)`, but each call is a handoff to the next agent of the ring (read
    from the system prompt), and the turns are counted here (a view shows other agents'
    answers as user text)."""
    turns = 0
    after = {"a": "b", "b": "c", "c": "main"}

    def stream_fn(
        model: Model, context: Context, options: SimpleStreamOptions
    ) -> AssistantMessageEventStream:
        nonlocal turns
        turn, turns = turns, turns + 1

        async def events():  # type: ignore[no-untyped-def]
            b = MessageBuilder(model)
            yield b.start()
            index = (start := b.text_start()).content_index
            yield start
            for _ in range(3):
                yield b.text_delta(index, "word ")
            yield b.text_end(index)
            if turn < 9:
                name = f"transfer_to_{after[context.system_prompt]}"
                call = b.toolcall_start(id=f"call_{turn}", name=name)
                yield call
                yield b.toolcall_delta(call.content_index, "{}")
                yield b.toolcall_end(call.content_index)
                yield b.done("tool_use")
            else:
                yield b.done("stop")

        return AssistantMessageEventStream(events())

    return stream_fn


def _ring() -> AgentContext:
    first = AgentSpec(name="main", system_prompt="a")
    c = AgentSpec(name="c", system_prompt="c", tools=[noop], handoffs=[first])
    b = AgentSpec(name="b", system_prompt="b", tools=[noop], handoffs=[c])
    return AgentContext(system_prompt="a", tools=[noop, handoff(b)])


def _stream_fn(scenario: str, count: int):  # type: ignore[no-untyped-def]
    if scenario == "switch":
        return _switch_stream_fn()
    if scenario == "turn":
        return scripted_stream_fn(10)
    if scenario == "delta":
        return scripted_stream_fn(1, deltas=count, delta_text="tok ")
    return scripted_stream_fn(4, delay=0.020)


CONTEXT = AgentContext(tools=[noop])
CONFIG = AgentLoopConfig(model=MODEL)
RING = _ring()


async def _one(loop: str, scenario: str, count: int) -> None:
    stream_fn = _stream_fn(scenario, count)
    if loop == "bare":
        if scenario == "switch":
            stream_fn = _stream_fn("turn", count)
        async for _ in bare_loop("go", {"noop": bare_noop}, stream_fn):
            pass
        return
    context, config = (RING, CONFIG) if scenario == "switch" else (CONTEXT, CONFIG)
    prompts = [UserMessage(content="go")]
    if loop == "stream":
        events = agent_loop(prompts, context, config, stream_fn=stream_fn)
        async for _ in events:
            pass
        await events.result()
    else:
        await run_agent_loop(prompts, context, config, lambda event: None, stream_fn=stream_fn)


async def child(loop: str, scenario: str, count: int) -> None:
    if scenario in ("turn", "switch"):
        for _ in range(count):
            await _one(loop, scenario, count)
    elif scenario == "delta":
        await _one(loop, scenario, count)
    else:
        await asyncio.gather(*(_one(loop, scenario, count) for _ in range(count)))


def _count(loop: str, scenario: str, count: int) -> int:
    # once without valgrind first, so that the bytecode cache is written (see import_time.py)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.setdefault("PYTHONPYCACHEPREFIX", os.path.join(tempfile.gettempdir(), "agentcore-pyc"))
    subprocess.run([sys.executable, __file__, "--child", loop, scenario, "1"], env=env, check=True)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        done = subprocess.run(
            [
                *("valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"),
                *(sys.executable, __file__, "--child", loop, scenario, str(count)),
            ],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
    match = re.search(r"Collected : (\d+)", done.stderr)
    assert match, done.stderr[-2000:]
    return int(match.group(1))


def main(scenarios: list[str]) -> None:
    for scenario in scenarios:
        short, long, units, unit = SCENARIOS[scenario]
        per: dict[str, float] = {}
        for loop in os.environ.get("LOOPS", ",".join(LOOPS)).split(","):
            diff = _count(loop, scenario, long) - _count(loop, scenario, short)
            per[loop] = diff / ((long - short) * units)
        if set(per) != set(LOOPS):
            print(scenario, unit, per, flush=True)
            continue
        bare = per["bare"]
        print(
            f"{scenario:6} per {unit}: bare {bare:,.0f}; agent_loop {per['stream']:,.0f} "
            f"({per['stream'] / bare:.2f}x); run_agent_loop {per['sink']:,.0f} "
            f"({per['sink'] / bare:.2f}x)",
            flush=True,
        )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        asyncio.run(child(sys.argv[2], sys.argv[3], int(sys.argv[4])))
    else:
        main(sys.argv[1:] or list(SCENARIOS))
