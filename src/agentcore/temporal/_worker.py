"""Workers: the process that runs agent workflows and the model and tool activities.

`create_worker` builds a `temporalio.worker.Worker` for one task queue from models and tools
registered by name. `workflow_runner` is the sandbox the workflow runs in: Temporal's, with
agentcore and the libraries it uses passed through (they are deterministic as the loop uses them,
and importing them once per worker instead of once per workflow keeps workflows cheap).

`python -m agentcore.temporal worker --module mypkg.agents ...` runs one worker from the command
line; the module names what it serves in `models` (a dict), `tools` (a list), `skills`
(what `load_skills` returns) and `agents` (a list of `AgentSpec`). It connects to
`--address`, else `$AGENTCORE_TEMPORAL_ADDRESS` (as examples/durable_agent.py), else
`$TEMPORAL_ADDRESS` (the Temporal CLI's variable), else 127.0.0.1:17233, where
`scripts/temporal start` serves; a server it cannot reach is one line saying what to do.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import timedelta
from typing import Any

import anyio

from ..errors import ConfigError
from ..handoffs import AgentSpec
from ..llm import Model
from ..skills import Skill
from ..tools import AgentTool
from ._activities import Activities, DurableTool
from ._sdk import client as temporal_client
from ._sdk import worker as temporal_worker
from ._workflow import AgentWorkflow

__all__ = ["create_worker", "main", "workflow_runner"]

PASSED_THROUGH = (
    "agentcore",
    "anyio",
    "sniffio",
    "pydantic",
    "pydantic_core",
    "jiter",
    "jsonschema",
    "jsonschema_specifications",
    "referencing",
    "rpds",
    "httpx",
    "httpcore",
    "annotated_types",
    "typing_inspection",
)
"""Modules the workflow sandbox takes from the worker instead of importing them afresh."""

DEFAULT_ADDRESS = "127.0.0.1:17233"
"""Where the worker looks for Temporal without `--address` or `$TEMPORAL_ADDRESS`: the address
`scripts/temporal start` serves on."""


EXIT_UNREACHABLE = 1
"""The worker's exit status when the Temporal server cannot be reached."""


class _Unreachable(Exception):
    """The Temporal server could not be reached (the text says where and what to do)."""


async def _connect(address: str, namespace: str) -> Any:
    try:
        return await temporal_client.Client.connect(address, namespace=namespace)
    except RuntimeError as exc:  # the SDK's bridge says "Failed client connect: ..."
        if "connect" not in str(exc).lower():
            raise
        text = str(exc).lower()
        reason = (
            "connection refused"
            if "refused" in text
            else "the host name does not resolve"
            if "dns error" in text
            else "no answer"
        )
        raise _Unreachable(
            f"cannot reach the Temporal server at {address} ({reason}): start one with "
            f"`scripts/temporal start` (it serves {DEFAULT_ADDRESS}) or "
            "`temporal server start-dev`, or pass --address HOST:PORT"
        ) from exc


def workflow_runner() -> Any:
    """The sandboxed workflow runner agent workflows need (also for a `Replayer`)."""
    sandbox = temporal_worker.workflow_sandbox
    restrictions = sandbox.SandboxRestrictions.default.with_passthrough_modules(*PASSED_THROUGH)
    return sandbox.SandboxedWorkflowRunner(restrictions=restrictions)


def create_worker(
    client: temporal_client.Client,
    *,
    task_queue: str,
    models: Mapping[str, Model] | None = None,
    tools: Sequence[AgentTool | DurableTool] = (),
    get_api_key: Callable[[str], str | Awaitable[str | None] | None] | None = None,
    skills: Iterable[Skill] = (),
    agents: Iterable[AgentSpec] = (),
    **options: Any,
) -> temporal_worker.Worker:
    """A worker that runs agent workflows and serves these models and tools on `task_queue`.

    Run as many as you like, on any machines, against one Temporal cluster: each polls the task
    queue, and a run goes on on whichever worker is alive. Every worker of a task queue should
    serve the same models and tools.

    Args:
        client: a connected `temporalio.client.Client`.
        task_queue: the queue runs are started on.
        models: the models served, by the name runs use (`start_run(model=...)`). A provider
            reads its API key on the worker, from the environment or `get_api_key`; keys never
            enter a workflow's history.
        tools: the tools served, by their names (`start_run(tools=[...])`); `DurableTool(tool,
            retry=False)` for one that must not run twice.
        get_api_key: resolves a provider's key on the worker, `(provider) -> str | None`.
        skills: the Agent Skills served (`agentcore.skills.load_skills(...)`), by their names
            (`start_run(skills=[...])`). Their files are read on this worker, when a run's
            model activates one or reads one of its files; the paths the model gives are
            checked as in-process (inside the skill's folder after resolving symlinks).
        agents: the agents served (`AgentSpec`, and every agent their handoffs reach), by their
            names (`start_run(agent=...)`); their tools and handoff tools run on this worker.
            An agent's model must be one of `models`.
        options: more `temporalio.worker.Worker` options (`max_concurrent_activities`, ...).

    Raises:
        ConfigError: a model, tool or skill of the wrong type, a tool or skill name used
            twice, or a tool named as the skills' own (`activate_skill`, `read_skill_file`);
            an agent a durable run cannot serve (see `agentcore.durable_handoffs`).
    """
    if not isinstance(task_queue, str) or not task_queue:
        raise ConfigError(f"task_queue must be a non-empty string, got {task_queue!r}")
    activities = Activities(models or {}, tools, get_api_key, skills, agents)
    options.setdefault("workflow_runner", workflow_runner())
    return temporal_worker.Worker(
        client,
        task_queue=task_queue,
        workflows=[AgentWorkflow],
        activities=activities.all(),
        **options,
    )


