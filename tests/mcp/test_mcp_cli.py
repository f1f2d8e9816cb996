"""`agentcore run|chat --mcp SERVER`: the tools of MCP servers in the command, driven in-process
through `main(...)` with the faux model."""

from __future__ import annotations

import io
import json
import shlex
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from mcp_support import SERVER

from agentcore.cli import main
from agentcore.cli._args import parse_args
from agentcore.cli._mcp import check_tool_names, mcp_client
from agentcore.cli._run import CommandError
from agentcore.llm import register_model
from agentcore.testing import FauxProvider, faux_text, faux_tool_call

STDIO_SERVER = shlex.join([sys.executable, SERVER])


@pytest.fixture
def faux() -> Iterator[FauxProvider]:
    provider = FauxProvider()
    register_model(provider.model)
    yield provider


def cli(faux: FauxProvider, *argv: str, stdin: str | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(
        [*argv, "--model", f"{faux.provider_id}/faux-1"],
        stdin=io.StringIO(stdin) if stdin is not None else None,
        stdout=out,
        stderr=err,
    )
    return code, out.getvalue(), err.getvalue()


def test_run_with_a_stdio_server_and_the_builtin_tools(faux: FauxProvider) -> None:
    faux.set_responses([faux_tool_call("add", {"a": 2, "b": 40}), faux_text("The sum is 42.")])
    code, out, err = cli(faux, "run", "add them", "--tools", "--json", "--mcp", STDIO_SERVER)
    assert code == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    [end] = [e for e in events if e["type"] == "tool_execution_end"]
    assert end["tool_name"] == "add" and end["result"]["content"][0]["text"] == "42"
    offered = [t.name for t in faux.calls[0].context.tools]
    assert {"read_file", "list_files", "calculator", "add", "wait", "grow"} <= set(offered)


def test_python_in_a_command_is_the_current_interpreter(
    faux: FauxProvider, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """Issue 26: `--mcp "python -m ..."` ran whichever `python` was first on PATH, so the docs'
    example failed from a virtual environment that was not activated. With no `python` on PATH
    at all, the server still starts, on this interpreter."""
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no python to be found
    faux.set_responses([faux_tool_call("add", {"a": 2, "b": 40}), faux_text("42.")])
    code, out, err = cli(faux, "run", "add them", "--mcp", f"python {shlex.quote(SERVER)}")
    assert code == 0, err
    assert out == "42.\n"
    results = [m for m in faux.calls[1].context.messages if m.role == "tool_result"]
    assert results[0].content[0].text == "42"  # type: ignore[union-attr]


def test_chat_with_an_http_server(faux: FauxProvider) -> None:
    with subprocess.Popen(
        [sys.executable, SERVER, "--http"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as server:
        try:
            assert server.stdout is not None
            url = f"http://127.0.0.1:{int(server.stdout.readline())}/mcp"
            faux.set_responses(
                [
                    faux_tool_call("weather", {"city": "Oslo"}),
                    faux_text("Mild."),
                    faux_text("Bye."),
                ]
            )
            code, out, err = cli(faux, "chat", "--mcp", url, stdin="weather?\nthanks\n")
        finally:
            server.kill()
    assert code == 0, err
    assert "Mild." in out and "Bye." in out
    results = [m for m in faux.calls[1].context.messages if m.role == "tool_result"]
    assert '"celsius": 21.5' in results[0].content[0].text  # type: ignore[union-attr]


def test_an_unreachable_server_is_a_usage_error(faux: FauxProvider) -> None:
    code, out, err = cli(faux, "run", "hi", "--mcp", "http://127.0.0.1:9/mcp")
    assert code == 2 and out == ""
    assert err.startswith(
        "agentcore: error: could not connect to MCP server 'http://127.0.0.1:9/mcp': ConnectError"
    )
    assert faux.calls == []


def test_the_option_is_repeatable_and_parsed(faux: FauxProvider) -> None:
    parsed = parse_args(
        ["run", "hi", "--mcp", "uvx mcp-server-git", "--mcp", "https://x.org/mcp"],
        io.StringIO(),
        io.StringIO(),
    )
    assert not isinstance(parsed, int)
    assert parsed.mcp == ("uvx mcp-server-git", "https://x.org/mcp")
    stdio: Any = mcp_client("python -m 'my server'")
    assert stdio.name == "python -m 'my server'"
    assert mcp_client("HTTPS://x.org/mcp").name == "https://x.org/mcp"
    with pytest.raises(CommandError, match="needs a command line or an http"):
        mcp_client("  ")
    with pytest.raises(CommandError, match="cannot split the command line"):
        mcp_client("python 'unclosed")


def test_a_tool_name_offered_twice_is_refused() -> None:
    with pytest.raises(CommandError) as caught:
        check_tool_names(
            [
                ("the built-in tools", ["read_file", "calculator"]),
                ("MCP server 'a'", ["search"]),
                ("MCP server 'b'", ["fetch", "search"]),
            ]
        )
    assert str(caught.value) == (
        "the tool 'search' is offered by both MCP server 'a' and MCP server 'b'; a run cannot "
        "have two tools of one name"
    )
