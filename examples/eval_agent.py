"""An evaluation dataset run against an agent: arithmetic with a calculator, answered as a number.

    python examples/eval_agent.py             # the dataset on the scripted agent
    python examples/eval_agent.py --local     # on the local model (scripts/local-model)
    agentcore eval examples/evals/arithmetic.yaml --agent examples/eval_agent.py:make_agent

Run as a script, it is `agentcore eval examples/evals/arithmetic.yaml` with this file's agent
(other options are passed on: `--json FILE`, `--baseline FILE`, ...).

`make_agent(model)` is the agent under test: the `calculator` tool of `agentcore.builtin_tools`
and a typed output (`output_type=int`, docs/typed-outputs.md), on the model `agentcore eval`
hands it (`--model`, else the local model served by `scripts/local-model`). `scripted_agent()` is
the same agent on a scripted model (`agentcore.testing.FauxProvider`): it calls the calculator
with the expression of the prompt and answers with the result, so the dataset runs offline, in
the same way every time. See docs/evals.md.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import replace
from pathlib import Path

from agentcore import Agent, TextContent, ToolResultMessage, UserMessage
from agentcore.builtin_tools import calculator
from agentcore.llm import Model
from agentcore.testing import FauxCall, FauxProvider, faux_tool_call

SYSTEM = (
    "You answer arithmetic questions. Always compute with the calculator tool, then give the "
    "final answer as a number with the final_answer tool."
)


def make_agent(model: Model) -> Agent:
    """The agent under test, on `model` (the local one reads `AGENTCORE_LOCAL_PORT` when set)."""
    port = os.environ.get("AGENTCORE_LOCAL_PORT", "").strip()
    if model.provider == "local" and port.isdigit():
        model = replace(model, base_url=f"http://127.0.0.1:{port}/v1")
    return Agent(
        initial_state={"model": model, "system_prompt": SYSTEM, "tools": [calculator()]},
        output_type=int,
        max_turns=6,
        temperature=0.0,
    )


def _calculate(call: FauxCall) -> object:
    prompt = next(m for m in call.context.messages if isinstance(m, UserMessage))
    text = prompt.content if isinstance(prompt.content, str) else ""
    expression = re.findall(r"[\d(][\d\s+\-*/().]*[\d)]", text)
    return faux_tool_call("calculator", {"expression": max(expression, key=len).strip()})


def _answer(call: FauxCall) -> object:
    result = next(m for m in reversed(call.context.messages) if isinstance(m, ToolResultMessage))
    text = "".join(b.text for b in result.content if isinstance(b, TextContent))
    return faux_tool_call("final_answer", {"value": int(float(text.rsplit("=", 1)[1]))})


def scripted_agent() -> Agent:
    """The same agent on a scripted model: calculator first, then the result as the answer."""
    faux = FauxProvider([_calculate, _answer])  # type: ignore[list-item]
    agent = make_agent(faux.model)
    agent.faux = faux  # type: ignore[attr-defined]  # kept alive as long as the agent
    return agent


if __name__ == "__main__":
    from agentcore.cli import main

    factory = "make_agent" if "--local" in sys.argv else "scripted_agent"
    dataset = Path(__file__).resolve().parent / "evals" / "arithmetic.yaml"
    options = [a for a in sys.argv[1:] if a != "--local"]
    sys.exit(main(["eval", str(dataset), "--agent", f"{__file__}:{factory}", *options]))
