"""Agent Skills in a durable run, against the real Temporal dev server with in-process workers
serving the skills: the catalogue is in every request's system prompt, `activate_skill` and
`read_skill_file` run on the worker (path checks as in-process), an activation survives a worker
restart without being run again, and the history replays without the skill files."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from temporalio.client import Client
from temporalio.worker import Replayer

from agentcore import AssistantMessage, ToolResultMessage, tool
from agentcore.errors import ConfigError
from agentcore.llm import Model
from agentcore.messages import ToolCall
from agentcore.skills import Skill, load_skills, skill_catalogue
from agentcore.temporal import AgentWorkflow, RunOptions, create_worker, start_run, workflow_runner
from agentcore.testing import (
    FauxProvider,
    check_well_formed,
    faux_message,
    faux_text,
    faux_tool_call,
)

pytestmark = pytest.mark.anyio

BODY = "Fill the form in three steps; the field names are in references/fields.md."


def make_skills(root: Path, body: str = BODY) -> Path:
    """A skills folder with one skill, `forms`, and a file outside it."""
    folder = root / "skills" / "forms"
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: forms\ndescription: Fill in PDF forms.\n---\n{body}\n", encoding="utf-8"
    )
    (folder / "references" / "fields.md").write_text("name, date, signature\n", encoding="utf-8")
    (root / "secret.txt").write_text("not for the model\n", encoding="utf-8")
    (folder / "link.md").symlink_to(root / "secret.txt")
    return root / "skills"


class Recorder(FauxProvider):
    """Answers from `script` by the request's context (the n-th answer for a context with n
    assistant messages), recording each request's system prompt and tool names."""

    def __init__(self, script: list[AssistantMessage]) -> None:
        super().__init__(provider=f"faux-skills-{uuid.uuid4().hex[:6]}")
        self.script = script
        self.requests: list[tuple[str, list[str]]] = []

    @property
    def pending(self) -> int:
        return 1

    def stream(self, model, context, options=None):  # type: ignore[no-untyped-def]
        self.requests.append((context.system_prompt, [t.name for t in context.tools]))
        n = sum(1 for m in context.messages if m.role == "assistant")
        self.set_responses([self.script[min(n, len(self.script) - 1)]])
        return super().stream(model, context, options)


@tool(requires_approval=True)
def pay(amount: int) -> str:
    """Pay an amount (once a person approved).

    Args:
        amount: how much.
    """
    return f"paid {amount}"


@asynccontextmanager
async def serving(client: Client, queue: str, model: Model, skills: Any) -> AsyncIterator[None]:
    """An in-process worker on `queue`, shut down (gracefully) when the block ends."""
    worker = create_worker(
        client,
        task_queue=queue,
        models={"skilled": model},
        tools=[pay],
        skills=skills,
        sticky_queue_schedule_to_start_timeout=timedelta(seconds=1),
    )
    async with anyio.create_task_group() as group:
        group.start_soon(worker.run)
        try:
            yield
        finally:
            await worker.shutdown()


def text_of(message: Any) -> str:
    return "".join(getattr(b, "text", "") for b in message.content)


def results(messages: list[Any], name: str) -> list[ToolResultMessage]:
    return [m for m in messages if isinstance(m, ToolResultMessage) and m.tool_name == name]


async def replay(client: Client, run_id: str) -> None:
    replayer = Replayer(workflows=[AgentWorkflow], workflow_runner=workflow_runner())
    async for history in client.list_workflows(f"WorkflowId = '{run_id}'").map_histories():
        await replayer.replay_workflow(history)


SCRIPT = [
    faux_tool_call("activate_skill", {"name": "forms"}, id="k1"),
    faux_message(
        "Reading the skill's files.",
        ToolCall(
            id="k2",
            name="read_skill_file",
            arguments={"name": "forms", "path": "references/fields.md"},
        ),
        ToolCall(
            id="k3", name="read_skill_file", arguments={"name": "forms", "path": "../../secret.txt"}
        ),
        ToolCall(id="k4", name="read_skill_file", arguments={"name": "forms", "path": "link.md"}),
    ),
    faux_tool_call("activate_skill", {"name": "forms"}, id="k5"),
    faux_text("The form is filled."),
]


