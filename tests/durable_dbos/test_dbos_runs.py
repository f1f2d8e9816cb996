"""Durable runs on DBOS with a SQLite system database, against real worker processes
(`python -m agentcore.dbos worker`, each in its own process: DBOS keeps global state): a run
completes; a worker killed with SIGKILL mid-tool or mid-charge is started again and finishes the
run with each tool run once (a `retry=False` tool is not run again); an approval decided while no
worker runs is carried out when one starts; a run is aborted (every call with its result) or
cancelled."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from dbos import DBOSClient

from agentcore import ToolResultMessage, tool
from agentcore.dbos import start_run
from agentcore.skills import load_skills
from agentcore.testing import check_well_formed
from support import ROOT

pytestmark = pytest.mark.anyio

TESTS = ROOT / "tests"


class Worker:
    """One worker process on the test's system database, with a fixed executor id."""

    def __init__(
        self, url: str, effects: Path, executor: str = "w1", schema: str | None = None
    ) -> None:
        self.url, self.effects, self.executor, self.schema = url, effects, executor, schema
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, **env: str) -> None:
        environment = {
            **os.environ,
            "AGENTCORE_DBOS_TEST_DIR": str(self.effects),
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(TESTS)]),
            **env,
        }
        with open(self.effects / f"worker-{self.executor}.log", "ab") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "agentcore.dbos",
                    "worker",
                    "--module",
                    "durable_dbos.worker_app",
                    "--database-url",
                    self.url,
                    "--executor-id",
                    self.executor,
                    *(["--schema", self.schema, "--concurrency", "1"] if self.schema else []),
                ],
                env=environment,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()


def lines(path: Path, run_id: str) -> list[list[str]]:
    if not path.exists():
        return []
    return [line.split() for line in path.read_text().splitlines() if line.startswith(run_id)]


async def wait_for_line(path: Path, run_id: str) -> list[str]:
    with anyio.fail_after(60):
        while not (found := lines(path, run_id)):  # noqa: ASYNC110 (another process writes it)
            await anyio.sleep(0.05)
    return found[0]


@pytest.fixture
def env(tmp_path: Path) -> Iterator[tuple[DBOSClient, Worker]]:
    url = f"sqlite:///{tmp_path / 'system.sqlite'}"
    worker = Worker(url, tmp_path)
    worker.start()
    # the client never creates the schema: wait for the worker to
    for _ in range(600):
        if "DBOS launched" in (tmp_path / "worker-w1.log").read_text(errors="replace"):
            break
        time.sleep(0.05)
    client = DBOSClient(system_database_url=url)
    yield client, worker
    worker.stop()
    client.destroy()


def run_id() -> str:
    return f"run-{uuid.uuid4().hex[:10]}"


def text_of(message: object) -> str:
    return "".join(getattr(c, "text", "") for c in getattr(message, "content", []))


async def test_a_run_completes_with_each_tool_once(env: tuple[DBOSClient, Worker]) -> None:
    client, worker = env
    rid = run_id()
    run = await start_run(client, "go", id=rid, model="tools", tools=["add", "record"])
    events = [e async for e in run.events()]
    messages = await run.result()
    assert [m.role for m in messages] == [
        "user",
        "assistant",
        "tool_result",
        "tool_result",
        "assistant",
        "tool_result",
        "assistant",
    ]
    assert text_of(messages[2]) == "42"
    assert text_of(messages[-1]) == "2 + 40 = 42, and I took a note."
    assert [line[1] for line in lines(worker.effects / "effects", rid)] == ["c2"]
    check_well_formed(events)


async def test_kill_during_a_tool_then_recovery(env: tuple[DBOSClient, Worker]) -> None:
    client, worker = env
    rid = run_id()
    run = await start_run(client, "go", id=rid, model="slow-tool", tools=["slow", "record"])
    await wait_for_line(worker.effects / "started", rid)
    worker.kill()  # mid-tool: the slow call started, never finished
    worker.start(AGENTCORE_DBOS_FAST="1")  # the same executor id: it recovers the run
    messages = await run.result()
    assert [m.role for m in messages] == [
        "user",
        "assistant",
        "tool_result",
        "assistant",
        "tool_result",
        "assistant",
    ]
    assert text_of(messages[2]) == "slowly noted: n1"
    assert [line[1] for line in lines(worker.effects / "effects", rid)] == ["s1", "s2"]
    assert len(lines(worker.effects / "started", rid)) == 2  # retry=True: run again once
    check_well_formed([e async for e in run.events()])


