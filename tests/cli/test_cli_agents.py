"""`agentcore run|chat --agents FILE` (issue 34): the agents of a run with handoffs read from a TOML
or JSON file, checked key by key, and the rendering that names who speaks and each switch."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from tests.cli.cli_tty_app import AGENTS

from agentcore.cli import main
from agentcore.llm import register_model
from agentcore.testing import FauxProvider, faux_text, faux_tool_call

RETURNING = {
    "start": "triage",
    "agents": {
        "triage": {
            "system_prompt": "You are triage.",
            "handoffs": [{"to": "policy", "returns": True}],
        },
        "policy": {
            "description": "Knows the refund policy.",
            "system_prompt": "You know the policy.",
            "tools": ["calculator"],
        },
    },
}


def _cli(argv: list[str], faux: FauxProvider | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    model = ["--model", f"{faux.provider_id}/faux-1"] if faux is not None else []
    code = main([*argv, *model], stdin=io.StringIO(""), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _faux(*answers: object) -> FauxProvider:
    faux = FauxProvider(list(answers))  # type: ignore[arg-type]
    register_model(faux.model)
    return faux


def test_run_names_each_agent_and_the_switch_and_sends_each_its_own_prompt(
    tmp_path: Path,
) -> None:
    file = tmp_path / "agents.toml"
    file.write_text(AGENTS)
    faux = _faux(faux_tool_call("transfer_to_billing", {}), faux_text("Order 7 is refunded."))
    code, out, err = _cli(["run", "--agents", str(file), "refund 7"], faux)
    assert code == 0, err
    assert out == "Order 7 is refunded.\n"  # stdout: only the answer
    assert err.splitlines() == [
        "triage:",
        "[tool] transfer_to_billing {}",
        "[transfer_to_billing ok]",
        '  {"assistant": "billing"}',
        "[handoff: triage → billing]",
        "billing:",
    ]
    assert [c.context.system_prompt for c in faux.calls] == ["You are triage.", "You are billing."]
    assert [t.name for t in faux.calls[0].context.tools] == ["transfer_to_billing"]
    assert [t.name for t in faux.calls[1].context.tools] == ["transfer_to_triage"]


def test_a_returning_handoff_shows_the_way_back_and_json_carries_the_events(
    tmp_path: Path,
) -> None:
    file = tmp_path / "agents.json"
    file.write_text(json.dumps(RETURNING))
    answers = (
        faux_tool_call("transfer_to_policy", {}),
        faux_text("Within 30 days."),
        faux_text("Policy says 30 days."),
    )
    code, out, err = _cli(["run", "--agents", str(file), "return?"], _faux(*answers))
    assert code == 0, err
    lines = err.splitlines()
    assert "[handoff: triage → policy, returns]" in lines
    assert lines[-2:] == ["[return: policy → triage]", "triage:"]
    assert lines.count("triage:") == 2 and lines.count("policy:") == 1
    code, out, err = _cli(["run", "--json", "--agents", str(file), "return?"], _faux(*answers))
    events = [json.loads(line) for line in out.splitlines()]
    switches = [(e["from_agent"], e["to_agent"]) for e in events if e["type"] == "agent_switch"]
    assert switches == [("triage", "policy"), ("policy", "triage")]
    assert events[-1]["last_agent"] == "triage"


def test_chat_reads_agents_and_a_plain_run_shows_no_names(tmp_path: Path) -> None:
    file = tmp_path / "agents.toml"
    file.write_text(AGENTS)
    faux = _faux(faux_tool_call("transfer_to_billing", {}), faux_text("Refunded."), faux_text("ok"))
    out, err = io.StringIO(), io.StringIO()
    argv = ["chat", "--agents", str(file), "--model", f"{faux.provider_id}/faux-1"]
    code = main(argv, stdin=io.StringIO("refund\nthanks\n"), stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    assert out.getvalue() == "Refunded.\nok\n"
    assert err.getvalue().count("billing:") == 1  # billing keeps the floor: named once
    assert faux.calls[2].context.system_prompt == "You are billing."
    code, _, err_text = _cli(["run", "hello"], _faux(faux_text("hi")))
    assert code == 0 and err_text == ""


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("a.yaml", "start: x", "--agents {path}: expected a .toml or .json file"),
        ("a.toml", "start = ", "--agents {path} is not valid TOML"),
        ("a.json", "[1]", "--agents {path}: the file: expected a table (an object), got a list"),
        ("a.toml", 'start = "x"', "--agents {path}: agents: expected a table of at least one"),
        (
            "a.toml",
            'start = "x"\n[agents.triage]\n',
            "--agents {path}: start: expected the name of one of the agents ('triage'), got 'x'",
        ),
        (
            "a.toml",
            'start = "t"\nlimit = 3\n[agents.t]\n',
            "--agents {path}: limit: expected one of the keys start, next_agent, max_handoffs, "
            "agents",
        ),
        (
            "a.toml",
            'start = "t"\n[agents.t]\nsystem = "x"\n',
            "--agents {path}: agents.t.system: expected one of the keys description, "
            "system_prompt, model",
        ),
        (
            "a.toml",
            'start = "t"\n[agents.t]\ntools = ["shell"]\n',
            "--agents {path}: agents.t.tools: expected built-in tool names: read_file, "
            "list_files, calculator, got 'shell'",
        ),
        (
            "a.toml",
            'start = "t"\n[agents.t]\nhandoffs = ["nobody"]\n[agents.u]\n',
            "--agents {path}: agents.t.handoffs[0]: expected the name of another agent of the "
            "file ('u'), got 'nobody'",
        ),
        (
            "a.toml",
            'start = "t"\n[agents.t]\nhandoffs = [{to = "u", returns = "yes"}]\n[agents.u]\n',
            "--agents {path}: agents.t.handoffs[0].returns: expected true or false, got 'yes'",
        ),
        (
            "a.toml",
            'start = "t"\n[agents.t]\nthinking = "max"\n',
            "--agents {path}: agents.t.thinking: expected one of off, minimal",
        ),
        (
            "a.toml",
            'start = "t"\n[agents.t]\nhistory = 0\n',
            "--agents {path}: agents.t.history: expected 'full' or a positive number",
        ),
        (
            "a.toml",
            'start = "t"\n[agents.t]\nsystem_prompt = 3\n',
            "--agents {path}: agents.t.system_prompt: expected a string, got 3",
        ),
        (
            "a.toml",
            'start = "t"\n[agents.t]\nmodel = "nope/x"\n',
            "--agents {path}: agents.t.model: expected a usable model as provider/id (unknown "
            "provider 'nope'",
        ),
        (
            "a.toml",
            'start = "t\\u001b[2J"\n[agents."t\\u001b[2J"]\n',
            "--agents {path}: agents.'t\\x1b[2J': expected an agent name of 1-48 letters",
        ),
        (
            "a.toml",
            'start = "t"\nmax_handoffs = -1\n[agents.t]\n',
            "--agents {path}: max_handoffs: expected 0 or a positive integer, got -1",
        ),
    ],
)
def test_a_bad_agents_file_is_a_usage_error_naming_the_file_and_the_key(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    file = tmp_path / name
    file.write_text(text)
    code, out, err = _cli(["run", "--agents", str(file), "hi"], _faux(faux_text("never")))
    assert code == 2
    assert out == ""
    assert err.startswith("agentcore: error: " + message.format(path=file)), err
    assert "\x1b" not in err  # the file's text is shown made visible


@pytest.mark.parametrize("option", [["--system", "x"], ["--tools"], ["--shell"]])
def test_options_that_would_give_one_agent_of_several_tools_or_a_prompt_are_refused(
    tmp_path: Path, option: list[str]
) -> None:
    file = tmp_path / "agents.toml"
    file.write_text(AGENTS)
    argv = ["chat" if option == ["--shell"] else "run", "--agents", str(file), *option]
    argv += [] if argv[0] == "chat" else ["hi"]
    code, _, err = _cli(argv, _faux(faux_text("never")))
    assert code == 2
    assert f"--agents cannot be combined with {option[0]}" in err
