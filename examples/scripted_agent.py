"""An agent driven by a scripted model: no server, no API key, the same in every run.

    python examples/scripted_agent.py

The `faux` provider (`agentcore.testing.FauxProvider`) streams queued answers in small chunks,
just as a real provider streams a real model's. This is how an application tests its own tools
and event handling: here the script calls the ready-made `read_file` and `calculator` tools of
`agentcore.builtin_tools`, and the last answer is computed from what the tools returned.

It also shows the synchronous API: called with no event loop running, `agent_loop` runs on a
background thread and its events are read with a plain `for`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from agentcore import (
    AgentContext,
    AgentLoopConfig,
    AssistantMessage,
    TextContent,
    ToolResultMessage,
    UserMessage,
    agent_loop,
)
from agentcore.builtin_tools import calculator, read_file
from agentcore.testing import FauxCall, FauxProvider, faux_text, faux_tool_call

ROOT = Path(__file__).resolve().parent.parent
"""The repository root: the only directory `read_file` may read."""


def last_tool_result(call: FauxCall) -> str:
    """The text of the newest tool result the scripted model was sent."""
    for message in reversed(call.context.messages):
        if isinstance(message, ToolResultMessage):
            return "".join(b.text for b in message.content if isinstance(b, TextContent))
    raise AssertionError("no tool result in the context")


def multiply_the_count(call: FauxCall) -> AssistantMessage:
    lines = int(last_tool_result(call).split(" has ")[1].split()[0])
    return faux_tool_call("calculator", {"expression": f"{lines} * 7"})


def report(call: FauxCall) -> AssistantMessage:
    return faux_text(f"The answer: {last_tool_result(call)}.")


def main() -> int:
    faux = FauxProvider(
        [
            faux_tool_call("read_file", {"path": "pyproject.toml", "max_lines": 1}),
            multiply_the_count,  # answers may be functions of the request
            report,
        ]
    )
    config = AgentLoopConfig(model=faux.model)
    context = AgentContext(system_prompt="You are scripted.", tools=[read_file(ROOT), calculator()])
    prompt = UserMessage(content="How many lines does pyproject.toml have, times 7?")

    events = agent_loop([prompt], context, config)
    for event in events:  # no event loop here: a plain, blocking iteration
        if event.type == "tool_execution_start":
            print(f"⚙ {event.tool_name}({event.args})")
        elif event.type == "tool_execution_end":
            first_line = "".join(getattr(b, "text", "") for b in event.result.content)
            print(f"✓ {event.tool_name} → {first_line.splitlines()[0]}")
        elif event.type == "message_end" and isinstance(event.message, AssistantMessage):
            text = "".join(b.text for b in event.message.content if isinstance(b, TextContent))
            if text:
                print(text)
    messages = events.result_sync()
    print(f"{len(messages)} messages, {faux.call_count} model requests")
    final = messages[-1]
    return 0 if isinstance(final, AssistantMessage) and final.stop_reason == "stop" else 1


if __name__ == "__main__":
    sys.exit(main())
