"""Durable agent runs on Temporal: the loop as a workflow, every model request and tool call as
an activity, so a run survives its worker and spreads over many machines.

```python
# not run by the tests
from temporalio.client import Client
from agentcore.temporal import create_worker, start_run

client = await Client.connect("127.0.0.1:7233")
worker = create_worker(client, task_queue="agents", models={"main": model}, tools=[add])
run = await start_run(client, "What is 2 + 40?", id="run-1", task_queue="agents",
                      model="main", tools=["add"])
async for event in run.events():
    ...
messages = await run.result()
```

- `create_worker` builds a worker serving models and tools registered by name (`DurableTool` for
  a tool that must not run twice); `python -m agentcore.temporal worker --module ...` runs one.
- `start_run` starts a run (`RunOptions` for its options) and returns a `DurableRun`, which
  follows its events, reads its transcript, steers it, approves or denies its waiting calls,
  aborts it and waits for its result (`RunOutcome`); `get_run` finds a run again by its id.
- `AgentWorkflow` is the workflow, `workflow_runner` the sandbox it runs in (for a `Replayer`).

Everything here needs the Temporal SDK: `pip install 'agentcore-loop[temporal]'`. `import
agentcore.temporal` works without it; the names raise `MissingExtraError` naming the extra.
See docs/temporal.md.
"""

from __future__ import annotations

import typing as _typing

from .._optional import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from ..durable import RunOptions as RunOptions
    from ._activities import DurableTool as DurableTool
    from ._client import DurableRun as DurableRun
    from ._client import RunOutcome as RunOutcome
    from ._client import get_run as get_run
    from ._client import start_run as start_run
    from ._worker import create_worker as create_worker
    from ._worker import workflow_runner as workflow_runner
    from ._workflow import AgentWorkflow as AgentWorkflow

__all__ = [
    "AgentWorkflow",
    "DurableRun",
    "DurableTool",
    "RunOptions",
    "RunOutcome",
    "create_worker",
    "get_run",
    "start_run",
    "workflow_runner",
]

# name -> the module that defines it (each imports the SDK, through `_sdk`)
_WHERE: dict[str, str] = {
    "AgentWorkflow": "._workflow",
    "DurableRun": "._client",
    "DurableTool": "._activities",
    "RunOptions": "agentcore.durable",
    "RunOutcome": "._client",
    "create_worker": "._worker",
    "get_run": "._client",
    "start_run": "._client",
    "workflow_runner": "._worker",
}

__getattr__ = _lazy_exports(__name__, _WHERE, globals())
