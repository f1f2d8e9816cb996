"""Evaluators that read what an agent run did, and an LLM judge on any agentcore model.

Each reads the attributes and metrics `agent_task` keeps on a case (see `AgentRun`), so it works
on any task that records them. In a dataset file they are written like pydantic-evals' own:

```yaml
evaluators:
  - CalledTool: calculator
  - CalledTool: {name: calculator, arguments: {expression: "17 * 23"}}
  - WithinUsage: {output_tokens: 2000, turns: 4}
  - StoppedWith          # ended with an answer, no bound hit
  - Judge: {rubric: "The answer is polite", model: local/qwen2.5-coder-1.5b}
```
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from ..agent import Agent
from ..llm.model import Model
from ..llm.models import get_model
from ..llm.registry import StreamFn
from ._deps import EvaluationReason, Evaluator, EvaluatorContext

__all__ = ["DEFAULT_JUDGE_MODEL", "CalledTool", "Judge", "StoppedWith", "WithinUsage"]

DEFAULT_JUDGE_MODEL = "local/qwen2.5-coder-1.5b"
"""The judge's model when neither `Judge.model` nor `$AGENTCORE_MODEL` names one (the local one)."""


def _recorded(ctx: EvaluatorContext[Any, Any, Any], name: str) -> Any:
    if name not in ctx.attributes:
        raise ValueError(
            f"the case has no {name!r} attribute: run it with agentcore.evals.agent_task "
            "(or `agentcore eval`), which records what the agent did"
        )
    return ctx.attributes[name]


def _subset(wanted: Any, got: Any) -> bool:
    if isinstance(wanted, dict):
        return isinstance(got, dict) and all(
            k in got and _subset(v, got[k]) for k, v in wanted.items()
        )
    return bool(wanted == got)


@dataclass(repr=False)
class CalledTool(Evaluator[Any, Any, Any]):
    """Passes when the run called the tool `name` between `min_times` and `max_times` times
    (`max_times=0`: it must not be called); with `arguments`, only calls whose arguments hold
    those entries (nested mappings compared entry by entry) count."""

    name: str
    arguments: dict[str, Any] | None = None
    min_times: int = 1
    max_times: int | None = None
    evaluation_name: str | None = field(default=None)

    def evaluate(self, ctx: EvaluatorContext[Any, Any, Any]) -> EvaluationReason:
        """Count the matching calls."""
        calls = _recorded(ctx, "tool_calls")
        named = [c for c in calls if c.get("name") == self.name]
        matching = [
            c for c in named if self.arguments is None or _subset(self.arguments, c["arguments"])
        ]
        low = 0 if self.max_times == 0 else self.min_times
        ok = len(matching) >= low and (self.max_times is None or len(matching) <= self.max_times)
        called = ", ".join(c.get("name", "?") for c in calls) or "no tool"
        what = self.name if self.arguments is None else f"{self.name}({self.arguments})"
        return EvaluationReason(
            value=ok, reason=f"{len(matching)} matching call(s) of {what}; called: {called}"
        )

    def get_default_evaluation_name(self) -> str:
        """`called_<tool>` unless `evaluation_name` is given."""
        return self.evaluation_name or f"called_{self.name}"


@dataclass(repr=False)
class WithinUsage(Evaluator[Any, Any, Any]):
    """Passes when the run stayed within every bound given: tokens (input, cached ones
    included; output), cost in USD, turns (answers of the model) and tool calls."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    turns: int | None = None
    tool_calls: int | None = None
    evaluation_name: str | None = field(default=None)

    def evaluate(self, ctx: EvaluatorContext[Any, Any, Any]) -> EvaluationReason:
        """Compare the run's metrics with the bounds."""
        bounds = {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost": self.cost,
            "turns": self.turns,
            "tool_call_count": self.tool_calls,
        }
        over: list[str] = []
        for metric, bound in bounds.items():
            if bound is None:
                continue
            if metric not in ctx.metrics:
                _recorded(ctx, "stop_reason")  # says how to record them when nothing is
            used = ctx.metrics.get(metric, 0)
            if used > bound:
                over.append(f"{metric} {used:g} > {bound:g}")
        return EvaluationReason(value=not over, reason="; ".join(over) or "within every bound")

    def get_default_evaluation_name(self) -> str:
        """`within_usage` unless `evaluation_name` is given."""
        return self.evaluation_name or "within_usage"


