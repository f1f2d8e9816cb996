"""MCP elicitation: a server written with the official SDK (`interactive_server.py`, over stdio)
asks the user for structured input during a tool call; the client's handler answers it (accept
with content checked against the requested schema, decline, cancel), driven through an `Agent`
on the faux model.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import IO, Any

import pytest
from mcp_support import errlog, results, text

from agentcore import Agent, ConfigError, ToolResultMessage
from agentcore.mcp import MCPClient, MCPElicitation, MCPElicitationAnswer
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
