"""Tool search: prompt tokens per request and wall time per turn, all tools sent vs deferred +
`search_tools`, for 100, 200 and 300 MCP-style tools.

The tools are what MCP servers of SaaS services look like: `github_create_issue`,
`slack_post_message`, ... (12 services x 25 actions at most), each with a one- or two-sentence
description and a JSON Schema of 2-6 described properties (strings, integers, enums, arrays). The
task needs one of them (`jira_create_issue`):

- all sent: the model calls the tool, then answers (2 requests, 2 turns);
- deferred: the model searches ("create a jira issue"), calls the tool found, then answers
  (3 requests, 3 turns). Every tool is deferred; `search_tools` is the one tool sent.

Prompt tokens are each request's system prompt, tool definitions (as JSON) and messages, counted
by the local model's tokenizer (llama.cpp's `/tokenize`, Qwen2.5) when `scripts/local-model` is
running, else estimated at four characters a token (the estimate compaction uses); the output
says which. Wall time per turn is the scripted model (no latency) in this process: what the loop
and the search cost, best of 5 rounds of 50 runs.

    .venv/bin/python bench/tool_search.py
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

from common import MODEL

from agentcore import AgentContext, AgentLoopConfig, AgentTool, AgentToolResult, run_agent_loop
from agentcore.llm import AssistantMessageEventStream, Context, MessageBuilder
from agentcore.llm.events import AssistantMessageEvent
from agentcore.llm.types import SimpleStreamOptions
from agentcore.messages import ToolCall, ToolResultMessage, UserMessage

TOKENIZER = "http://127.0.0.1:18080/tokenize"

SERVICES = {
    "github": ("repository", "GitHub"),
    "gitlab": ("project", "GitLab"),
    "jira": ("project", "Jira"),
    "slack": ("channel", "Slack"),
    "gmail": ("mailbox", "Gmail"),
    "calendar": ("calendar", "Google Calendar"),
    "drive": ("folder", "Google Drive"),
    "notion": ("workspace", "Notion"),
    "stripe": ("account", "Stripe"),
    "postgres": ("database", "PostgreSQL"),
    "s3": ("bucket", "Amazon S3"),
    "linear": ("team", "Linear"),
}
OBJECTS = ("issue", "comment", "file", "user", "label")
VERBS = {
    "list": "List the {obj}s of a {scope} in {svc}, newest first, with paging.",
    "get": "Get one {obj} of a {scope} in {svc} by its id, with all its fields.",
    "create": "Create a new {obj} in a {scope} in {svc}. Returns its id and URL.",
    "update": "Update fields of an existing {obj} in a {scope} in {svc}; fields left out "
    "keep their values.",
    "delete": "Delete an {obj} from a {scope} in {svc}. This cannot be undone.",
}


def _schema(verb: str, obj: str, scope: str) -> dict[str, Any]:
    props: dict[str, Any] = {
        scope: {"type": "string", "description": f"The {scope}'s name or id."},
    }
    if verb in ("get", "update", "delete"):
        props[f"{obj}_id"] = {"type": "string", "description": f"The {obj}'s id."}
    if verb in ("create", "update"):
        props["title"] = {"type": "string", "description": f"The {obj}'s title.", "maxLength": 256}
        props["body"] = {"type": "string", "description": "Markdown text."}
        props["labels"] = {
            "type": "array",
            "items": {"type": "string"},
            "description": "Labels to set.",
        }
        props["priority"] = {"type": "string", "enum": ["low", "medium", "high", "urgent"]}
    if verb == "list":
        props["state"] = {"type": "string", "enum": ["open", "closed", "all"], "default": "open"}
        props["per_page"] = {"type": "integer", "minimum": 1, "maximum": 100, "default": 30}
        props["page"] = {"type": "integer", "minimum": 1, "default": 1}
    required = [scope] + ([f"{obj}_id"] if verb in ("get", "update", "delete") else [])
    if verb == "create":
        required.append("title")
    return {"type": "object", "properties": props, "required": required}


def _ok(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult.text('{"id": "PRJ-1", "url": "https://example.invalid/PRJ-1"}')


def make_tools(count: int, *, deferred: bool) -> list[AgentTool]:
    """`count` MCP-style tools, `jira_create_issue` among them."""
    tools: list[AgentTool] = []
    for obj in OBJECTS:
        for verb, text in VERBS.items():
            for svc, (scope, label) in SERVICES.items():
                tools.append(
                    AgentTool(
                        name=f"{svc}_{verb}_{obj}",
                        description=text.format(obj=obj, scope=scope, svc=label),
                        parameters=_schema(verb, obj, scope),
                        execute=_ok,
                        deferred=deferred,
                    )
                )
    chosen = tools[:count]
    assert any(t.name == "jira_create_issue" for t in chosen)
    return chosen


def _tokens(text: str, counter: dict[str, Any]) -> int:
    if counter.get("remote", True):
        try:
            request = urllib.request.Request(
                TOKENIZER,
                data=json.dumps({"content": text}).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=30) as response:
                counter["remote"] = True
                return len(json.loads(response.read())["tokens"])
        except OSError:
            counter["remote"] = False
    return (len(text) + 3) // 4


def request_text(context: Context) -> str:
    """What a request sends, as text: the system prompt, the tools as JSON, the messages."""
    tools = json.dumps(
        [
            {"name": t.name, "description": t.description, "parameters": t.parameters}
            for t in context.tools
        ]
    )
    messages = []
    for m in context.messages:
        for block in getattr(m, "content", []):
            if isinstance(block, ToolCall):
                messages.append(json.dumps({"name": block.name, "arguments": block.arguments}))
            elif hasattr(block, "text"):
                messages.append(block.text)
        if isinstance(m, UserMessage) and isinstance(m.content, str):
            messages.append(m.content)
    return "\n".join([context.system_prompt or "", tools, *messages])


ARGS = {"project": "PRJ", "title": "Login fails on Safari", "priority": "high"}


def stream_fn(deferred: bool, seen: list[Context] | None):  # type: ignore[no-untyped-def]
    script = (
        [("search_tools", {"query": "create a jira issue"}), ("jira_create_issue", ARGS), None]
        if deferred
        else [("jira_create_issue", ARGS), None]
    )

    def fn(
        model: Any, context: Context, options: SimpleStreamOptions
    ) -> AssistantMessageEventStream:
        if seen is not None:
            seen.append(context)
        turn = sum(1 for m in context.messages if m.role == "assistant")
        step = script[turn]

        async def events() -> AsyncIterator[AssistantMessageEvent]:
            b = MessageBuilder(model)
            yield b.start()
            if step is None:
                index = (start := b.text_start()).content_index
                yield start
                yield b.text_delta(index, "Filed PRJ-1.")
                yield b.text_end(index)
                yield b.done("stop")
                return
            name, args = step
            call = b.toolcall_start(id=f"call_{turn}", name=name)
            yield call
            yield b.toolcall_delta(call.content_index, json.dumps(args))
            yield b.toolcall_end(call.content_index)
            yield b.done("tool_use")

        return AssistantMessageEventStream(events())

    return fn


async def one_run(tools: list[AgentTool], deferred: bool, seen: list[Context] | None) -> list[Any]:
    return await run_agent_loop(
        [UserMessage(content="File a Jira issue: login fails on Safari, high priority.")],
        AgentContext(system_prompt="You are a helpful assistant.", tools=tools),
        AgentLoopConfig(model=MODEL),
        lambda event: None,
        stream_fn=stream_fn(deferred, seen),
    )


async def main() -> None:
    counter: dict[str, Any] = {}
    print("tools | mode | requests | prompt tokens per request | total | µs per turn")
    for count in (100, 200, 300):
        for deferred in (False, True):
            tools = make_tools(count, deferred=deferred)
            seen: list[Context] = []
            messages = await one_run(tools, deferred, seen)
            last = [m for m in messages if isinstance(m, ToolResultMessage)][-1]
            assert not last.is_error, last
            tokens = [_tokens(request_text(c), counter) for c in seen]
            best = float("inf")
            for _ in range(5):
                start = time.perf_counter()
                for _ in range(50):
                    await one_run(tools, deferred, None)
                best = min(best, (time.perf_counter() - start) / 50 / len(seen))
            print(
                f"{count} | {'deferred + search' if deferred else 'all sent'} | {len(seen)} | "
                f"{', '.join(f'{t:,}' for t in tokens)} | {sum(tokens):,} | {best * 1e6:,.0f}"
            )
    how = "llama.cpp /tokenize (Qwen2.5)" if counter.get("remote") else "4 characters a token"
    print(f"tokens counted by: {how}")


if __name__ == "__main__":
    asyncio.run(main())
