"""Handoffs in a Temporal run: the workflow's one activity for them.

A run started as an agent (`start_run(agent=...)`) has its agents described by a worker once,
when it starts (the `agentcore.agents` activity); the result is in the workflow's history and is
carried across continue-as-new, so a replay builds the same stand-ins
(`agentcore.durable_handoffs.RunAgents`) and the loop goes on in the agent the transcript says.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from ..durable import RunOptions
from ..durable_handoffs import AGENTS_STEP
from ._sdk import common, exceptions, workflow

__all__ = ["describe_run_agents"]


async def describe_run_agents(agent: str, options: RunOptions) -> dict[str, Any]:
    """The description of agent `agent` and the agents it reaches, from a worker.

    Raises:
        ApplicationError: (non-retryable, failing the run) no worker could describe them, e.g.
            no agent of that name is registered.
    """
    try:
        described: dict[str, Any] = await workflow.execute_activity(
            AGENTS_STEP,
            {"agent": agent},
            start_to_close_timeout=timedelta(seconds=options.model_deadline),
            retry_policy=common.RetryPolicy(maximum_attempts=options.max_retries + 1),
        )
    except exceptions.ActivityError as exc:
        cause = exc.cause if exc.cause is not None else exc
        raise exceptions.ApplicationError(
            f"the run's agents could not be described: {cause}", non_retryable=True
        ) from None
    return described
