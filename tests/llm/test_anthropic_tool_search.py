"""Tool search in Anthropic's native form (`Model.tool_search`): deferred tools are sent with
`defer_loading` and the server's BM25 tool search tool instead of the loop's `search_tools`; the
search the server ran stays in the answer as kept server blocks (signature-only text blocks, the
one mechanism of `agentcore.llm.server_side`), whose found tools join the run as
`added_tool_names` do (for the run and across a session's resume); a call of a deferred tool no
search has found still gets an error result, and another provider never sees the search.

Through the real `anthropic` SDK and the Agent, against the replay server serving the documented
event stream (`server_tool_use`, `tool_search_tool_result` with `tool_reference`s).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentcore import Agent, AgentEvent, AssistantMessage, ToolResultMessage, tool
from agentcore.llm.model import Model
from agentcore.llm.providers.anthropic import build_payload
from agentcore.llm.server_side import found_tool_names
from agentcore.llm.transform import transform_messages
from agentcore.llm.types import Context, StreamOptions, Tool
from agentcore.messages import TextContent, UserMessage, from_json, to_json
from agentcore.sessions import JsonlSessionStore

from .anthropic_wire import Block, answer, call, server_use, text, whole
from .replay_server import ReplayServer

pytestmark = pytest.mark.anyio

SEARCH_ID = "srvtoolu_01ToolSearch"
BM25 = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}


@tool(deferred=True)
def get_weather(city: str) -> str:
    """Current weather forecast for a city."""
    return f"sunny in {city}"


@tool(deferred=True)
def send_email(to: str, subject: str) -> str:
    """Send an email message to a recipient."""
    return f"sent to {to}"


@tool
def echo(text: str) -> str:
    """Repeat the text."""
    return text


TOOLS = [echo, get_weather, send_email]


def result_block(*found: str, error: str | None = None) -> dict[str, Any]:
    content: dict[str, Any] = (
        {"type": "tool_search_tool_result_error", "error_code": error}
        if error is not None
        else {
            "type": "tool_search_tool_search_result",
            "tool_references": [{"type": "tool_reference", "tool_name": n} for n in found],
        }
    )
    return {"type": "tool_search_tool_result", "tool_use_id": SEARCH_ID, "content": content}


def search(query: str, *found: str) -> list[Block]:
    """The two blocks of a tool search the server ran."""
    return [
        server_use(SEARCH_ID, "tool_search_tool_bm25", {"query": query}),
        whole(result_block(*found)),
    ]


def model(server: ReplayServer, tool_search: bool | None = True) -> Model:
    return Model(
        id="claude-sonnet-4-5",
        api="anthropic-messages",
        provider="anthropic",
        base_url=server.url,
        tool_search=tool_search,
    )


def sent_tools(server: ReplayServer, index: int) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in server.requests[index].json["tools"]}


def agent(
    server: ReplayServer, tool_search: bool | None = True, **options: Any
) -> tuple[Agent, list[AgentEvent]]:
    events: list[AgentEvent] = []
    made = Agent(
        initial_state={"model": model(server, tool_search), "tools": TOOLS},
        get_api_key=lambda provider: "test-key",
        **options,
    )
    made.subscribe(events.append)
    return made, events


@pytest.fixture
def found_weather(replay_server: ReplayServer) -> ReplayServer:
    replay_server.enqueue(
        answer(
            *search("weather forecast", "get_weather"),
            call("toolu_1", "get_weather", {"city": "Paris"}),
            stop="tool_use",
        ),
        answer(text("It is sunny in Paris."), stop="end_turn"),
    )
    return replay_server


async def test_deferred_tools_go_with_defer_loading_and_the_server_search(
    found_weather: ReplayServer,
) -> None:
    made, events = agent(found_weather)
    await made.prompt("Weather in Paris?")
    first = sent_tools(found_weather, 0)
    assert list(first) == ["echo", "get_weather", "send_email", "tool_search_tool_bm25"]
    assert "search_tools" not in first  # the loop's own search is not offered
    assert first["tool_search_tool_bm25"] == BM25
    assert first["get_weather"]["defer_loading"] is True
    assert first["send_email"]["defer_loading"] is True
    assert "defer_loading" not in first["echo"]
    # the search the server ran is kept in the answer (no new content type), naming what it found
    answer_message = made.state.messages[1]
    assert isinstance(answer_message, AssistantMessage)
    assert [type(b).__name__ for b in answer_message.content] == [
        "TextContent",
        "TextContent",
        "ToolCall",
    ]
    assert answer_message.text == ""
    assert found_tool_names(answer_message) == ["get_weather"]
    # the found tool ran through the pipeline in the same answer, with the usual events
    ran = [e for e in events if e.type == "tool_execution_end"]
    assert [(e.tool_name, e.is_error) for e in ran] == [("get_weather", False)]  # type: ignore[union-attr]
    results = [m for m in made.state.messages if isinstance(m, ToolResultMessage)]
    assert [r.content[0].text for r in results] == ["sunny in Paris"]  # type: ignore[union-attr]
    # the next request replays the server's blocks verbatim, and the found tool joined the run
    second = found_weather.requests[1].json
    replayed = second["messages"][1]["content"]
    assert [b["type"] for b in replayed] == [
        "server_tool_use",
        "tool_search_tool_result",
        "tool_use",
    ]
    assert replayed[0] == {
        "type": "server_tool_use",
        "id": SEARCH_ID,
        "name": "tool_search_tool_bm25",
        "input": {"query": "weather forecast"},
    }
    assert replayed[1] == result_block("get_weather")
    tools = sent_tools(found_weather, 1)
    assert "defer_loading" not in tools["get_weather"]
    assert tools["send_email"]["defer_loading"] is True


async def test_a_deferred_tool_not_found_yet_is_refused(replay_server: ReplayServer) -> None:
    replay_server.enqueue(
        answer(call("toolu_1", "send_email", {"to": "a@b", "subject": "s"}), stop="tool_use"),
        answer(text("I will search first."), stop="end_turn"),
    )
    made, _ = agent(replay_server)
    await made.prompt("Mail a@b.")
    result = next(m for m in made.state.messages if isinstance(m, ToolResultMessage))
    assert result.is_error
    assert result.content[0].text == (  # type: ignore[union-attr]
        "Tool send_email is not loaded yet: call your tool search first with words describing "
        "what you need; the tools it returns can be called after that"
    )


async def test_a_failed_search_loads_nothing(replay_server: ReplayServer) -> None:
    replay_server.enqueue(
        answer(
            server_use(SEARCH_ID, "tool_search_tool_bm25", {"query": "mail"}),
            whole(result_block(error="too_many_requests")),
            call("toolu_1", "send_email", {"to": "a@b", "subject": "s"}),
            stop="tool_use",
        ),
        answer(text("Sorry."), stop="end_turn"),
    )
    made, _ = agent(replay_server)
    await made.prompt("Mail a@b.")
    result = next(m for m in made.state.messages if isinstance(m, ToolResultMessage))
    assert result.is_error and "not loaded yet" in result.content[0].text  # type: ignore[union-attr]
    replayed = replay_server.requests[1].json["messages"][1]["content"]
    assert replayed[1] == result_block(error="too_many_requests")
    assert sent_tools(replay_server, 1)["send_email"]["defer_loading"] is True


async def test_found_tools_stay_across_a_session_resume(
    found_weather: ReplayServer, tmp_path: Path
) -> None:
    store = JsonlSessionStore(tmp_path / "sessions")
    session = store.create()
    made, _ = agent(found_weather, session=session)
    await made.prompt("Weather in Paris?")
    found_weather.enqueue(
        answer(call("toolu_2", "get_weather", {"city": "Oslo"}), stop="tool_use"),
        answer(text("Sunny in Oslo too."), stop="end_turn"),
    )
    again, events = agent(found_weather, session=store.open(session.id))
    await again.prompt("And Oslo?")
    tools = sent_tools(found_weather, 2)
    assert "defer_loading" not in tools["get_weather"]  # found, from the stored transcript
    ran = [e for e in events if e.type == "tool_execution_end"]
    assert [(e.tool_name, e.is_error) for e in ran] == [("get_weather", False)]  # type: ignore[union-attr]
    # the stored answer still replays the search verbatim
    replayed = found_weather.requests[2].json["messages"][1]["content"]
    assert replayed[1] == result_block("get_weather")


async def test_found_tools_stay_loaded_for_a_model_without_native_search(
    found_weather: ReplayServer,
) -> None:
    made, _ = agent(found_weather)
    await made.prompt("Weather in Paris?")
    found_weather.enqueue(answer(text("Hello."), stop="end_turn"))
    made.state.model = model(found_weather, None)
    await made.prompt("Thanks.")
    third = found_weather.requests[2].json
    assert [t["name"] for t in third["tools"]] == ["echo", "search_tools", "get_weather"]
    assert "defer_loading" not in json.dumps(third["tools"])


async def test_without_the_capability_the_loop_searches(replay_server: ReplayServer) -> None:
    replay_server.enqueue(answer(text("Hello."), stop="end_turn"))
    made, _ = agent(replay_server, None)
    await made.prompt("Weather in Paris?")
    assert list(sent_tools(replay_server, 0)) == ["echo", "search_tools"]


async def test_the_kept_search_round_trips_as_json(found_weather: ReplayServer) -> None:
    made, _ = agent(found_weather)
    await made.prompt("Weather in Paris?")
    for message in made.state.messages:
        assert from_json(json.loads(json.dumps(to_json(message)))) == message


async def test_another_api_never_sees_the_search(found_weather: ReplayServer) -> None:
    made, _ = agent(found_weather)
    await made.prompt("Weather in Paris?")
    other = Model(id="m", api="openai-responses", provider="openai")
    (kept,) = [m for m in transform_messages(made.state.messages, other) if m.role == "assistant"][
        :1
    ]
    assert isinstance(kept, AssistantMessage)
    assert [type(b).__name__ for b in kept.content] == ["ToolCall"]
    assert not any(isinstance(b, TextContent) for b in kept.content)


def test_a_deferred_tool_brings_the_search_tool() -> None:
    weather = Tool(name="w", description="d", parameters={"type": "object"}, deferred=True)
    payload = build_payload(
        Model(id="m", api="anthropic-messages", provider="p"),
        Context(messages=[UserMessage(content="hi")], tools=[weather]),
        StreamOptions(),
    )
    assert payload["tools"] == [
        {
            "name": "w",
            "description": "d",
            "input_schema": {"type": "object"},
            "defer_loading": True,
        },
        BM25,
    ]


async def test_a_search_naming_a_tool_the_run_lacks_adds_nothing(
    replay_server: ReplayServer,
) -> None:
    replay_server.enqueue(
        answer(
            *search("delete everything", "rm_rf", "echo"),
            call("toolu_1", "rm_rf", {}),
            stop="tool_use",
        ),
        answer(text("No."), stop="end_turn"),
    )
    made, _ = agent(replay_server)
    await made.prompt("Clean up.")
    result = next(m for m in made.state.messages if isinstance(m, ToolResultMessage))
    assert result.is_error and result.content[0].text == "Tool rm_rf not found"  # type: ignore[union-attr]
    assert list(sent_tools(replay_server, 1)) == [
        "echo",
        "get_weather",
        "send_email",
        "tool_search_tool_bm25",
    ]


def test_records_are_read_only_from_signature_only_blocks() -> None:
    from agentcore.llm.server_side import encode_record, read_record

    record = encode_record("anthropic_block", {"type": "x"}, ["a", "b"])
    assert read_record(TextContent(text="", text_signature=record)) == {
        "v": 1,
        "anthropic_block": {"type": "x"},
        "loads": ["a", "b"],
    }
    for block in (
        TextContent(text="hi", text_signature=record),  # a text of the model: never a record
        TextContent(text="", text_signature='{"v":1,'),  # not JSON
        TextContent(text="", text_signature="msg_123"),  # another adapter's signature
        TextContent(text=""),
    ):
        assert read_record(block) is None
    odd = encode_record("k", 1, ["a"]).replace('["a"]', '["a", 3, "a", null]')
    message = AssistantMessage(
        content=[
            TextContent(text="", text_signature=odd),
            TextContent(text="", text_signature=encode_record("k", 2, ["b", "a"])),
            TextContent(text="", text_signature='{"v":1,"loads":"abc"}'),
        ]
    )
    assert found_tool_names(message) == ["a", "b"]
