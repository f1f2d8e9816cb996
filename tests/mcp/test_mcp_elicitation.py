"""MCP elicitation: a server written with the official SDK (`interactive_server.py`, over stdio)
asks the user for structured input during a tool call; the client's handler answers it (accept
with content checked against the requested schema, decline, cancel), driven through an `Agent`
on the faux model; or, with `elicitation="approvals"`, the call waits as an approval does, and
is answered later, after a restart too (a new client, Agent and session reopened from the
store), by running it again with the answer.
"""

from __future__ import annotations

import io
import json
import shlex
import sys
from pathlib import Path
from typing import IO, Any

import pytest
from mcp_support import errlog, results, text

from agentcore import Agent, ConfigError, ToolResultMessage
from agentcore.approvals import CANCEL_REASON
from agentcore.cli import main
from agentcore.llm import register_model
from agentcore.mcp import MCPClient, MCPElicitation, MCPElicitationAnswer
from agentcore.sessions import JsonlSessionStore
from agentcore.testing import FauxProvider, faux_text, faux_tool_call

pytestmark = pytest.mark.anyio

__all__ = ["errlog"]  # the fixture, imported for pytest

SERVER = str(Path(__file__).resolve().parent / "interactive_server.py")


async def order(errlog: IO[str], answer: Any) -> tuple[ToolResultMessage, list[MCPElicitation]]:
    """Call the server's `order` tool through an agent; `answer` is the handler's answer."""
    asked: list[MCPElicitation] = []

    async def handler(request: MCPElicitation) -> MCPElicitationAnswer:
        asked.append(request)
        return answer

    mcp = MCPClient.stdio(sys.executable, [SERVER], errlog=errlog, name="shop", elicitation=handler)
    async with mcp:
        main = FauxProvider([faux_tool_call("order", {"item": "pizzas"}), faux_text("ok")])
        agent = Agent(initial_state={"model": main.model, "tools": mcp.tools})
        await agent.prompt("order pizzas")
    (result,) = results(agent.state.messages)
    return result, asked


async def test_elicitation_accepted(errlog: IO[str]) -> None:
    answer = MCPElicitationAnswer.accept({"size": "large", "count": 3, "gift": True})
    result, asked = await order(errlog, answer)
    assert not result.is_error, text(result)
    assert text(result) == "ordered 3 large pizzas as a gift"
    (request,) = asked
    assert (request.server, request.tool) == ("shop", "order")
    assert request.message == "How many pizzas, and which size?"
    assert request.schema["required"] == ["size", "count"]


async def test_elicitation_declined_and_cancelled(errlog: IO[str]) -> None:
    result, _ = await order(errlog, MCPElicitationAnswer.decline())
    assert text(result) == "no order: the user chose decline"
    result, _ = await order(errlog, MCPElicitationAnswer.cancel())
    assert text(result) == "no order: the user chose cancel"


async def test_an_answer_that_does_not_match_the_schema_is_refused(errlog: IO[str]) -> None:
    answer = MCPElicitationAnswer.accept({"size": "huge", "count": 3})
    result, _ = await order(errlog, answer)
    assert result.is_error
    assert "does not match the schema" in text(result)
    assert "size" in text(result)


def test_check_names_the_field() -> None:
    request = MCPElicitation(
        server="shop",
        tool="order",
        message="?",
        schema={
            "type": "object",
            "properties": {"count": {"type": "integer"}},
            "required": ["count"],
        },
    )
    assert request.check({"count": 2}) == {"count": 2}
    with pytest.raises(ConfigError, match="count"):
        request.check({"count": "two"})
    with pytest.raises(ConfigError, match="must be an object"):
        request.check(["count"])  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="needs its content"):
        MCPElicitationAnswer(action="accept")


async def test_without_a_handler_the_call_is_refused(errlog: IO[str]) -> None:
    mcp = MCPClient.stdio(sys.executable, [SERVER], errlog=errlog, name="shop")
    async with mcp:
        main = FauxProvider([faux_tool_call("order", {"item": "pizzas"}), faux_text("ok")])
        agent = Agent(initial_state={"model": main.model, "tools": mcp.tools})
        await agent.prompt("order pizzas")
    (result,) = results(agent.state.messages)
    assert result.is_error, text(result)
    assert "did not declare the form elicitation capability" in text(result)


# --- through approvals: the call waits, across a restart ---------------------------------


def approvals_client(errlog: IO[str]) -> MCPClient:
    return MCPClient.stdio(
        sys.executable, [SERVER], errlog=errlog, name="shop", elicitation="approvals"
    )


