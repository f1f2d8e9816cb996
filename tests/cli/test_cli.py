"""The `agentcore` command, driven in-process through `main(argv, stdin=, stdout=, stderr=)` with
the faux provider, plus a few subprocess runs (`--help`, Ctrl-C) and one against the local model.
"""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

import agentcore
import agentcore.cli
from agentcore import AssistantMessage, ToolResultMessage, UserMessage
from agentcore.cli import main
from agentcore.llm import get_model, register_model
from agentcore.messages import from_json
from agentcore.testing import (
    FauxProvider,
    faux_error,
    faux_text,
    faux_thinking,
    faux_tool_call,
)

from .harness import Result, cli

FAUX_SCRIPT_HEADER = """\
import sys
from agentcore.cli import main
from agentcore.llm import register_model
from agentcore.testing import FauxProvider, faux_text
"""


def check_sequence(events: list[dict[str, Any]]) -> None:
    """The JSON events form one well-nested run: agent_start … agent_end."""
    types = [e["type"] for e in events]
    assert types[0] == "agent_start" and types[-1] == "agent_end", types
    assert types.count("agent_start") == 1 and types.count("agent_end") == 1
    in_turn = open_message = False
    running: set[str] = set()
    for event in events[1:-1]:
        kind = event["type"]
        if kind == "turn_start":
            assert not in_turn
            in_turn = True
        elif kind == "turn_end":
            assert in_turn and not open_message and not running
            in_turn = False
        elif kind == "message_start":
            assert in_turn and not open_message
            open_message = True
        elif kind == "message_update":
            assert open_message
        elif kind == "message_end":
            assert open_message
            open_message = False
        elif kind == "tool_execution_start":
            assert in_turn and event["tool_call_id"] not in running
            running.add(event["tool_call_id"])
        elif kind == "tool_execution_end":
            running.remove(event["tool_call_id"])
        else:
            assert kind == "tool_execution_update", kind
    assert not in_turn and not open_message


def test_public_surface() -> None:
    assert agentcore.cli.__all__ == ["main"]


# --- run ---------------------------------------------------------------------------------------


def test_run_prints_the_answer(faux: FauxProvider) -> None:
    faux.set_responses([faux_text("Hello from faux!")])
    result = cli("run", "hi", faux=faux)
    assert result.code == 0, result.err
    assert result.out == "Hello from faux!\n"
    assert result.err == ""
    assert faux.calls[0].context.messages == [
        UserMessage(content="hi", timestamp=faux.calls[0].context.messages[0].timestamp)
    ]


def test_run_reads_the_prompt_from_stdin(faux: FauxProvider) -> None:
    faux.set_responses([faux_text("ok")])
    result = cli("run", "-", stdin="a prompt\nover two lines\n", faux=faux)
    assert result.code == 0, result.err
    assert faux.calls[0].context.messages[0].content == "a prompt\nover two lines\n"


def test_run_shows_thinking_on_stderr_and_the_answer_on_stdout(faux: FauxProvider) -> None:
    faux.set_responses([faux_thinking("pondering deeply", "The answer.")])
    result = cli("run", "think", "--thinking", "high", faux=faux)
    assert result.code == 0, result.err
    assert result.out == "The answer.\n"
    assert "pondering deeply" in result.err and "pondering" not in result.out


def test_run_passes_the_options_to_the_request(faux: FauxProvider) -> None:
    faux.set_responses([faux_text("ok")])
    result = cli(
        "run",
        "hi",
        "--system",
        "Be brief.",
        "--thinking",
        "low",
        "--max-tokens",
        "77",
        "--temperature",
        "0.3",
        faux=faux,
    )
    assert result.code == 0, result.err
    call = faux.calls[0]
    assert call.context.system_prompt == "Be brief."
    assert call.context.tools == []
    assert call.options.max_tokens == 77
    assert call.options.temperature == 0.3
    assert call.options.reasoning == "low"  # type: ignore[attr-defined]


