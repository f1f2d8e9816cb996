"""A durable agent: its worker is killed with `kill -9` halfway through, and the run goes on.

    scripts/temporal start                 # the Temporal dev server on 127.0.0.1:17233
    scripts/local-model start              # the local model (or set AGENTCORE_DURABLE_FAUX=1)
    python examples/durable_agent.py

The run is a Temporal workflow (`agentcore.temporal`): the loop runs in the workflow, each model
request and each tool call is an activity on a worker. This script starts two worker processes
(`python -m agentcore.temporal worker --module durable_agent`; this file is also the module that
registers the model and the tool by name), starts a run, and kills (SIGKILL) the worker that is
running the slow `count_lines` tool. The other worker notices within seconds, runs the call
again (it had not finished), and the run completes. A finished call would never run again: its
result is in the workflow's history.

The model is the built-in local model served by `scripts/local-model` (on `AGENTCORE_LOCAL_PORT`
when set), or with `AGENTCORE_DURABLE_FAUX=1` a scripted one (the tests use that). The server is
`AGENTCORE_TEMPORAL_ADDRESS` (default 127.0.0.1:17233, where `scripts/temporal` starts it).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import replace
from pathlib import Path

import anyio

from agentcore import AgentMessage, AssistantMessage, TextContent, ToolResultMessage, tool
from agentcore.llm import Model, get_model
from agentcore.testing import FauxCall, FauxProvider, faux_text, faux_tool_call

ROOT = Path(__file__).resolve().parent.parent
ADDRESS = os.environ.get("AGENTCORE_TEMPORAL_ADDRESS", "127.0.0.1:17233")
TASK_QUEUE = "durable-agent-example"
LOG = Path(os.environ.get("DURABLE_AGENT_LOG", Path(tempfile.gettempdir()) / "durable_agent.log"))
"""Where `count_lines` notes each start and finish (pid included), shared by the workers."""


# --- what the workers serve (this module is also the workers' --module) ------------------------


@tool
def count_lines(path: str) -> str:
    """Count the lines of a file of this repository (slowly: it takes two seconds).

    Args:
        path: the file, relative to the repository root.
    """
    note(f"started {os.getpid()}")
    time.sleep(2)  # a sync tool runs in a worker thread: sleeping does not block the worker
    file = (ROOT / path).resolve()
    if not file.is_relative_to(ROOT) or not file.is_file():
        raise ValueError(f"{path!r} is not a file of this repository")
    count = len(file.read_text(encoding="utf-8").splitlines())
    note(f"finished {os.getpid()}")
    return f"{path} has {count} lines"


def note(line: str) -> None:
    with LOG.open("a") as log:
        print(line, file=log, flush=True)


def _report(call: FauxCall) -> AssistantMessage:
    result = next(m for m in reversed(call.context.messages) if isinstance(m, ToolResultMessage))
    return faux_text(f"The count is in: {''.join(getattr(b, 'text', '') for b in result.content)}.")


def _model() -> Model:
    if os.environ.get("AGENTCORE_DURABLE_FAUX") == "1":
        script = [faux_tool_call("count_lines", {"path": "pyproject.toml"}), _report]
        faux = FauxProvider(provider="faux-durable")
        # answer by the request (how many answers it already holds), so that a retried request
        # gets the same answer
        faux.stream = _by_turn(faux, script)  # type: ignore[method-assign]
        _keep.append(faux)
        return faux.model
    model = get_model("local", "qwen2.5-coder-1.5b")
    port = os.environ.get("AGENTCORE_LOCAL_PORT", "").strip()
    return replace(model, base_url=f"http://127.0.0.1:{port}/v1") if port.isdigit() else model


def _by_turn(faux: FauxProvider, script: list[object]):  # type: ignore[no-untyped-def]
    stream = faux.stream

    def answer(model, context, options=None):  # type: ignore[no-untyped-def]
        n = sum(1 for m in context.messages if m.role == "assistant")
        faux.set_responses([script[min(n, len(script) - 1)]])  # type: ignore[list-item]
        return stream(model, context, options)

    return answer


_keep: list[FauxProvider] = []
models = {"agent": _model()}
tools = [count_lines]


# --- the driver -------------------------------------------------------------------------------


def start_worker() -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT / "examples")])}
    worker = subprocess.Popen(
        [
            *(sys.executable, "-m", "agentcore.temporal", "worker", "--module", "durable_agent"),
            *("--task-queue", TASK_QUEUE, "--address", ADDRESS, "--sticky-timeout", "1"),
        ],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert worker.stdout is not None
    print(f"worker {worker.pid}: {worker.stdout.readline().strip()}")
    return worker


def started_pid() -> int:
    """The pid of the worker that started the tool (waits for it)."""
    while "started" not in LOG.read_text():
        time.sleep(0.05)
    return int(LOG.read_text().split()[1])


def text_of(message: AgentMessage) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    return "".join(b.text for b in content if isinstance(b, TextContent))


async def drive(workers: list[subprocess.Popen[str]]) -> int:
    from temporalio.client import Client

    from agentcore.temporal import RunOptions, start_run

    client = await Client.connect(ADDRESS)
    run = await start_run(
        client,
        "How many lines does pyproject.toml have? Use the count_lines tool.",
        id=f"durable-agent-{uuid.uuid4().hex[:8]}",
        task_queue=TASK_QUEUE,
        model="agent",
        tools=["count_lines"],
        system_prompt="You answer questions about files with the tools you have.",
        options=RunOptions(heartbeat_timeout=3.0, max_turns=6),
    )
    print(f"run {run.id} started")
    async for event in run.events():
        if event.type == "tool_execution_start":
            print(f"  tool {event.tool_name}({event.args}) started")
            pid = await anyio.to_thread.run_sync(started_pid)
            victim = next(w for w in workers if w.pid == pid)
            victim.send_signal(signal.SIGKILL)
            victim.wait()
            print(f"  kill -9 {pid}: the worker running the tool is gone")
        elif event.type == "tool_execution_end":
            print(f"  tool {event.tool_name} -> {text_of(event.result)}")  # type: ignore[arg-type]
        elif event.type == "message_end" and event.message.role == "assistant":
            print(f"  assistant: {text_of(event.message) or '(calls a tool)'}")
    messages = await run.result()
    finished = await anyio.to_thread.run_sync(lambda: LOG.read_text().count("finished"))
    print(f"the run survived: {len(messages)} messages, the tool finished {finished} time(s)")
    final = messages[-1]
    return 0 if isinstance(final, AssistantMessage) and final.stop_reason == "stop" else 1


def main() -> int:
    LOG.write_text("")
    workers = [start_worker(), start_worker()]
    started = time.perf_counter()
    try:
        return anyio.run(drive, workers)
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.send_signal(signal.SIGTERM)
            worker.wait()
            if worker.stdout is not None:
                worker.stdout.close()
        print(f"({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    sys.exit(main())
