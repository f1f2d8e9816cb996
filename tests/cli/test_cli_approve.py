"""The CLI's approval parts: `/approve` and `/deny` (cli/_approve.py) on a real Agent, the
`shell` tool of `chat --shell` (cli/_shell.py), and the `--shell` option."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentcore import Agent, ToolResultMessage
from agentcore.cli._approve import decide, is_approval_command, pending_notice
from agentcore.cli._args import Parsed, parse_args
from agentcore.cli._shell import OUTPUT_LIMIT, run_command, shell_tool
from agentcore.llm import register_model
from agentcore.messages import ToolCall
from agentcore.testing import FauxProvider, faux_message, faux_text
from support import texts

pytestmark = pytest.mark.anyio


def shell_calls(*commands: str) -> Any:
    return faux_message(
        *(
            ToolCall(id=f"s{i}", name="shell", arguments={"command": c})
            for i, c in enumerate(commands)
        )
    )


async def stopped_agent(tmp_path: Path, *commands: str) -> Agent:
    faux = FauxProvider([shell_calls(*commands), faux_text("done")])
    agent = Agent(initial_state={"model": faux.model, "tools": [shell_tool(tmp_path)]})
    await agent.prompt("go")
    return agent


def test_is_approval_command() -> None:
    assert is_approval_command("/approve")
    assert is_approval_command("/deny s1 too risky")
    assert not is_approval_command("/approved")
    assert not is_approval_command("approve")
    assert not is_approval_command("   ")


async def test_one_waiting_call_approve_without_an_id_then_continue(tmp_path: Path) -> None:
    agent = await stopped_agent(tmp_path, "echo hello > out.txt")
    assert pending_notice(agent) == (
        "waiting for approval:\n  s0  shell: $ echo hello > out.txt\n"
        "/approve runs it, /deny [REASON] refuses it"
    )
    assert not (tmp_path / "out.txt").exists()  # nothing ran before the approval
    outcome = decide(agent, "/approve")
    assert outcome.text == "approved shell (s0)"
    assert outcome.ready and not outcome.is_error
    await agent.continue_()
    assert (tmp_path / "out.txt").read_text() == "hello\n"
    result = next(m for m in agent.state.messages if isinstance(m, ToolResultMessage))
    assert texts(result) == "exit code 0\n"
    assert pending_notice(agent) is None


async def test_deny_with_a_reason_and_several_waiting_calls(tmp_path: Path) -> None:
    agent = await stopped_agent(tmp_path, "touch a", "touch b")
    assert (pending_notice(agent) or "").startswith("2 calls wait for approval:")
    outcome = decide(agent, "/deny not now")
    assert outcome.is_error and "2 calls wait: say which, e.g. /deny s0" in outcome.text
    outcome = decide(agent, "/deny s1 b is not needed")
    assert outcome.text.startswith("denied shell (s1)\nwaiting for approval:\n  s0")
    assert not outcome.ready
    outcome = decide(agent, "/approve s0")
    assert outcome.ready
    await agent.continue_()
    assert (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    results = {m.tool_call_id: m for m in agent.state.messages if isinstance(m, ToolResultMessage)}
    assert "b is not needed" in texts(results["s1"]) and results["s1"].is_error


async def test_refused_lines_decide_nothing(tmp_path: Path) -> None:
    faux = FauxProvider([faux_text("hi")])
    agent = Agent(initial_state={"model": faux.model, "tools": [shell_tool(tmp_path)]})
    await agent.prompt("hello")
    assert decide(agent, "/approve").text == "no tool call waits for approval"
    agent = await stopped_agent(tmp_path, "true")
    for line, error in [
        ("/approve nope", "unknown call id: 'nope'; waiting: s0"),
        ("/approve s0 extra", "/approve takes one call id: 'extra'"),
    ]:
        outcome = decide(agent, line)
        assert outcome.is_error and error in outcome.text
    assert len(agent.state.pending_approvals) == 1


async def test_the_shell_tool_always_asks_for_approval(tmp_path: Path) -> None:
    shell = shell_tool(tmp_path)
    assert shell.name == "shell" and shell.requires_approval is True
    with pytest.raises(NotADirectoryError):
        shell_tool(tmp_path / "missing")


async def test_shell_output_exit_code_and_directory(tmp_path: Path) -> None:
    where = os.path.realpath(tmp_path)  # noqa: ASYNC240
    result = await run_command("pwd; echo oops >&2; exit 3", tmp_path, 10)
    assert result.is_error
    assert texts(result) == f"exit code 3\n{where}\noops\n"


async def test_shell_output_is_clipped(tmp_path: Path) -> None:
    result = await run_command(f"head -c {3 * OUTPUT_LIMIT} /dev/zero | tr '\\0' x", tmp_path, 10)
    text = texts(result)
    assert len(text) < OUTPUT_LIMIT + 100
    assert f"[... {2 * OUTPUT_LIMIT} characters cut ...]" in text


async def test_a_command_past_its_timeout_is_killed_with_its_children(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    command = f"sleep 30 & echo $! > {pid_file}; echo started; wait"
    result = await run_command(command, tmp_path, 2)
    assert result.is_error and texts(result).startswith("timed out after 2 s; output:\nstarted")
    child = int(pid_file.read_text())
    with anyio.fail_after(5):
        while _alive(child):  # noqa: ASYNC110  (polling another process)
            await anyio.sleep(0.01)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (killed, not yet reaped by init) counts as gone
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_shell_is_a_chat_option() -> None:
    out, err = io.StringIO(), io.StringIO()
    parsed = parse_args(["chat", "--shell"], out, err)
    assert isinstance(parsed, Parsed) and parsed.shell
    parsed = parse_args(["chat"], out, err)
    assert isinstance(parsed, Parsed) and not parsed.shell
    assert parse_args(["run", "--shell", "hi"], out, err) == 2  # only the chat can approve


def test_the_shell_tool_reaches_the_chat(tmp_path: Path) -> None:
    from agentcore.cli import main

    faux = FauxProvider([faux_text("hi")])
    register_model(faux.model)
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["chat", "--shell", "--root", str(tmp_path), "-m", f"{faux.provider_id}/{faux.model.id}"],
        stdin=io.StringIO("hello\n"),
        stdout=out,
        stderr=err,
    )
    assert code == 0, err.getvalue()
    assert [t.name for t in faux.calls[0].context.tools] == ["shell"]


def test_a_call_waiting_for_approval_is_not_labelled_ok(tmp_path: Path) -> None:
    """Issue 26: a shell call that never ran was shown as `[shell ok]`."""
    from agentcore.cli import main

    faux = FauxProvider([shell_calls("echo hi"), faux_text("done")])
    register_model(faux.model)
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["chat", "--shell", "--root", str(tmp_path), "-m", f"{faux.provider_id}/{faux.model.id}"],
        stdin=io.StringIO("say hi\n/deny\n"),
        stdout=out,
        stderr=err,
    )
    assert code == 0, err.getvalue()
    assert "[shell waiting for approval]" in err.getvalue()
    assert "[shell ok]" not in err.getvalue()


def test_the_cli_knows_the_waiting_text_of_the_loop() -> None:
    from agentcore._engine.approval_gate import WAITING
    from agentcore.cli._render import _WAITING

    assert _WAITING == WAITING


async def test_an_abort_kills_a_running_command_and_its_children(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    command = f"sleep 30 & echo $! > {pid_file}.tmp; mv {pid_file}.tmp {pid_file}; wait"
    async with anyio.create_task_group() as group:
        group.start_soon(run_command, command, tmp_path, 60)
        with anyio.fail_after(10):
            while not pid_file.exists():  # noqa: ASYNC110  (another process)
                await anyio.sleep(0.01)
        group.cancel_scope.cancel()  # what an abort does to a running tool
    child = int(pid_file.read_text())
    with anyio.fail_after(30):
        while _alive(child):  # noqa: ASYNC110  (polling another process)
            await anyio.sleep(0.01)


def test_the_chat_approves_and_denies_waiting_calls(tmp_path: Path) -> None:
    """The chat lists the calls a run stopped for; /approve runs one, /deny refuses the next,
    and each decision that leaves nothing waiting continues the run."""
    from agentcore.cli import main

    faux = FauxProvider(
        [
            shell_calls("echo approved-ran > a.txt"),
            shell_calls("echo denied-ran > b.txt"),
            faux_text("all done"),
        ]
    )
    register_model(faux.model)
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["chat", "--shell", "--root", str(tmp_path), "-m", f"{faux.provider_id}/{faux.model.id}"],
        stdin=io.StringIO("write the files\n/approve\n/deny not that one\n/help\n"),
        stdout=out,
        stderr=err,
    )
    assert code == 0, err.getvalue()
    assert (tmp_path / "a.txt").read_text() == "approved-ran\n"
    assert not (tmp_path / "b.txt").exists()
    assert "all done" in out.getvalue()
    assert "/approve" in out.getvalue() + err.getvalue()  # the waiting call was announced
    last = faux.calls[-1].context.messages
    results = [m for m in last if isinstance(m, ToolResultMessage)]
    assert [r.is_error for r in results] == [False, True]
    assert "not that one" in texts(results[1])


def test_a_call_approved_elsewhere_runs_only_as_decided_here(tmp_path: Path) -> None:
    """`chat --continue --shell` on a session whose waiting call was approved, with edited
    arguments, by another agent (a web server with a `shell` of its own): the decision is set
    aside and said; `/approve` here runs the command the model asked for, never the edit."""
    from agentcore.cli import main
    from agentcore.cli._store import open_store

    faux = FauxProvider([shell_calls("echo asked > asked.txt"), faux_text("done")])
    register_model(faux.model)
    model = ["-m", f"{faux.provider_id}/{faux.model.id}"]
    shell = ["--shell", "--root", str(tmp_path)]
    out, err = io.StringIO(), io.StringIO()
    assert main(["chat", *shell, *model], stdin=io.StringIO("go\n"), stdout=out, stderr=err) == 0
    with open_store(None) as store:
        (info,) = store.list()
        session = store.open(info.id)
        elsewhere = Agent(initial_state={"tools": [shell_tool(tmp_path)]}, session=session)
        elsewhere.approve("s0", arguments={"command": "touch edited"}, decided_by="web")
        session.close()
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["chat", "--continue", *shell, *model],
        stdin=io.StringIO("/approve\n"),
        stdout=out,
        stderr=err,
    )
    assert code == 0, err.getvalue()
    shown = out.getvalue() + err.getvalue()
    assert (
        "s0 (shell) was approved by web with edited arguments:\n    s0  shell: $ touch edited"
        in (shown)
    )
    assert (tmp_path / "asked.txt").read_text() == "asked\n"
    assert not (tmp_path / "edited").exists()
    assert "done" in out.getvalue()


def test_the_cli_knows_the_waiting_for_input_text_of_the_loop() -> None:
    from agentcore._engine.input_wait import WAITING_FOR_INPUT
    from agentcore.cli._render import _WAITING_FOR_INPUT

    assert _WAITING_FOR_INPUT == WAITING_FOR_INPUT
