"""`MCPClient` against a real MCP server written with the official SDK, over stdio and
streamable HTTP, driven through `agent_loop` by the faux model.

Starting a server costs a second or two (the SDK's import), so each transport runs one scenario
on one connection: listing, a parallel batch of every content kind, an abort the server
observes, a tool-list change picked up between turns, and the server dying mid-call.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable
from typing import IO, Any

import anyio
import mcp_types as types
import pytest
from mcp_support import errlog, http_server, results, stdio_client, text

from agentcore import (
    AbortController,
    Agent,
    AgentContext,
    AgentLoopConfig,
    AgentToolResult,
    ImageContent,
    NextTurn,
    PrepareNextTurnContext,
    TextContent,
    ToolCall,
    agent_loop,
)
from agentcore.mcp import MCPClient, MCPConnectionError, MCPProgress, MCPTool, refresh_tools
from agentcore.mcp._tools import ToolFilter, build_tools, to_agent_result
from agentcore.testing import (
    FauxCall,
    FauxProvider,
    check_well_formed,
    faux_message,
    faux_text,
    faux_tool_call,
)
from support import BACKENDS, collect, user

pytestmark = pytest.mark.anyio

__all__ = ["errlog"]  # the fixture, imported for pytest

ABORTED = "Tool execution was aborted."


def by_name(client: MCPClient) -> dict[str, MCPTool]:
    return {t.name: t for t in client.tools}


async def call_directly(client: MCPClient, name: str, args: dict[str, Any]) -> AgentToolResult:
    """Call a tool outside any run (as a test's side channel to the server)."""
    return await by_name(client)[name].execute("direct", args, AbortController().signal, print)


# --- the scenario, shared by both transports -------------------------------------------------


def check_listing(client: MCPClient) -> None:
    tools = by_name(client)
    assert client.connected
    assert client.server_info is not None and client.server_info.name == "test-server"
    assert {"t_add", "t_wait", "t_image", "t_grow", "t_die", "t_dotted_name"} <= set(tools)
    add = tools["t_add"]
    assert add.mcp_name == "add" and add.description == "Add two integers."
    assert add.llm_tool.parameters["properties"]["a"]["type"] == "integer"
    assert add.llm_tool.parameters["required"] == ["a", "b"]
    assert tools["t_dotted_name"].mcp_name == "dotted.name"
    assert "t_extra" not in tools


async def check_parallel_batch(client: MCPClient) -> None:
    calls = [
        ToolCall(id="add", name="t_add", arguments={"a": "2", "b": 3}),  # "2": coerced
        ToolCall(id="progress", name="t_progress", arguments={"steps": 3}),
        ToolCall(id="image", name="t_image", arguments={}),
        ToolCall(id="weather", name="t_weather", arguments={"city": "Oslo"}),
        ToolCall(id="fail", name="t_fail", arguments={"why": "the disk is full"}),
        ToolCall(id="sound", name="t_sound", arguments={}),
        ToolCall(id="resources", name="t_resources", arguments={}),
        ToolCall(id="dotted", name="t_dotted_name", arguments={}),
        ToolCall(id="bad", name="t_add", arguments={"a": "two"}),  # never reaches the server
    ]
    faux = FauxProvider([faux_message(*calls), faux_text("done")])
    run = await collect(
        agent_loop(
            [user("go")], AgentContext(tools=client.tools), AgentLoopConfig(model=faux.model)
        )
    )
    got = {r.tool_call_id: r for r in results(run.result)}
    assert [r.tool_call_id for r in results(run.result)] == [c.id for c in calls]
    assert text(got["add"]) == "5" and not got["add"].is_error
    assert got["add"].details == {
        "server": "test",
        "tool": "add",
        "structured_content": {"result": 5},
    }
    updates = [
        e.partial_result for e in run.of("tool_execution_update") if e.tool_call_id == "progress"
    ]
    assert [u.details for u in updates] == [
        MCPProgress(progress=1, total=3, message="step 1"),
        MCPProgress(progress=2, total=3, message=None),
        MCPProgress(progress=3, total=3, message="step 3"),
    ]
    assert [u.content[0].text for u in updates] == ["step 1", "2/3", "step 3"]  # type: ignore[union-attr]
    assert text(got["progress"]) == "progressed"
    image = got["image"].content[0]
    assert isinstance(image, ImageContent) and image.mime_type == "image/png"
    assert got["weather"].details["structured_content"] == {"city": "Oslo", "celsius": 21.5}
    assert got["fail"].is_error and "failed because the disk is full" in text(got["fail"])
    assert got["sound"].details["audio"][0]["mime_type"] == "audio/wav"
    assert text(got["sound"]).startswith("[audio: audio/wav, 16 bytes")
    kinds = [type(b).__name__ for b in got["resources"].content]
    assert kinds == ["TextContent", "ImageContent", "TextContent", "TextContent"]
    assert "[resource file:///notes.txt]\nthe notes" in text(got["resources"])
    assert got["resources"].details["resources"][0]["uri"] == "file:///data.bin"
    assert "resource link: readme <file:///README.md>" in text(got["resources"])
    assert text(got["dotted"]) == "dotted"
    assert got["bad"].is_error and "a: " in text(got["bad"])


async def check_abort(client: MCPClient) -> None:
    """An abort while two calls run cancels both; the server observes both cancellations."""
    controller = AbortController()
    calls = [
        ToolCall(id="A", name="t_wait", arguments={"key": "A", "steps": 1}),
        ToolCall(id="B", name="t_wait", arguments={"key": "B", "steps": 1}),
    ]
    faux = FauxProvider([faux_message(*calls), faux_text("never asked")])
    events: list[Any] = []
    stream = agent_loop(
        [user("wait")],
        AgentContext(tools=client.tools),
        AgentLoopConfig(model=faux.model),
        signal=controller.signal,
    )
    async with stream:
        async for event in stream:
            events.append(event)
            started = {e.tool_call_id for e in events if e.type == "tool_execution_update"}
            if started == {"A", "B"} and not controller.signal.aborted:
                controller.abort()  # both calls are running on the server now
        messages = await stream.result()
    check_well_formed(events)
    assert [(r.tool_call_id, text(r), r.is_error) for r in results(messages)] == [
        ("A", ABORTED, True),
        ("B", ABORTED, True),
    ]
    assert len(faux.calls) == 1  # no request after an abort during tools
    # Outside a run too, the signal given to `execute` cancels the call.
    direct = AbortController()
    aborted = await by_name(client)["t_wait"].execute(
        "D", {"key": "D", "steps": 1}, direct.signal, lambda update: direct.abort()
    )
    assert aborted.is_error and text_of(aborted) == "The call of 'wait' was aborted."
    seen = await call_directly(client, "t_observed", {"cancellations": 3})
    assert seen.details["structured_content"] == {"result": ["A", "B", "D"]}


async def check_timeout(client: MCPClient) -> None:
    """A call that outlives the run's tool timeout is cancelled on the server too."""
    faux = FauxProvider(
        [faux_tool_call("t_wait", {"key": "T", "steps": 1}, id="T"), faux_text("too slow")]
    )
    config = AgentLoopConfig(model=faux.model, tool_timeout=1.0)
    run = await collect(agent_loop([user("wait")], AgentContext(tools=client.tools), config))
    [result] = results(run.result)
    assert result.is_error and text(result) == "Tool 't_wait' timed out after 1 s."
    seen = await call_directly(client, "t_observed", {"cancellations": 4})
    assert seen.details["structured_content"] == {"result": ["A", "B", "D", "T"]}


async def check_list_change(client: MCPClient, *, with_agent: bool) -> None:
    """`grow` adds a tool and announces it; the next request of the same run offers it (and,
    for an `Agent`, so does its state for the next prompt)."""
    agent = Agent() if with_agent else None
    refresh = refresh_tools(client, agent=agent)
    waited = False

    async def prepare_next_turn(ctx: PrepareNextTurnContext) -> NextTurn | None:
        nonlocal waited
        if not waited:  # the announcement may trail the result on HTTP: wait for it once
            waited = True
            with anyio.fail_after(10):
                while not client.tools_changed:  # noqa: ASYNC110 - a flag, not an event
                    await anyio.sleep(0.01)
        return await refresh(ctx)

    offered: list[list[str]] = []

    def then_extra(call: FauxCall) -> Any:
        offered.append([t.name for t in call.context.tools])
        return faux_tool_call("t_extra", {"text": "hi"}, id="extra")

    faux = FauxProvider([faux_tool_call("t_grow", id="grow"), then_extra, faux_text("ok")])
    if agent is not None:
        agent.state.model = faux.model
        agent.state.tools = client.tools
        agent.prepare_next_turn = prepare_next_turn
        added = await agent.prompt("grow")
    else:
        config = AgentLoopConfig(model=faux.model, prepare_next_turn=prepare_next_turn)
        context = AgentContext(tools=client.tools)
        added = (await collect(agent_loop([user("grow")], context, config))).result
    assert [(r.tool_call_id, text(r)) for r in results(added)] == [
        ("grow", "grown"),
        ("extra", "extra:hi"),
    ]
    assert "t_extra" in offered[0]
    assert offered[0][: len(offered[0]) - 1] == [t.name for t in client.tools][:-1]
    assert not client.tools_changed and "t_extra" in by_name(client)
    if agent is not None:
        assert [t.name for t in agent.state.tools] == offered[0]


async def check_death(client: MCPClient) -> None:
    """The server exits during a batch: every call gets one error result naming it, the run
    ends well formed, and later calls say it is unavailable without waiting."""
    calls = [
        ToolCall(id="wait", name="t_wait", arguments={"key": "C", "steps": 1}),
        ToolCall(id="die", name="t_die", arguments={}),
    ]
    faux = FauxProvider([faux_message(*calls), faux_text("it died")])
    run = await collect(
        agent_loop(
            [user("die")], AgentContext(tools=client.tools), AgentLoopConfig(model=faux.model)
        )
    )
    died = results(run.result)
    assert [r.tool_call_id for r in died] == ["wait", "die"]
    assert all(r.is_error and "MCP server 'test'" in text(r) for r in died)
    assert "closed the connection during the call to 'die'" in text(died[1])
    assert run.result[-1].text == "it died"  # type: ignore[union-attr]
    assert not client.connected


# --- the transports -------------------------------------------------------------------------


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_a_stdio_server_through_the_loop(errlog: IO[str]) -> None:
    async with stdio_client(errlog, prefix="t_") as client:
        check_listing(client)
        await check_parallel_batch(client)
        await check_abort(client)
        await check_timeout(client)
        await check_list_change(client, with_agent=False)
        await check_death(client)
        later = await call_directly(client, "t_add", {"a": 1, "b": 1})
        assert later.is_error
        assert text_of(later) == (
            "MCP server 'test' is unavailable: its process exited or closed its output. Its "
            "tools cannot be called any more in this session."
        )


async def test_a_streamable_http_server_through_the_loop() -> None:
    async with http_server() as (url, _process):
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        async with MCPClient.http(url, name="test", prefix="t_") as client:
            check_listing(client)
            await check_parallel_batch(client)
            await check_abort(client)
            await check_list_change(client, with_agent=True)
            await check_death(client)
            later = await call_directly(client, "t_add", {"a": 1, "b": 1})
            assert later.is_error
            assert text_of(later).startswith(
                "MCP server 'test' is unavailable: connecting again failed: ConnectError"
            )
            # The server is back: the next call connects again.
            async with http_server(port):
                again = await call_directly(client, "t_add", {"a": 1, "b": 1})
                assert text_of(again) == "2" and client.connected


def text_of(result: AgentToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, TextContent))