async def test_a_durable_run_activates_a_skill_and_reads_its_files(
    client: Client, run_id: str, tmp_path: Path
) -> None:
    skills = load_skills(make_skills(tmp_path))
    provider = Recorder(SCRIPT)
    queue = f"skills-{run_id}"
    async with serving(client, queue, provider.model, skills):
        run = await start_run(
            client,
            "Fill in the form.",
            id=run_id,
            task_queue=queue,
            model="skilled",
            skills=["forms"],
            system_prompt="You are careful.",
            options=RunOptions(heartbeat_timeout=2.0),
        )
        events = [e async for e in run.events()]
        messages = await run.result()

    check_well_formed(events)
    # the catalogue follows the run's system prompt, as in-process, in every request
    catalogue = skill_catalogue(skills)
    assert [p for p, _ in provider.requests] == [f"You are careful.\n\n{catalogue}"] * 4
    assert all(names == ["activate_skill", "read_skill_file"] for _, names in provider.requests)
    first, again = results(messages, "activate_skill")
    assert BODY in text_of(first) and "references/fields.md" in text_of(first)
    assert first.details["skill"] == "forms" and not first.is_error
    # a second activation in the run does not load the body again
    assert again.details == {"skill": "forms", "already_active": True}
    assert BODY not in text_of(again)
    read, escape, link = results(messages, "read_skill_file")
    assert text_of(read) == "name, date, signature\n" and not read.is_error
    # path safety is the in-process code's: `..` and a link out are refused, nothing leaks
    assert escape.is_error and "holds '..': paths stay inside" in text_of(escape)
    assert link.is_error and "leads outside the skill's folder" in text_of(link)
    assert "not for the model" not in text_of(escape) + text_of(link)
    assert text_of(messages[-1]) == "The form is filled."

    # the workflow never read a skill file: its history replays with the files gone
    shutil.rmtree(tmp_path / "skills")
    await replay(client, run_id)


async def test_an_activation_survives_a_worker_restart_and_is_not_run_again(
    client: Client, run_id: str, tmp_path: Path
) -> None:
    script = [
        faux_tool_call("activate_skill", {"name": "forms"}, id="r1"),
        faux_tool_call("pay", {"amount": 5}, id="r2"),  # the run waits here for a person
        faux_tool_call(
            "read_skill_file", {"name": "forms", "path": "references/fields.md"}, id="r3"
        ),
        faux_text("Paid and filled."),
    ]
    provider = Recorder(script)
    queue = f"skills-{run_id}"
    async with serving(client, queue, provider.model, load_skills(make_skills(tmp_path))):
        run = await start_run(
            client,
            "Pay, then fill in the form.",
            id=run_id,
            task_queue=queue,
            model="skilled",
            tools=["pay"],
            skills=["forms"],
            options=RunOptions(heartbeat_timeout=2.0),
        )
        for _ in range(600):
            if await run.pending_approvals():
                break
            await anyio.sleep(0.05)
        else:
            raise AssertionError("the run never asked for the approval")
    # the first worker is gone; the skill changes on disk and a new worker loads it
    shutil.rmtree(tmp_path / "skills")
    (tmp_path / "secret.txt").unlink()
    changed = load_skills(make_skills(tmp_path, body="CHANGED"))
    async with serving(client, queue, provider.model, changed):
        await run.approve("r2")
        messages = await run.result()

    (activation,) = results(messages, "activate_skill")  # not run again on the new worker
    assert BODY in text_of(activation) and "CHANGED" not in text_of(activation)
    (read,) = results(messages, "read_skill_file")
    assert text_of(read) == "name, date, signature\n"
    assert [m.tool_call_id for m in messages if isinstance(m, ToolResultMessage)] == [
        "r1",
        "r2",
        "r3",
    ]
    assert text_of(messages[-1]) == "Paid and filled."
    await replay(client, run_id)


