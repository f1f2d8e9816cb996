"""An evaluation whose cases are single-request runs sent as one provider batch:
`batch_evaluate` (the `agentcore eval --batch` command).

Each case's agent is built by the factory as for a streamed evaluation, and its request is the
one the agent loop would send first (`agentcore.first_request`: system prompt, the case's prompt,
tools, the model's options). Every request goes into one batch (`agentcore.llm.batch`) for the
model the agents use; once it has ended, the dataset is evaluated on the answers, matched to
cases by request id (`c<case number>`, `c<case number>-<repeat>` with `--repeat`), never by order.
The evaluators run on the answers as for streamed runs; a request that failed, expired or was
cancelled is a failed case with its reason.

A case's run is one request: when the answer calls a tool, the call is not run. The case gets
the answer's text, `answered` false, and its calls listed in the attribute `unrun_tool_calls`
(as well as in `tool_calls`), so that an evaluator or a reader sees it was cut short.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import first_request
from ..agent import Agent
from ..config import AgentContext, AgentLoopConfig
from ..errors import ConfigError
from ..llm import calculate_cost
from ..llm.batch import (
    BatchJob,
    BatchRequest,
    BatchTimeoutError,
    batch_results,
    cancel_batch,
    submit_batch,
    wait_batch,
)
from ..llm.model import Model
from ..messages import AssistantMessage, UserMessage
from ._task import AgentFactory, _summarise, build_agent, prompt_of

__all__ = ["BatchCost", "BatchRequestFailed", "batch_evaluate"]

_REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("agentcore_eval_batch_id")


class BatchRequestFailed(Exception):
    """A case's request failed, expired or was cancelled in the batch (the case's failure)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchCost:
    """What a batch evaluation cost.

    Attributes:
        job: the provider's batch id.
        model: `provider/id` of the model.
        status: the job's final status.
        requests: how many requests the batch held.
        failed: how many of them failed, expired or were cancelled.
        cost: the answers' cost at batch prices (USD).
        streaming_cost: the same usage at the model's streaming prices (USD).
    """

    job: str
    model: str
    status: str
    requests: int
    failed: int
    cost: float
    streaming_cost: float

    def to_dict(self) -> dict[str, Any]:
        """The figures as JSON-ready data (kept in the report's experiment metadata)."""
        return {
            "job": self.job,
            "model": self.model,
            "status": self.status,
            "requests": self.requests,
            "failed": self.failed,
            "cost": self.cost,
            "streaming_cost": self.streaming_cost,
        }

    def __str__(self) -> str:
        saved = self.streaming_cost - self.cost
        return (
            f"batch {self.job} ({self.model}, {self.status}): {self.requests} requests, "
            f"{self.failed} failed; cost ${self.cost:.6f} at batch prices against "
            f"${self.streaming_cost:.6f} streaming the same usage (saved ${saved:.6f})"
        )


async def _loop_parts(factory: AgentFactory, model: Model | None, inputs: Any) -> Any:
    target = await build_agent(factory, model=model, inputs=inputs)
    if isinstance(target, Agent):
        state = target.state
        context = AgentContext(
            system_prompt=state.system_prompt,
            messages=list(state.messages),
            tools=list(state.tools),
        )
        return target._loop_config(), context  # the config the Agent's next run would use
    if (
        isinstance(target, tuple)
        and len(target) == 2
        and isinstance(target[0], AgentLoopConfig)
        and isinstance(target[1], AgentContext)
    ):
        return target
    raise ConfigError(
        "an agent factory must return an Agent or a tuple (AgentLoopConfig, AgentContext), "
        f"got {type(target).__name__}"
    )


def _check_config(config: AgentLoopConfig) -> None:
    if config.output_type is not None:
        raise ConfigError(
            "--batch: the agent has an output_type; a batch case is one request and its "
            "answer is not validated as a typed output: evaluate typed agents without --batch"
        )
    if config.guardrails:
        raise ConfigError(
            "--batch: the agent has guardrails, which a batched request would bypass: "
            "evaluate it without --batch"
        )


def _request_ids(count: int, repeat: int) -> list[list[str]]:
    if repeat == 1:
        return [[f"c{i}"] for i in range(1, count + 1)]
    return [[f"c{i}-{r}" for r in range(1, repeat + 1)] for i in range(1, count + 1)]


