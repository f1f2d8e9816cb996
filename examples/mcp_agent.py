"""An agent whose tools come from an MCP server it starts: the notes server next to this file.

    pip install 'agentcore-loop[mcp]'
    python examples/mcp_agent.py            # a scripted model: offline, the same every run
    python examples/mcp_agent.py --local    # the built-in local model (scripts/local-model)

`agentcore.mcp.MCPClient.stdio(...)` starts `examples/mcp_server_notes.py` (an MCP server written
with the official SDK, which knows nothing of agentcore) as a subprocess and speaks MCP with it on
its stdin and stdout. Its tools become ordinary `AgentTool`s, named with a prefix (`notes_add_note`,
`notes_list_notes`, `notes_find_notes`), which the agent calls like any other: validated
arguments, parallel calls, one result each. The server stops when the `async with` block ends.

The scripted model (`agentcore.testing.FauxProvider`) adds two notes in one answer (two calls run
in parallel), searches them, and answers from what the search returned. The notes land in a JSON
file the server writes, printed at the end. With `--local` the local model served by
`scripts/local-model` (on `AGENTCORE_LOCAL_PORT` when set) chooses its own calls.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import anyio

from agentcore import Agent, AgentEvent, AssistantMessage, TextContent, ToolResultMessage
from agentcore.llm import Model, get_model
from agentcore.mcp import MCPClient
from agentcore.messages import ToolCall
from agentcore.testing import FauxCall, FauxProvider, faux_message, faux_text, faux_tool_call

SERVER = Path(__file__).resolve().parent / "mcp_server_notes.py"
TASK = (
    "Please remember two things: the deploy freeze starts on 18 December, and the staging "
    "database is restored from backup every Monday. Then tell me what my notes say about deploys."
)


def scripted_model() -> FauxProvider:
    def answer_from_search(call: FauxCall) -> AssistantMessage:
        result = next(
            m for m in reversed(call.context.messages) if isinstance(m, ToolResultMessage)
        )
        found = [json.loads(b.text) for b in result.content if isinstance(b, TextContent)]
        titles = ", ".join(f"#{n['id']} {n['title']!r}" for n in found)
        return faux_text(f"Your notes on deploys ({titles}): {found[0]['text']}")

    return FauxProvider(
        [
            faux_message(
                ToolCall(
                    id="n1",
                    name="notes_add_note",
                    arguments={
                        "title": "Deploy freeze",
                        "text": "No deploys from 18 December.",
                        "tags": ["deploy"],
                    },
                ),
                ToolCall(
                    id="n2",
                    name="notes_add_note",
                    arguments={
                        "title": "Staging database",
                        "text": "Restored from backup every Monday.",
                        "tags": ["staging"],
                    },
                ),
            ),
            faux_tool_call("notes_find_notes", {"words": "deploy"}),
            answer_from_search,
        ]
    )


def local_model() -> Model:
    """The built-in local model (`scripts/local-model`), on `AGENTCORE_LOCAL_PORT` when set."""
    model = get_model("local", "qwen2.5-coder-1.5b")
    port = os.environ.get("AGENTCORE_LOCAL_PORT", "").strip()
    return replace(model, base_url=f"http://127.0.0.1:{port}/v1") if port.isdigit() else model


def show(event: AgentEvent) -> None:
    if event.type == "tool_execution_start":
        print(f"  → {event.tool_name}({', '.join(f'{k}={v!r}' for k, v in event.args.items())})")
    elif event.type == "tool_execution_end":
        text = " ".join(getattr(b, "text", "").replace("\n", " ") for b in event.result.content)
        print(f"  {'✗' if event.is_error else '✓'} {' '.join(text.split())}")
    elif (
        event.type == "message_end"
        and isinstance(event.message, AssistantMessage)
        and event.message.text
    ):
        print(f"agent: {event.message.text}")


async def run(store: Path, use_local: bool) -> int:
    """Start the server (its notes in `store`), run the agent with its tools, stop the server."""
    faux = scripted_model()  # kept in a variable: the model lives as long as its provider
    # the server gets a minimal environment (none of our API keys); PYTHONPATH lets it import
    # the same packages (the MCP SDK) as this program
    server = MCPClient.stdio(
        sys.executable,
        [str(SERVER), str(store)],
        env={"PYTHONPATH": os.pathsep.join(sys.path)},
        name="notes",
        prefix="notes_",
    )
    async with server:
        info = server.server_info
        print(f"connected to {info.name if info else 'the server'}: ", end="")
        print(", ".join(t.name for t in server.tools))
        agent = Agent(
            initial_state={
                "model": local_model() if use_local else faux.model,
                "tools": server.tools,
                "system_prompt": "You keep the user's notes with the notes_ tools.",
            },
            temperature=0 if use_local else None,
            max_turns=8,
        )
        agent.subscribe(show)
        print(f"you: {TASK}")
        await agent.prompt(TASK)
    final = agent.state.messages[-1]
    return 0 if isinstance(final, AssistantMessage) and final.stop_reason == "stop" else 1


def main(use_local: bool) -> int:
    with tempfile.TemporaryDirectory(prefix="mcp-notes-") as directory:
        store = Path(directory, "notes.json")
        code = anyio.run(run, store, use_local)
        saved = json.loads(store.read_text(encoding="utf-8")) if store.exists() else []
        print(f"the server's notes file holds {len(saved)} note(s):")
        for note in saved:
            print(f"  #{note['id']} {note['title']}: {note['text']} {note['tags']}")
    return code


if __name__ == "__main__":
    sys.exit(main("--local" in sys.argv[1:]))