async def test_an_unknown_skill_ends_the_run_with_an_error_naming_it(
    client: Client, run_id: str, tmp_path: Path
) -> None:
    provider = Recorder([faux_text("unused")])
    queue = f"skills-{run_id}"
    async with serving(client, queue, provider.model, load_skills(make_skills(tmp_path))):
        run = await start_run(
            client, "hi", id=run_id, task_queue=queue, model="skilled", skills=["nope"]
        )
        messages = await run.result()
    last = messages[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason == "error"
    assert "no skill named 'nope' is registered on this worker" in (last.error_message or "")
    assert "registered: ['forms']" in (last.error_message or "")
    assert provider.requests == []


async def test_skills_are_checked_before_contacting_the_server(tmp_path: Path) -> None:
    client: Any = None  # never reached
    for bad, expected in [
        ("forms", "skills must be a list of skill names"),
        (["forms", "forms"], "skills must name each skill once"),
    ]:
        with pytest.raises(ConfigError, match=expected):
            await start_run(client, "hi", id="x", task_queue="q", model="m", skills=bad)
    with pytest.raises(ConfigError, match="are the skills' own"):
        await start_run(
            client, "hi", id="x", task_queue="q", model="m", tools=["activate_skill"], skills=["a"]
        )


def test_a_worker_refuses_a_tool_named_as_the_skills_own(tmp_path: Path) -> None:
    from agentcore.temporal._activities import Activities

    @tool
    def activate_skill(name: str) -> str:
        """Pretend to activate.

        Args:
            name: a name.
        """
        return name

    skills = load_skills(make_skills(tmp_path))
    with pytest.raises(ConfigError, match="'activate_skill' is the skills' own"):
        Activities({}, [activate_skill], skills=skills)
    with pytest.raises(ConfigError, match="skills must"):
        Activities({}, [], skills=["forms"])  # type: ignore[list-item]
    (forms,) = skills
    assert isinstance(forms, Skill)
    with pytest.raises(ConfigError, match="the skill name 'forms' is registered twice"):
        Activities({}, [], skills=[forms, forms])


async def test_allowed_tools_pre_approve_while_the_skill_is_active(
    client: Client, run_id: str, tmp_path: Path
) -> None:
    folder = tmp_path / "skills" / "billing"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: billing\ndescription: Pay bills.\nallowed-tools: pay\n---\nPay them.\n",
        encoding="utf-8",
    )
    script = [
        faux_tool_call("activate_skill", {"name": "billing"}, id="b1"),
        faux_tool_call("pay", {"amount": 7}, id="b2"),  # pre-approved: runs without asking
        faux_text("Paid."),
    ]
    provider = Recorder(script)
    queue = f"skills-{run_id}"
    async with serving(client, queue, provider.model, load_skills(tmp_path / "skills")):
        run = await start_run(
            client,
            "Pay the bill.",
            id=run_id,
            task_queue=queue,
            model="skilled",
            tools=["pay"],
            skills=["billing"],
        )
        with anyio.fail_after(60):
            messages = await run.result()
    assert [m.role for m in messages].count("approval_request") == 0
    (paid,) = [m for m in results(messages, "pay")]
    assert text_of(paid) == "paid 7" and not paid.is_error
    await replay(client, run_id)


def test_a_worker_module_may_serve_only_skills(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcore.temporal._worker import _load

    make_skills(tmp_path)
    module = f"skill_worker_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(
        "from agentcore.skills import load_skills\n"
        f"skills = load_skills({str(tmp_path / 'skills')!r})\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    models, tools, skills, agents = _load([module])
    assert models == {} and tools == [] and agents == [] and [s.name for s in skills] == ["forms"]
