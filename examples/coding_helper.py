"""A coding helper with file tools, in a scratch workspace, whose writes wait for your approval.

    python examples/coding_helper.py            # a scripted model; a review policy decides
    python examples/coding_helper.py --ask      # you approve or deny each write at a prompt
    python examples/coding_helper.py --local    # the built-in local model (scripts/local-model)

The workspace is a temporary directory holding a tiny project with a bug (`calc.py`) and its test
(`test_calc.py`). The helper reads with the ready-made `read_file` and `list_files` of
`agentcore.builtin_tools`, confined to the workspace, and writes with `write_file`, a tool of its
own built with `@tool(requires_approval=True)`: a write never runs just because the model asked.

When the model asks to write, the run stops with the call waiting (`agent.state.pending_approvals`
lists `ApprovalRequest`s). Each one is then approved (`agent.approve(id)`) or denied with a reason
(`agent.deny(id, reason)`), and `agent.continue_()` carries the decisions out: approved writes run,
denied ones give the model an error result with the reason, and the model answers.

The scripted model fixes the bug in `calc.py` and also tries to change the test to match its own
idea of the answer. The default reviewer is a policy, "source files yes, tests no", so the fix is
approved and the change to the test is denied. With `--ask` you decide instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import anyio

from agentcore import (
    Agent,
    AgentEvent,
    AgentTool,
    ApprovalRequest,
    AssistantMessage,
    ToolError,
    ToolResultMessage,
    tool,
)
from agentcore.builtin_tools import list_files, read_file
from agentcore.llm import Model, get_model
from agentcore.messages import ToolCall
from agentcore.testing import FauxCall, FauxProvider, faux_message, faux_text, faux_tool_call

PROJECT = {
    "calc.py": 'def average(numbers):\n    """The mean of a list of numbers."""\n'
    "    return sum(numbers) / (len(numbers) + 1)\n",
    "test_calc.py": "from calc import average\n\n\ndef test_average():\n"
    "    assert average([2, 4, 6]) == 4\n",
}
"""The files of the scratch project: `average` divides by one too many."""

TASK = "The test in test_calc.py fails. Find the bug and fix it."
SYSTEM_PROMPT = (
    "You are a coding assistant in a small Python project. Use list_files and read_file to look "
    "at the code, and write_file to change a file (write the whole new content). Every write is "
    "reviewed by a person. Never change a test to make it pass. Answer in one or two sentences."
)


def write_file_tool(root: Path) -> AgentTool:
    """`write_file`, confined to `root`; every call waits for approval."""

    @tool(requires_approval=True)
    def write_file(path: str, content: str) -> str:
        """Write a text file of the project, replacing its content.

        Args:
            path: the file, relative to the project directory.
            content: the whole new content of the file.
        """
        target = (root / path).resolve()
        if not target.is_relative_to(root.resolve()):
            raise ToolError(f"{path!r} is outside the project directory")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        return f"wrote {path} ({len(content.splitlines())} lines)"

    return write_file


# --- who decides ----------------------------------------------------------------------------------

Reviewer = Callable[[ApprovalRequest], "str | None"]
"""Decides a waiting write: None approves it, a text denies it with that reason."""


def review_policy(request: ApprovalRequest) -> str | None:
    """Source files may be written, tests may not: None approves, a text denies with that reason."""
    path = str(request.arguments.get("path", ""))
    if Path(path).name.startswith("test_"):
        return "tests are the specification: fix the code, not the test"
    return None


def ask_at_the_terminal(request: ApprovalRequest) -> str | None:
    """Show the write and ask; None approves, a text denies with that reason."""
    print(f"--- {request.arguments.get('path')} would become:")
    print(request.arguments.get("content", ""))
    answer = input("approve this write? [y/N] ").strip().lower()
    return None if answer in ("y", "yes") else (input("why not? ") or "the user said no")


# --- the scripted model ---------------------------------------------------------------------------


def propose_fix(call: FauxCall) -> AssistantMessage:
    """Read calc.py from the last tool result, fix the off-by-one, and also (wrongly) ask to edit
    the test: two writes in one answer."""
    result = next(m for m in reversed(call.context.messages) if isinstance(m, ToolResultMessage))
    source = "".join(getattr(b, "text", "") for b in result.content).split("\n", 1)[1]
    fixed = source.replace("(len(numbers) + 1)", "len(numbers)").rstrip("\n") + "\n"
    return faux_message(
        "The mean divides by one element too many.",
        ToolCall(id="w1", name="write_file", arguments={"path": "calc.py", "content": fixed}),
        ToolCall(
            id="w2",
            name="write_file",
            arguments={
                "path": "test_calc.py",
                "content": PROJECT["test_calc.py"].replace("== 4", "== 3"),
            },
        ),
    )


def report(call: FauxCall) -> AssistantMessage:
    """Say which writes went through, from the results the model was sent."""
    results = [m for m in call.context.messages if isinstance(m, ToolResultMessage)][-2:]
    done = [m for m in results if not m.is_error]
    refused = [m for m in results if m.is_error]
    return faux_text(
        f"{len(done)} write(s) done, {len(refused)} refused: average() now divides by "
        "len(numbers), and test_calc.py is unchanged."
    )


def scripted_model() -> FauxProvider:
    return FauxProvider(
        [
            faux_tool_call("list_files", {}),
            faux_tool_call("read_file", {"path": "calc.py"}),
            propose_fix,
            report,
        ]
    )


def local_model() -> Model:
    """The built-in local model (`scripts/local-model`), on `AGENTCORE_LOCAL_PORT` when set."""
    model = get_model("local", "qwen2.5-coder-1.5b")
    port = os.environ.get("AGENTCORE_LOCAL_PORT", "").strip()
    return replace(model, base_url=f"http://127.0.0.1:{port}/v1") if port.isdigit() else model


# --- the run ------------------------------------------------------------------------------------


def show(event: AgentEvent) -> None:
    if event.type == "tool_execution_start":
        print(f"  → {event.tool_name}({', '.join(f'{k}={v!r}' for k, v in event.args.items())})")
    elif event.type == "tool_execution_end":
        text = "".join(getattr(b, "text", "") for b in event.result.content)
        if "waiting for approval" not in text:  # a waiting call is shown by its request below
            print(f"  {'✗' if event.is_error else '✓'} {text.splitlines()[0] if text else ''}")
    elif event.type == "message_end" and isinstance(event.message, ApprovalRequest):
        print(f"  ⏸ the write to {event.message.arguments['path']} waits for approval")
    elif (
        event.type == "message_end"
        and isinstance(event.message, AssistantMessage)
        and event.message.text
    ):
        print(f"helper: {event.message.text}")


async def run(workspace: Path, model: Model, decide: Reviewer) -> int:
    agent = Agent(
        initial_state={
            "model": model,
            "system_prompt": SYSTEM_PROMPT,
            "tools": [read_file(workspace), list_files(workspace), write_file_tool(workspace)],
        },
        max_turns=10,
    )
    agent.subscribe(show)
    print(f"you: {TASK}")
    await agent.prompt(TASK)
    while agent.state.pending_approvals:  # the run stopped: some writes wait for a person
        for request in list(agent.state.pending_approvals):
            reason = await anyio.to_thread.run_sync(decide, request)  # --ask blocks on input()
            if reason is None:
                agent.approve(request.tool_call_id)
                print(f"reviewer: approved the write to {request.arguments['path']}")
            else:
                agent.deny(request.tool_call_id, reason)
                print(f"reviewer: denied the write to {request.arguments['path']}: {reason}")
        await agent.continue_()  # runs the approved writes, tells the model about the denied
    final = agent.state.messages[-1]
    ok = isinstance(final, AssistantMessage) and final.stop_reason == "stop"
    return 0 if ok else 1


def main(argv: list[str]) -> int:
    faux = scripted_model()  # kept in a variable: the model lives as long as its provider
    model = local_model() if "--local" in argv else faux.model
    decide = ask_at_the_terminal if "--ask" in argv else review_policy
    with tempfile.TemporaryDirectory(prefix="coding-helper-") as directory:
        workspace = Path(directory)
        for name, text in PROJECT.items():
            (workspace / name).write_text(text, encoding="utf-8")
        code = anyio.run(run, workspace, model, decide)
        show_workspace(workspace)
        return code


def show_workspace(workspace: Path) -> None:
    """Print the project's files, and whether its test passes now."""
    print("\nthe workspace now:")
    for name in sorted(PROJECT):
        print(f"--- {name}\n{(workspace / name).read_text(encoding='utf-8')}", end="")
    test = subprocess.run(
        [sys.executable, "-c", "import test_calc; test_calc.test_average()"],
        cwd=workspace,
        capture_output=True,
        check=False,
    )
    print(f"test_average: {'passed' if test.returncode == 0 else 'FAILED'}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
