"""`--code-mode` of `agentcore run`/`chat`: the built-in tools as functions of one `run_code`
tool, the snippet shown as code and its calls indented under it (the terminal version is in
test_cli_tty.py), the calls in `--json` carrying their parent's id."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("pydantic_monty")

from agentcore.cli import main
from agentcore.llm import register_model
from agentcore.messages import ToolResultMessage
from agentcore.testing import FauxProvider, faux_text, faux_tool_call

SNIPPET = """\
import asyncio
sizes = await asyncio.gather(read_file(path="a.txt"), read_file(path="b.txt"))
print("\\x1b[2J", len(sizes))"""


@pytest.fixture
def faux() -> Iterator[FauxProvider]:
    provider = FauxProvider()
    register_model(provider.model)
    yield provider


def _cli(faux: FauxProvider, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([*argv, "--model", f"{faux.provider_id}/faux-1"], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _files(root: Path) -> None:
    (root / "a.txt").write_text("alpha\n")
    (root / "b.txt").write_text("beta\n")


def test_run_with_code_mode_offers_one_code_tool_and_nests_its_calls(
    faux: FauxProvider, tmp_path: Path
) -> None:
    _files(tmp_path)
    faux.set_responses([faux_tool_call("run_code", {"code": SNIPPET}), faux_text("two files")])
    code, out, err = _cli(faux, "run", "go", "--tools", "--code-mode", "--root", str(tmp_path))
    assert code == 0, err
    assert out == "two files\n"
    tools = faux.calls[0].context.tools
    assert [t.name for t in tools] == ["run_code"]
    description = tools[0].description
    assert "async def read_file(" in description and "async def calculator(" in description
    lines = err.splitlines()
    start = lines.index("[code] run_code")
    assert lines[start + 1 : start + 4] == [
        "  │ import asyncio",
        '  │ sizes = await asyncio.gather(read_file(path="a.txt"), read_file(path="b.txt"))',
        '  │ print("\\x1b[2J", len(sizes))',  # the code as written
    ]
    nested = lines[start + 4 : start + 12]  # two starts, two results of two lines
    assert sorted(line for line in nested if "[tool]" in line) == [
        '    [tool] read_file {"path": "a.txt"}',
        '    [tool] read_file {"path": "b.txt"}',
    ]
    assert nested.count("    [read_file ok]") == 2 and "      alpha" in nested
    assert lines[start + 12 : start + 14] == ["[run_code ok]", "  \\x1b[2J 2"]
    assert "\x1b" not in err  # the printed escape is shown, never sent
    result = faux.calls[1].context.messages[-1]
    assert isinstance(result, ToolResultMessage) and not result.is_error
    assert result.content[0].text == "\x1b[2J 2\n"  # type: ignore[union-attr]


def test_code_mode_json_lines_carry_the_parent_id(faux: FauxProvider, tmp_path: Path) -> None:
    _files(tmp_path)
    faux.set_responses([faux_tool_call("run_code", {"code": SNIPPET}), faux_text("ok")])
    code, out, err = _cli(
        faux, "run", "go", "--tools", "--code-mode", "--json", "--root", str(tmp_path)
    )
    assert code == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    tools = [e for e in events if e["type"].startswith("tool_execution_")]
    outer = tools[0]["tool_call_id"]
    assert [(e["type"], e["tool_name"]) for e in (tools[0], tools[-1])] == [
        ("tool_execution_start", "run_code"),
        ("tool_execution_end", "run_code"),
    ]
    assert "parent_tool_call_id" not in tools[0] and "parent_tool_call_id" not in tools[-1]
    nested = tools[1:-1]
    assert len(nested) == 4 and {e["tool_name"] for e in nested} == {"read_file"}
    assert all(e["parent_tool_call_id"] == outer for e in nested)


def test_code_mode_needs_tools(faux: FauxProvider) -> None:
    code, _, err = _cli(faux, "run", "hi", "--code-mode")
    assert code == 2
    assert "--code-mode needs tools to offer to the code: add --tools" in err


def test_code_mode_in_chat_keeps_variables_within_an_answer_not_across(
    faux: FauxProvider,
) -> None:
    faux.set_responses(
        [
            faux_tool_call("run_code", {"code": 'x = await calculator(expression="6*7")'}),
            faux_tool_call("run_code", {"code": "x"}),
            faux_text("kept"),
            faux_tool_call("run_code", {"code": "x"}),
            faux_text("gone"),
        ]
    )
    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["chat", "--tools", "--code-mode", "--model", f"{faux.provider_id}/faux-1"],
        stdin=io.StringIO("first\nsecond\n"),
        stdout=out,
        stderr=err,
    )
    assert code == 0, err.getvalue()
    kept = faux.calls[2].context.messages[-1]
    assert isinstance(kept, ToolResultMessage) and not kept.is_error
    assert kept.content[0].text == "6*7 = 42"  # type: ignore[union-attr]
    gone = faux.calls[4].context.messages[-1]  # each prompt of a chat is a run of its own
    assert isinstance(gone, ToolResultMessage) and gone.is_error
    assert "NameError" in gone.content[0].text  # type: ignore[union-attr]
