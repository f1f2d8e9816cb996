"""A third-party MCP server from PyPI (`mcp-server-git`, from the `dev` extra), run offline
against a repository the test creates, driven through `agent_loop` by the faux model."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import IO

import pytest
from mcp_support import errlog, results, text

from agentcore import AgentContext, AgentLoopConfig, ToolCall, agent_loop
from agentcore.mcp import MCPClient
from agentcore.testing import FauxProvider, faux_message, faux_text
from support import collect, user

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(shutil.which("git") is None, reason="mcp-server-git needs the git CLI"),
]

__all__ = ["errlog"]  # the fixture, imported for pytest


def make_repository(path: Path) -> Path:
    path.mkdir()
    env = {"GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.org"}
    env |= {"GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.org"}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True, env=env)

    git("init", "-q", "-b", "main")
    (path / "notes.txt").write_text("tides follow the moon\n")
    git("add", "notes.txt")
    git("commit", "-q", "-m", "Add the notes")
    (path / "notes.txt").write_text("tides follow the moon and the sun\n")
    return path


async def test_mcp_server_git_through_the_loop(tmp_path: Path, errlog: IO[str]) -> None:
    pytest.importorskip("mcp_server_git")
    repo = str(make_repository(tmp_path / "repo"))
    client = MCPClient.stdio(
        sys.executable,
        ["-m", "mcp_server_git", "--repository", repo],
        errlog=errlog,
        name="git",
        allow=["git_status", "git_log", "git_diff_unstaged"],
    )
    async with client:
        assert [t.name for t in client.tools] == ["git_status", "git_diff_unstaged", "git_log"]
        calls = [
            ToolCall(id="status", name="git_status", arguments={"repo_path": repo}),
            ToolCall(id="log", name="git_log", arguments={"repo_path": repo, "max_count": "1"}),
            ToolCall(id="diff", name="git_diff_unstaged", arguments={"repo_path": repo}),
            ToolCall(id="outside", name="git_status", arguments={"repo_path": "/"}),
            ToolCall(id="push", name="git_push", arguments={}),
        ]
        faux = FauxProvider([faux_message(*calls), faux_text("The notes changed.")])
        run = await collect(
            agent_loop(
                [user("what changed?")],
                AgentContext(tools=client.tools),
                AgentLoopConfig(model=faux.model),
            )
        )
    got = {r.tool_call_id: r for r in results(run.result)}
    assert "On branch main" in text(got["status"]) and "notes.txt" in text(got["status"])
    assert "Message: Add the notes" in text(got["log"]) and "Author: Ada" in text(got["log"])
    assert "+tides follow the moon and the sun" in text(got["diff"])
    assert got["outside"].is_error and "outside the allowed repository" in text(got["outside"])
    assert got["push"].is_error and text(got["push"]) == "Tool git_push not found"
    assert got["status"].details == {"server": "git", "tool": "git_status"}
    assert run.result[-1].text == "The notes changed."  # type: ignore[union-attr]