async def test_leaving_early_stops_the_server_process(errlog: IO[str]) -> None:
    with anyio.move_on_after(60) as scope:
        async with stdio_client(errlog) as client:
            pid = (await call_directly(client, "pid", {})).details["structured_content"]["result"]
            scope.cancel()  # leave the block by cancellation, as an aborted caller would
            await anyio.sleep(30)
    assert scope.cancelled_caught and not client.connected
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    with pytest.raises(Exception, match="closed: use it as"):
        await client.refresh_tools()
    late = await call_directly(client, "pid", {})
    assert text_of(late) == "MCP server 'test' is unavailable: its client is closed."


# --- connecting ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: MCPClient.stdio(sys.executable, ["-c", "raise SystemExit(2)"], name="quits"),
            "could not connect to MCP server 'quits': it closed the connection during the MCP "
            "handshake (its process exited; its stderr may say why)",
        ),
        (
            lambda: MCPClient.stdio("/nonexistent/server", name="missing"),
            "could not connect to MCP server 'missing': FileNotFoundError",
        ),
        (
            lambda: MCPClient.stdio(
                sys.executable,
                ["-c", "import sys; sys.stdin.read()"],
                name="silent",
                connect_timeout=0.2,
            ),
            "could not connect to MCP server 'silent': it did not complete the MCP handshake "
            "within 0.2 s",
        ),
        (
            lambda: MCPClient.http("http://user:secret@127.0.0.1:9/mcp?key=k"),
            "could not connect to MCP server 'http://127.0.0.1:9/mcp': ConnectError",
        ),
    ],
)
async def test_a_failed_connection_raises_naming_the_server(
    make: Callable[[], MCPClient], message: str
) -> None:
    client = make()
    with pytest.raises(MCPConnectionError) as caught:
        async with client:
            pass
    assert str(caught.value).startswith(message)
    assert "secret" not in str(caught.value)
    assert caught.value.__cause__ is not None
    assert not client.connected


