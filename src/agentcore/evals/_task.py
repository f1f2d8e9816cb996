"""The task that runs an agent on a case: `agent_task(factory)`, `run_agent`, `AgentRun`.

pydantic-evals calls a task with a case's inputs and compares what it returns with the case's
expected output. An agent's answer is what the task returns; everything else the run did (tool
calls, usage and cost, how it stopped) is kept on the case as pydantic-evals attributes and
metrics, where the evaluators of `_evaluators` read it and where reports show and save it. An
evaluator reads those two dicts only, never a Python object from the task, so it gives the same
result on a report loaded back from JSON.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias, cast

from pydantic import TypeAdapter

from .. import agent_loop, run_usage
from ..agent import Agent
from ..config import AgentContext, AgentLoopConfig
from ..errors import ConfigError
from ..limits import LimitReached
from ..llm.model import Model
from ..llm.registry import StreamFn
from ..messages import (
    AgentMessage,
    AssistantMessage,
    StopReason,
    TextContent,
    ToolCall,
    Usage,
    UserMessage,
)
from ..output import OutputSpec

__all__ = ["AgentFactory", "AgentRun", "agent_task", "run_agent", "trace_spans"]

AgentTarget: TypeAlias = Agent | tuple[AgentLoopConfig, AgentContext]
"""What a factory builds: an `Agent`, or a loop config with its context (tools, system prompt)."""

AgentFactory: TypeAlias = Callable[..., AgentTarget | Awaitable[AgentTarget]]
"""Builds a fresh agent for one case. It may take `model` (the model to use) and `inputs` (the
case's inputs) as keyword arguments; it is given those of them its signature names."""

_JSON = TypeAdapter(Any)


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentRun:
    """What one agent run did, as the evaluators see it.

    Attributes:
        prompt: the prompt the run answered.
        answer: the typed output when the agent has an `output_type` (None when the run gave
            none), else the text of the last answer.
        text: the text of the last assistant message.
        messages: the messages the run added, the prompt first.
        tool_calls: every tool call the model made, in order (the final-answer tool excluded).
        usage: what the run cost (`run_usage` of its messages: every answer, compaction
            summaries, and the usage tool results report, such as a sub-agent's).
        turns: how many answers the model gave.
        stop_reason: the stop reason of the last answer (None when there was none); a typed
            answer given with the final-answer tool ends on `tool_use`.
        answered: the run ended with an answer: a valid typed output when one was asked for,
            else a last answer that stopped (`stop`), and no bound ended it.
        limit: the bound that ended the run, if one did.
        error_message: the error of a failed or aborted last answer.
    """

    prompt: str
    answer: Any
    text: str
    messages: list[AgentMessage]
    tool_calls: list[ToolCall]
    usage: Usage
    turns: int
    stop_reason: StopReason | None
    answered: bool
    limit: LimitReached | None
    error_message: str | None

    def attributes(self) -> dict[str, Any]:
        """The pydantic-evals attributes of the run: `tool_calls` (a list of `{"name",
        "arguments"}`), `stop_reason`, `answered`, `limit` (the bound's kind, or None) and
        `error`."""
        return {
            "tool_calls": [
                {"name": c.name, "arguments": dict(c.arguments)} for c in self.tool_calls
            ],
            "stop_reason": self.stop_reason,
            "answered": self.answered,
            "limit": self.limit.kind if self.limit is not None else None,
            "error": self.error_message,
        }

    def metrics(self) -> dict[str, int | float]:
        """The pydantic-evals metrics of the run: `input_tokens` (cached ones included),
        `output_tokens`, `cost` (USD), `turns` and `tool_call_count`."""
        u = self.usage
        return {
            "input_tokens": u.input + u.cache_read + u.cache_write,
            "output_tokens": u.output,
            "cost": u.cost.total,
            "turns": self.turns,
            "tool_call_count": len(self.tool_calls),
        }


def _answer_tool(output_type: Any) -> str | None:
    """The name of the final-answer tool of a run with this `output_type` (None: untyped)."""
    if output_type is None:
        return None
    return output_type.name if isinstance(output_type, OutputSpec) else "final_answer"


def _summarise(
    prompt: str,
    messages: list[AgentMessage],
    *,
    answer_tool: str | None,
    output: Any,
    limit: LimitReached | None,
) -> AgentRun:
    typed = answer_tool is not None
    answers = [m for m in messages if isinstance(m, AssistantMessage)]
    calls: list[ToolCall] = []
    for message in answers:
        calls += [b for b in message.content if isinstance(b, ToolCall) and b.name != answer_tool]
    last = answers[-1] if answers else None
    text = "".join(b.text for b in last.content if isinstance(b, TextContent)) if last else ""
    return AgentRun(
        prompt=prompt,
        answer=output if typed else text,
        text=text,
        messages=messages,
        tool_calls=calls,
        usage=run_usage(messages),
        turns=len(answers),
        stop_reason=last.stop_reason if last is not None else None,
        answered=limit is None
        and (output is not None if typed else last is not None and last.stop_reason == "stop"),
        limit=limit,
        error_message=last.error_message if last is not None else None,
    )


async def run_agent(
    target: AgentTarget, prompt: str, *, stream_fn: StreamFn | None = None
) -> AgentRun:
    """Run `target` on `prompt` and say what it did.

    Args:
        target: an `Agent` (prompted; its transcript keeps the run), or a loop config with its
            context (run with `agent_loop`; the context is not changed).
        prompt: the user's prompt.
        stream_fn: the stream function of a config's run (an `Agent` has its own).

    Raises:
        ConfigError: `target` is neither.
    """
    if isinstance(target, Agent):
        start = len(target.state.messages)
        await target.prompt(prompt)
        state = target.state
        return _summarise(
            prompt,
            list(state.messages[start:]),
            answer_tool=_answer_tool(target.output_type),
            output=state.output,
            limit=state.limit,
        )
    if (
        isinstance(target, tuple)
        and len(target) == 2
        and isinstance(target[0], AgentLoopConfig)
        and isinstance(target[1], AgentContext)
    ):
        config, context = target
        messages: list[AgentMessage] = []
        limit: LimitReached | None = None
        output: Any = None
        async with agent_loop(
            [UserMessage(content=prompt)], context, config, stream_fn=stream_fn
        ) as events:
            async for event in events:
                if event.type == "agent_end":
                    messages, limit, output = list(event.messages), event.limit, event.output
        return _summarise(
            prompt,
            messages,
            answer_tool=_answer_tool(config.output_type),
            output=output,
            limit=limit,
        )
    raise ConfigError(
        "an agent factory must return an Agent or a tuple (AgentLoopConfig, AgentContext), "
        f"got {type(target).__name__}"
    )


def prompt_of(inputs: Any) -> str:
    """The prompt of a case's inputs: the inputs themselves when they are a string, else their
    `prompt` entry.

    Raises:
        ConfigError: the inputs hold no prompt.
    """
    if isinstance(inputs, str):
        return inputs
    if isinstance(inputs, Mapping) and isinstance(inputs.get("prompt"), str):
        return str(inputs["prompt"])
    raise ConfigError(
        "a case's inputs must be the prompt (a string) or a mapping with a 'prompt' string, "
        f"got {inputs!r}"
    )


async def build_agent(factory: AgentFactory, *, model: Model | None, inputs: Any) -> AgentTarget:
    """Call `factory` with those of `model` and `inputs` its signature names (`model` only when
    one is given)."""
    names: Mapping[str, Any]
    try:
        names = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        names = {}
    kwargs: dict[str, Any] = {}
    if "model" in names and model is not None:
        kwargs["model"] = model
    if "inputs" in names:
        kwargs["inputs"] = inputs
    built = factory(**kwargs)
    if inspect.isawaitable(built):  # (an Agent's option attributes make it look awaitable to mypy)
        built = await cast("Awaitable[AgentTarget]", built)
    return built


def agent_task(
    factory: AgentFactory,
    *,
    model: Model | None = None,
    stream_fn: StreamFn | None = None,
    json_answers: bool = False,
) -> Callable[[Any], Awaitable[Any]]:
    """A pydantic-evals task that runs a fresh agent from `factory` on each case.

    The case's inputs are the prompt (a string) or a mapping with a `prompt` entry. The task
    returns the run's answer, and keeps the rest on the case: the attributes and metrics of
    `AgentRun` (read by `CalledTool`, `WithinUsage`, `StoppedWith`, shown in reports).

    Args:
        factory: builds the agent: an `Agent`, or `(AgentLoopConfig, AgentContext)`; it is
            given `model=` and `inputs=` when its signature names them (sync or async).
        model: the model handed to a factory that takes `model`.
        stream_fn: the stream function of a config's run.
        json_answers: return typed outputs as JSON values (dicts, lists, scalars), as a dataset
            file's expected outputs are; the `agentcore eval` command does.
    """

    async def run_case(inputs: Any) -> Any:
        from ._deps import increment_eval_metric, set_eval_attribute

        target = await build_agent(factory, model=model, inputs=inputs)
        run = await run_agent(target, prompt_of(inputs), stream_fn=stream_fn)
        for name, value in run.attributes().items():
            set_eval_attribute(name, value)
        for name, amount in run.metrics().items():
            increment_eval_metric(name, amount)
        if json_answers:
            return _JSON.dump_python(run.answer, mode="json")
        return run.answer

    run_case.__name__ = getattr(factory, "__name__", "agent")
    return run_case


_traced = False


def trace_spans(*, capture_content: bool = False) -> None:
    """Emit agentcore's OpenTelemetry spans where pydantic-evals reads them, so that a case's
    span tree (`EvaluatorContext.span_tree`, `HasMatchingSpan`) holds its run's `invoke_agent`,
    `chat {model}` and `execute_tool {tool}` spans.

    Installs an OpenTelemetry SDK tracer provider as the global one when none is installed
    (an installed one, such as Logfire's, is kept) and turns on `agentcore.tracing`.

    Args:
        capture_content: also record prompts, answers and tool arguments on the spans.

    Raises:
        MissingExtraError: opentelemetry-sdk is not installed.
    """
    global _traced
    from .._optional import import_sdk

    api = import_sdk("opentelemetry.trace", "evals", needed_by="agentcore.evals.trace_spans")
    sdk = import_sdk("opentelemetry.sdk.trace", "evals", needed_by="agentcore.evals.trace_spans")
    if not isinstance(api.get_tracer_provider(), sdk.TracerProvider):
        api.set_tracer_provider(sdk.TracerProvider())
    if not _traced or capture_content:
        from ..tracing import instrument

        instrument(capture_content=capture_content)
        _traced = True
