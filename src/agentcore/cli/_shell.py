"""The `shell` tool of `agentcore chat --shell`: runs a command, only once a person approved it.

Every call waits for a decision (`requires_approval=True`): the chat lists it, and `/approve` or
`/deny` decides (see `_approve`). An approved command runs with `/bin/sh -c` in the chat's
directory (`--root`, default: the current one), with no input, its output and errors merged and
clipped, and a timeout after which its whole process group is killed; an abort (Ctrl-C) kills it
the same way.
"""

from __future__ import annotations

import contextlib
import os
import signal as signals
import subprocess
from pathlib import Path

import anyio
import anyio.abc

from ..tools import AgentTool, AgentToolResult, tool

__all__ = ["DEFAULT_SHELL_TIMEOUT", "OUTPUT_LIMIT", "shell_tool"]

DEFAULT_SHELL_TIMEOUT = 120.0
"""Seconds a command may run before it is killed."""

OUTPUT_LIMIT = 20_000
"""Characters of output kept: the start and the end, with a note saying what was cut."""


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n[... {cut} characters cut ...]\n{text[-half:]}"


def _kill_group(process: anyio.abc.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signals.SIGKILL)


async def run_command(command: str, cwd: Path, seconds: float) -> AgentToolResult:
    """Run `command` in `cwd`; its exit code and clipped output as a result (an error result
    for a non-zero exit or a timeout)."""
    output = bytearray()
    # The start is shielded: cancelled halfway (the process forked, its pipes not yet connected),
    # asyncio kills only the shell and never hands the process over, so the children it already
    # started would outlive the abort. Once started, the `finally` below kills the whole group.
    with anyio.CancelScope(shield=True):
        process = await anyio.open_process(
            ["/bin/sh", "-c", command],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: killed as a whole
        )
    async with process:
        try:
            with anyio.move_on_after(seconds) as deadline:
                assert process.stdout is not None
                async for chunk in process.stdout:
                    if len(output) < 4 * OUTPUT_LIMIT:  # keep reading, so the command never blocks
                        output += chunk
                code = await process.wait()
        finally:
            _kill_group(process)  # what is left: background children, a timed-out command
    text = _clip(output.decode("utf-8", errors="replace"), OUTPUT_LIMIT)
    if deadline.cancelled_caught:
        return AgentToolResult.text(
            f"timed out after {seconds:g} s; output:\n{text}", is_error=True
        )
    return AgentToolResult.text(f"exit code {code}\n{text}", is_error=code != 0)


def shell_tool(
    root: str | os.PathLike[str] = ".", *, timeout: float = DEFAULT_SHELL_TIMEOUT
) -> AgentTool:
    """The `shell` tool: runs a command in `root`; every call needs approval.

    Raises:
        NotADirectoryError: `root` is not a directory.
    """
    cwd = Path(root).resolve()
    if not cwd.is_dir():
        raise NotADirectoryError(f"the shell's directory {str(root)!r} is not a directory")

    @tool(name="shell", requires_approval=True)
    async def shell(command: str) -> AgentToolResult:
        """Run a shell command (/bin/sh -c) in the working directory and return its exit code
        and output. A person approves every command before it runs.

        Args:
            command: the command line to run.
        """
        return await run_command(command, cwd, timeout)

    return shell
