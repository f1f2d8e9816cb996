"""A research agent over a small library of notes: it searches, reads, takes notes, cites.

    python examples/research_agent.py            # a scripted model: offline, the same every run
    python examples/research_agent.py --local    # the built-in local model (scripts/local-model)

No web: the agent's library is the Markdown files of `examples/research_notes/` (a few notes on
honeybees). It has three tools of its own, written with `@tool`:

- `search_notes(query)` ranks the notes by the words they share with the query;
- `read_note(name)` returns one note whole;
- `take_note(text, sources)` writes a finding into the agent's notebook, and refuses a source the
  agent has not read in this conversation: citations must point at something it saw.

The conversation has two turns on one `Agent`: a question, then a follow-up that only makes sense
after the first answer ("Who found that out?"); the agent keeps the transcript between them. Each
answer names its sources in brackets, like `[waggle-dance.md]`, and the notebook is printed at the
end.

By default the model is scripted (`agentcore.testing.FauxProvider`): its answers are functions of
the conversation, so it reads whichever note the search ranked first and cites what it read. With
`--local` it is the local model served by `scripts/local-model` (on `AGENTCORE_LOCAL_PORT` when
set), which chooses its own calls.
"""

from __future__ import annotations

import os
import re
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import anyio

from agentcore import (
    Agent,
    AgentEvent,
    AgentTool,
    AssistantMessage,
    TextContent,
    ToolError,
    ToolResultMessage,
    tool,
)
from agentcore.llm import Model, get_model
from agentcore.testing import FauxCall, FauxProvider, faux_text, faux_tool_call

NOTES_DIR = Path(__file__).resolve().parent / "research_notes"
QUESTIONS = [
    "How do honeybees tell each other where the flowers are?",
    "Who found that out, and was the discovery recognised?",
]
SYSTEM_PROMPT = (
    "You research questions in a library of notes. Use search_notes to find notes, read_note to "
    "read one, and take_note to record each finding with the notes it came from. Answer in two "
    "or three sentences and cite every note you used by its name in brackets, like [colony.md]."
)


# --- the library and the notebook ---------------------------------------------------------------


COMMON_WORDS = frozenset(
    {"the", "and", "are", "was", "were", "who", "what", "how", "did", "does", "for", "from"}
    | {"with", "that", "this", "its", "her", "his"}
)


def words(text: str) -> set[str]:
    """The words of `text` that say something, lower-cased, a plural `s` dropped (so `flowers`
    matches `flower`)."""
    found = re.findall(r"[a-z]+", text.lower())
    return {
        w[:-1] if len(w) > 3 and w.endswith("s") else w
        for w in found
        if len(w) > 2 and w not in COMMON_WORDS
    }


@dataclass
class Library:
    """The notes the agent may search and read, and the notebook it writes."""

    directory: Path
    read: set[str] = field(default_factory=set)
    notebook: list[str] = field(default_factory=list)

    def names(self) -> list[str]:
        return sorted(p.name for p in self.directory.glob("*.md"))

    def text(self, name: str) -> str:
        if name not in self.names():
            raise ToolError(f"there is no note {name!r}; the notes are: {', '.join(self.names())}")
        return (self.directory / name).read_text(encoding="utf-8")

    def tools(self) -> list[AgentTool]:
        """The agent's three tools, bound to this library."""

        @tool
        def search_notes(query: str, limit: int = 3) -> str:
            """Search the notes; the best matches (most words shared with the query) first.

            Args:
                query: a few words about what you are looking for.
                limit: the most notes to list.
            """
            wanted = words(query)
            scores = Counter({name: len(wanted & words(self.text(name))) for name in self.names()})
            hits = [(name, score) for name, score in scores.most_common(limit) if score > 0]
            if not hits:
                return f"No note matches {query!r}."
            return "\n".join(
                f"{name}: {self.text(name).splitlines()[0].lstrip('# ')} ({score} matching words)"
                for name, score in hits
            )

        @tool
        def read_note(name: str) -> str:
            """Read one note whole.

            Args:
                name: the note's file name, as search_notes lists it (e.g. colony.md).
            """
            text = self.text(name)
            self.read.add(name)
            return text

        @tool
        def take_note(text: str, sources: list[str]) -> str:
            """Write a finding into the notebook, with the notes it comes from.

            Args:
                text: the finding, in one or two sentences of your own.
                sources: the names of the notes it comes from; you must have read each one.
            """
            unread = [s for s in sources if s not in self.read]
            if not sources or unread:
                raise ToolError(
                    f"cite only notes you have read; not read: {unread or 'none given'}"
                )
            self.notebook.append(f"{text} [{', '.join(sources)}]")
            return f"Noted (entry {len(self.notebook)})."

        return [search_notes, read_note, take_note]


