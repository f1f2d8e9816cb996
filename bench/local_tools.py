"""The local model at its best: questions that need several independent tool calls, and typed
answers, before and after its catalogue entry declared parallel tool calls and native output.

The local model server (`scripts/local-model start`, or another llama.cpp server through
`AGENTCORE_LOCAL_PORT`) must be running. Every run goes through `run_agent_loop` at temperature 0.

- **Independent calls**: questions that need 2, 3 and 4 calls of a weather tool (one per city)
  and one that needs two different tools. Each runs with the entry as it was (`before`: no
  `parallel_tool_calls` in the request, so the server decides) and as it is (`after`:
  `parallel_tool_calls: true`). Printed per run: the calls of each answer that made any (`2+1`:
  two in the first answer, one in the second), the model requests, whether every city was asked
  for, and the wall time.
- **Typed outputs**: one question answered as a pydantic model, without tools, through the
  final-answer tool (`mode="tool"`, what `auto` chose before) and natively (`mode="native"`, the
  server constrains the text to the schema; what `auto` chooses now): model requests and time.

    .venv/bin/python bench/local_tools.py [--runs 1] [--part calls|typed|all] [--json FILE]

Keep `--runs` small: the server is shared and the machine has 2 cores (a full run with one
repetition is about 20 model requests, 2-4 minutes on a warm server).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

import anyio
import httpx
from pydantic import BaseModel

from agentcore import (
    AgentContext,
    AgentLoopConfig,
    OutputSpec,
    UserMessage,
    run_agent_loop,
    tool,
)
from agentcore.llm import Model, OpenAICompletionsCompat, get_model
from agentcore.messages import AssistantMessage

SYSTEM_PROMPT = "You are a helpful assistant. Use the tools to answer."
CITIES = ("Paris", "Tokyo", "Lima", "Oslo")
WEATHER = {
    "Paris": "18 C, light rain",
    "Tokyo": "24 C, sunny",
    "Lima": "16 C, overcast",
    "Oslo": "9 C, windy",
}
POPULATION = {"Lyon": 522_000, "Nice": 342_000}


@tool
def get_weather(city: str) -> str:
    """The current weather in one city."""
    return f"{city}: {WEATHER.get(city, '20 C, clear')}"


@tool
def get_population(city: str) -> str:
    """How many people live in one city."""
    return f"{city}: {POPULATION.get(city, 100_000)} inhabitants"


@dataclass(frozen=True, slots=True)
class Task:
    name: str
    prompt: str
    needs: tuple[tuple[str, str], ...]  # (tool, city) pairs a complete answer asks for


def _weather_task(n: int) -> Task:
    cities = CITIES[:n]
    listed = ", ".join(cities[:-1]) + f" and {cities[-1]}"
    return Task(
        name=f"weather x{n}",
        prompt=f"What is the weather in {listed} right now?",
        needs=tuple(("get_weather", c) for c in cities),
    )


TASKS = (
    _weather_task(2),
    _weather_task(3),
    _weather_task(4),
    Task(
        name="weather + population",
        prompt="What is the weather in Nice, and how many people live in Lyon?",
        needs=(("get_weather", "Nice"), ("get_population", "Lyon")),
    ),
)


class Country(BaseModel):
    name: str
    capital: str
    continent: Literal["Africa", "Americas", "Asia", "Europe", "Oceania"]


TYPED_PROMPT = "Describe France: its name, its capital and its continent."


def local_model() -> Model:
    model = get_model("local", "qwen2.5-coder-1.5b")
    port = os.environ.get("AGENTCORE_LOCAL_PORT", "").strip()
    return replace(model, base_url=f"http://127.0.0.1:{port}/v1") if port.isdigit() else model


def before(model: Model) -> Model:
    """The entry as it was: no parallel tool calls asked for, native output not declared."""
    compat = model.compat if isinstance(model.compat, OpenAICompletionsCompat) else None
    assert compat is not None
    return replace(
        model,
        compat=replace(compat, supports_parallel_tool_calls=False),
        structured_output=None,
    )


@dataclass(slots=True)
class CallsRun:
    task: str
    setting: str
    per_answer: list[int]  # tool calls of each answer that made any
    requests: int
    complete: bool  # every (tool, city) the task needs was called
    seconds: float
    stop: str


async def run_calls(model: Model, task: Task, setting: str) -> CallsRun:
    config = AgentLoopConfig(
        model=model, temperature=0, max_tokens=256, max_turns=8, request_timeout=180
    )
    t0 = time.perf_counter()
    with anyio.fail_after(600):
        messages = await run_agent_loop(
            [UserMessage(content=task.prompt)],
            AgentContext(system_prompt=SYSTEM_PROMPT, tools=[get_weather, get_population]),
            config,
            lambda event: None,
        )
    seconds = time.perf_counter() - t0
    answers = [m for m in messages if isinstance(m, AssistantMessage)]
    called = {
        (c.name, str(c.arguments.get("city", "")).strip()) for a in answers for c in a.tool_calls
    }
    return CallsRun(
        task=task.name,
        setting=setting,
        per_answer=[len(a.tool_calls) for a in answers if a.tool_calls],
        requests=len(answers),
        complete=all(need in called for need in task.needs),
        seconds=seconds,
        stop=answers[-1].stop_reason if answers else "none",
    )


@dataclass(slots=True)
class TypedRun:
    mode: str
    requests: int
    valid: bool
    seconds: float


async def run_typed(model: Model, mode: Literal["tool", "native"]) -> TypedRun:
    config = AgentLoopConfig(
        model=model,
        output_type=OutputSpec(Country, mode=mode),
        output_retries=2,
        temperature=0,
        max_tokens=128,
        request_timeout=180,
    )
    events: list[Any] = []
    t0 = time.perf_counter()
    with anyio.fail_after(600):
        messages = await run_agent_loop(
            [UserMessage(content=TYPED_PROMPT)], AgentContext(), config, events.append
        )
    seconds = time.perf_counter() - t0
    end = events[-1]
    return TypedRun(
        mode=mode,
        requests=sum(1 for m in messages if isinstance(m, AssistantMessage)),
        valid=isinstance(getattr(end, "output", None), Country),
        seconds=seconds,
    )


def _calls_text(per_answer: list[int]) -> str:
    return "+".join(map(str, per_answer)) or "0"


async def main(runs: int, part: str, json_path: str | None) -> int:
    model = local_model()
    try:
        with anyio.fail_after(300):  # warm-up: the model loaded, the system prompt cached
            await run_calls(model, TASKS[0], "warm-up")
    except (httpx.HTTPError, OSError, TimeoutError) as exc:
        print(
            f"error: the local model at {model.base_url} is not reachable ({exc!r}); "
            "start it with `scripts/local-model start`",
            file=sys.stderr,
        )
        return 2
    settings = {"before": before(model), "after": model}
    out: dict[str, Any] = {"calls": [], "typed": []}
    if part in ("calls", "all"):
        print(f"independent calls, {runs} run(s) per task and setting, {model.base_url}")
        print(
            f"{'task':<22} {'setting':<7} {'calls/answer':>12} {'requests':>8} "
            f"{'complete':>8} {'seconds':>8}"
        )
        for _ in range(runs):
            for task in TASKS:
                for setting, m in settings.items():
                    r = await run_calls(m, task, setting)
                    out["calls"].append(asdict(r))
                    print(
                        f"{r.task:<22} {r.setting:<7} {_calls_text(r.per_answer):>12} "
                        f"{r.requests:>8} {'yes' if r.complete else 'NO':>8} {r.seconds:>8.1f}"
                    )
        for setting in settings:
            rows = [r for r in out["calls"] if r["setting"] == setting]
            calls = sum(sum(r["per_answer"]) for r in rows)
            answers = sum(len(r["per_answer"]) for r in rows)
            print(
                f"{setting}: {calls / max(answers, 1):.2f} calls per answer with calls, "
                f"{statistics.mean(r['requests'] for r in rows):.2f} requests per question, "
                f"{sum(r['complete'] for r in rows)}/{len(rows)} complete, median "
                f"{statistics.median(r['seconds'] for r in rows):.1f} s"
            )
    if part in ("typed", "all"):
        print(f"typed outputs ({Country.__name__}, no tools), {runs} run(s) per mode")
        print(f"{'mode':<7} {'requests':>8} {'valid':>6} {'seconds':>8}")
        for _ in range(runs):
            for mode in ("tool", "native"):
                t = await run_typed(model, mode)  # type: ignore[arg-type]
                out["typed"].append(asdict(t))
                print(
                    f"{t.mode:<7} {t.requests:>8} {'yes' if t.valid else 'NO':>6} {t.seconds:>8.1f}"
                )
    if json_path:
        await anyio.Path(json_path).write_text(json.dumps(out, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="repetitions per task and setting")
    parser.add_argument("--part", choices=("calls", "typed", "all"), default="all")
    parser.add_argument("--json", dest="json_path", help="also write the results to this file")
    args = parser.parse_args()
    sys.exit(anyio.run(main, args.runs, args.part, args.json_path))
