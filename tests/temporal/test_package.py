"""`agentcore.temporal` without a server: a curated, documented surface with the SDK imported
only when needed, the JSON forms of events and tool results, run options and argument checks,
the worker's command line, and the message clock seam the workflow relies on."""

from __future__ import annotations

import inspect
import os
import re
import socket
import subprocess
import sys
import types
from pathlib import Path

import pytest

import agentcore
import agentcore.temporal
from agentcore import AgentToolResult, ConfigError, MissingExtraError, UserMessage
from agentcore.durable import event_from_json, event_to_json
from agentcore.events import (
    AgentEndEvent,
    AgentStartEvent,
    AgentSwitchEvent,
    MemoryUpdateEvent,
    MessageEndEvent,
    MessageStartEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from agentcore.limits import LimitReached, UsageLimits
from agentcore.memory import MemoryRecord, MemoryScope
from agentcore.messages import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    message_clock,
    now_ms,
)
from agentcore.temporal import DurableTool, RunOptions, start_run
from agentcore.temporal._worker import DEFAULT_ADDRESS, main
from support import run_python

SRC = Path(agentcore.__file__).resolve().parent


def test_all_is_sorted_complete_and_documented() -> None:
    exported = list(agentcore.temporal.__all__)
    assert exported == sorted(exported)
    for name in exported:
        value = getattr(agentcore.temporal, name)
        doc = value.__dict__.get("__doc__") if inspect.isclass(value) else value.__doc__
        assert doc and doc.strip(), f"agentcore.temporal.{name} has no docstring"
    public = {
        n
        for n, v in vars(agentcore.temporal).items()
        if not n.startswith("_") and not isinstance(v, types.ModuleType)
    }
    public.discard("annotations")
    assert public == set(exported)
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        agentcore.temporal.nothing  # noqa: B018


def test_importing_the_package_does_not_import_the_sdk() -> None:
    out = run_python(
        "import sys\n"
        "import agentcore, agentcore.temporal\n"
        "print(sorted(m for m in sys.modules if m.startswith('temporalio')))\n"
    )
    assert out == "[]"


def test_without_the_sdk_the_error_names_the_extra() -> None:
    out = run_python(
        "import sys\n"
        "sys.modules['temporalio'] = None  # as if it were not installed\n"
        "try:\n"
        "    from agentcore.temporal import start_run\n"
        "except ImportError as exc:\n"
        "    print(type(exc).__name__, '|', exc)\n"
    )
    assert out == (
        "MissingExtraError | agentcore.temporal needs the 'temporalio' package, which is not "
        "installed: pip install 'agentcore-loop[temporal]'"
    )
    assert issubclass(MissingExtraError, ImportError)


def _result() -> AgentToolResult:
    return AgentToolResult(
        content=[TextContent(text="42")],
        details={"when": "now", "n": [1, 2]},
        usage=Usage(input=3, output=4),
        added_tool_names=["more"],
        terminate=True,
    )


@pytest.mark.parametrize(
    "event",
    [
        AgentStartEvent(),
        TurnStartEvent(),
        MessageStartEvent(message=UserMessage(content="hi", timestamp=5)),
        MessageEndEvent(message=AssistantMessage(content=[TextContent(text="yo")], timestamp=6)),
        ToolExecutionStartEvent(tool_call_id="c1", tool_name="add", args={"a": 1}),
        ToolExecutionUpdateEvent(
            tool_call_id="c1", tool_name="add", args={"a": 1}, partial_result=_result()
        ),
        ToolExecutionEndEvent(tool_call_id="c1", tool_name="add", result=_result(), is_error=False),
        TurnEndEvent(
            message=AssistantMessage(
                content=[ToolCall(id="c1", name="add", arguments={"a": 1})], timestamp=7
            ),
            tool_results=[
                ToolResultMessage(
                    tool_call_id="c1", tool_name="add", content=[TextContent(text="1")], timestamp=8
                )
            ],
        ),
        AgentEndEvent(
            messages=[UserMessage(content="hi", timestamp=5)],
            limit=LimitReached(kind="max_turns", limit=3, used=3),
        ),
        # handoffs: the switch, the agent of a call, the last agent
        AgentSwitchEvent(from_agent="triage", to_agent="billing", tool_call_id="h1", returns=True),
        ToolExecutionEndEvent(
            tool_call_id="c2", tool_name="add", result=_result(), is_error=False, agent="billing"
        ),
        AgentEndEvent(
            messages=[AssistantMessage(content=[], agent="billing", timestamp=9)],
            last_agent="billing",
        ),
        # memory: an extraction's writes, refusals and error (an Agent's, after a run)
        MemoryUpdateEvent(
            extraction_id="ext_1",
            session_id="s-1",
            model="openai/gpt-4o-mini",
            records=(
                MemoryRecord(
                    id="mem_1",
                    text="Prefers French",
                    kind="preference",
                    scope=MemoryScope(user="alice", agent="support", keys={"tenant": "acme"}),
                    session_id="s-1",
                    message_ids=("#0",),
                    origin="extractor",
                    created_at=10,
                    updated_at=11,
                ),
            ),
            rejected=("memory 2 cites #2 (tool_result)",),
            error="storing the memories failed: boom",
        ),
    ],
    ids=lambda e: e.type,
)
def test_events_round_trip_through_json(event: object) -> None:
    assert event_from_json(event_to_json(event)) == event  # type: ignore[arg-type]


