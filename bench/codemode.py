"""Code mode against plain tool calling: the same tasks, scripted and on the local model.

Four tasks over small in-process tools whose results look like real API answers (a few hundred
characters each):

- `one call` (the control, where code mode should lose): the weather in one city;
- `order total` (lookups then a computation): the price of 4 items, then the order's total;
- `warm cities` (fan-out then a filter): the weather in 10 cities, then those above 20 °C;
- `shipped orders` (dependent lookups): a customer by name, their 5 orders, each order, then the
  total of the shipped ones (7 calls in 3 dependent steps).

**Scripted** (the faux provider, `agentcore.testing`): the answers a capable model would give,
three ways: `plain, batched` (every call that does not need an earlier result in one answer),
`plain, one per answer` (one call per answer, as small models do) and `code mode` (one snippet
over the same tools, then the answer). Reported per task and way: model requests, prompt tokens
(each request's system prompt, tools as JSON and messages, summed over the requests), output
tokens (the answers' text and tool calls), wall time of the run (median of `--runs`), and whether
the final answer and, in code mode, the snippet's result hold the expected value. Tokens are
counted by the local model's tokenizer (llama.cpp `/tokenize`, Qwen2.5) when `scripts/local-model`
is running, else as 4 characters a token; the script says which.

**Overhead**: the loop's own cost per call, a direct call against a nested one: one answer with
N calls of a no-op tool, and one snippet making N calls, for N = 0 and N = 50 (the difference
over 50 is the cost per call; N = 0 in code mode is the snippet's fixed cost, a Monty worker).

**Local** (`--local`): the same tasks on the local model (Qwen2.5-Coder 1.5B at temperature 0,
`scripts/local-model start`), plain tools against code mode, with real answers: requests, the
tokens the server reported, wall time, and whether the final answer holds the expected value.

    .venv/bin/python bench/codemode.py [--runs 20] [--local] [--local-runs 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentcore import AgentContext, AgentLoopConfig, AgentTool, UserMessage, run_agent_loop, tool
from agentcore.codemode import code_mode
from agentcore.llm import get_model
from agentcore.llm.types import Context
from agentcore.messages import AssistantMessage, ToolCall, ToolResultMessage
from agentcore.testing import FauxProvider, faux_message, faux_text

TOKENIZER = "http://127.0.0.1:18080/tokenize"
SYSTEM_PROMPT = "You are a helpful assistant. Use the tools to answer."

# --- the tools: in-process, deterministic, answers shaped like real APIs ---------------------

TEMPS = {
    "Paris": 21,
    "Rome": 27,
    "Oslo": 12,
    "Madrid": 30,
    "Berlin": 18,
    "Lisbon": 24,
    "Dublin": 14,
    "Vienna": 19,
    "Athens": 29,
    "Warsaw": 16,
}
PRICES = {"pen": 1.5, "notebook": 4.25, "stapler": 12.0, "folder": 0.8}
ORDERS = {
    "o-101": ("shipped", 35.5),
    "o-102": ("pending", 12.0),
    "o-103": ("shipped", 80.25),
    "o-104": ("cancelled", 9.99),
    "o-105": ("shipped", 14.0),
}


@tool
def get_weather(city: str) -> dict[str, Any]:
    """The current weather in a city.

    Args:
        city: the city's name, in English.
    """
    t = TEMPS[city]
    return {
        "city": city,
        "temp_c": t,
        "feels_like_c": t - 1,
        "humidity_pct": 40 + len(city) * 3,
        "wind_kmh": 5 + len(city),
        "conditions": "sunny" if t > 20 else "cloudy",
        "forecast": f"{city}: {'dry and warm' if t > 20 else 'mild, showers possible'} for the "
        "next three days, with light winds from the west.",
        "station": f"{city.upper()}-CENTRAL",
        "updated": "2026-12-07T10:00:00Z",
    }


@tool
def get_price(item: str) -> dict[str, Any]:
    """The catalogue entry of an item, with its unit price in euros.

    Args:
        item: the item's name.
    """
    return {
        "item": item,
        "unit_price_eur": PRICES[item],
        "currency": "EUR",
        "in_stock": True,
        "supplier": "Office Supplies Ltd",
        "sku": f"SKU-{item.upper()}",
        "description": f"A {item} from the standard office range.",
    }


@tool
def find_customer(name: str) -> dict[str, Any]:
    """Find a customer by name.

    Args:
        name: the customer's full name.
    """
    return {"id": "c-42", "name": name, "email": "ada@example.com", "since": "2019-03-01"}


@tool
def list_orders(customer_id: str) -> list[str]:
    """The ids of a customer's orders, newest first.

    Args:
        customer_id: the customer's id, from find_customer.
    """
    return list(ORDERS) if customer_id == "c-42" else []


@tool
def get_order(order_id: str) -> dict[str, Any]:
    """One order with its status and total in euros.

    Args:
        order_id: the order's id, from list_orders.
    """
    status, total = ORDERS[order_id]
    return {
        "id": order_id,
        "status": status,
        "total_eur": total,
        "lines": 2,
        "placed": "2026-11-20",
        "shipping": {"carrier": "DHL", "address": "12 Analytical Row, London"},
    }


# --- the tasks ---------------------------------------------------------------------------------

QUANTITIES = {"pen": 10, "notebook": 4, "stapler": 1, "folder": 25}
ORDER_TOTAL = sum(PRICES[i] * q for i, q in QUANTITIES.items())  # 64.0
WARM = sorted(c for c, t in TEMPS.items() if t > 20)
SHIPPED = round(sum(t for s, t in ORDERS.values() if s == "shipped"), 2)  # 129.75


@dataclass(frozen=True)
class Task:
    """One question, its tools, the scripted answers of each way, and the expected value."""

    name: str
    question: str
    tools: list[AgentTool]
    batched: list[list[tuple[str, dict[str, Any]]]]  # the calls of each answer, in turn
    snippet: str
    answer: str  # the final text of the scripted answers
    expected: str  # what a correct final answer (and snippet result) contains
    correct: Callable[[str], bool]


def _contains_all(*parts: str) -> Callable[[str], bool]:
    return lambda text: all(p.lower() in text.lower() for p in parts)


TASKS = [
    Task(
        "one call",
        "What is the weather in Paris?",
        [get_weather],
        [[("get_weather", {"city": "Paris"})]],
        "w = await get_weather(city=\"Paris\")\nf\"{w['temp_c']} °C, {w['conditions']}\"",
        "Paris: 21 °C and sunny.",
        "21",
        _contains_all("21"),
    ),
    Task(
        "order total",
        "What does an order of 10 pens, 4 notebooks, 1 stapler and 25 folders cost in total?",
        [get_price],
        [[("get_price", {"item": i}) for i in QUANTITIES]],
        "import asyncio\n"
        'qty = {"pen": 10, "notebook": 4, "stapler": 1, "folder": 25}\n'
        "items = list(qty)\n"
        "entries = await asyncio.gather(*[get_price(item=i) for i in items])\n"
        'sum(e["unit_price_eur"] * qty[e["item"]] for e in entries)',
        f"The order costs {ORDER_TOTAL:.2f} euros.",
        f"{ORDER_TOTAL:g}",
        _contains_all(f"{ORDER_TOTAL:g}"),
    ),
    Task(
        "warm cities",
        "Which of these cities are above 20 °C right now: " + ", ".join(TEMPS) + "?",
        [get_weather],
        [[("get_weather", {"city": c}) for c in TEMPS]],
        "import asyncio\n"
        f"cities = {list(TEMPS)!r}\n"
        "reports = await asyncio.gather(*[get_weather(city=c) for c in cities])\n"
        'sorted(r["city"] for r in reports if r["temp_c"] > 20)',
        "Above 20 °C: " + ", ".join(WARM) + ".",
        ", ".join(WARM),
        _contains_all(*WARM),
    ),
    Task(
        "shipped orders",
        "What is the total in euros of Ada Lovelace's shipped orders?",
        [find_customer, list_orders, get_order],
        [
            [("find_customer", {"name": "Ada Lovelace"})],
            [("list_orders", {"customer_id": "c-42"})],
            [("get_order", {"order_id": o}) for o in ORDERS],
        ],
        "import asyncio\n"
        'c = await find_customer(name="Ada Lovelace")\n'
        'ids = await list_orders(customer_id=c["id"])\n'
        "orders = await asyncio.gather(*[get_order(order_id=i) for i in ids])\n"
        'round(sum(o["total_eur"] for o in orders if o["status"] == "shipped"), 2)',
        f"Ada Lovelace's shipped orders total {SHIPPED} euros.",
        f"{SHIPPED}",
        _contains_all(f"{SHIPPED}"),
    ),
]


# --- counting ----------------------------------------------------------------------------------


def tokens(text: str, counter: dict[str, Any]) -> int:
    """Tokens of `text`: llama.cpp's /tokenize if it answers, else 4 characters a token."""
    if counter.get("remote", True):
        try:
            request = urllib.request.Request(
                TOKENIZER,
                data=json.dumps({"content": text}).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=30) as response:
                counter["remote"] = True
                return len(json.loads(response.read())["tokens"])
        except OSError:
            counter["remote"] = False
    return (len(text) + 3) // 4


