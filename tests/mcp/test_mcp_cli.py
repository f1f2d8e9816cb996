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
from mcp_support import HERE, SERVER

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


# --- --mcp-sampling: the servers may sample a model, within the caps ---------------------------

ASKING = shlex.join([sys.executable, str(HERE / "interactive_server.py")])


def sampling_calls(faux: FauxProvider) -> list[Any]:
    """The requests of the server's sampling (its system prompt), not the run's own."""
    return [c for c in faux.calls if c.context.system_prompt == "Answer in one word."]


def test_run_allows_sampling_asks_first_and_keeps_the_caps(faux: FauxProvider) -> None:
    """Issue 30: the command line could not allow MCP sampling ("sampling is off" always)."""
    question = {"question": "Capital of France?", "max_tokens": 500}
    faux.set_responses([faux_tool_call("ask_model", question), faux_text("Paris"), faux_text("ok")])
    code, out, err = cli(faux, "run", "ask", "--mcp", ASKING, "--json")
    assert code == 0, err
    assert "sampling is off" in out  # off without --mcp-sampling

    faux.set_responses([faux_tool_call("ask_model", question), faux_text("Paris"), faux_text("ok")])
    code, out, err = cli(
        faux,
        "run",
        "ask",
        "--mcp",
        ASKING,
        "--mcp-sampling",
        "--mcp-sampling-max-tokens",
        "9",
        stdin="y\n",
    )
    assert code == 0, err
    assert "MCP server 'interactive-server' asks " in err and "at most 9 tokens" in err
    assert "  user: Capital of France?\nallow it? [y/N] " in err
    assert "faux-1 said: Paris" in err
    (sampled,) = sampling_calls(faux)
    assert sampled.options.max_tokens == 9  # the sampling request, capped

    faux.set_responses([faux_tool_call("ask_model", question), faux_text("ok")])
    code, out, err = cli(faux, "run", "ask", "--mcp", ASKING, "--mcp-sampling", stdin="no\n")
    assert code == 0, err
    assert "the user did not approve the request" in err
    assert len(sampling_calls(faux)) == 1  # the model never saw this one

    faux.set_responses(
        [faux_tool_call("ask_model_twice", {"question": "Hi"}), faux_text("one"), faux_text("ok")]
    )
    code, out, err = cli(
        faux,
        "run",
        "ask",
        "--mcp",
        ASKING,
        "--mcp-sampling",
        "--mcp-sampling-approve",
        "yes",
        "--mcp-sampling-max-requests",
        "1",
    )
    assert code == 0, err
    assert "allow it?" not in err
    # the refusal fails the tool call; its text is cut by the renderer after the server's
    # command line, whose length depends on where the checkout is (the reason's text is
    # checked in test_mcp_sampling.py); the model saw one more request, not two
    assert "[ask_model_twice failed]" in err
    assert len(sampling_calls(faux)) == 2  # one more


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--mcp-sampling-max-cost", "0.1"], "--mcp-sampling-max-cost needs --mcp-sampling"),
        (["--mcp-sampling"], "--mcp-sampling needs an --mcp server to sample for"),
        (["--mcp-sampling", "--mcp", "x", "--mcp-sampling-max-requests", "0"], "positive integer"),
        (["--mcp-sampling", "--mcp", "x", "--mcp-sampling-approve", "maybe"], "invalid choice"),
    ],
)
def test_sampling_options_given_wrong_are_usage_errors(
    faux: FauxProvider, argv: list[str], said: str
) -> None:
    code, _, err = cli(faux, "run", "hi", *argv)
    assert code == 2 and said in err
    assert faux.calls == []


def test_asking_is_refused_where_no_one_can_answer(faux: FauxProvider) -> None:
    code, _, err = cli(faux, "run", "-", "--mcp", ASKING, "--mcp-sampling", stdin="hi")
    assert code == 2
    assert "reads the answer from stdin, which holds the prompt (run -)" in err
    code, _, err = cli(faux, "serve", "--mcp", ASKING, "--mcp-sampling")
    assert code == 2 and "add --mcp-sampling-approve yes" in err