async def test_elicitation_through_approvals_waits_and_is_answered_after_a_restart(
    errlog: IO[str], tmp_path: Path
) -> None:
    main = FauxProvider([faux_tool_call("order", {"item": "pizzas"}), faux_text("ordered")])
    with JsonlSessionStore(tmp_path) as store:  # process 1: the server asks, the run stops
        session = store.create()
        async with approvals_client(errlog) as mcp:
            agent = Agent(initial_state={"model": main.model, "tools": mcp.tools}, session=session)
            await agent.prompt("order pizzas")
            (request,) = agent.state.pending_approvals
        assert results(agent.state.messages) == []  # no result yet: the call waits
        assert request.tool_name == "order"
        assert request.reason == "MCP server 'shop' asks: How many pizzas, and which size?"
        assert request.input_schema is not None
        assert request.input_schema["required"] == ["size", "count"]
        assert len(main.calls) == 1

    with JsonlSessionStore(tmp_path) as store:  # process 2: a new client, agent and session
        async with approvals_client(errlog) as mcp:
            agent = Agent(
                initial_state={"model": main.model, "tools": mcp.tools},
                session=store.open(session.id),
            )
            (request,) = agent.state.pending_approvals
            assert request.input_schema is not None  # stored with the request
            with pytest.raises(ConfigError, match="size"):  # checked against the schema
                agent.approve(request.tool_call_id, arguments={"size": "huge", "count": 2})
            with pytest.raises(ConfigError, match="asks for input"):
                agent.approve(request.tool_call_id)
            agent.approve(request.tool_call_id, arguments={"size": "small", "count": 2})
            await agent.continue_()
    (result,) = results(agent.state.messages)
    assert not result.is_error, text(result)
    assert text(result) == "ordered 2 small pizzas"
    assert agent.state.messages[-1].text == "ordered"
    assert agent.state.pending_approvals == []


async def test_elicitation_through_approvals_declined_and_cancelled(errlog: IO[str]) -> None:
    for decide, said in [
        (lambda agent, id: agent.deny(id, "no thanks"), "decline"),
        (lambda agent, id: agent.deny(id, CANCEL_REASON), "cancel"),
    ]:
        main = FauxProvider([faux_tool_call("order", {"item": "pizzas"}), faux_text("ok")])
        async with approvals_client(errlog) as mcp:
            agent = Agent(initial_state={"model": main.model, "tools": mcp.tools})
            await agent.prompt("order pizzas")
            (request,) = agent.state.pending_approvals
            decide(agent, request.tool_call_id)
            await agent.continue_()
        (result,) = results(agent.state.messages)
        assert text(result) == f"no order: the user chose {said}"
        assert not result.is_error


# --- in the terminal: `agentcore chat --mcp` shows the question and takes the answer ---------


def test_chat_shows_an_elicitation_and_takes_the_answer() -> None:
    faux = FauxProvider([faux_tool_call("order", {"item": "pizzas"}), faux_text("all ordered")])
    register_model(faux.model)
    out, err = io.StringIO(), io.StringIO()
    lines = [
        "order pizzas",
        '/approve {"size": "huge", "count": 1}',  # off the schema: refused, it waits still
        '/approve {"size": "large", "count": 1}',
        "",
    ]
    code = main(
        [
            "chat",
            "--mcp",
            shlex.join([sys.executable, SERVER]),
            "--model",
            f"{faux.provider_id}/faux-1",
        ],
        stdin=io.StringIO("\n".join(lines)),
        stdout=out,
        stderr=err,
    )
    shown = out.getvalue() + err.getvalue()
    assert code == 0, shown
    assert "MCP server" in shown and "asks: How many pizzas, and which size?" in shown
    assert "answer with {size: small|large, count: integer, gift: boolean (optional)}" in shown
    assert "does not match the requested schema" in shown and "size" in shown
    assert "answered order" in shown
    assert "all ordered" in shown
    (call,) = [c for c in faux.calls if len(c.context.messages) > 1]
    result = call.context.messages[-1]
    assert isinstance(result, ToolResultMessage)
    assert text(result) == "ordered 1 large pizzas"


# --- a 2.x server whose tool asks the mcp 1.x way (ctx.elicit) -------------------------------

OLD_STYLE = str(Path(__file__).resolve().parent / "old_style_server.py")


async def test_a_tool_that_elicits_the_mcp_1x_way_works_on_a_2x_server(errlog: IO[str]) -> None:
    """Issue 30: `ctx.elicit` in a 2.x server failed with "no back-channel for server-initiated
    requests"; the client connects again with the handshake, where it works, for a handler and
    through approvals alike."""
    asked: list[MCPElicitation] = []

    def handler(request: MCPElicitation) -> MCPElicitationAnswer:
        asked.append(request)
        return MCPElicitationAnswer.accept({"size": "L"})

    mcp = MCPClient.stdio(
        sys.executable, [OLD_STYLE], errlog=errlog, name="old", elicitation=handler
    )
    async with mcp:
        main = FauxProvider([faux_tool_call("pick", {}), faux_text("ok")])
        agent = Agent(initial_state={"model": main.model, "tools": mcp.tools})
        await agent.prompt("pick")
    (result,) = results(agent.state.messages)
    assert text(result) == "#1 accept size='L'", text(result)
    (request,) = asked
    assert (request.tool, request.message) == ("pick", "Which size?")

    main = FauxProvider([faux_tool_call("pick", {}), faux_text("ok")])
    mcp = MCPClient.stdio(
        sys.executable, [OLD_STYLE], errlog=errlog, name="old", elicitation="approvals"
    )
    async with mcp:
        agent = Agent(initial_state={"model": main.model, "tools": mcp.tools})
        await agent.prompt("pick")
        (question,) = agent.state.pending_approvals
        assert question.reason == "MCP server 'old' asks: Which size?"
        agent.approve(question.tool_call_id, arguments={"size": "S"})
        await agent.continue_()
    (result,) = results(agent.state.messages)
    assert text(result) == "#2 accept size='S'", text(result)