def _load(
    names: Sequence[str],
) -> tuple[dict[str, Model], list[AgentTool | DurableTool], list[Skill], list[AgentSpec]]:
    models: dict[str, Model] = {}
    tools: list[AgentTool | DurableTool] = []
    skills: list[Skill] = []
    agents: list[AgentSpec] = []
    for name in names:
        module = importlib.import_module(name)
        found = {k: getattr(module, k, None) for k in ("models", "tools", "skills", "agents")}
        if all(v is None for v in found.values()):
            raise ConfigError(
                f"module {name!r} defines neither `models` (a dict of name: Model) nor `tools` "
                "(a list of AgentTool or DurableTool) nor `skills` (what load_skills returns) "
                "nor `agents` (a list of AgentSpec)"
            )
        models.update(found["models"] or {})
        tools.extend(found["tools"] or ())
        skills.extend(found["skills"] or ())
        agents.extend(found["agents"] or ())
    return models, tools, skills, agents


async def _serve(args: argparse.Namespace) -> None:
    models, tools, skills, agents = _load(args.module)
    client = await _connect(args.address, args.namespace)
    worker = create_worker(
        client,
        task_queue=args.task_queue,
        models=models,
        tools=tools,
        skills=skills,
        agents=agents,
        max_concurrent_activities=args.max_activities,
        sticky_queue_schedule_to_start_timeout=timedelta(seconds=args.sticky_timeout),
    )
    stopping = anyio.Event()
    async with anyio.create_task_group() as group:

        async def stop_on_signal() -> None:
            # the first SIGTERM or Ctrl-C shuts down gracefully (running activities finish);
            # a second one stops at once
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                async for _ in signals:
                    if stopping.is_set():
                        group.cancel_scope.cancel()
                        return
                    stopping.set()
                    group.start_soon(worker.shutdown)

        group.start_soon(stop_on_signal)
        print(
            f"agentcore worker: task queue {args.task_queue!r} on {args.address}, "
            f"models {sorted(models)}, tools {sorted(_tool_names(tools))}, "
            f"skills {sorted(s.name for s in skills)}, agents {sorted(a.name for a in agents)}",
            flush=True,
        )
        await worker.run()
        group.cancel_scope.cancel()


def _tool_names(tools: Sequence[AgentTool | DurableTool]) -> list[str]:
    return [t.tool.name if isinstance(t, DurableTool) else t.name for t in tools]


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m agentcore.temporal worker ...`: run one worker until SIGTERM or Ctrl-C (a
    second one stops it at once, without waiting for running activities)."""
    parser = argparse.ArgumentParser(prog="python -m agentcore.temporal")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("worker", help="run a worker for agent workflows")
    run.add_argument(
        "--module",
        action="append",
        required=True,
        help="a module defining `models`, `tools`, `skills` and/or `agents` to serve (repeatable)",
    )
    run.add_argument("--task-queue", default="agentcore", help="the task queue [agentcore]")
    run.add_argument(
        "--address",
        default=os.environ.get("AGENTCORE_TEMPORAL_ADDRESS")
        or os.environ.get("TEMPORAL_ADDRESS")
        or DEFAULT_ADDRESS,
        help="the Temporal frontend [$AGENTCORE_TEMPORAL_ADDRESS, else $TEMPORAL_ADDRESS, else "
        f"{DEFAULT_ADDRESS}: scripts/temporal's]",
    )
    run.add_argument("--namespace", default="default", help="the namespace [default]")
    run.add_argument(
        "--max-activities", type=int, default=100, help="concurrent activities at most [100]"
    )
    run.add_argument(
        "--sticky-timeout",
        type=float,
        default=10.0,
        help="seconds a run waits for the worker that last ran it before another takes it "
        "over (a worker that died is noticed after this) [10]",
    )
    args = parser.parse_args(argv)
    try:
        anyio.run(_serve, args)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except _Unreachable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_UNREACHABLE
    except KeyboardInterrupt:
        return 130
    return 0
