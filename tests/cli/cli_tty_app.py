"""`agentcore chat` on a scripted faux model, for the terminal tests (run in a pseudo-terminal).

`python cli_tty_app.py [chat options...]` registers the faux provider `faux-tty/faux-1` and runs
`agentcore chat` with it. The model answers each prompt by what it says:
- `markdown`: an answer in Markdown (a heading, bold, code, a list);
- `endless`: a very long answer, streamed slowly (to stop with Ctrl-C);
- `long`: 800 words (5 seconds of streaming), then the `seen:` line;
- `hold`: waits until a line can be read from the FIFO named by $TTY_GATE, then answers `held`;
- `tool`: calls the MCP test server's `wait` tool (it waits 30 s or until stopped);
- `order`: calls the `order` tool of tests/mcp/interactive_server.py (it asks the user);
- `sample`: calls its `ask_model` tool with "Capital of France?" (it samples the model, which
  answers as to any other prompt);
- `think`: thinks (two lines), then answers `thought`;
- `fail`: fails with the error `the model fell over`;
- `shell: CMD`: calls the `shell` tool of `--shell` with the command CMD;
- `escape`: calls `shell` with a command holding `ESC[nD`, drawn over by `ls -la` on a raw
  terminal;
- `osc`: an answer holding OSC 52 (clipboard write) and window title escapes;
- `html`: an answer with text that looks like HTML (`List<String>`, `<ol><li>`, `<tool_response>`);
- `code`: calls `run_code` (of `--tools --code-mode`) with CODE, a snippet that calls the
  calculator twice and holds a title escape in a comment;
- `refund` (with `--agents`, the file of `AGENTS`): triage (its system prompt) hands to billing,
  which answers `Order 7 is refunded.`;
- anything else: `echo: <the prompt>`;
each answer but `endless` ends with a line `seen: ...` listing every user message of the request.
With $CLI_TTY_NO_PROMPT_TOOLKIT set, prompt_toolkit cannot be imported (as if not installed).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio

from agentcore.cli import main
from agentcore.llm import register_model
from agentcore.messages import AssistantMessage, UserMessage
from agentcore.testing import (
    FauxCall,
    FauxProvider,
    faux_error,
    faux_text,
    faux_thinking,
    faux_tool_call,
)

ESCAPE_COMMAND = "touch pwned #\x1b[14Dls -la        "
"""Shown raw, the terminal draws `$ ls -la` over `$ touch pwned #`; `touch pwned` is what runs."""

CODE = """\
a = await calculator(expression="6*7")  # \x1b]0;pwned title\x07
b = await calculator(expression="2**10")
print("sum", int(a.split("= ")[1]) + int(b.split("= ")[1]))"""
"""The snippet of `code`: a terminal shown it raw would set its window title."""

HTML = """\
In Java, List<String> names holds names.

<ol><li>one</li>
<li>two</li></ol>
after the list

<tool_response>
fifteen items here
</tool_response>"""

MARKDOWN = """\
# Big Title

Some **bold words** and `inline code`.

```python
print("hello")
```

- first item
- second item"""


AGENTS = """\
start = "triage"

[agents.triage]
description = "Answers first; sends money questions on."
system_prompt = "You are triage."
handoffs = ["billing"]

[agents.billing]
description = "Refunds and invoices."
system_prompt = "You are billing."
handoffs = [{ to = "triage", returns = false }]
"""
"""The `--agents` file of the handoff test (triage and billing)."""


def _text(message: UserMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    return "".join(getattr(b, "text", "") for b in message.content)


async def answer(call: FauxCall) -> AssistantMessage:
    users = [_text(m) for m in call.context.messages if isinstance(m, UserMessage)]
    last = call.context.messages[-1]
    seen = "\n\nseen: " + " | ".join(users)
    if call.context.system_prompt == "You are billing.":
        return faux_text("Order 7 is refunded." + seen)
    if not isinstance(last, UserMessage):  # after a tool result
        return faux_text("tool done" + seen)
    prompt = _text(last)
    if prompt == "refund" and call.context.system_prompt == "You are triage.":
        return faux_tool_call("transfer_to_billing", {})
    if prompt == "markdown":
        return faux_text(MARKDOWN + seen)
    if prompt == "long":
        return faux_text("word " * 800 + seen)
    if prompt == "endless":
        return faux_text("word " * 20_000)
    if prompt == "hold":
        gate = Path(os.environ["TTY_GATE"])
        await anyio.to_thread.run_sync(gate.read_text)  # until the test writes to it
        return faux_text("held" + seen)
    if prompt == "think":
        return faux_thinking("Let me see.\nYes, that is it.", "thought" + seen)
    if prompt == "fail":
        return faux_error("the model fell over")
    if prompt.startswith("shell: "):
        return faux_tool_call("shell", {"command": prompt.removeprefix("shell: ")})
    if prompt == "escape":
        return faux_tool_call("shell", {"command": ESCAPE_COMMAND})
    if prompt == "osc":
        return faux_text("copied\x1b]52;c;cm0gLXJmIH4=\x07 and \x1b]0;pwned title\x07 done" + seen)
    if prompt == "html":
        return faux_text(HTML + seen)
    if prompt == "code":
        return faux_tool_call("run_code", {"code": CODE})
    if prompt == "tool":
        return faux_tool_call("wait", {"key": "k", "steps": 1})
    if prompt == "order":
        return faux_tool_call("order", {"item": "pizzas"})
    if prompt == "sample":
        return faux_tool_call("ask_model", {"question": "Capital of France?", "max_tokens": 500})
    return faux_text(f"echo: {prompt}" + seen)


if __name__ == "__main__":
    if os.environ.get("CLI_TTY_NO_PROMPT_TOOLKIT"):
        sys.modules["prompt_toolkit"] = None  # type: ignore[assignment]
    faux = FauxProvider([answer] * 1000, provider="faux-tty", chunk_chars=4, tokens_per_second=200)
    register_model(faux.model)
    sys.exit(main(["chat", "--model", "faux-tty/faux-1", *sys.argv[1:]]))