def _blocks_text(message: Any) -> list[str]:
    if isinstance(message, UserMessage) and isinstance(message.content, str):
        return [message.content]
    out = []
    for block in getattr(message, "content", []):
        if isinstance(block, ToolCall):
            out.append(json.dumps({"name": block.name, "arguments": block.arguments}))
        elif hasattr(block, "text"):
            out.append(block.text)
    return out


def request_text(context: Context) -> str:
    """What a request sends, as text: the system prompt, the tools as JSON, the messages."""
    tools_json = json.dumps(
        [
            {"name": t.name, "description": t.description, "parameters": t.parameters}
            for t in context.tools
        ]
    )
    messages = [text for m in context.messages for text in _blocks_text(m)]
    return "\n".join([context.system_prompt or "", tools_json, *messages])


# --- the scripted runs -------------------------------------------------------------------------


def _call(name: str, args: dict[str, Any], n: int) -> ToolCall:
    return ToolCall(id=f"call_{n}", name=name, arguments=args)


def script(task: Task, way: str) -> list[AssistantMessage]:
    """The answers of `way` for `task`, the final text included."""
    if way == "code mode":
        answers = [faux_message(_call("run_code", {"code": task.snippet}, 0))]
    elif way == "plain, batched":
        answers = [
            faux_message(*[_call(n, a, i * 100 + j) for j, (n, a) in enumerate(calls)])
            for i, calls in enumerate(task.batched)
        ]
    else:
        flat = [c for calls in task.batched for c in calls]
        answers = [faux_message(_call(n, a, i)) for i, (n, a) in enumerate(flat)]
    return [*answers, faux_text(task.answer)]


