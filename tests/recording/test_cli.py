"""`agentcore run|chat --record FILE` and `--replay FILE`, as processes: a run recorded against
the fault server, then replayed with the server gone, no key set and the model at a host that does
not exist; a drifted replay exits 1 naming the difference; a missing recording exits 2.

The fault server's model is not in the catalogue, so each process registers it first and then
calls the command's own `main` (the same code as the `agentcore` script)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from llm.fault_server import API_KEY, WIRES, Call, FaultServer
from recording.conftest import UNREACHABLE

WIRE = WIRES["openai-completions"]

SCRIPT = """
import sys
from agentcore.cli import main
from agentcore.llm import register_model
from agentcore.llm.model import Model, ModelCost

register_model(Model(id="gpt-fault", api="openai-completions", provider="openai",
    base_url=sys.argv[1], cost=ModelCost(input=1.0, output=2.0), context_window=200_000,
    max_tokens=4096))
command, *rest = sys.argv[2:]
sys.exit(main([command, "--model", "openai/gpt-fault", *rest]))
"""


def cli(
    tmp_path: Path, base_url: str, *args: str, key: bool, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "cli.py"
    script.write_text(textwrap.dedent(SCRIPT))
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    if key:
        env["OPENAI_API_KEY"] = API_KEY
    env["AGENTCORE_HOME"] = str(tmp_path / "home")
    return subprocess.run(
        [sys.executable, str(script), base_url, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        input=stdin,
    )


def script_answers(server: FaultServer) -> None:
    call = Call("call_1", "calculator", ['{"expression"', ': "6*7"}'])
    server.enqueue(
        WIRE.sse(WIRE.answer(["Let me compute."], call).events),
        WIRE.sse(WIRE.answer(["It is 42."]).events),
    )


def test_run_record_then_replay_offline(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    with FaultServer() as server:
        script_answers(server)
        live = cli(tmp_path, server.base_url("/v1"), "run", "What is 6*7?", "--tools",
                   "--json", "--record", str(path), key=True)  # fmt: skip
        assert live.returncode == 0, live.stderr
        assert len(server.requests) == 2
    text = path.read_text()
    assert API_KEY not in text
    assert len(json.loads(text)["exchanges"]) == 2

    replay = cli(tmp_path, UNREACHABLE + "/v1", "run", "What is 6*7?", "--tools", "--json",
                 "--replay", str(path), key=False)  # fmt: skip
    assert replay.returncode == 0, replay.stderr
    assert _events(replay.stdout) == _events(live.stdout)
    assert '"It is 42."' in replay.stdout or "It is 42." in replay.stdout


def _events(stdout: str) -> list[str]:
    """The types of the JSON Lines events and the texts of their messages (timestamps aside)."""
    shown = []
    for line in stdout.splitlines():
        event = json.loads(line)
        message = event.get("message") or {}
        shown.append(f"{event['type']} {json.dumps(message.get('content'), sort_keys=True)}")
    return shown


def test_a_drifted_replay_exits_1_naming_the_difference(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    with FaultServer() as server:
        script_answers(server)
        live = cli(tmp_path, server.base_url("/v1"), "run", "What is 6*7?", "--tools",
                   "--record", str(path), key=True)  # fmt: skip
        assert live.returncode == 0, live.stderr
    drifted = cli(tmp_path, UNREACHABLE + "/v1", "run", "What is 7*7?", "--tools",
                  "--replay", str(path), key=False)  # fmt: skip
    assert drifted.returncode == 1
    assert "differs from the recording" in drifted.stderr
    assert 'messages[0].content: recorded "What is 6*7?", sent "What is 7*7?"' in drifted.stderr


def test_chat_record_then_replay(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    with FaultServer() as server:
        server.enqueue(WIRE.sse(WIRE.answer(["Hello!"]).events))
        live = cli(tmp_path, server.base_url("/v1"), "chat", "--record", str(path), key=True,
                   stdin="hi\n")  # fmt: skip
        assert live.returncode == 0, live.stderr
    replay = cli(tmp_path, UNREACHABLE + "/v1", "chat", "--replay", str(path), key=False,
                 stdin="hi\n")  # fmt: skip
    assert replay.returncode == 0, replay.stderr
    assert "Hello!" in replay.stdout


def test_a_missing_recording_exits_2(tmp_path: Path) -> None:
    missing = cli(tmp_path, UNREACHABLE + "/v1", "run", "hi", "--replay",
                  str(tmp_path / "none.json"), key=False)  # fmt: skip
    assert missing.returncode == 2
    assert "no recording at" in missing.stderr and "record it first" in missing.stderr


@pytest.mark.parametrize("flags", [["--record", "a.json", "--replay", "b.json"]])
def test_record_and_replay_together_are_refused(tmp_path: Path, flags: list[str]) -> None:
    both = cli(tmp_path, UNREACHABLE + "/v1", "run", "hi", *flags, key=False)
    assert both.returncode == 2
    assert "not allowed with argument" in both.stderr


def _record_run(tmp_path: Path, path: Path) -> None:
    with FaultServer() as server:
        script_answers(server)
        live = cli(tmp_path, server.base_url("/v1"), "run", "What is 6*7?", "--tools",
                   "--record", str(path), key=True)  # fmt: skip
        assert live.returncode == 0, live.stderr


def test_a_drift_is_printed_once(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    _record_run(tmp_path, path)
    drifted = cli(tmp_path, UNREACHABLE + "/v1", "run", "What is 7*7?", "--tools",
                  "--replay", str(path), key=False)  # fmt: skip
    assert drifted.returncode == 1
    head = "request 1 (POST /v1/chat/completions) is not in the recording"
    assert drifted.stderr.count(head) == 1, drifted.stderr
    assert drifted.stderr.count('sent "What is 7*7?"') == 1, drifted.stderr
    assert drifted.stderr.startswith("agentcore: error: the model traffic differs"), drifted.stderr
    assert drifted.stderr.count("agentcore: error:") == 1, drifted.stderr


def test_a_chat_drift_is_printed_once(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    with FaultServer() as server:
        server.enqueue(WIRE.sse(WIRE.answer(["Hello!"]).events))
        live = cli(tmp_path, server.base_url("/v1"), "chat", "--record", str(path), key=True,
                   stdin="hi\n")  # fmt: skip
        assert live.returncode == 0, live.stderr
    drifted = cli(tmp_path, UNREACHABLE + "/v1", "chat", "--replay", str(path), key=False,
                  stdin="hello\n")  # fmt: skip
    assert drifted.returncode == 1
    both = drifted.stdout + drifted.stderr
    assert both.count('sent "hello"') == 1, both
    assert both.count("is not in the recording") == 2, both  # the drift, and the line saying so
    assert "the request is not in the recording (the difference is listed on exit)" in both


def test_record_never_writes_through_a_link_planted_at_its_temporary_name(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.json"
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    planted = tmp_path / "run.json.tmp"
    planted.symlink_to(victim)
    _record_run(tmp_path, path)
    assert victim.read_text() == "precious\n"
    assert planted.is_symlink() and os.readlink(planted) == str(victim)
    assert not path.is_symlink() and len(json.loads(path.read_text())["exchanges"]) == 2
    assert sorted(p.name for p in tmp_path.iterdir() if "run.json" in p.name) == [
        "run.json",
        "run.json.tmp",
    ]  # no temporary file left behind


def test_record_replaces_a_link_at_its_path_instead_of_following_it(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    path.symlink_to(victim)
    _record_run(tmp_path, path)
    assert victim.read_text() == "precious\n"
    assert not path.is_symlink() and len(json.loads(path.read_text())["exchanges"]) == 2


def test_a_recording_nested_too_deep_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"version": 1, "exchanges": ' + "[" * 100_000 + "]" * 100_000 + "}")
    done = cli(tmp_path, UNREACHABLE + "/v1", "run", "hi", "--replay", str(path), key=False)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        f"agentcore: error: cannot read the recording {path}: it nests 100,001 levels deep; "
        "a recording nests at most 200\n"
    )
