"""A third-party MCP server (`mcp-server-time`, from the `dev` extra) driven by the real local
model: the model sees the server's tools, calls one, and the result comes back over MCP.

Only the protocol is checked (a call of the server's tool with a timezone string, its result,
well-formed events), never the model's wording.
"""

from __future__ import annotations

import sys

import anyio
import pytest

from agentcore import AgentContext, AgentLoopConfig, AssistantMessage, ToolResultMessage
from agentcore.testing import check_well_formed

from .local_server import LocalModel
from .test_local_model import REQUEST_TIMEOUT, run_loop

pytestmark = [pytest.mark.local_llm, pytest.mark.anyio]


async def test_the_local_model_calls_an_mcp_servers_tool(local_model: LocalModel) -> None:
    pytest.importorskip("mcp_server_time")
    from agentcore.mcp import MCPClient

    turns = 0

    def at_most_two_turns(ctx: object) -> bool:  # bounds a model that keeps calling the tool
        nonlocal turns
        turns += 1
        return turns >= 2

    client = MCPClient.stdio(
        sys.executable,
        ["-m", "mcp_server_time", "--local-timezone", "UTC"],
        name="time",
        allow=["get_current_time"],
    )
    with anyio.fail_after(REQUEST_TIMEOUT * 3):
        async with client:
            config = AgentLoopConfig(
                model=local_model.model,
                temperature=0,
                max_tokens=128,
                should_stop_after_turn=at_most_two_turns,
            )
            context = AgentContext(
                system_prompt="You are a helpful assistant. Use the tools to answer.",
                tools=client.tools,
            )
            events, messages = await run_loop(
                "What time is it now in the Europe/Paris timezone? Call get_current_time.",
                context,
                config,
                requests=2,
            )
    check_well_formed(events)
    first = messages[1]
    assert isinstance(first, AssistantMessage), messages
    assert first.stop_reason == "tool_use", (first.stop_reason, first.error_message, first.content)
    call = first.tool_calls[0]
    assert call.name == "get_current_time" and isinstance(call.arguments.get("timezone"), str)
    result = next(m for m in messages if isinstance(m, ToolResultMessage))
    assert result.tool_call_id == call.id and result.details["server"] == "time"
    if not result.is_error:  # a valid IANA name: the server's JSON answer came back over MCP
        assert '"datetime"' in result.content[0].text  # type: ignore[union-attr]