def test_run_json_writes_a_well_formed_event_sequence(faux: FauxProvider) -> None:
    faux.set_responses([faux_thinking("hmm", "Hello, JSON world!")])
    result = cli("run", "hi", "--json", faux=faux)
    assert result.code == 0, result.err
    events = result.json_lines()
    check_sequence(events)
    types = [e["type"] for e in events]
    assert types[:4] == ["agent_start", "turn_start", "message_start", "message_end"]
    updates = [e["assistant_message_event"] for e in events if e["type"] == "message_update"]
    assert all("partial" not in u and "message" not in u for u in updates)
    assert updates[0] == {"type": "thinking_start", "content_index": 0}
    assert updates[-1] == {"type": "text_end", "content_index": 1, "content": "Hello, JSON world!"}
    text = "".join(u["delta"] for u in updates if u["type"] == "text_delta")
    thinking = "".join(u["delta"] for u in updates if u["type"] == "thinking_delta")
    assert (text, thinking) == ("Hello, JSON world!", "hmm")
    # messages are written with to_json and read back with from_json
    end = [from_json(m) for m in events[-1]["messages"]]
    assert isinstance(end[0], UserMessage) and end[0].content == "hi"
    assert isinstance(end[1], AssistantMessage) and end[1].text == "Hello, JSON world!"
    assert from_json(events[-2]["message"]) == end[1]  # turn_end


def test_run_with_tools_reads_a_file(faux: FauxProvider, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("the secret is 42\n")
    faux.set_responses(
        [faux_tool_call("read_file", {"path": "notes.txt"}, text="Let me look."), faux_text("42")]
    )
    result = cli("run", "what is the secret?", "--tools", "--root", str(tmp_path), faux=faux)
    assert result.code == 0, result.err
    assert result.out == "Let me look.\n42\n"
    assert "[tool] read_file" in result.err and "the secret is 42" in result.err
    assert [t.name for t in faux.calls[0].context.tools] == [
        "read_file",
        "list_files",
        "calculator",
    ]
    tool_result = faux.calls[1].context.messages[-1]
    assert isinstance(tool_result, ToolResultMessage) and not tool_result.is_error
    text = tool_result.content[0].text  # type: ignore[union-attr]
    assert text == "notes.txt has 1 line:\nthe secret is 42"


def test_run_with_tools_json(faux: FauxProvider, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.py").write_text("print('a')\n")
    faux.set_responses(
        [
            faux_tool_call("list_files", {"path": ".", "recursive": True}),
            faux_tool_call("calculator", {"expression": "6 * 7"}),
            faux_text("done"),
        ]
    )
    result = cli("run", "go", "--tools", "--json", "--root", str(tmp_path), faux=faux)
    assert result.code == 0, result.err
    events = result.json_lines()
    check_sequence(events)
    ends = [e for e in events if e["type"] == "tool_execution_end"]
    assert [e["tool_name"] for e in ends] == ["list_files", "calculator"]
    assert [e["result"]["content"][0]["text"] for e in ends] == ["sub/\nsub/a.py", "6 * 7 = 42"]
    starts = [e for e in events if e["type"] == "tool_execution_start"]
    assert starts[1]["args"] == {"expression": "6 * 7"}
    assert sum(e["type"] == "turn_start" for e in events) == 3


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "link/passwd"])
def test_file_tools_stay_inside_the_root(faux: FauxProvider, tmp_path: Path, path: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "outside.txt").write_text("not yours")
    (root / "link").symlink_to("/etc")
    faux.set_responses([faux_tool_call("read_file", {"path": path}), faux_text("ok")])
    result = cli("run", "read it", "--tools", "--root", str(root), faux=faux)
    assert result.code == 0, result.err
    tool_result = faux.calls[1].context.messages[-1]
    assert isinstance(tool_result, ToolResultMessage) and tool_result.is_error
    assert "outside the working directory" in tool_result.content[0].text  # type: ignore[union-attr]


def test_the_tools_root_must_be_a_directory(faux: FauxProvider, tmp_path: Path) -> None:
    result = cli("run", "hi", "--tools", "--root", str(tmp_path / "missing"), faux=faux)
    assert result.code == 2
    assert result.err.startswith("agentcore: error:") and "not a directory" in result.err


# --- failures ------------------------------------------------------------------------------------


def test_error_stop_reason_exits_1_with_the_message(faux: FauxProvider) -> None:
    faux.set_responses([faux_error("the model fell over")])
    result = cli("run", "hi", faux=faux)
    assert result.code == 1
    assert result.err == "agentcore: error: the model fell over\n"


def test_error_stop_reason_in_json_mode(faux: FauxProvider) -> None:
    faux.set_responses([faux_error("boom")])
    result = cli("run", "hi", "--json", faux=faux)
    assert result.code == 1
    assert result.err == "agentcore: error: boom\n"
    events = result.json_lines()
    check_sequence(events)
    last = from_json(events[-1]["messages"][-1])
    assert isinstance(last, AssistantMessage) and last.stop_reason == "error"


