"""An MCP server (official SDK, stdio) that asks its client for things during a call: a model
answer (sampling), input from the user (elicitation) and its roots. Used by
test_mcp_sampling.py and test_mcp_elicitation.py.

Its tools ask through the SDK's resolvers (`Resolve`), which work on every protocol version:
2026-07-28 hands the requests to the client inside the call, older versions send them as
stand-alone requests.
"""

from __future__ import annotations

from typing import Annotated, Literal

import mcp_types as types
from mcp.server.mcpserver import (
    AcceptedElicitation,
    Elicit,
    ElicitationResult,
    ListRoots,
    MCPServer,
    Resolve,
    Sample,
)
from pydantic import BaseModel

server = MCPServer("interactive-server", version="1.0")


def _question(question: str, max_tokens: int) -> Sample:
    message = types.SamplingMessage(
        role="user", content=types.TextContent(type="text", text=question)
    )
    return Sample([message], max_tokens=max_tokens, system_prompt="Answer in one word.")


@server.tool()
async def ask_model(
    question: str,
    max_tokens: int,
    answer: Annotated[types.CreateMessageResult, Resolve(_question)],
) -> str:
    """Ask the client's model a question; return its answer."""
    content = answer.content
    text = content.text if isinstance(content, types.TextContent) else str(content)
    return f"{answer.model} said: {text}"


def _first(question: str) -> Sample:
    return _question(question, 50)


def _again(question: str) -> Sample:
    return _question(question + " (again)", 50)


@server.tool()
async def ask_model_twice(
    question: str,
    first: Annotated[types.CreateMessageResult, Resolve(_first)],
    second: Annotated[types.CreateMessageResult, Resolve(_again)],
) -> str:
    """Ask the client's model twice."""
    return "twice: " + " / ".join(
        c.content.text for c in (first, second) if isinstance(c.content, types.TextContent)
    )


class Order(BaseModel):
    """What the user is asked for."""

    size: Literal["small", "large"]
    count: int
    gift: bool = False


def _order(item: str) -> Elicit[Order]:
    return Elicit(f"How many {item}, and which size?", Order)


@server.tool()
async def order(item: str, choice: Annotated[ElicitationResult[Order], Resolve(_order)]) -> str:
    """Order something, asking the user how many and which size."""
    if isinstance(choice, AcceptedElicitation):
        data = choice.data
        return f"ordered {data.count} {data.size} {item}{' as a gift' if data.gift else ''}"
    return f"no order: the user chose {choice.action}"


def _roots() -> ListRoots:
    return ListRoots()


@server.tool()
async def roots(listed: Annotated[types.ListRootsResult, Resolve(_roots)]) -> str:
    """The client's roots, one URI a line."""
    return "\n".join(f"{r.name}={r.uri}" for r in listed.roots) or "(none)"


if __name__ == "__main__":
    server.run("stdio")