def test_an_unknown_event_type_is_refused_with_its_name() -> None:
    with pytest.raises(ConfigError, match="unknown durable event type 'nope'"):
        event_from_json({"type": "nope"})


def test_options_round_trip_and_are_checked() -> None:
    options = RunOptions(
        reasoning="high",
        max_turns=4,
        usage_limits=UsageLimits(cost=0.5),
        tool_timeout=2.0,
        heartbeat_timeout=1.0,
        history_limit=100,
        steering_mode="all",
    )
    assert RunOptions.from_json(options.to_json()) == options
    with pytest.raises(ConfigError, match="max_turns must be a positive integer"):
        RunOptions(max_turns=0)
    with pytest.raises(ConfigError, match="tool_timeout must be a positive number"):
        RunOptions(tool_timeout=-1)
    with pytest.raises(ConfigError, match="heartbeat_timeout must be a positive number"):
        RunOptions(heartbeat_timeout=0)
    with pytest.raises(ConfigError, match="steering_mode must be one of"):
        RunOptions(steering_mode="some")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="history_limit must be at least 10"):
        RunOptions(history_limit=3)


@pytest.mark.anyio
async def test_start_run_checks_its_arguments_before_contacting_the_server() -> None:
    client: object = None  # never reached: every call below fails on its arguments
    with pytest.raises(ConfigError, match="needs prompts, or messages ending with a user"):
        await start_run(client, id="x", task_queue="q", model="m")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="model must be the name a worker registered"):
        await start_run(client, "hi", id="x", task_queue="q", model="")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="tools must be a list of tool names"):
        await start_run(client, "hi", id="x", task_queue="q", model="m", tools="add")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="options must be a RunOptions"):
        await start_run(client, "hi", id="x", task_queue="q", model="m", options={})  # type: ignore[arg-type]


def test_durable_tool_needs_an_agent_tool() -> None:
    with pytest.raises(ConfigError, match=r"DurableTool\.tool must be an AgentTool"):
        DurableTool(print)  # type: ignore[arg-type]


def test_the_worker_command_names_a_module_without_models_or_tools(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["worker", "--module", "json"]) == 2
    assert "module 'json' defines neither `models`" in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    ("where", "reason"),
    [("port", "connection refused"), ("name", "the host name does not resolve")],
)
def test_the_worker_without_a_server_says_what_to_do_in_one_line(
    where: str, reason: str, tmp_path: Path
) -> None:
    """Issue 26: a wrong address was a 40-line traceback. One line, exit 1, nothing after it;
    the address comes from $AGENTCORE_TEMPORAL_ADDRESS or $TEMPORAL_ADDRESS when --address is
    not given."""
    (tmp_path / "served.py").write_text("models = {}\ntools = []\n")
    address = f"127.0.0.1:{_free_port()}" if where == "port" else "nosuchhost.invalid:7233"
    env = {k: v for k, v in os.environ.items() if not k.endswith("TEMPORAL_ADDRESS")}
    variable = "TEMPORAL_ADDRESS" if where == "port" else "AGENTCORE_TEMPORAL_ADDRESS"
    env.update(PYTHONPATH=f"{SRC.parent}:{tmp_path}", **{variable: address})
    done = subprocess.run(
        [sys.executable, "-m", "agentcore.temporal", "worker", "--module", "served"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"error: cannot reach the Temporal server at {address} ({reason}): start one "
        "with `scripts/temporal start` (it serves 127.0.0.1:17233) or `temporal server "
        "start-dev`, or pass --address HOST:PORT"
    ]


def test_the_worker_looks_where_scripts_temporal_serves() -> None:
    script = (SRC.parents[1] / "scripts" / "temporal").read_text()
    port = re.search(r"PORT=\$\{AGENTCORE_TEMPORAL_PORT:-(\d+)\}", script)
    assert port is not None and f"127.0.0.1:{port.group(1)}" == DEFAULT_ADDRESS


def test_message_clock_sets_the_timestamps_of_new_messages() -> None:
    with message_clock(lambda: 1234):
        assert now_ms() == 1234
        assert UserMessage(content="hi").timestamp == 1234
    assert UserMessage(content="hi").timestamp > 1234
