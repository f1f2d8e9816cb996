"""Refreshing the tools of MCP clients between turns: the `refresh_tools` hook."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from .. import AgentContext, AgentTool, ConfigError, NextTurn, PrepareNextTurnContext
from ._client import MCPClient
from ._tools import MCPTool

if TYPE_CHECKING:
    from .. import Agent

__all__ = ["refresh_tools"]

_log = logging.getLogger("agentcore")


# --- refreshing between turns -------------------------------------------------------------


def _merged(tools: Sequence[AgentTool], clients: Sequence[MCPClient]) -> list[AgentTool]:
    """`tools` with each client's tools replaced by its current ones, where its first tool was
    (or at the end), so that the order the model sees changes as little as possible."""
    owners = {id(c): c for c in clients}
    placed: set[int] = set()
    out: list[AgentTool] = []
    for tool in tools:
        owner = tool.client if isinstance(tool, MCPTool) else None
        if owner is None or id(owner) not in owners:
            out.append(tool)
        elif id(owner) not in placed:
            placed.add(id(owner))
            out.extend(owners[id(owner)].tools)  # the client itself
    for client in clients:
        if id(client) not in placed:
            out.extend(client.tools)
    return out


def refresh_tools(
    *clients: MCPClient, agent: Agent | None = None
) -> Callable[[PrepareNextTurnContext], Awaitable[NextTurn | None]]:
    """A `prepare_next_turn` hook that brings the tools of these MCP clients up to date between
    turns: when a server announced a change, its tools are listed again, and the next request
    carries the new list (other tools stay where they are).

    ```python
    config = AgentLoopConfig(model=model, prepare_next_turn=refresh_tools(git, time))
    ```

    Args:
        clients: the clients whose tools the run uses.
        agent: an `Agent` whose `state.tools` should follow too, so that its next prompt
            starts with the current list (set `agent.prepare_next_turn` to the hook).

    A server that cannot be listed keeps its previous tools (their calls then report it
    unavailable). Compose it with a hook of your own by calling it from yours.
    """
    if not clients:
        raise ConfigError("refresh_tools needs at least one MCPClient")
    for client in clients:
        if not isinstance(client, MCPClient):
            raise ConfigError(f"refresh_tools takes MCPClient objects, got {type(client).__name__}")

    async def prepare_next_turn(ctx: PrepareNextTurnContext) -> NextTurn | None:
        for client in clients:
            if client.tools_changed:
                try:
                    await client.refresh_tools()
                except Exception as exc:
                    _log.warning("MCP server %r: could not refresh its tools: %s", client.name, exc)
        current = list(ctx.context.tools)
        tools = _merged(current, clients)
        if agent is not None:
            agent.state.tools = _merged(agent.state.tools, clients)
        if len(tools) == len(current) and all(a is b for a, b in zip(tools, current, strict=True)):
            return None
        context = AgentContext(
            system_prompt=ctx.context.system_prompt,
            messages=list(ctx.context.messages),
            tools=tools,
        )
        return NextTurn(context=context)

    return prepare_next_turn
