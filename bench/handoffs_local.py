"""A handoff against an agent as a tool, on the local model: triage, then the specialist.

The same shop and question two ways (issue 34, "Measured"):

- `handoff`: the triage agent holds `handoff(refunds, returns=True)`; the conversation moves to
  the refunds agent, which answers, and comes back to triage, which answers the customer;
- `agent_tool`: the triage agent holds `agent_tool(...)` over the same refunds agent; triage
  calls it with a task, the refunds agent answers inside the tool, triage answers the customer.

Reported per way, over `--runs` runs of each question (Qwen2.5-Coder 1.5B at temperature 0,
`scripts/local-model start`): model requests (every request of the run, the inner run's
included: a counting stream function wraps both), prompt and output tokens as the server
reported them (the inner run's through the tool result's `usage`), wall time of the run
(median), and how many final answers held the policy's figure.

    .venv/bin/python bench/handoffs_local.py [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from dataclasses import dataclass, replace

from agentcore import (
    AgentContext,
    AgentLoopConfig,
    AgentSpec,
    AgentTool,
    UserMessage,
    agent_tool,
    handoff,
    run_agent_loop,
)
from agentcore.llm import get_model, stream_simple
from agentcore.llm.model import Model
from agentcore.llm.stream import AssistantMessageEventStream
from agentcore.llm.types import Context, SimpleStreamOptions
from agentcore.messages import AssistantMessage, ToolResultMessage

POLICY = "Refunds are accepted within 30 days of delivery."
REFUNDS_PROMPT = f"You are the refunds agent. The policy: {POLICY} Answer in one short sentence."
REFUNDS_DESCRIPTION = "Answers every question about refunds and the refund policy."
TRIAGE = {
    "handoff": (
        "You are the triage agent of a shop. Call the tool transfer_to_refunds for every refund "
        "question. When a message starting with [refunds] gives the answer, repeat that answer "
        "to the customer and call no tool."
    ),
    "agent_tool": (
        "You are the triage agent of a shop. Call the tool ask_refunds with the customer's "
        "question for every refund question. When the tool gives the answer, repeat that answer "
        "to the customer and call no tool."
    ),
}
QUESTIONS = (
    "How many days do I have to ask for a refund?",
    "What is your refund policy?",
)


def local_model() -> Model:
    model = get_model("local", "qwen2.5-coder-1.5b")
    port = os.environ.get("AGENTCORE_LOCAL_PORT", "").strip()
    return replace(model, base_url=f"http://127.0.0.1:{port}/v1") if port else model


class Counting:
    """A stream function that counts the requests it sends (the inner run's too)."""

    def __init__(self) -> None:
        self.requests = 0

    def __call__(
        self, model: Model, context: Context, options: SimpleStreamOptions
    ) -> AssistantMessageEventStream:
        self.requests += 1
        return stream_simple(model, context, options)


@dataclass
class Run:
    requests: int
    prompt: int
    output: int
    seconds: float
    correct: bool


def config(model: Model, **extra: object) -> AgentLoopConfig:
    return AgentLoopConfig(
        model=model,
        temperature=0,
        max_tokens=96,
        max_turns=4,
        request_timeout=180,
        idle_timeout=180,
        **extra,  # type: ignore[arg-type]
    )


def tools_for(way: str, model: Model, counting: Counting) -> list[AgentTool]:
    if way == "handoff":
        spec = AgentSpec(
            name="refunds", description=REFUNDS_DESCRIPTION, system_prompt=REFUNDS_PROMPT
        )
        used: list[object] = []  # one consultation, as the e2e test offers it
        return [
            handoff(
                spec, returns=True, on_handoff=lambda _: used.append(1), enabled=lambda: not used
            )
        ]
    return [
        agent_tool(
            config(model),
            name="ask_refunds",
            description=REFUNDS_DESCRIPTION,
            context=AgentContext(system_prompt=REFUNDS_PROMPT),
            stream_fn=counting,
        )
    ]


async def measure(way: str, question: str, model: Model) -> Run:
    counting = Counting()
    context = AgentContext(system_prompt=TRIAGE[way], tools=tools_for(way, model, counting))
    extra = {"agent_name": "triage"} if way == "handoff" else {}
    start = time.perf_counter()
    messages = await run_agent_loop(
        [UserMessage(content=question)],
        context,
        config(model, **extra),
        lambda event: None,
        stream_fn=counting,
    )
    seconds = time.perf_counter() - start
    used = [m.usage for m in messages if isinstance(m, AssistantMessage | ToolResultMessage)]
    used = [u for u in used if u is not None]
    answers = [m for m in messages if isinstance(m, AssistantMessage)]
    final = answers[-1] if answers else None
    correct = (
        final is not None
        and not final.tool_calls
        and final.stop_reason == "stop"
        and "30" in final.text
    )
    return Run(
        counting.requests,
        sum(u.input + u.cache_read for u in used),
        sum(u.output for u in used),
        seconds,
        correct,
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    model = local_model()
    print("way | runs | requests (median) | prompt tokens | output tokens | s (median) | correct")
    for way in ("handoff", "agent_tool"):
        runs = [
            await measure(way, question, model) for _ in range(args.runs) for question in QUESTIONS
        ]
        print(
            f"{way} | {len(runs)} | {statistics.median(r.requests for r in runs):g}"
            f" | {statistics.median(r.prompt for r in runs):,.0f}"
            f" | {statistics.median(r.output for r in runs):,.0f}"
            f" | {statistics.median(r.seconds for r in runs):.2f}"
            f" | {sum(r.correct for r in runs)}/{len(runs)}"
        )


if __name__ == "__main__":
    asyncio.run(main())