async def test_kill_during_a_model_stream_then_recovery(env: tuple[DBOSClient, Worker]) -> None:
    client, worker = env
    rid = run_id()
    run = await start_run(client, "tell me", id=rid, model="slow-stream")
    first = await wait_for_line(worker.effects / "stream-slow-stream", rid)
    worker.kill()  # the answer is streaming in the killed process
    worker.start()
    messages = await run.result()
    assert [m.role for m in messages] == ["user", "assistant"]
    assert text_of(messages[-1]) == "a long and slowly streamed answer " * 10
    attempts = lines(worker.effects / "stream-slow-stream", rid)
    assert len(attempts) == 2 and attempts[1][1] != first[1]  # sent again, by the new process
    check_well_formed([e async for e in run.events()])


async def test_kill_between_turns_then_recovery(env: tuple[DBOSClient, Worker]) -> None:
    client, worker = env
    rid = run_id()
    run = await start_run(client, "loop", id=rid, model="gated-loop", tools=["record"])
    marker = worker.effects / "stream-gated-loop"
    with anyio.fail_after(60):
        while not any(line[2] == "1" for line in lines(marker, rid)):  # noqa: ASYNC110
            await anyio.sleep(0.05)
    worker.kill()  # held before its second answer: the first tool call is checkpointed
    (worker.effects / f"gate-{rid}").touch()
    worker.start()
    messages = await run.result()
    assert text_of(messages[-1]) == "looped"
    effects = [line[1] for line in lines(worker.effects / "effects", rid)]
    assert effects == ["l1", "l2", "l3"]  # each call ran once, the first one before the kill
    check_well_formed([e async for e in run.events()])


async def test_a_tool_that_must_not_run_twice_is_not_run_again(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'system.sqlite'}"
    worker = Worker(url, tmp_path)
    worker.start(AGENTCORE_DBOS_CHARGE_SECONDS="30")
    try:
        for _ in range(600):
            log = tmp_path / "worker-w1.log"
            if log.exists() and "DBOS launched" in log.read_text(errors="replace"):
                break
            await anyio.sleep(0.05)
        client = DBOSClient(system_database_url=url)
        rid = run_id()
        run = await start_run(client, "pay", id=rid, model="once", tools=["charge"])
        await wait_for_line(tmp_path / "started", rid)
        worker.kill()
        worker.start()
        messages = await run.result()
        result = messages[2]
        assert isinstance(result, ToolResultMessage) and result.is_error
        assert "is not run again" in text_of(result)
        assert lines(tmp_path / "effects", rid) == []  # never charged twice (nor once)
        assert len(lines(tmp_path / "started", rid)) == 1
        client.destroy()
    finally:
        worker.stop()


async def test_an_approval_decided_while_no_worker_runs(env: tuple[DBOSClient, Worker]) -> None:
    client, worker = env
    rid = run_id()
    run = await start_run(client, "pay", id=rid, model="approval", tools=["pay"])
    with anyio.fail_after(60):
        while len(await run.pending_approvals()) < 2:  # noqa: ASYNC110 (set by the worker)
            await anyio.sleep(0.1)
    worker.kill()  # nothing runs now
    await run.approve("a1")
    await run.deny("a2", "too much")
    worker.start()
    messages = await run.result()
    assert [line[1:] for line in lines(worker.effects / "effects", rid)] == [["a1", "paid", "20"]]
    results = [m for m in messages if isinstance(m, ToolResultMessage)]
    assert [r.is_error for r in results] == [False, True]
    assert "too much" in text_of(results[1])
    check_well_formed([e async for e in run.events()])


async def test_a_question_answered_while_no_worker_runs(env: tuple[DBOSClient, Worker]) -> None:
    from agentcore import ConfigError

    client, worker = env
    rid = run_id()
    run = await start_run(client, "size?", id=rid, model="question", tools=["ask_size"])
    with anyio.fail_after(60):
        while not (waiting := await run.pending_approvals()):  # noqa: ASYNC110
            await anyio.sleep(0.1)
    assert waiting[0].input_schema is not None
    worker.kill()
    with pytest.raises(ConfigError, match="does not match the requested schema"):
        await run.approve("q1", arguments={"size": "XXL"})
    await run.approve("q1", arguments={"size": "M"})
    worker.start()
    messages = await run.result()
    assert text_of(messages[-1]) == "sized"
    assert [line[1:] for line in lines(worker.effects / "effects", rid)] == [
        ["q1", "accept", "{'size':", "'M'}"]
    ]


async def test_a_decision_on_no_waiting_call_is_refused(env: tuple[DBOSClient, Worker]) -> None:
    from agentcore import ConfigError

    client, _worker = env
    rid = run_id()
    run = await start_run(client, "go", id=rid, model="tools", tools=["add", "record"])
    await run.result()
    with pytest.raises(ConfigError, match="no tool call 'zz' waits for a decision"):
        await run.approve("zz")