def test_a_server_is_named_shortly_to_the_user() -> None:
    """A question names the server by `name=`, else the name it reports (cleaned, clipped),
    else a short form of its command line or URL, never the whole command line."""
    from agentcore.mcp._elicitation import reported_name

    assert reported_name("shop") == "shop"
    assert reported_name(" evil\x1b[2J\u202ename\n") == "evil[2Jname"
    assert reported_name("x" * 500) == "x" * 63 + "…"
    assert reported_name(None) == ""
    shorts = {
        MCPClient.stdio(sys.executable, ["-m", "mcp_server_time", "--local-timezone", "UTC"]): (
            "mcp_server_time"
        ),
        MCPClient.stdio(sys.executable, ["-u", "/srv/tools/server.py"]): "server.py",
        MCPClient.stdio("uvx", ["mcp-server-git", "--repository", "."]): "mcp-server-git",
        MCPClient.stdio("/usr/local/bin/my-server", ["--flag"]): "my-server",
        MCPClient.http("https://user:pw@tools.example.org:8443/mcp?key=1"): (
            "tools.example.org:8443"
        ),
        MCPClient.stdio("python", ["s.py"], name="given"): "given",
    }
    for client, short in shorts.items():
        assert client.server_name == short


QUESTIONS = str(Path(__file__).resolve().parent / "question_server.py")


async def test_a_huge_question_is_cut_where_it_enters_and_a_sprawling_one_refused(
    errlog: IO[str],
) -> None:
    """Issue 30: a question reached the page at any size (a 100k-character field title took
    seconds to lay out, 2M froze the tab). Its texts are cut, with a note, in the
    `ApprovalRequest` every surface shows; the answer is still checked as the server asked."""
    from agentcore.mcp._question import MESSAGE_LIMIT, SCHEMA_LIMIT, TEXT_LIMIT

    main = FauxProvider([faux_tool_call("loud", {}), faux_text("asked"), faux_text("answered")])
    mcp = MCPClient.stdio(
        sys.executable, [QUESTIONS], errlog=errlog, name="q", elicitation="approvals"
    )
    async with mcp:
        agent = Agent(initial_state={"model": main.model, "tools": mcp.tools})
        await agent.prompt("ask")
        (question,) = agent.state.pending_approvals
        assert question.reason is not None and question.input_schema is not None
        head = "MCP server 'q' asks: "
        assert question.reason == head + "M" * MESSAGE_LIMIT + (
            f"… ({2_000_000 - MESSAGE_LIMIT:,} more characters not shown)"
        )
        field = question.input_schema["properties"]["size"]
        assert field["title"] == "T" * TEXT_LIMIT + (
            f"… ({100_000 - TEXT_LIMIT:,} more characters not shown)"
        )
        assert field["description"].startswith("D" * TEXT_LIMIT + "… (1,999,500 more")
        assert len(json.dumps(question.input_schema)) < SCHEMA_LIMIT
        with pytest.raises(ConfigError, match="size"):  # still checked as asked
            agent.approve(question.tool_call_id, arguments={"size": 3})
        agent.approve(question.tool_call_id, arguments={"size": "L"})
        await agent.continue_()
    results_ = results(agent.state.messages)
    assert text(results_[-1]) == "size L"

    asked: list[MCPElicitation] = []

    def handler(request: MCPElicitation) -> MCPElicitationAnswer:
        asked.append(request)
        return MCPElicitationAnswer.decline()

    main = FauxProvider(
        [faux_tool_call("sprawling", {}), faux_tool_call("loud", {}), faux_text("ok")]
    )
    mcp = MCPClient.stdio(sys.executable, [QUESTIONS], errlog=errlog, name="q", elicitation=handler)
    async with mcp:
        agent = Agent(initial_state={"model": main.model, "tools": mcp.tools})
        await agent.prompt("ask")
    sprawled, louder = results(agent.state.messages)
    assert sprawled.is_error
    assert "MCP server 'q' asked a question too large to show: its schema is" in text(sprawled)
    assert len(asked) == 1  # the sprawling question never reached the handler
    assert len(asked[0].message) < MESSAGE_LIMIT + 100
    assert text(louder) == "no answer (decline)"