def test_unknown_model_exits_2() -> None:
    result = cli("run", "hi", "--model", "local/no-such-model")
    assert result.code == 2
    assert result.out == ""
    assert result.err.count("\n") == 1
    assert result.err.startswith("agentcore: error: unknown model 'no-such-model'")


def test_unknown_provider_exits_2() -> None:
    result = cli("run", "hi", "--model", "nowhere/model")
    assert (result.code, result.out) == (2, "")
    assert "unknown provider 'nowhere'" in result.err


def test_model_from_the_environment(faux: FauxProvider, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCORE_MODEL", f"{faux.provider_id}/faux-1")
    faux.set_responses([faux_text("from env")])
    assert cli("run", "hi") == Result(0, "from env\n", "")


def test_missing_api_key_exits_2(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("openai")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = cli("run", "hi", "--model", "openai/gpt-4o-mini")
    assert (result.code, result.out) == (2, "")
    assert result.err.count("\n") == 1 and "OPENAI_API_KEY" in result.err


@pytest.mark.parametrize("command", ["run", "chat"])
def test_missing_api_key_names_the_variable_to_set(
    command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 26: the text told a CLI user to "pass api_key in the stream options"."""
    pytest.importorskip("openai")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    args = ("run", "hi") if command == "run" else ("chat",)
    result = cli(*args, "--model", "openai/gpt-4o-mini")
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        "agentcore: error: no API key for provider 'openai' (model 'gpt-4o-mini'): set the "
        "environment variable OPENAI_API_KEY (in code, api_key=... works too)\n"
    )


def test_unreachable_server_exits_1() -> None:
    pytest.importorskip("openai")
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    model = replace(
        get_model("local", "qwen2.5-coder-1.5b"),
        provider="cli-test-unreachable",
        base_url=f"http://127.0.0.1:{port}/v1",
    )
    register_model(model)
    result = cli("run", "hi", "--model", f"cli-test-unreachable/{model.id}")
    assert (result.code, result.out) == (1, "")
    assert result.err.startswith("agentcore: error: ") and result.err.count("\n") == 1
    assert "connect" in result.err.lower()


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["fly"],
        ["run"],
        ["run", "hi", "--thinking", "lots"],
        ["run", "hi", "--max-tokens", "0"],
        ["run", "hi", "--temperature", "hot"],
        ["run", "hi", "--model", "no-slash"],
    ],
)
def test_usage_errors_exit_2(argv: list[str]) -> None:
    result = cli(*argv)
    assert result.code == 2
    assert result.out == ""
    assert result.err


def test_empty_prompt_exits_2(faux: FauxProvider) -> None:
    result = cli("run", "-", stdin="  \n", faux=faux)
    assert result.code == 2 and "empty" in result.err
    assert faux.calls == []


class ClosedAfter(io.StringIO):
    """A stdout whose reader goes away after `lines` lines (like `| head -n lines`)."""

    def __init__(self, lines: int) -> None:
        super().__init__()
        self.lines = lines

    def write(self, text: str) -> int:
        if self.getvalue().count("\n") >= self.lines:
            raise BrokenPipeError(32, "Broken pipe")
        return super().write(text)


@pytest.mark.parametrize("command", ["run", "chat"])
def test_a_closed_stdout_ends_the_command_quietly(faux: FauxProvider, command: str) -> None:
    faux.set_responses([faux_text("one\ntwo\nthree\n" * 50), faux_text("never")])
    out, err = ClosedAfter(2), io.StringIO()
    argv = [command, "--model", f"{faux.provider_id}/faux-1"]
    argv += ["go"] if command == "run" else []
    code = main(argv, stdin=io.StringIO("go\nagain\n"), stdout=out, stderr=err)
    assert (code, err.getvalue()) == (141, "")
    assert out.getvalue().startswith("one\ntwo\n") and len(out.getvalue()) < 100
    assert len(faux.calls) == 1  # the chat ended too


# --- models ------------------------------------------------------------------------------------


def test_models_lists_the_catalogue() -> None:
    result = cli("models")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0].split()[:3] == ["MODEL", "CONTEXT", "THINKING"]
    refs = {line.split()[0] for line in lines[1:]}
    assert {"local/qwen2.5-coder-1.5b", "anthropic/claude-sonnet-4-5"} <= refs


def test_models_of_one_provider_as_json() -> None:
    result = cli("models", "local", "--json")
    assert result.code == 0, result.err
    models = result.json_lines()
    assert [m["ref"] for m in models] == ["local/qwen2.5-coder-1.5b"]
    assert models[0]["api"] == "openai-completions" and models[0]["context_window"] == 8192


def test_models_of_an_unknown_provider_exits_2() -> None:
    result = cli("models", "nowhere")
    assert (result.code, result.out) == (2, "")
    assert "unknown provider 'nowhere'" in result.err


# --- chat --------------------------------------------------------------------------------------


def contents(faux: FauxProvider, call: int) -> list[Any]:
    """What the model saw in request `call`: (role, text) pairs."""
    out: list[Any] = []
    for m in faux.calls[call].context.messages:
        text = m.content if isinstance(m.content, str) else "".join(b.text for b in m.content)
        out.append((m.role, text))
    return out


def test_chat_keeps_the_transcript_and_resets(faux: FauxProvider) -> None:
    faux.set_responses([faux_text("Hello!"), faux_text("Still here."), faux_text("Bye!")])
    result = cli("chat", stdin="hi\nhow are you?\n/reset\nbye\n", faux=faux)
    assert result.code == 0, result.err
    assert result.out == "Hello!\nStill here.\nBye!\n"
    assert "(conversation cleared)" in result.err
    assert contents(faux, 0) == [("user", "hi")]
    assert contents(faux, 1) == [("user", "hi"), ("assistant", "Hello!"), ("user", "how are you?")]
    assert contents(faux, 2) == [("user", "bye")]


def test_chat_json(faux: FauxProvider) -> None:
    faux.set_responses([faux_text("one"), faux_text("two")])
    result = cli("chat", "--json", stdin="a\nb\n", faux=faux)
    assert result.code == 0, result.err
    events = result.json_lines()
    split = [i for i, e in enumerate(events) if e["type"] == "agent_end"]
    assert len(split) == 2
    check_sequence(events[: split[0] + 1])
    check_sequence(events[split[0] + 1 :])


def test_chat_commands(faux: FauxProvider) -> None:
    other = FauxProvider([faux_text("from the other model")])
    register_model(other.model)
    faux.set_responses([faux_text("first")])
    lines = [
        "first question",
        "/model",
        f"/model {other.provider_id}/faux-1",
        "/model nowhere/x",
        "/frobnicate",
        "/help",
        "",
        "second question",
        "/exit",
        "never sent",
    ]
    result = cli("chat", stdin="\n".join(lines) + "\n", faux=faux)
    assert result.code == 0, result.err
    assert result.out == "first\nfrom the other model\n"
    assert f"(model: {faux.provider_id}/faux-1)" in result.err
    assert f"(model: {other.provider_id}/faux-1)" in result.err
    assert "unknown provider 'nowhere'" in result.err
    assert "unknown command /frobnicate" in result.err
    assert "/reset" in result.err  # the help
    assert (len(faux.calls), len(other.calls)) == (1, 1)
    assert contents(other, 0)[0] == ("user", "first question")  # the transcript was kept


def test_chat_reports_a_failed_answer_and_goes_on(faux: FauxProvider) -> None:
    faux.set_responses([faux_error("rate limited"), faux_text("better now")])
    result = cli("chat", stdin="one\ntwo\n", faux=faux)
    assert result.code == 0
    assert result.out == "better now\n"
    assert "error: rate limited" in result.err


def test_chat_with_tools(faux: FauxProvider, tmp_path: Path) -> None:
    faux.set_responses([faux_tool_call("calculator", {"expression": "2**5"}), faux_text("32")])
    result = cli("chat", "--tools", "--root", str(tmp_path), stdin="2**5?\n", faux=faux)
    assert result.code == 0, result.err
    assert result.out == "32\n"
    assert "[tool] calculator" in result.err and "[calculator ok]" in result.err


def test_one_more_line_is_singular(faux: FauxProvider, tmp_path: Path) -> None:
    """Issue 26: "… (1 more lines)"."""
    for name in ("a", "b", "c", "d"):
        (tmp_path / name).write_text(name)
    faux.set_responses([faux_tool_call("list_files", {}), faux_text("four")])
    result = cli("run", "list", "--tools", "--root", str(tmp_path), faux=faux)
    assert result.code == 0, result.err
    [listing] = [m for m in faux.calls[1].context.messages if isinstance(m, ToolResultMessage)]
    assert len(listing.content[0].text.splitlines()) == 4  # type: ignore[union-attr]
    assert "… (1 more line)" in result.err and "more lines" not in result.err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    result = cli("--version")
    assert result.code == 0 and result.err == ""
    assert result.out == f"agentcore {agentcore.__version__} (Python {sys.version.split()[0]})\n"


# --- as a process --------------------------------------------------------------------------------


def test_python_m_agentcore_cli_help() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "agentcore.cli", "--help"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    assert "usage: agentcore" in proc.stdout
    for command in ("chat", "run", "models"):
        assert command in proc.stdout


def _faux_script(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "faux_cli.py"
    script.write_text(FAUX_SCRIPT_HEADER + textwrap.dedent(body))
    return script


@contextmanager
def _popen(script: Path, **kwargs: Any) -> Iterator[subprocess.Popen[str]]:
    """Run `script` with the test's Python; killed if the test fails before it exits."""
    proc = subprocess.Popen(
        [sys.executable, str(script)], stderr=subprocess.PIPE, text=True, **kwargs
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def _wait_for(predicate: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_stops_a_run(tmp_path: Path) -> None:
    script = _faux_script(
        tmp_path,
        """
        faux = FauxProvider([faux_text("word " * 500)], tokens_per_second=50, chunk_chars=4)
        register_model(faux.model)
        sys.exit(main(["run", "--model", f"{faux.provider_id}/faux-1", "go"]))
        """,
    )
    out_path = tmp_path / "out.txt"
    with out_path.open("w") as out, _popen(script, stdout=out) as proc:
        _wait_for(lambda: out_path.stat().st_size > 0)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    assert "(stopped)" in err and "Traceback" not in err
    assert 0 < len(out_path.read_text()) < len("word " * 500)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_in_chat_stops_the_answer_but_not_the_chat(tmp_path: Path) -> None:
    script = _faux_script(
        tmp_path,
        """
        faux = FauxProvider(
            [faux_text("word " * 500), faux_text("second answer")],
            tokens_per_second=50,
            chunk_chars=4,
        )
        register_model(faux.model)
        code = main(["chat", "--model", f"{faux.provider_id}/faux-1"])
        roles = [m.role for m in faux.calls[-1].context.messages]
        print("\\nexit", code, "roles", roles)
        sys.exit(code)
        """,
    )
    out_path = tmp_path / "out.txt"
    with out_path.open("w") as out, _popen(script, stdout=out, stdin=subprocess.PIPE) as proc:
        assert proc.stdin is not None
        proc.stdin.write("first\n")
        proc.stdin.flush()
        _wait_for(lambda: out_path.stat().st_size > 0)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.3)
        _, err = proc.communicate(input="second\n", timeout=20)
    output = out_path.read_text()
    assert proc.returncode == 0, err
    assert "(stopped)" in err and "Traceback" not in err
    assert "second answer" in output
    # the stopped answer stays in the transcript (providers skip aborted turns when replaying)
    assert "roles ['user', 'assistant', 'user']" in output


# --- the local model (scripts/local-model) -----------------------------------------------------


def _local_model_skip_reason() -> str | None:
    reason = os.environ.get("AGENTCORE_LOCAL_MODEL_UNAVAILABLE")
    if reason:
        return f"local model unavailable: {reason}"
    try:
        if httpx.get("http://127.0.0.1:18080/health", timeout=1).status_code == 200:
            return None
    except httpx.HTTPError:
        pass
    return "local model server not running (scripts/local-model start)"


@pytest.mark.local_llm
@pytest.mark.timeout(180)
def test_local_model_run_json() -> None:
    reason = _local_model_skip_reason()
    if reason is not None:
        pytest.skip(reason)
    result = cli("run", "--json", "--max-tokens", "40", "--temperature", "0", "Say hi")
    assert result.code == 0, result.err
    events = result.json_lines()
    check_sequence(events)
    final = from_json(events[-1]["messages"][-1])
    assert isinstance(final, AssistantMessage)
    assert final.provider == "local" and final.model == "qwen2.5-coder-1.5b"
    assert final.stop_reason in ("stop", "length") and final.text.strip()
    assert final.usage.output > 0
    deltas = [
        e["assistant_message_event"]["delta"]
        for e in events
        if e["type"] == "message_update" and e["assistant_message_event"]["type"] == "text_delta"
    ]
    assert "".join(deltas) == final.text


# --- bounds --------------------------------------------------------------------------------------


def calculating(n: int) -> list[AssistantMessage]:
    """A model that asks the calculator `n` times."""
    return [faux_tool_call("calculator", {"expression": "1+1"}) for _ in range(n)]


def test_max_turns_ends_the_run_and_says_so(faux: FauxProvider) -> None:
    faux.set_responses([*calculating(5), faux_text("never")])
    result = cli("run", "go", "--tools", "--max-turns", "2", faux=faux)
    assert result.code == 3, result.err
    assert faux.call_count == 2
    assert result.err.endswith(
        "agentcore: the run stopped: max_turns reached: 2 of 2 turns (set with --max-turns)\n"
    )


def test_the_json_agent_end_carries_the_limit(faux: FauxProvider) -> None:
    faux.set_responses([*calculating(5), faux_text("never")])
    result = cli("run", "go", "--tools", "--json", "--max-turns", "3", faux=faux)
    assert result.code == 3
    events = result.json_lines()
    check_sequence(events)
    assert events[-1]["limit"] == {"kind": "max_turns", "limit": 3, "used": 3}
    assert "max_turns reached: 3 of 3 turns" in result.err

    faux.set_responses([faux_text("fine")])
    result = cli("run", "go", "--json", faux=faux)
    assert result.code == 0 and result.json_lines()[-1]["limit"] is None


def test_usage_limits_from_the_command_line(faux: FauxProvider) -> None:
    # the faux provider estimates 4 characters a token: '{"expression": "1+1"}' is 6 tokens
    faux.set_responses([*calculating(5), faux_text("never")])
    result = cli("run", "go", "--tools", "--max-output-tokens", "10", faux=faux)
    assert result.code == 3 and faux.call_count == 2
    assert (
        "output_tokens limit reached: 12 tokens used of 10 (set with --max-output-tokens)"
        in result.err
    )


@pytest.mark.parametrize("off", ["0", "none"])
def test_a_bound_can_be_turned_off(faux: FauxProvider, off: str) -> None:
    faux.set_responses([*calculating(4), faux_text("2")])
    result = cli("run", "go", "--tools", "--max-turns", off, "--tool-timeout", off, faux=faux)
    assert result.code == 0, result.err
    assert result.out.endswith("2\n") and faux.call_count == 5
    assert "stopped" not in result.err


def test_the_request_bounds_reach_every_request(faux: FauxProvider) -> None:
    faux.set_responses([*calculating(1), faux_text("2")])
    result = cli(
        "run",
        "go",
        "--tools",
        "--request-timeout",
        "12.5",
        "--idle-timeout",
        "none",
        "--max-retries",
        "0",
        faux=faux,
    )
    assert result.code == 0, result.err
    assert [
        (c.options.request_timeout, c.options.idle_timeout, c.options.max_retries)
        for c in faux.calls
    ] == [(12.5, None, 0), (12.5, None, 0)]
    faux.set_responses([faux_text("ok")])
    faux.calls.clear()
    assert cli("run", "go", faux=faux).code == 0
    options = faux.calls[0].options
    assert (options.request_timeout, options.idle_timeout, options.max_retries) == (300, 300, 3)


def test_the_bounds_are_parsed_with_their_defaults() -> None:
    from agentcore.cli._args import parse_args

    out, err = io.StringIO(), io.StringIO()
    parsed = parse_args(["run", "hi"], out, err)
    assert not isinstance(parsed, int)
    assert (parsed.max_turns, parsed.tool_timeout, parsed.request_timeout) == (100, 600, 300)
    assert (parsed.idle_timeout, parsed.max_retries) == (300, 3)
    assert (parsed.max_cost, parsed.max_input_tokens, parsed.max_output_tokens) == (None,) * 3
    parsed = parse_args(
        ["chat", "--max-cost", "0.25", "--max-input-tokens", "5000", "--tool-timeout", "1.5"],
        out,
        err,
    )
    assert not isinstance(parsed, int)
    assert (parsed.max_cost, parsed.max_input_tokens, parsed.tool_timeout) == (0.25, 5000, 1.5)


@pytest.mark.parametrize(
    "argv",
    [
        ["--max-turns", "-1"],
        ["--max-turns", "many"],
        ["--max-turns", "2.5"],
        ["--max-cost", "nan"],
        ["--max-cost", "-1"],
        ["--max-output-tokens", "inf"],
        ["--tool-timeout", "-5"],
        ["--idle-timeout", "inf"],
        ["--max-retries", "-1"],
        ["--max-retries", "none"],
    ],
)
def test_bad_bounds_exit_2(argv: list[str], faux: FauxProvider) -> None:
    result = cli("run", "hi", *argv, faux=faux)
    assert result.code == 2
    assert argv[0] in result.err
    assert faux.calls == []


def test_help_shows_the_bounds() -> None:
    result = cli("run", "--help")
    assert result.code == 0
    for option in (
        "--max-turns N",
        "--max-cost USD",
        "--max-input-tokens N",
        "--max-output-tokens N",
        "--tool-timeout S",
        "--request-timeout S",
        "--idle-timeout S",
        "--max-retries N",
    ):
        assert option in result.out
    text = " ".join(result.out.split())  # argparse wraps to the terminal's width
    assert "end a run after its Nth turn (model answer) (default: 100)" in text
    assert "(default: 600)" in text and "0 or none turns a bound off" in text


def test_chat_says_when_a_limit_ended_an_answer_and_goes_on(faux: FauxProvider) -> None:
    faux.set_responses([*calculating(2), faux_text("fresh")])
    result = cli("chat", "--tools", "--max-turns", "1", stdin="loop\nagain\n", faux=faux)
    assert result.code == 0, result.err
    assert result.err.count("(the run stopped: max_turns reached: 1 of 1 turns") == 2
    assert faux.call_count == 2
    faux.set_responses([faux_text("fine")])
    result = cli("chat", stdin="hi\n", faux=faux)
    assert result.code == 0 and "stopped" not in result.err


# --- run --output-schema ---------------------------------------------------------------------

CITY_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["name", "population"],
}


def schema_file(tmp_path: Path, schema: Any = CITY_SCHEMA) -> str:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema) if not isinstance(schema, str) else schema)
    return str(path)


def test_output_schema_prints_the_validated_value(faux: FauxProvider, tmp_path: Path) -> None:
    faux.set_responses(
        [
            faux_text("Lyon has about half a million people."),
            faux_tool_call("final_answer", {"name": "Lyon", "population": 522000}),
        ]
    )
    result = cli("run", "Which city?", "--output-schema", schema_file(tmp_path), faux=faux)
    assert result.code == 0, result.err
    assert json.loads(result.out) == {"name": "Lyon", "population": 522000}
    assert result.out.count("\n") == 1  # only the value: the answer's text went to stderr
    assert "half a million" in result.err
    assert [t.name for t in faux.calls[0].context.tools] == ["final_answer"]


def test_output_schema_with_json_events(faux: FauxProvider, tmp_path: Path) -> None:
    faux.set_responses([faux_tool_call("final_answer", {"name": "Lyon", "population": 1})])
    result = cli("run", "go", "--json", "--output-schema", schema_file(tmp_path), faux=faux)
    assert result.code == 0, result.err
    events = result.json_lines()
    check_sequence(events)
    assert events[-1]["output"] == {"name": "Lyon", "population": 1}
    assert events[-1]["limit"] is None


def test_output_schema_never_valid_exits_with_the_limit(faux: FauxProvider, tmp_path: Path) -> None:
    faux.set_responses([faux_tool_call("final_answer", {"name": "Lyon"}) for _ in range(3)])
    result = cli("run", "go", "--output-schema", schema_file(tmp_path), faux=faux)
    assert result.code == 3
    assert result.out == ""
    assert "output_retries reached: 3 invalid final answers, 2 retries allowed" in result.err
    assert "population: required property is missing" in result.err


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "cannot read --output-schema"),
        ("{not json", "is not JSON"),
        ([1, 2], "must hold a JSON Schema object, got a list"),
        ({"type": "nope"}, "not a valid JSON Schema"),
    ],
)
def test_output_schema_file_errors(
    faux: FauxProvider, tmp_path: Path, content: Any, expected: str
) -> None:
    path = str(tmp_path / "missing.json") if content is None else schema_file(tmp_path, content)
    result = cli("run", "go", "--output-schema", path, faux=faux)
    assert result.code == 2 and expected in result.err, result.err
    assert faux.call_count == 0