async def test_abort_during_a_tool(env: tuple[DBOSClient, Worker]) -> None:
    client, worker = env
    rid = run_id()
    run = await start_run(client, "go", id=rid, model="slow-tool", tools=["slow", "record"])
    await wait_for_line(worker.effects / "started", rid)
    await run.abort()
    await run.abort()  # twice changes nothing
    messages = await run.result()  # the run completes, each call with its one result
    assert [m.role for m in messages] == ["user", "assistant", "tool_result"]
    result = messages[2]
    assert isinstance(result, ToolResultMessage) and result.is_error
    assert text_of(result) == "Tool execution was aborted."
    assert lines(worker.effects / "effects", rid) == []  # the running call was cut off
    status = await (await client.retrieve_workflow_async(rid)).get_status()
    assert status.status == "SUCCESS"
    events = [e async for e in run.events()]
    assert events[-1].type == "agent_end"
    check_well_formed(events)


async def test_abort_while_calls_wait_for_approval(env: tuple[DBOSClient, Worker]) -> None:
    client, worker = env
    rid = run_id()
    run = await start_run(client, "pay", id=rid, model="approval", tools=["pay"])
    with anyio.fail_after(60):
        while len(await run.pending_approvals()) < 2:  # noqa: ASYNC110 (set by the worker)
            await anyio.sleep(0.1)
    await run.abort("the user left")
    messages = await run.result()
    results = [m for m in messages if isinstance(m, ToolResultMessage)]
    assert [(r.tool_call_id, r.is_error) for r in results] == [("a1", True), ("a2", True)]
    assert all("aborted while the call waited for approval" in text_of(r) for r in results)
    assert messages[-1].role == "tool_result"  # the model is not asked again
    assert lines(worker.effects / "effects", rid) == []
    assert await run.pending_approvals() == []
    check_well_formed([e async for e in run.events()])


async def test_abort_while_the_answer_streams(env: tuple[DBOSClient, Worker]) -> None:
    client, worker = env
    rid = run_id()
    run = await start_run(client, "tell me", id=rid, model="slow-stream")
    await wait_for_line(worker.effects / "stream-slow-stream", rid)
    await run.abort()
    messages = await run.result()
    assert [m.role for m in messages] == ["user", "assistant"]
    answer = messages[-1]
    assert getattr(answer, "stop_reason", None) == "aborted"
    assert len(lines(worker.effects / "stream-slow-stream", rid)) == 1  # not sent again
    check_well_formed([e async for e in run.events()])


async def test_no_tool_starts_after_an_abort(env: tuple[DBOSClient, Worker]) -> None:
    client, worker = env
    rid = run_id()
    run = await start_run(client, "loop", id=rid, model="gated-loop", tools=["record"])
    marker = worker.effects / "stream-gated-loop"
    with anyio.fail_after(60):
        while not any(line[2] == "1" for line in lines(marker, rid)):  # noqa: ASYNC110
            await anyio.sleep(0.05)
    await run.abort()  # the second answer is held; its tool call must not run
    (worker.effects / f"gate-{rid}").touch()
    messages = await run.result()
    assert [line[1] for line in lines(worker.effects / "effects", rid)] == ["l1"]
    last = messages[-1]
    if isinstance(last, ToolResultMessage):  # the answer came whole: its call is not run
        assert last.tool_call_id == "l2" and last.is_error
        assert text_of(last) == "Tool call was not executed: the run was aborted."
    else:  # the abort was seen while the answer streamed
        assert getattr(last, "stop_reason", None) == "aborted"
    check_well_formed([e async for e in run.events()])


async def test_dbos_cancellation_stays_available(env: tuple[DBOSClient, Worker]) -> None:
    client, worker = env
    rid = run_id()
    run = await start_run(client, "go", id=rid, model="slow-tool", tools=["slow", "record"])
    await wait_for_line(worker.effects / "started", rid)
    await client.cancel_workflow_async(rid)  # DBOS's own: it stops where it is
    with pytest.raises(Exception, match=r"(?i)cancel"):
        await run.result()
    status = await (await client.retrieve_workflow_async(rid)).get_status()
    assert status.status == "CANCELLED"
    assert lines(worker.effects / "effects", rid) == []


def _launched(log: Path) -> bool:
    return log.exists() and "agentcore dbos worker" in log.read_text(errors="replace")


