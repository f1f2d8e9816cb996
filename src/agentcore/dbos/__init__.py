"""Durable agent runs on DBOS: the loop as a workflow, every model request and tool call a step
checkpointed in a system database (SQLite by default, no server; PostgreSQL for workers on
several machines), so a run survives its worker.

```python
# not run by the tests
from dbos import DBOSClient
from agentcore.dbos import launch_worker, start_run

launch_worker(database_url="sqlite:///runs.sqlite", models={"main": model}, tools=[add])
client = DBOSClient(system_database_url="sqlite:///runs.sqlite")
run = await start_run(client, "What is 2 + 40?", id="run-1", model="main", tools=["add"])
async for event in run.events():
    ...
messages = await run.result()
```

- `launch_worker` configures DBOS in this process as a worker serving models and tools by name
  (`DurableTool` for a tool that must not run twice); `python -m agentcore.dbos worker --module
  ...` runs one.
- `start_run` enqueues a run (`RunOptions` from `agentcore.durable`) and returns a `DurableRun`,
  which follows its events, approves or denies its waiting calls, cancels it and waits for its
  result (`RunOutcome`); `get_run` finds a run again by its id.

Everything here needs DBOS: `pip install 'agentcore-loop[dbos]'`. `import agentcore.dbos` works
without it; the names raise `MissingExtraError` naming the extra. See docs/dbos.md.
"""

from __future__ import annotations

import typing as _typing

from .._optional import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from ..durable import RunOptions as RunOptions
    from ._client import DurableRun as DurableRun
    from ._client import RunOutcome as RunOutcome
    from ._client import get_run as get_run
    from ._client import start_run as start_run
    from ._steps import DurableTool as DurableTool
    from ._worker import launch_worker as launch_worker

__all__ = [
    "DurableRun",
    "DurableTool",
    "RunOptions",
    "RunOutcome",
    "get_run",
    "launch_worker",
    "start_run",
]

_WHERE: dict[str, str] = {
    "DurableRun": "._client",
    "DurableTool": "._steps",
    "RunOptions": "agentcore.durable",
    "RunOutcome": "._client",
    "get_run": "._client",
    "launch_worker": "._worker",
    "start_run": "._client",
}

__getattr__ = _lazy_exports(__name__, _WHERE, globals())
