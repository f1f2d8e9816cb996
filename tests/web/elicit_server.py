"""An MCP server (official SDK, stdio) whose `book` tool asks the user for a booking while it
runs (an elicitation), used by the page's browser test (`test_web_input_form.py`) through
`agentcore serve --mcp`. The schema has every kind of field the page's form shows (a string
with a length and a format, an email, a date, a choice with titles, an integer with bounds, a
boolean) and a field title that is HTML, which the page must show as text.
"""

from __future__ import annotations

import datetime
from typing import Annotated, Literal

from mcp.server.mcpserver import (
    AcceptedElicitation,
    Elicit,
    ElicitationResult,
    MCPServer,
    Resolve,
)
from pydantic import BaseModel, Field

HOSTILE_TITLE = "<img src=x onerror=\"window.__pwned='title'\">Seats"

server = MCPServer("booking-server", version="1.0")


class Booking(BaseModel):
    """What the user is asked for."""

    name: str = Field(title="Your name", description="As on your ID", min_length=2, max_length=40)
    email: str = Field(title="Email", json_schema_extra={"format": "email"})
    day: datetime.date = Field(title="Day")
    seats: int = Field(title=HOSTILE_TITLE, ge=1, le=8, description="<b>not bold</b>")
    room: Literal["garden", "hall"] = Field(title="Room")
    quiet: bool = Field(default=False, title="A quiet table")


def _booking(place: str) -> Elicit[Booking]:
    return Elicit(f"Booking at {place}: who, when and how many?", Booking)


@server.tool()
async def book(place: str, choice: Annotated[ElicitationResult[Booking], Resolve(_booking)]) -> str:
    """Book a table, asking the user for the details."""
    if isinstance(choice, AcceptedElicitation):
        b = choice.data
        quiet = ", quiet" if b.quiet else ""
        return (
            f"booked {place} for {b.name} <{b.email}> on {b.day.isoformat()}: "
            f"{b.seats} seats in the {b.room}{quiet}"
        )
    return f"no booking: the user chose {choice.action}"


if __name__ == "__main__":
    server.run("stdio")