async def test_two_workers_on_postgresql_share_runs(tmp_path: Path) -> None:
    from support.postgres import postgres_url

    url = postgres_url()
    schema = f"dbos_{uuid.uuid4().hex[:8]}"
    workers = [Worker(url, tmp_path, f"pg{i}", schema) for i in (1, 2)]
    client: DBOSClient | None = None
    try:
        workers[0].start()
        with anyio.fail_after(120):
            while not _launched(tmp_path / "worker-pg1.log"):  # noqa: ASYNC110 (the schema)
                await anyio.sleep(0.1)
        workers[1].start()
        with anyio.fail_after(120):
            while not _launched(tmp_path / "worker-pg2.log"):  # noqa: ASYNC110
                await anyio.sleep(0.1)
        client = DBOSClient(system_database_url=url, dbos_system_schema=schema)
        ids = [run_id() for _ in range(8)]
        runs = [
            await start_run(client, "go", id=i, model="tools", tools=["add", "record"]) for i in ids
        ]
        for run in runs:
            messages = await run.result()
            assert text_of(messages[-1]) == "2 + 40 = 42, and I took a note."
        executors = set()
        for i in ids:
            status = await (await client.retrieve_workflow_async(i)).get_status()
            executors.add(status.executor_id)
            assert [line[1] for line in lines(tmp_path / "effects", i)] == ["c2"]
        # both workers took runs from the one queue (each runs one at a time)
        assert executors == {"pg1", "pg2"}
    finally:
        for worker in workers:
            worker.stop()
        if client is not None:
            client.destroy()


def results_of(messages: list[object], name: str) -> list[ToolResultMessage]:
    return [m for m in messages if isinstance(m, ToolResultMessage) and m.tool_name == name]


SKILL_BODY = "Fill the form in three steps"  # of the skill worker_app serves


async def test_a_run_activates_a_skill_and_reads_its_files_on_the_worker(
    env: tuple[DBOSClient, Worker],
) -> None:
    client, _worker = env
    rid = run_id()
    run = await start_run(
        client, "fill", id=rid, model="skills", skills=["forms"], system_prompt="Be careful."
    )
    messages = await run.result()
    first, again = results_of(messages, "activate_skill")
    assert SKILL_BODY in text_of(first) and "references/fields.md" in text_of(first)
    assert again.details == {"skill": "forms", "already_active": True}
    read, link = results_of(messages, "read_skill_file")
    assert text_of(read) == "name, date\n" and not read.is_error
    # the in-process path checks: a link out of the skill's folder is refused, nothing leaks
    assert link.is_error and "leads outside the skill's folder" in text_of(link)
    assert "not for the model" not in text_of(link)
    assert text_of(messages[-1]) == "The form is filled."
    check_well_formed([e async for e in run.events()])


async def test_an_activation_is_not_run_again_after_a_kill(
    env: tuple[DBOSClient, Worker],
) -> None:
    client, worker = env
    rid = run_id()
    run = await start_run(client, "fill", id=rid, model="skills-gated", skills=["forms"])
    marker = worker.effects / "stream-skills-gated"
    with anyio.fail_after(60):
        while not any(line[2] == "1" for line in lines(marker, rid)):  # noqa: ASYNC110
            await anyio.sleep(0.05)
    worker.kill()  # held before its second answer: the activation is checkpointed
    skill = worker.effects / "skills" / "forms" / "SKILL.md"
    skill.write_text(skill.read_text().replace(SKILL_BODY, "CHANGED"))
    assert "CHANGED" in skill.read_text()
    (worker.effects / f"gate-{rid}").touch()
    worker.start()  # loads the changed skill, recovers the run
    messages = await run.result()
    (activation,) = results_of(messages, "activate_skill")
    assert SKILL_BODY in text_of(activation) and "CHANGED" not in text_of(activation)
    (read,) = results_of(messages, "read_skill_file")
    assert text_of(read) == "name, date\n"
    assert text_of(messages[-1]) == "Filled."


async def test_skills_are_checked_before_the_run_is_enqueued(tmp_path: Path) -> None:
    from agentcore.dbos._steps import Registry
    from agentcore.errors import ConfigError

    client: Any = None  # never reached
    with pytest.raises(ConfigError, match="skills must be a list of skill names"):
        await start_run(client, "hi", id="x", model="m", skills="forms")
    with pytest.raises(ConfigError, match="are the skills' own"):
        await start_run(client, "hi", id="x", model="m", tools=["read_skill_file"], skills=["a"])

    @tool
    def activate_skill(name: str) -> str:
        """Pretend to activate.

        Args:
            name: a name.
        """
        return name

    folder = tmp_path / "forms"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: forms\ndescription: Forms.\n---\nFill.\n")
    with pytest.raises(ConfigError, match="'activate_skill' is the skills' own"):
        Registry(tools=[activate_skill], skills=load_skills(folder))
    assert Registry(skills=load_skills(folder)).run_skills(["nope"]) == (
        "no skill named 'nope' is registered on this worker (registered: ['forms'])"
    )
