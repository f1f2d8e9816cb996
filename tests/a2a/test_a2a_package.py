"""`agentcore.a2a` as a package: a documented surface, the SDK imported only when used, a clear
error naming the extra without it; and a finished task found by a restarted server."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from a2a.types.a2a_pb2 import GetTaskRequest, TaskState
from a2a_support import collect, new_agent, sdk_client, served, user_message

import agentcore.a2a
from agentcore.sessions import JsonlSessionStore
from agentcore.testing import FauxProvider, faux_text
from support import run_python


def test_all_is_sorted_and_documented() -> None:
    exported = list(agentcore.a2a.__all__)
    assert exported == sorted(exported) == ["a2a_app", "a2a_tool", "serve_a2a"]
    for name in exported:
        assert inspect.getdoc(getattr(agentcore.a2a, name)), name


def test_importing_it_imports_no_sdk() -> None:
    out = run_python(
        "import sys\n"
        "from agentcore.a2a import a2a_app, a2a_tool, serve_a2a\n"
        "print(sorted(m for m in sys.modules if m == 'a2a' or m.startswith('a2a.')))\n"
    )
    assert out == "[]"


def test_without_the_sdk_the_error_names_the_extra() -> None:
    out = run_python(
        "import sys\n"
        "sys.modules['a2a'] = None  # as if it were not installed\n"
        "from agentcore import Agent\n"
        "from agentcore.a2a import a2a_app\n"
        "from agentcore.testing import FauxProvider\n"
        "try:\n"
        "    a2a_app(Agent(initial_state={'model': FauxProvider().model}))\n"
        "except ImportError as exc:\n"
        "    print(type(exc).__name__, '|', exc)\n"
    )
    assert out.startswith("MissingExtraError | agentcore.a2a needs a2a-sdk")
    assert "pip install 'agentcore-loop[a2a]'" in out


@pytest.mark.anyio
async def test_a_finished_task_is_found_after_a_restart(tmp_path: Path) -> None:
    faux = FauxProvider([faux_text("Done and stored.")])
    with JsonlSessionStore(tmp_path) as store:
        async with (
            served(new_agent(faux.model, []), sessions=store) as url,
            sdk_client(url) as client,
        ):
            events = await collect(client.send_message(user_message("go")))
    task_id = events[0]["task"]["id"]
    with JsonlSessionStore(tmp_path) as store:
        async with (
            served(new_agent(faux.model, []), sessions=store) as url,
            sdk_client(url) as client,
        ):
            task = await client.get_task(GetTaskRequest(id=task_id))
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert task.status.message.parts[0].text == "Done and stored."