@dataclass(repr=False)
class StoppedWith(Evaluator[Any, Any, Any]):
    """Passes when the run ended as expected. With no `reason`, when it ended with an answer (a
    valid typed output when one was asked for, else an answer that stopped) and no bound ended
    it; with `reason` (`stop`, `length`, `tool_use`, `error`, `aborted`), when its last answer
    has that stop reason and the bound `limit` (`max_turns`, `input_tokens`, `output_tokens`,
    `cost`, `output_retries`) ended it, or none when `limit` is None."""

    reason: str | None = None
    limit: str | None = None
    evaluation_name: str | None = field(default=None)

    def evaluate(self, ctx: EvaluatorContext[Any, Any, Any]) -> EvaluationReason:
        """Compare how the run ended."""
        got_reason = _recorded(ctx, "stop_reason")
        got_limit = ctx.attributes.get("limit")
        if self.reason is None:
            ok = bool(ctx.attributes.get("answered")) and self.limit is None
        else:
            ok = got_reason == self.reason and got_limit == self.limit
        said = f"stop reason {got_reason!r}, limit {got_limit!r}"
        error = ctx.attributes.get("error")
        return EvaluationReason(value=ok, reason=said + (f", error: {error}" if error else ""))

    def get_default_evaluation_name(self) -> str:
        """`stopped_with` unless `evaluation_name` is given (`answered` with no `reason`)."""
        return self.evaluation_name or ("answered" if self.reason is None else "stopped_with")


class Grade(BaseModel):
    """The judge's verdict."""

    reason: str = Field(description="why the output passes or fails the rubric, in one sentence")
    passed: bool = Field(description="whether the output meets the rubric")
    score: float = Field(ge=0.0, le=1.0, description="how well it meets the rubric, 0 to 1")


_JUDGE_SYSTEM = """\
You grade the output of an AI system against a rubric. Read the output (and the input and the
expected output when they are given), decide whether the output meets the rubric, and give your
verdict by calling the final_answer tool: a one-sentence reason, passed (true or false) and a
score from 0 to 1. Judge only against the rubric."""


def _model_of(model: str | Model | None) -> Model:
    if isinstance(model, Model):
        return model
    ref = model or os.environ.get("AGENTCORE_MODEL") or DEFAULT_JUDGE_MODEL
    provider, sep, model_id = ref.partition("/")
    if not sep or not provider or not model_id:
        raise ValueError(f"Judge.model: expected a model as provider/id, got {ref!r}")
    return get_model(provider, model_id)


@dataclass(repr=False)
class Judge(Evaluator[Any, Any, Any]):
    """An LLM judge on any agentcore model: passes when the model finds that the output meets
    the `rubric`. Gives an assertion (`<name>`, with the judge's reason) and a score
    (`<name>_score`, 0 to 1).

    `model` is `"provider/id"` from the catalogue or a `Model` (default: `$AGENTCORE_MODEL`,
    else the local model); the verdict is a typed output, so a model that does not give one
    within `max_turns` makes the evaluator fail (pydantic-evals reports it) rather than pass.
    """

    rubric: str
    model: str | Model | None = None
    include_input: bool = False
    include_expected_output: bool = False
    max_turns: int = 3
    evaluation_name: str | None = field(default=None)
    stream_fn: StreamFn | None = field(default=None, compare=False)

    def _prompt(self, ctx: EvaluatorContext[Any, Any, Any]) -> str:
        parts = []
        if self.include_input:
            parts.append(f"<Input>\n{_text(ctx.inputs)}\n</Input>")
        parts.append(f"<Output>\n{_text(ctx.output)}\n</Output>")
        if self.include_expected_output and ctx.expected_output is not None:
            parts.append(f"<ExpectedOutput>\n{_text(ctx.expected_output)}\n</ExpectedOutput>")
        parts.append(f"<Rubric>\n{self.rubric}\n</Rubric>")
        return "\n".join(parts)

    async def evaluate(self, ctx: EvaluatorContext[Any, Any, Any]) -> dict[str, Any]:
        """Ask the judge's model for a verdict."""
        agent = Agent(
            initial_state={"model": _model_of(self.model), "system_prompt": _JUDGE_SYSTEM},
            stream_fn=self.stream_fn,
            output_type=Grade,
            max_turns=self.max_turns,
            temperature=0.0,
        )
        await agent.prompt(self._prompt(ctx))
        grade = agent.state.output
        if not isinstance(grade, Grade):
            why = agent.state.error_message or (
                f"it ended by {agent.state.limit.kind}" if agent.state.limit else "no verdict"
            )
            raise RuntimeError(f"the judge's model gave no verdict: {why}")
        name = self.get_default_evaluation_name()
        return {
            name: EvaluationReason(value=grade.passed, reason=grade.reason),
            f"{name}_score": grade.score,
        }

    def get_default_evaluation_name(self) -> str:
        """`judge` unless `evaluation_name` is given."""
        return self.evaluation_name or "judge"


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    from pydantic_core import to_json

    return to_json(value, fallback=repr).decode()


EVALUATORS: tuple[type[Evaluator[Any, Any, Any]], ...] = (
    CalledTool,
    WithinUsage,
    StoppedWith,
    Judge,
)
"""agentcore's evaluators, for `Dataset.from_file(..., custom_evaluator_types=EVALUATORS)`."""
