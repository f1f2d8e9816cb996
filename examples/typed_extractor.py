"""A typed-output extractor: free text in, validated Python objects out.

    python examples/typed_extractor.py            # a scripted model: offline, the same every run
    python examples/typed_extractor.py --local    # the built-in local model (scripts/local-model)

An `Agent` built with `output_type=` answers with a value of that type instead of text: here a
pydantic model (`Meeting`, with a nested list of `ActionItem`s and a `datetime.date`) from a
meeting's notes, then a dataclass (`Contact`) from an email signature, by assigning
`agent.output_type` between the two runs.

The answer is validated; when it does not validate, the model is told exactly what was wrong and
tries again (up to `output_retries` times). The scripted model shows this on purpose: its first
answer gives the date as "next Tuesday", the error result names the field, and its second answer
is accepted. The value is read from the run's last event (`AgentEndEvent.output`) and from
`agent.state.output`; they are the same object.

By default the model is scripted (`agentcore.testing.FauxProvider`). With `--local` it is the
local model served by `scripts/local-model` (on `AGENTCORE_LOCAL_PORT` when set).
"""

from __future__ import annotations

import datetime
import os
import sys
from dataclasses import dataclass, replace
from typing import Any

import anyio
from pydantic import BaseModel, Field

from agentcore import Agent, AgentEvent, ToolResultMessage
from agentcore.llm import Model, get_model
from agentcore.testing import FauxProvider, faux_tool_call

# --- what to extract ------------------------------------------------------------------------------


class ActionItem(BaseModel):
    """Something a person agreed to do."""

    owner: str = Field(description="who does it (first name)")
    task: str
    due: datetime.date | None = Field(None, description="the deadline, if one was given")


class Meeting(BaseModel):
    """A meeting, as its notes describe it."""

    title: str
    date: datetime.date = Field(description="the day of the meeting, as YYYY-MM-DD")
    attendees: list[str] = Field(description="first names")
    action_items: list[ActionItem]


@dataclass
class Contact:
    """A person's contact details, from an email signature."""

    name: str
    email: str
    phone: str | None = None
    company: str | None = None


NOTES = """\
Release planning, Tuesday 10 March 2026. Present: Ana, Bilal, Chen.
We agreed to ship 0.2 at the end of the month. Bilal will write the migration guide by 20 March.
Chen checks the Windows wheels. Ana sends the announcement once the release is out.
"""

SIGNATURE = """\
Thanks!
--
Dr. Ines Moreau | Platform team, Rivet Labs
ines.moreau@rivet.example | +33 1 23 45 67 89
"""

# --- the models -----------------------------------------------------------------------------------

MEETING = {
    "title": "Release planning",
    "date": "2026-03-10",
    "attendees": ["Ana", "Bilal", "Chen"],
    "action_items": [
        {"owner": "Bilal", "task": "write the migration guide", "due": "2026-03-20"},
        {"owner": "Chen", "task": "check the Windows wheels"},
        {"owner": "Ana", "task": "send the release announcement"},
    ],
}


def scripted_model() -> FauxProvider:
    """Answers by calling the final-answer tool; the first answer has a date that is not one."""
    return FauxProvider(
        [
            faux_tool_call("final_answer", {**MEETING, "date": "next Tuesday"}),
            faux_tool_call("final_answer", MEETING),
            faux_tool_call(
                "final_answer",
                {
                    "name": "Ines Moreau",
                    "email": "ines.moreau@rivet.example",
                    "phone": "+33 1 23 45 67 89",
                    "company": "Rivet Labs",
                },
            ),
        ]
    )


def local_model() -> Model:
    """The built-in local model (`scripts/local-model`), on `AGENTCORE_LOCAL_PORT` when set."""
    model = get_model("local", "qwen2.5-coder-1.5b")
    port = os.environ.get("AGENTCORE_LOCAL_PORT", "").strip()
    return replace(model, base_url=f"http://127.0.0.1:{port}/v1") if port.isdigit() else model


# --- the run --------------------------------------------------------------------------------------


async def main(use_local: bool) -> int:
    faux = scripted_model()  # kept in a variable: the model lives as long as its provider
    agent = Agent(
        initial_state={
            "model": local_model() if use_local else faux.model,
            "system_prompt": "You extract facts from text. Use only what the text says.",
        },
        output_type=Meeting,
        output_retries=2,
        temperature=0 if use_local else None,
    )
    ends: list[Any] = []

    def watch(event: AgentEvent) -> None:
        if event.type == "tool_execution_end" and event.is_error:
            problem = "".join(getattr(b, "text", "") for b in event.result.content)
            found = [line.strip(" -") for line in problem.splitlines() if line.startswith("  - ")]
            print(f"✗ answer rejected ({'; '.join(found)}); the model is told and tries again")
        elif event.type == "agent_end":
            ends.append(event.output)  # the validated value, or None

    agent.subscribe(watch)

    await agent.prompt(f"Extract the meeting from these notes:\n\n{NOTES}")
    meeting = agent.state.output
    if not isinstance(meeting, Meeting):
        print(f"no valid answer: {agent.state.limit or agent.state.error_message}")
        return 1
    assert ends[-1] is meeting
    print(f"{meeting.title} on {meeting.date:%A %d %B %Y}, with {', '.join(meeting.attendees)}")
    for item in meeting.action_items:
        due = f" (due {item.due.isoformat()})" if item.due else ""
        print(f"  - {item.owner}: {item.task}{due}")
    attempts = sum(isinstance(m, ToolResultMessage) for m in agent.state.messages)
    print(f"answered in {attempts} attempt(s)")

    agent.output_type = Contact  # the next run asks for a Contact instead
    await agent.prompt(f"Extract the sender's contact details:\n\n{SIGNATURE}")
    contact = agent.state.output
    if not isinstance(contact, Contact):
        print(f"no valid answer: {agent.state.limit or agent.state.error_message}")
        return 1
    print(contact)
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, "--local" in sys.argv[1:]))
