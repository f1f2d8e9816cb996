"""What a hostile MCP server (tests/mcp/hostile_server.py, written with the official SDK) can
do to the host through its tool schemas, descriptions and results: nothing outside the schema is
fetched or read, patterns cannot stall the event loop, one broken tool leaves the others usable,
and what reaches the model is capped.
"""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import anyio
import pytest
from mcp_support import HERE, SRC, errlog, results, text

from agentcore import (
    AbortController,
    AgentContext,
    AgentLoopConfig,
    AgentToolResult,
    ToolCall,
    agent_loop,
)
from agentcore.mcp import MCPClient
from agentcore.testing import FauxProvider, faux_message, faux_text
from support import collect, user

pytestmark = pytest.mark.anyio

__all__ = ["errlog"]  # the fixture, imported for pytest

SERVER = str(HERE / "hostile_server.py")


@pytest.fixture
def silent() -> Iterator[socket.socket]:
    """A listener on 127.0.0.1 that would accept a connection and never answer it."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.setblocking(False)
    try:
        yield sock
    finally:
        sock.close()


def text_of(result: AgentToolResult) -> str:
    return "".join(getattr(b, "text", "") for b in result.content)


def connected(sock: socket.socket) -> bool:
    """Whether anything connected to the listener."""
    try:
        peer, _ = sock.accept()
    except BlockingIOError:
        return False
    peer.close()
    return True


async def test_a_hostile_server_reaches_nothing_and_stalls_nothing(
    silent: socket.socket,
    tmp_path: Path,
    errlog: IO[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = f"http://127.0.0.1:{silent.getsockname()[1]}/schema.json"
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"type": "string", "description": "TOP-SECRET-CONTENT"}))
    client = MCPClient.stdio(
        sys.executable,
        [SERVER, url, str(secret)],
        env={"PYTHONPATH": SRC},
        errlog=errlog,
        name="hostile",
    )
    with anyio.fail_after(30):
        async with client:
            tools = {t.name: t for t in client.tools}
            # the tools whose schemas reach outside, or are broken, are left out, each named
            assert set(tools) == {"slow_pattern", "slow_keys", "wordy", "flood", "typed", "echo"}
            logged = caplog.text
            refused = "left out: tool {!r}: parameters refused: the reference {!r} points outside"
            assert refused.format("remote_ref", url) in logged
            assert refused.format("file_ref", f"file://{secret}") in logged
            assert refused.format("relative_ref", "other.json") in logged
            assert "tool 'broken' left out: tool 'broken': parameters are not valid JSON" in logged
            assert "TOP-SECRET-CONTENT" not in logged
            assert not connected(silent)  # nothing was fetched

            # a 2,000,000-character description reaches the model cut, with a note
            description = tools["wordy"].description
            assert len(description) < 8_100
            assert description.endswith("[description cut after 8,000 of 2,000,000 characters]")

            # calls: patterns that backtrack catastrophically, a flood of text, an ordinary tool;
            # a heartbeat on the event loop shows it was never held for long
            calls = [
                ToolCall(id="p", name="slow_pattern", arguments={"value": "a" * 40 + "!"}),
                ToolCall(id="q", name="slow_pattern", arguments={"other": "a" * 40 + "!"}),
                ToolCall(id="k", name="slow_keys", arguments={"value": {"a" * 40 + "!": "x"}}),
                ToolCall(id="f", name="flood", arguments={}),
                ToolCall(id="t", name="typed", arguments={}),
                ToolCall(id="e", name="echo", arguments={"value": "hi"}),
            ]
            faux = FauxProvider([faux_message(*calls), faux_text("done")])
            gaps: list[float] = []
            done = anyio.Event()

            async def heartbeat() -> None:
                last = anyio.current_time()
                while not done.is_set():
                    await anyio.sleep(0.01)
                    now = anyio.current_time()
                    gaps.append(now - last)
                    last = now

            async with anyio.create_task_group() as group:
                group.start_soon(heartbeat)
                run = await collect(
                    agent_loop(
                        [user("go")],
                        AgentContext(tools=client.tools),
                        AgentLoopConfig(model=faux.model),
                    )
                )
                done.set()
            got = {r.tool_call_id: r for r in results(run.result)}
            assert max(gaps) < 2.0, f"the event loop was held for {max(gaps):.1f} s"

            assert got["p"].is_error
            assert "could not be checked against the pattern '^(a|a)+$' in time" in text(got["p"])
            # `^(a+)+$` is no trouble for the engine: a plain mismatch
            assert got["q"].is_error and "does not match '^(a+)+$'" in text(got["q"])
            assert got["k"].is_error and "property name 'aaaa" in text(got["k"])
            assert "could not be checked against the pattern" in text(got["k"])

            flood = text(got["f"])
            assert not got["f"].is_error
            assert len(flood) < 262_144 + 300
            assert "[result cut after 262,144 of 3,000,000 characters" in flood

            # the SDK's own check of a structured result against the output schema is bounded
            assert got["t"].is_error and "could not be checked against the pattern" in text(
                got["t"]
            )

            assert text(got["e"]) == "echo: 'hi'" and not got["e"].is_error
    assert not connected(silent)


async def test_a_tool_the_sdk_cannot_read_leaves_the_others_usable(
    errlog: IO[str], caplog: pytest.LogCaptureFixture
) -> None:
    server = str(HERE / "malformed_server.py")
    with anyio.fail_after(30):
        async with MCPClient.stdio(sys.executable, [server], errlog=errlog, name="odd") as client:
            assert [t.name for t in client.tools] == ["good"]
            assert (
                "MCP server 'odd': tool 'bad' left out: its definition is invalid (inputSchema: "
                "Input should be a valid dictionary" in caplog.text
            )
            assert "tool '(no name)' left out" in caplog.text
            result = await client.tools[0].execute("id", {}, AbortController().signal, print)
            assert not result.is_error and text_of(result) == "good answered"
            assert [t.name for t in await client.refresh_tools()] == ["good"]