async def batch_evaluate(
    dataset: Any,
    factory: AgentFactory,
    *,
    model: Model | None,
    name: str,
    repeat: int = 1,
    timeout: float,  # noqa: ASYNC109 (the batch's own bound, handed to wait_batch)
    poll_interval: float,
    max_concurrency: int | None = None,
    on_submitted: Callable[[BatchJob], None] | None = None,
) -> tuple[Any, BatchCost]:
    """Evaluate `dataset` with every case's request sent in one batch; the report and what the
    batch cost.

    Raises:
        ConfigError: a case's agent has an `output_type` or guardrails, or the agents do not all
            use one model.
        UnsupportedBatchError: the model's provider has no batch API (nothing was sent).
        BatchTimeoutError: the batch had not ended within `timeout` (it was cancelled).
    """
    from ._deps import CaseLifecycle, increment_eval_metric, set_eval_attribute

    cases = list(dataset.cases)
    ids = _request_ids(len(cases), repeat)
    requests: list[BatchRequest] = []
    prompts: dict[str, str] = {}
    batch_model: Model | None = None
    for case, case_ids in zip(cases, ids, strict=True):
        for request_id in case_ids:
            config, context = await _loop_parts(factory, model, case.inputs)
            _check_config(config)
            prompt = prompt_of(case.inputs)
            used, ctx, options = await first_request([UserMessage(content=prompt)], context, config)
            if batch_model is None:
                batch_model = used
            elif (used.provider, used.id) != (batch_model.provider, batch_model.id):
                raise ConfigError(
                    f"--batch: one batch is for one model, but case {case.name!r} uses "
                    f"{used.provider}/{used.id} and an earlier one "
                    f"{batch_model.provider}/{batch_model.id}"
                )
            prompts[request_id] = prompt
            requests.append(BatchRequest(id=request_id, context=ctx, options=options))
    if batch_model is None:
        raise ConfigError("--batch: the dataset has no cases")
    shared = requests[0].options
    job = await submit_batch(batch_model, requests)
    if on_submitted is not None:
        on_submitted(job)
    try:
        job = await wait_batch(
            batch_model, job, timeout=timeout, poll_interval=poll_interval, options=shared
        )
    except BatchTimeoutError as exc:
        await cancel_batch(batch_model, exc.job, options=shared)
        raise BatchTimeoutError(
            f"{exc}; the batch was cancelled (requests it finished are still billed)", exc.job
        ) from None
    answers = await batch_results(batch_model, job, options=shared)
    batch_cost = sum(a.usage.cost.total for a in answers.values())
    streaming_cost = sum(calculate_cost(batch_model, a.usage).cost.total for a in answers.values())
    failed = sum(1 for a in answers.values() if a.stop_reason == "error")
    cost = BatchCost(
        job=job.id,
        model=f"{batch_model.provider}/{batch_model.id}",
        status=job.status,
        requests=len(requests),
        failed=failed,
        cost=batch_cost,
        streaming_cost=streaming_cost,
    )

    by_case = {id(case): case_ids for case, case_ids in zip(cases, ids, strict=True)}
    taken: dict[int, int] = {}

    class _Matched(CaseLifecycle):
        """Sets the request id of this run of the case (its next repeat) for the task."""

        async def setup(self) -> None:
            key = id(self.case)
            n = taken.get(key, 0)
            taken[key] = n + 1
            _REQUEST_ID.set(by_case[key][n])

    async def answer(inputs: Any) -> Any:
        request_id = _REQUEST_ID.get()
        message: AssistantMessage = answers[request_id]
        if message.stop_reason == "error":
            raise BatchRequestFailed(f"request {request_id}: {message.error_message}")
        run = _summarise(
            prompts[request_id],
            [UserMessage(content=prompts[request_id]), message],
            answer_tool=None,
            output=None,
            limit=None,
        )
        for key, value in run.attributes().items():
            set_eval_attribute(key, value)
        set_eval_attribute("batch_request", request_id)
        if run.tool_calls:
            set_eval_attribute(
                "unrun_tool_calls",
                [{"name": c.name, "arguments": dict(c.arguments)} for c in run.tool_calls],
            )
        for key, amount in run.metrics().items():
            increment_eval_metric(key, amount)
        return run.answer

    answer.__name__ = getattr(factory, "__name__", "agent")
    report = await dataset.evaluate(
        answer,
        name=name,
        max_concurrency=max_concurrency,
        progress=False,
        repeat=repeat,
        lifecycle=_Matched,
        metadata={"batch": cost.to_dict()},
    )
    return report, cost