def test_options_are_checked() -> None:
    with pytest.raises(ValueError, match="url must be an http"):
        MCPClient.http("ftp://example.org")
    with pytest.raises(ValueError, match="prefix must use"):
        MCPClient.stdio("server", prefix="a.b")
    with pytest.raises(ValueError, match="allow must be a list"):
        MCPClient.stdio("server", allow="git_*")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="args must be a list"):
        MCPClient.stdio("server", "--flag")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="errlog must be a file with a file descriptor"):
        MCPClient.stdio("server", errlog=io.StringIO())


# --- the tool list and result mapping, without a server -------------------------------------


def listed(*names: str, schema: dict[str, Any] | None = None) -> list[types.Tool]:
    return [
        types.Tool(name=n, description=f"the {n} tool", input_schema=schema or {"type": "object"})
        for n in names
    ]


def test_names_prefix_and_filters(caplog: pytest.LogCaptureFixture) -> None:
    client = MCPClient.stdio("server", name="srv")
    spec = ToolFilter("srv", "g_", ["git_*", "x*"], ["git_push"], 5.0, None)
    long = "x." + "y" * 80
    tools = build_tools(
        client, listed("git_status", "git_push", "other", "x.a", "x_a", long), [], spec
    )
    names = [t.name for t in tools]
    assert names[:2] == ["g_git_status", "g_x_a"]
    assert len(names) == 3 and len(names[2]) == 64 and names[2].startswith("g_x_yyy")
    assert all(t.timeout == 5.0 for t in tools)
    assert "tool 'x_a' left out: its name 'g_x_a' is taken" in caplog.text
    again = build_tools(client, listed("git_status", "x.a"), tools, spec)
    assert again[0] is tools[0] and again[1] is tools[1]  # unchanged: the same objects
    changed = build_tools(
        client, listed("git_status", schema={"type": "object", "x": 1}), tools, spec
    )
    assert changed[0] is not tools[0]