@dataclass
class Measured:
    requests: int
    prompt_tokens: int
    output_tokens: int
    seconds: float
    correct: bool


async def run_scripted(task: Task, way: str) -> tuple[list[Any], FauxProvider]:
    faux = FauxProvider(script(task, way))
    tools = [code_mode(task.tools)] if way == "code mode" else task.tools
    messages = await run_agent_loop(
        [UserMessage(content=task.question)],
        AgentContext(system_prompt=SYSTEM_PROMPT, tools=tools),
        AgentLoopConfig(model=faux.model),
        lambda event: None,
    )
    return messages, faux


async def measure_scripted(task: Task, way: str, runs: int, counter: dict[str, Any]) -> Measured:
    messages, faux = await run_scripted(task, way)
    results = [m for m in messages if isinstance(m, ToolResultMessage)]
    assert not any(r.is_error for r in results), [r.content for r in results]
    final = messages[-1].text
    correct = task.correct(final)
    if way == "code mode":  # the snippet itself computed the answer
        correct = correct and task.correct(results[0].content[0].text)
    prompt = sum(tokens(request_text(c.context), counter) for c in faux.calls)
    output = sum(
        tokens(text, counter)
        for m in messages
        if isinstance(m, AssistantMessage)
        for text in _blocks_text(m)
    )
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        await run_scripted(task, way)
        times.append(time.perf_counter() - start)
    return Measured(len(faux.calls), prompt, output, statistics.median(times), correct)


# --- the loop's overhead per call --------------------------------------------------------------