# --- the scripted model: each answer is a function of the conversation --------------------------


def last_result(call: FauxCall) -> str:
    """The text of the newest tool result the model was sent."""
    result = next(m for m in reversed(call.context.messages) if isinstance(m, ToolResultMessage))
    return "".join(b.text for b in result.content if isinstance(b, TextContent))


def read_best_hit(call: FauxCall) -> AssistantMessage:
    best = last_result(call).splitlines()[0].split(":")[0]  # "waggle-dance.md: The waggle ..."
    return faux_tool_call("read_note", {"name": best})


def note_key_sentence(call: FauxCall) -> AssistantMessage:
    """Note the first sentence of the last paragraph of the note just read, citing it."""
    asked = next(m for m in reversed(call.context.messages) if isinstance(m, AssistantMessage))
    name = getattr(asked.content[0], "arguments", {})["name"]
    paragraph = last_result(call).strip().split("\n\n")[-1].replace("\n", " ")
    return faux_tool_call(
        "take_note", {"text": paragraph.split(". ")[0].rstrip(".") + ".", "sources": [name]}
    )


def scripted_model(library: Library) -> FauxProvider:
    """Search, read the best hit, note it, answer citing the notebook: once per question."""

    def answer(summary: str) -> Callable[[FauxCall], AssistantMessage]:
        def respond(call: FauxCall) -> AssistantMessage:
            cited = dict.fromkeys(re.findall(r"[\w-]+\.md", " ".join(library.notebook)))
            return faux_text(f"{summary} " + " ".join(f"[{name}]" for name in cited))

        return respond

    return FauxProvider(
        [
            faux_tool_call("search_notes", {"query": "bees tell direction of flowers dance"}),
            read_best_hit,
            note_key_sentence,
            answer(
                "A forager that found flowers dances on the comb: the angle of her waggle run "
                "gives the direction relative to the sun, its length the distance."
            ),
            faux_tool_call("search_notes", {"query": "who discovered the bee dance Nobel"}),
            read_best_hit,
            note_key_sentence,
            answer(
                "Karl von Frisch worked out the meaning of the dances, and shared the 1973 "
                "Nobel Prize in Physiology or Medicine for it."
            ),
        ]
    )


def local_model() -> Model:
    """The built-in local model (`scripts/local-model`), on `AGENTCORE_LOCAL_PORT` when set."""
    model = get_model("local", "qwen2.5-coder-1.5b")
    port = os.environ.get("AGENTCORE_LOCAL_PORT", "").strip()
    return replace(model, base_url=f"http://127.0.0.1:{port}/v1") if port.isdigit() else model


# --- the run ------------------------------------------------------------------------------------


def show(event: AgentEvent) -> None:
    """Print the tool calls, the first line of each result, and the answers."""
    if event.type == "tool_execution_start":
        args = ", ".join(f"{k}={v!r}" for k, v in event.args.items())
        print(f"  → {event.tool_name}({args})")
    elif event.type == "tool_execution_end":
        text = "".join(getattr(b, "text", "") for b in event.result.content)
        print(f"  {'✗' if event.is_error else '✓'} {text.splitlines()[0] if text else ''}")
    elif (
        event.type == "message_end"
        and isinstance(event.message, AssistantMessage)
        and event.message.text
    ):
        print(f"agent: {event.message.text}")


async def main(use_local: bool) -> int:
    library = Library(NOTES_DIR)
    faux = scripted_model(library)  # kept in a variable: the model lives as long as its provider
    model = local_model() if use_local else faux.model
    agent = Agent(
        initial_state={"model": model, "tools": library.tools(), "system_prompt": SYSTEM_PROMPT},
        temperature=0 if use_local else None,
        max_turns=8,
    )
    agent.subscribe(show)
    for question in QUESTIONS:
        print(f"\nyou: {question}")
        await agent.prompt(question)
        final = agent.state.messages[-1]
        if not isinstance(final, AssistantMessage) or final.stop_reason != "stop":
            print(
                f"error: the run did not finish: {agent.state.error_message or agent.state.limit}",
                file=sys.stderr,
            )
            return 1
    print("\nnotebook:")
    for number, entry in enumerate(library.notebook, 1):
        print(f"  {number}. {entry}")
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, "--local" in sys.argv[1:]))
