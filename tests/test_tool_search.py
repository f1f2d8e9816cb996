"""Tool search: deferred tools stay out of the requests until `search_tools` finds them; found
tools join the run through `added_tool_names`, stay for the run and across a session's resume,
and pass the one pipeline every call passes (CONFORMANCE P6)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentcore import (
    Agent,
    AgentContext,
    AgentLoopConfig,
    AgentTool,
    AgentToolResult,
    BeforeToolCallContext,
    BeforeToolCallResult,
    ToolResultMessage,
    UserMessage,
    agent_loop,
    run_agent_loop,
    tool,
)
from agentcore.errors import ConfigError, ToolDefinitionError
from agentcore.sessions import JsonlSessionStore
from agentcore.testing import FauxProvider, faux_text, faux_tool_call
from agentcore.tools import SEARCH_TOOLS


@tool(deferred=True)
def create_issue(repo: str, title: str) -> str:
    """Create a GitHub issue in a repository."""
    return f"issue {title!r} created in {repo}"


@tool(deferred=True)
def send_email(to: str, subject: str) -> str:
    """Send an email message to a recipient."""
    return f"sent to {to}"


@tool(deferred=True)
def get_weather(city: str) -> str:
    """Current weather forecast for a city."""
    return f"sunny in {city}"


@tool
def echo(text: str) -> str:
    """Repeat the text."""
    return text


def text_of(message: Any) -> str:
    assert isinstance(message, ToolResultMessage)
    return "".join(getattr(b, "text", "") for b in message.content)


def tool_names(faux: FauxProvider, request: int) -> list[str]:
    return [t.name for t in faux.calls[request].context.tools]


def results(messages: list[Any]) -> list[ToolResultMessage]:
    return [m for m in messages if isinstance(m, ToolResultMessage)]


pytestmark = pytest.mark.anyio

TOOLS = [echo, create_issue, send_email, get_weather]


def test_tools_are_marked_deferred() -> None:
    assert create_issue.deferred and not echo.deferred
    plain = AgentTool(
        name="t", description="d", parameters={"type": "object"}, execute=lambda *a: None
    )
    assert plain.deferred is False
    marked = AgentTool(
        name="t",
        description="d",
        parameters={"type": "object"},
        execute=lambda *a: None,
        deferred=True,
    )
    assert marked.deferred is True
    with pytest.raises(ToolDefinitionError, match="deferred must be True or False"):
        AgentTool(
            name="t",
            description="d",
            parameters={"type": "object"},
            execute=lambda *a: None,
            deferred="yes",  # type: ignore[arg-type]
        )


async def test_a_deferred_tool_joins_after_a_search_and_stays_for_the_run() -> None:
    faux = FauxProvider(
        [
            faux_tool_call("create_issue", {"repo": "a/b", "title": "x"}, id="early"),
            faux_tool_call(SEARCH_TOOLS, {"query": "open an issue on github"}, id="s1"),
            faux_tool_call("create_issue", {"repo": "a/b", "title": "bug"}, id="c1"),
            faux_text("filed"),
        ]
    )
    agent = Agent(initial_state={"model": faux.model, "tools": TOOLS}, stream_fn=faux.stream_fn)
    await agent.prompt("File a bug.")
    # not in any request before the search: only the always-loaded tool and the search tool
    assert tool_names(faux, 0) == ["echo", SEARCH_TOOLS]
    assert tool_names(faux, 1) == ["echo", SEARCH_TOOLS]
    early, search, created = results(agent.state.messages)
    assert early.is_error and "call search_tools first" in text_of(early)
    assert not search.is_error
    assert search.added_tool_names and search.added_tool_names[0] == "create_issue"
    found = json.loads(text_of(search).split("\n", 1)[1])
    assert found[0]["name"] == "create_issue"
    assert found[0]["description"] == "Create a GitHub issue in a repository."
    assert found[0]["parameters"]["required"] == ["repo", "title"]
    # from the search on, the found tool is in every request, after those sent before
    assert tool_names(faux, 2)[:2] == ["echo", SEARCH_TOOLS]
    assert "create_issue" in tool_names(faux, 2) and "create_issue" in tool_names(faux, 3)
    assert not created.is_error and text_of(created) == "issue 'bug' created in a/b"
    schema = next(t for t in faux.calls[2].context.tools if t.name == "create_issue")
    assert schema.parameters == create_issue.llm_tool.parameters


async def test_search_ranks_by_bm25_and_bounds_the_results() -> None:
    many = [
        AgentTool(
            name=f"tool_{i}",
            description=f"Manage calendar events number {i}",
            parameters={"type": "object"},
            execute=lambda *a: AgentToolResult.text("ok"),
            deferred=True,
        )
        for i in range(30)
    ]
    faux = FauxProvider(
        [
            faux_tool_call(SEARCH_TOOLS, {"query": "weather forecast"}, id="s1"),
            faux_tool_call(SEARCH_TOOLS, {"query": "calendar events", "limit": 20}, id="s2"),
            faux_tool_call(SEARCH_TOOLS, {"query": "calendar"}, id="s3"),
            faux_tool_call(SEARCH_TOOLS, {"query": "zebra"}, id="s4"),
            faux_tool_call(SEARCH_TOOLS, {"query": "calendar", "limit": 500}, id="s5"),
            faux_text("ok"),
        ]
    )
    agent = Agent(
        initial_state={"model": faux.model, "tools": [*TOOLS, *many]}, stream_fn=faux.stream_fn
    )
    await agent.prompt("Go.")
    weather, limited, default, none, too_many = results(agent.state.messages)
    assert weather.added_tool_names == ["get_weather"]
    assert weather.details == {"query": "weather forecast", "tools": ["get_weather"]}
    assert limited.added_tool_names is not None and len(limited.added_tool_names) == 20
    assert default.added_tool_names is not None and len(default.added_tool_names) == 5
    assert none.added_tool_names is None and "No tool matches 'zebra'" in text_of(none)
    assert too_many.is_error and "limit" in text_of(too_many)  # validated as any call
    # the search's own description counts the tools it can find
    search = next(t for t in faux.calls[0].context.tools if t.name == SEARCH_TOOLS)
    assert "33 more tools" in search.description


async def test_a_found_tool_passes_the_one_pipeline() -> None:
    seen: list[str] = []

    def before(ctx: BeforeToolCallContext, signal: Any = None) -> BeforeToolCallResult | None:
        seen.append(ctx.tool_call.name)
        if ctx.tool_call.name == "send_email":
            return BeforeToolCallResult(block=True, reason="no email today")
        return None

    faux = FauxProvider(
        [
            faux_tool_call(SEARCH_TOOLS, {"query": "send email"}, id="s1"),
            faux_tool_call("send_email", {"to": 3}, id="bad"),
            faux_tool_call("send_email", {"to": "a@b", "subject": "hi"}, id="blocked"),
            faux_text("ok"),
        ]
    )
    events: list[Any] = []
    agent = Agent(
        initial_state={"model": faux.model, "tools": TOOLS},
        stream_fn=faux.stream_fn,
        before_tool_call=before,
    )
    agent.subscribe(lambda e, *_: events.append(e))
    await agent.prompt("Mail.")
    _, invalid, blocked = results(agent.state.messages)
    assert invalid.is_error and "to" in text_of(invalid)  # validation
    assert blocked.is_error and text_of(blocked) == "no email today"  # the hook
    assert seen == [SEARCH_TOOLS, "send_email"]
    ends = [e.tool_name for e in events if e.type == "tool_execution_end"]
    assert ends == [SEARCH_TOOLS, "send_email", "send_email"]


async def test_a_found_tool_needing_approval_waits_as_any_call() -> None:
    risky = AgentTool(
        name="delete_repo",
        description="Delete a repository forever.",
        parameters={"type": "object", "properties": {}},
        execute=lambda *a: AgentToolResult.text("deleted"),
        deferred=True,
        requires_approval=True,
    )
    faux = FauxProvider(
        [
            faux_tool_call(SEARCH_TOOLS, {"query": "delete repository"}, id="s1"),
            faux_tool_call("delete_repo", {}, id="d1"),
            faux_text("ok"),
        ]
    )
    agent = Agent(
        initial_state={"model": faux.model, "tools": [echo, risky]}, stream_fn=faux.stream_fn
    )
    await agent.prompt("Delete it.")
    assert [r.tool_call_id for r in agent.state.pending_approvals] == ["d1"]


async def test_found_tools_stay_across_a_session_resume(tmp_path: Path) -> None:
    store = JsonlSessionStore(tmp_path / "sessions")
    session = store.create()
    faux = FauxProvider(
        [faux_tool_call(SEARCH_TOOLS, {"query": "weather"}, id="s1"), faux_text("found")]
    )
    agent = Agent(
        initial_state={"model": faux.model, "tools": TOOLS},
        stream_fn=faux.stream_fn,
        session=session,
    )
    await agent.prompt("Find the weather tool.")
    faux.set_responses([faux_tool_call("get_weather", {"city": "Oslo"}, id="w1"), faux_text("ok")])
    again = Agent(
        initial_state={"model": faux.model, "tools": TOOLS},
        stream_fn=faux.stream_fn,
        session=store.open(session.id),
    )
    await again.prompt("Weather in Oslo?")
    sent = len(faux.calls) - 2
    assert tool_names(faux, sent) == ["echo", SEARCH_TOOLS, "get_weather"]  # from the transcript
    last = results(again.state.messages)[-1]
    assert not last.is_error and text_of(last) == "sunny in Oslo"


async def test_agent_loop_and_any_tool_s_added_tool_names() -> None:
    """The seam is `added_tool_names`: any tool naming a deferred tool brings it in."""

    @tool
    def unlock() -> AgentToolResult:
        """Unlock the mail tools."""
        return AgentToolResult.text("unlocked", added_tool_names=["send_email", "no_such_tool"])

    faux = FauxProvider(
        [
            faux_tool_call("unlock", {}, id="u1"),
            faux_tool_call("send_email", {"to": "a@b", "subject": "s"}, id="m1"),
            faux_text("ok"),
        ]
    )
    context = AgentContext(tools=[unlock, send_email])
    async with agent_loop(
        [UserMessage(content="go")],
        context,
        AgentLoopConfig(model=faux.model),
        stream_fn=faux.stream_fn,
    ) as events:
        async for _ in events:
            pass
        messages = await events.result()
    assert tool_names(faux, 0) == ["unlock", SEARCH_TOOLS]
    assert tool_names(faux, 1) == ["unlock", SEARCH_TOOLS, "send_email"]
    assert text_of(results(messages)[-1]) == "sent to a@b"


async def test_no_deferred_tool_no_search_tool() -> None:
    faux = FauxProvider(
        [faux_tool_call("create_issue", {"repo": "r", "title": "t"}), faux_text("")]
    )
    plain = AgentTool(
        name="create_issue",
        description="d",
        parameters={"type": "object"},
        execute=lambda *a: AgentToolResult.text("ok"),
    )
    agent = Agent(
        initial_state={"model": faux.model, "tools": [echo, plain]}, stream_fn=faux.stream_fn
    )
    await agent.prompt("x")
    assert tool_names(faux, 0) == ["echo", "create_issue"]
    assert text_of(results(agent.state.messages)[0]) == "ok"


async def test_a_tool_named_search_tools_beside_deferred_tools_is_refused() -> None:
    own = AgentTool(
        name=SEARCH_TOOLS,
        description="mine",
        parameters={"type": "object"},
        execute=lambda *a: AgentToolResult.text("ok"),
    )
    faux = FauxProvider([faux_text("")])
    with pytest.raises(ConfigError, match="search_tools"):
        await run_agent_loop(
            [UserMessage(content="go")],
            AgentContext(tools=[own, send_email]),
            AgentLoopConfig(model=faux.model),
            lambda event: None,
            stream_fn=faux.stream_fn,
        )
    assert faux.calls == []
