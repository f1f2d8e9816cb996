"""The scripted faux model of the web tests: it answers by the last message of the conversation.

- a tool result: "The calculator says: **<result>**."
- "remember: TEXT": a call of the `remember` tool (of `Memory`) storing TEXT as a fact;
- "book": a call of the `book` tool of `elicit_server.py` (served with `--mcp`);
- "tool": a call of the built-in `calculator` tool on 6*7;
- "long": a long answer (streamed slowly when the provider is paced: to be stopped);
- "html": an answer holding a <script> and HTML that must show as text;
- "think": thinking, then an answer;
- anything else: a Markdown answer echoing the prompt.
"""

from __future__ import annotations

from agentcore.messages import AssistantMessage, TextContent, ThinkingContent, ToolCall
from agentcore.testing import FauxCall

HTML_ANSWER = (
    'Here is markup: <script>window.__pwned = "script"</script> and '
    '<img src="x" onerror="window.__pwned = \'img\'"> and <b>not bold</b>.'
)
LONG_ANSWER = " ".join(f"word{i}" for i in range(4000))


def _last_text(call: FauxCall) -> tuple[str, str]:
    message = call.context.messages[-1]
    content = message.content
    text = content if isinstance(content, str) else "".join(getattr(b, "text", "") for b in content)
    return message.role, text


def answer(call: FauxCall) -> AssistantMessage:
    """The scripted answer to one request."""
    role, text = _last_text(call)
    if role == "tool_result":
        return AssistantMessage(content=[TextContent(text=f"The calculator says: **{text}**.")])
    lowered = text.lower()
    if lowered.startswith("remember: "):  # the `remember` tool of agent_options["memory"]
        arguments = {"text": text.partition(": ")[2], "kind": "fact"}
        call_block = ToolCall(id=f"call_{call.index}", name="remember", arguments=arguments)
        return AssistantMessage(content=[call_block])
    if "book" in lowered:  # the `book` tool of elicit_server.py (`serve --mcp`), which asks
        call_block = ToolCall(
            id=f"call_{call.index}", name="book", arguments={"place": "Chez Nous"}
        )
        return AssistantMessage(content=[call_block])
    if "tool" in lowered:
        call_block = ToolCall(
            id=f"call_{call.index}", name="calculator", arguments={"expression": "6*7"}
        )
        return AssistantMessage(content=[TextContent(text="Let me compute that."), call_block])
    if "long" in lowered:
        return AssistantMessage(content=[TextContent(text=LONG_ANSWER)])
    if "html" in lowered:
        return AssistantMessage(content=[TextContent(text=HTML_ANSWER)])
    if "think" in lowered:
        return AssistantMessage(
            content=[
                ThinkingContent(thinking="The user wants me to think. I think, therefore I am."),
                TextContent(text="Done thinking."),
            ]
        )
    return AssistantMessage(
        content=[TextContent(text=f"# Echo\n\nYou said: *{text}*\n\n- one\n- two\n\n`code`")]
    )
