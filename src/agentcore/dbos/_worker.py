"""Workers: the process that runs agent workflows and their steps on DBOS.

`launch_worker` configures DBOS in this process (one per process: DBOS keeps global state),
registers the agent workflow's queue and launches: the worker then takes runs from the queue and
recovers the runs its executor id left unfinished. `python -m agentcore.dbos worker --module
mypkg.agents --database-url ...` runs one from the command line.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

from ..errors import ConfigError
from ..handoffs import AgentSpec
from ..llm import Model
from ..skills import Skill
from ..tools import AgentTool
from . import _workflow  # noqa: F401  (registers the workflow)
from ._names import DEFAULT_QUEUE
from ._sdk import dbos
from ._steps import DurableTool, Registry, use

__all__ = ["DEFAULT_DATABASE_URL", "launch_worker", "main"]

DEFAULT_DATABASE_URL = "sqlite:///agentcore-dbos.sqlite"
"""The system database without `--database-url` or `$AGENTCORE_DBOS_DATABASE_URL`: a SQLite file
in the working directory (no server)."""


def launch_worker(
    *,
    database_url: str = DEFAULT_DATABASE_URL,
    models: Mapping[str, Model] | None = None,
    tools: Sequence[AgentTool | DurableTool] = (),
    get_api_key: Callable[[str], str | Awaitable[str | None] | None] | None = None,
    skills: Iterable[Skill] = (),
    agents: Iterable[AgentSpec] = (),
    queue: str = DEFAULT_QUEUE,
    concurrency: int | None = None,
    executor_id: str | None = None,
    name: str = "agentcore",
    **config: Any,
) -> Any:
    """Configure and launch DBOS in this process as a worker serving these models and tools;
    returns the `DBOS` instance (`DBOS.destroy()` stops it).

    Args:
        database_url: the system database: `sqlite:///path` (one machine, no server) or
            `postgresql://...` (workers on several machines sharing runs).
        models: the models served, by the name runs use.
        tools: the tools served, by their names; `DurableTool(tool, retry=False)` for one that
            must not run twice.
        get_api_key: resolves a provider's key on the worker, `(provider) -> str | None`.
        skills: the Agent Skills served (`agentcore.skills.load_skills(...)`), by their names
            (`start_run(skills=[...])`); their files are read on this worker, with the
            in-process path checks.
        agents: the agents served (`AgentSpec`, and every agent their handoffs reach), by
            their names (`start_run(agent=...)`); their tools and handoff tools run on this
            worker. An agent's model must be one of `models`.
        queue: the queue runs are started on (`start_run(queue=...)`).
        concurrency: runs this worker executes at once at most (None: no bound).
        executor_id: this worker's identity: a worker started again with the id of one that
            died recovers the runs it left unfinished (None: DBOS's default, `$DBOS__VMID` or
            "local").
        name: the DBOS application name (every worker of the same runs uses the same).
        config: more `DBOSConfig` fields.

    Raises:
        ConfigError: a model or tool of the wrong type, a tool name used twice, an agent a
            durable run cannot serve (see `agentcore.durable_handoffs`), or a database URL that
            is neither SQLite nor PostgreSQL.
    """
    if not isinstance(database_url, str) or not database_url.startswith(("sqlite:", "postgres")):
        raise ConfigError(
            f"database_url must be sqlite:///PATH or postgresql://..., got {database_url!r}"
        )
    use(Registry(models, tools, get_api_key, skills, agents))
    settings: Any = {"name": name, "system_database_url": database_url, **config}
    if executor_id is not None:
        settings["executor_id"] = executor_id
    instance = dbos.DBOS(config=settings)
    dbos.DBOS.launch()
    dbos.DBOS.register_queue(queue, worker_concurrency=concurrency, polling_interval_sec=0.1)
    return instance


def _load(
    names: Sequence[str],
) -> tuple[dict[str, Model], list[AgentTool | DurableTool], list[Skill], list[AgentSpec]]:
    models: dict[str, Model] = {}
    tools: list[AgentTool | DurableTool] = []
    skills: list[Skill] = []
    agents: list[AgentSpec] = []
    for module_name in names:
        module = importlib.import_module(module_name)
        found = {k: getattr(module, k, None) for k in ("models", "tools", "skills", "agents")}
        if all(v is None for v in found.values()):
            raise ConfigError(
                f"module {module_name!r} defines neither `models` (a dict of name: Model) nor "
                "`tools` (a list of AgentTool or DurableTool) nor `skills` (what load_skills "
                "returns) nor `agents` (a list of AgentSpec)"
            )
        models.update(found["models"] or {})
        tools.extend(found["tools"] or ())
        skills.extend(found["skills"] or ())
        agents.extend(found["agents"] or ())
    return models, tools, skills, agents


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m agentcore.dbos worker ...`: run one worker until SIGTERM or Ctrl-C."""
    parser = argparse.ArgumentParser(prog="python -m agentcore.dbos")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("worker", help="run a worker for agent workflows")
    run.add_argument(
        "--module",
        action="append",
        required=True,
        help="a module defining `models`, `tools`, `skills` and/or `agents` to serve (repeatable)",
    )
    run.add_argument("--queue", default=DEFAULT_QUEUE, help=f"the queue [{DEFAULT_QUEUE}]")
    run.add_argument(
        "--database-url",
        default=os.environ.get("AGENTCORE_DBOS_DATABASE_URL") or DEFAULT_DATABASE_URL,
        help=f"the system database [$AGENTCORE_DBOS_DATABASE_URL, else {DEFAULT_DATABASE_URL}]",
    )
    run.add_argument(
        "--executor-id",
        default=None,
        help="this worker's identity (a worker "
        "started again with it recovers the runs it left unfinished)",
    )
    run.add_argument(
        "--schema", default=None, help="the system tables' schema on PostgreSQL [dbos]"
    )
    run.add_argument("--concurrency", type=int, default=None, help="runs at once at most")
    args = parser.parse_args(argv)
    try:
        models, tools, skills, agents = _load(args.module)
        launch_worker(
            database_url=args.database_url,
            models=models,
            tools=tools,
            skills=skills,
            agents=agents,
            queue=args.queue,
            concurrency=args.concurrency,
            executor_id=args.executor_id,
            **({"dbos_system_schema": args.schema} if args.schema else {}),
        )
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(
        f"agentcore dbos worker: queue {args.queue!r}, models {sorted(models)}, tools "
        f"{sorted(t.tool.name if isinstance(t, DurableTool) else t.name for t in tools)}, "
        f"agents {sorted(a.name for a in agents)}",
        flush=True,
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with contextlib.suppress(KeyboardInterrupt):
        stop.wait()
    dbos.DBOS.destroy()
    return 0