@tool
def noop(n: int) -> str:
    """Return n as text.

    Args:
        n: any integer.
    """
    return str(n)


async def overhead_run(n: int, code: bool) -> float:
    if code:
        snippet = f"for i in range({n}):\n    await noop(n=i)\n'ok'" if n else "'ok'"
        first = faux_message(_call("run_code", {"code": snippet}, 0))
        tools = [code_mode([noop])]
    else:
        calls = [_call("noop", {"n": i}, i) for i in range(n)]
        first = faux_message(*calls) if calls else faux_text("(none)")
        tools = [noop]
    faux = FauxProvider([first, faux_text("done")])
    start = time.perf_counter()
    await run_agent_loop(
        [UserMessage(content="go")],
        AgentContext(tools=tools),
        AgentLoopConfig(model=faux.model),
        lambda event: None,
    )
    return time.perf_counter() - start


async def overhead(runs: int) -> None:
    print("\noverhead | N=0 ms | N=50 ms | per call µs")
    for code in (False, True):
        med = {}
        for n in (0, 50):
            await overhead_run(n, code)  # warm up
            med[n] = statistics.median([await overhead_run(n, code) for _ in range(runs)])
        per_call = (med[50] - med[0]) / 50 * 1e6
        label = "nested (code mode, sequential awaits)" if code else "direct (one answer, N calls)"
        print(f"{label} | {med[0] * 1e3:.2f} | {med[50] * 1e3:.2f} | {per_call:,.0f}")


# --- the local model ---------------------------------------------------------------------------


async def measure_local(task: Task, code: bool) -> tuple[int, int, int, float, bool, str]:
    model = get_model("local", "qwen2.5-coder-1.5b")
    port = os.environ.get("AGENTCORE_LOCAL_PORT", "").strip()
    if port:
        from dataclasses import replace

        model = replace(model, base_url=f"http://127.0.0.1:{port}/v1")
    tools = [code_mode(task.tools)] if code else task.tools
    start = time.perf_counter()
    messages = await run_agent_loop(
        [UserMessage(content=task.question)],
        AgentContext(system_prompt=SYSTEM_PROMPT, tools=tools),
        AgentLoopConfig(
            model=model, temperature=0, max_tokens=512, max_turns=8, request_timeout=180
        ),
        lambda event: None,
    )
    seconds = time.perf_counter() - start
    answers = [m for m in messages if isinstance(m, AssistantMessage)]
    prompt = sum(m.usage.input + m.usage.cache_read for m in answers)
    output = sum(m.usage.output for m in answers)
    errors = sum(1 for m in messages if isinstance(m, ToolResultMessage) and m.is_error)
    final = answers[-1].text if answers else ""
    note = f"{errors} error results; final: {' '.join(final.split())[:90]!r}"
    return len(answers), prompt, output, seconds, task.correct(final), note


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--local", action="store_true")
    parser.add_argument("--local-runs", type=int, default=1)
    args = parser.parse_args()
    counter: dict[str, Any] = {}
    print("task | way | requests | prompt tokens | output tokens | ms (median) | correct")
    for task in TASKS:
        for way in ("plain, batched", "plain, one per answer", "code mode"):
            m = await measure_scripted(task, way, args.runs, counter)
            print(
                f"{task.name} | {way} | {m.requests} | {m.prompt_tokens:,} | {m.output_tokens:,}"
                f" | {m.seconds * 1e3:.1f} | {'yes' if m.correct else 'NO'}"
            )
    how = "llama.cpp /tokenize (Qwen2.5)" if counter.get("remote") else "4 characters a token"
    print(f"tokens counted by: {how}")
    await overhead(args.runs)
    if args.local:
        print("\nlocal | way | requests | prompt tokens | output tokens | s | correct | note")
        for task in TASKS:
            for code in (False, True):
                for _ in range(args.local_runs):
                    n, p, o, s, ok, note = await measure_local(task, code)
                    way = "code mode" if code else "plain"
                    print(
                        f"{task.name} | {way} | {n} | {p:,} | {o:,} | {s:.1f} | "
                        f"{'yes' if ok else 'no'} | {note}"
                    )


if __name__ == "__main__":
    asyncio.run(main())
