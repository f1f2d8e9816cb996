"""An MCP server (official SDK, stdio) whose questions (elicitations) are hostile in size, for
test_mcp_elicitation.py:

- `loud`: asks with a 2,000,000-character message, a field whose title is 100,000 characters
  and whose description is 2,000,000; answered, it says how long the answer's `size` was;
- `sprawling`: asks to choose among 5,000 choices of 40 characters (200 KB of schema).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import AcceptedElicitation, Elicit, ElicitationResult, MCPServer, Resolve
from pydantic import BaseModel, Field

server = MCPServer("questions", version="1.0")


class Loud(BaseModel):
    """One field, with hostile texts."""

    size: str = Field(title="T" * 100_000, description="D" * 2_000_000)


def _loud() -> Elicit[Loud]:
    return Elicit("M" * 2_000_000, Loud)


@server.tool()
async def loud(choice: Annotated[ElicitationResult[Loud], Resolve(_loud)]) -> str:
    """Ask with huge texts."""
    if isinstance(choice, AcceptedElicitation):
        return f"size {choice.data.size}"
    return f"no answer ({choice.action})"


CHOICES: Any = Literal.__getitem__(tuple(f"choice-{i:05d}-" + "x" * 27 for i in range(5_000)))


class Sprawling(BaseModel):
    """One field with very many choices."""

    pick: CHOICES


def _sprawling() -> Elicit[Sprawling]:
    return Elicit("Pick one", Sprawling)


@server.tool()
async def sprawling(choice: Annotated[ElicitationResult[Sprawling], Resolve(_sprawling)]) -> str:
    """Ask with a huge schema."""
    return f"answered ({choice.action})"


if __name__ == "__main__":
    server.run("stdio")