def test_a_tool_with_an_unusable_schema_is_left_out(caplog: pytest.LogCaptureFixture) -> None:
    client = MCPClient.stdio("server", name="srv")
    spec = ToolFilter("srv", "", None, None, None, None)
    tools = build_tools(client, listed("ok", "bad", schema={"type": "array"}), [], spec)
    assert tools == []
    assert "MCP server 'srv': tool 'ok' left out" in caplog.text


def test_an_error_result_without_text_still_says_so() -> None:
    result = to_agent_result(
        types.CallToolResult(content=[], is_error=True), server="srv", tool="t"
    )
    assert result.is_error
    assert text_of(result) == "MCP server 'srv': tool 't' failed without a message."
    structured = to_agent_result(
        types.CallToolResult(content=[], structured_content={"n": 1}), server="srv", tool="t"
    )
    assert text_of(structured) == '{"n": 1}' and structured.details["structured_content"] == {
        "n": 1
    }


async def test_every_tool_of_a_deferred_server_waits_for_a_search(errlog: IO[str]) -> None:
    """`MCPClient(..., deferred=True)`: none of the server's tools is sent until `search_tools`
    finds it; a found one is called on the server as any other."""
    faux = FauxProvider(
        [
            faux_tool_call("search_tools", {"query": "add two integers"}, id="s1"),
            faux_tool_call("add", {"a": 2, "b": 3}, id="a1"),
            faux_text("5"),
        ]
    )
    async with stdio_client(errlog, deferred=True) as client:
        assert client.tools and all(t.deferred for t in client.tools)
        agent = Agent(
            initial_state={"model": faux.model, "tools": client.tools}, stream_fn=faux.stream_fn
        )
        await agent.prompt("2 + 3?")
    assert [t.name for t in faux.calls[0].context.tools] == ["search_tools"]
    assert "add" in [t.name for t in faux.calls[1].context.tools]
    found, added = results(agent.state.messages)
    assert found.added_tool_names is not None and found.added_tool_names[0] == "add"
    assert not added.is_error and "5" in text(added)
