"""Agent runs evaluated on pydantic-evals: datasets, evaluators and reports (`[evals]` extra).

```python
from pydantic_evals import Case, Dataset

from agentcore.evals import CalledTool, StoppedWith, agent_task

dataset = Dataset(
    cases=[Case(name="sum", inputs="What is 17 * 23?", expected_output="391")],
    evaluators=[CalledTool("calculator"), StoppedWith("stop")],
)
report = dataset.evaluate_sync(agent_task(make_agent))  # make_agent() -> Agent
report.print()
```

`agent_task` turns an agent factory into a pydantic-evals task: each case runs a fresh agent on
the case's prompt and returns its answer (the typed value when the agent has an `output_type`).
What the run did is kept on the case as pydantic-evals attributes and metrics (`tool_calls`,
`stop_reason`, `limit`, `input_tokens`, `output_tokens`, `cost`, `turns`), which the evaluators
here read (`CalledTool`, `WithinUsage`, `StoppedWith`) and which reports show and save. `Judge`
is an LLM judge on any agentcore model, the local one included. `trace_spans()` turns on the
OpenTelemetry spans of `agentcore.tracing`, so pydantic-evals' span evaluators
(`HasMatchingSpan`) see every run's model requests and tool calls. The `agentcore eval` command
runs a dataset file against an agent (docs/evals.md); `batch_evaluate` (`agentcore eval --batch`)
sends every case's single request in one provider batch, at batch prices.

Importing this package imports nothing of pydantic-evals; each name imports it when first used.
"""

from __future__ import annotations

import typing

from .._optional import lazy_exports

if typing.TYPE_CHECKING:
    from ._batch import BatchCost, BatchRequestFailed, batch_evaluate
    from ._evaluators import EVALUATORS, CalledTool, Judge, StoppedWith, WithinUsage
    from ._report import (
        Regression,
        find_regressions,
        load_dataset,
        load_report,
        save_report,
    )
    from ._task import AgentRun, agent_task, run_agent, trace_spans

__all__ = [
    "EVALUATORS",
    "AgentRun",
    "BatchCost",
    "BatchRequestFailed",
    "CalledTool",
    "Judge",
    "Regression",
    "StoppedWith",
    "WithinUsage",
    "agent_task",
    "batch_evaluate",
    "find_regressions",
    "load_dataset",
    "load_report",
    "run_agent",
    "save_report",
    "trace_spans",
]

__getattr__ = lazy_exports(
    __name__,
    {
        "AgentRun": "._task",
        "BatchCost": "._batch",
        "BatchRequestFailed": "._batch",
        "batch_evaluate": "._batch",
        "agent_task": "._task",
        "run_agent": "._task",
        "trace_spans": "._task",
        "EVALUATORS": "._evaluators",
        "CalledTool": "._evaluators",
        "Judge": "._evaluators",
        "StoppedWith": "._evaluators",
        "WithinUsage": "._evaluators",
        "Regression": "._report",
        "find_regressions": "._report",
        "load_dataset": "._report",
        "load_report": "._report",
        "save_report": "._report",
    },
    globals(),
)
