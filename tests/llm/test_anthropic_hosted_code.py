"""Anthropic's programmatic tool calling (hosted code execution) through `agent_loop`, the real
`anthropic` SDK and the replay server, on the documented wire format: tools marked
`allowed_callers=("hosted_code",)` go with `allowed_callers` and the code execution tool; the
`tool_use` blocks the provider's code makes carry a `caller`, kept on the `ToolCall` and on the
`tool_execution_*` events (durable JSON, AG-UI); their results go back text only, with the
code execution's own blocks and its container replayed; another provider never sees them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentcore import (
    AgentContext,
    AgentEvent,
    AgentLoopConfig,
    AgentToolResult,
    agent_loop,
    tool,
)
from agentcore.durable import event_from_json, event_to_json
from agentcore.errors import ToolDefinitionError
from agentcore.llm.model import Model
from agentcore.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ToolCaller,
    ToolResultMessage,
    UserMessage,
    from_json,
    to_json,
)
from agentcore.tools import AgentTool

from .anthropic_wire import answer, call, server_use, text, whole
from .replay_server import ReplayServer, ScriptedResponse, load_fixture

pytestmark = pytest.mark.anyio

RUN = "srvtoolu_01CodeRun"
CONTAINER = "container_011CodeBox"
CODE = "a = await get_weather(city='Paris')\nb = await get_weather(city='Rome')\nprint(a, b)"
CALLER = ToolCaller(kind="code_execution_20260120", id=RUN, code=CODE)
PNG = "iVBORw0KGgo="


@tool(allowed_callers=("hosted_code",))
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}" if city == "Paris" else f"warm in {city}"


async def chart(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult(
        content=[TextContent(text="a chart"), ImageContent(data=PNG, mime_type="image/png")]
    )


CHART = AgentTool(
    name="chart",
    description="A chart of the data.",
    parameters={"type": "object", "properties": {}},
    execute=chart,
    allowed_callers=("direct", "hosted_code"),
)


@tool
def echo(text: str) -> str:
    """Repeat the text."""
    return text


TOOLS = [echo, get_weather, CHART]


def model(server: ReplayServer) -> Model:
    return Model(
        id="claude-sonnet-4-5",
        api="anthropic-messages",
        provider="anthropic",
        base_url=server.url,
        input=["text", "image"],
    )


RESULT = {
    "type": "code_execution_tool_result",
    "tool_use_id": RUN,
    "content": {
        "type": "code_execution_result",
        "stdout": "sunny in Paris warm in Rome",
        "stderr": "",
        "return_code": 0,
        "content": [],
    },
}


def code_answers() -> tuple[ScriptedResponse, ScriptedResponse]:
    """The code run calling three tools from the container, then its result and the text."""
    first = answer(
        text("Let me compare them in code."),
        server_use(RUN, "code_execution", {"code": CODE}),
        call("toolu_1", "get_weather", {"city": "Paris"}, caller=RUN),
        call("toolu_2", "get_weather", {"city": "Rome"}, caller=RUN, whole=True),
        call("toolu_3", "chart", {}, caller=RUN),
        stop="tool_use",
        container=CONTAINER,
    )
    second = answer(whole(RESULT), text("Rome is the warmer."), stop="end_turn")
    return first, second


async def run(
    server: ReplayServer, messages: list[Any] | None = None, prompt: str = "Warmer: Paris or Rome?"
) -> tuple[list[AgentEvent], list[Any]]:
    events: list[AgentEvent] = []
    context = AgentContext(system_prompt="", messages=list(messages or []), tools=TOOLS)
    async with agent_loop(
        [UserMessage(content=prompt)], context, AgentLoopConfig(model=model(server), api_key="k")
    ) as stream:
        async for event in stream:
            events.append(event)
        new = await stream.result()
    return events, new


@pytest.fixture
async def ran(replay_server: ReplayServer) -> tuple[ReplayServer, list[AgentEvent], list[Any]]:
    replay_server.enqueue(*code_answers())
    events, new = await run(replay_server)
    return replay_server, events, new


async def test_the_request_offers_the_tools_to_code(ran: Any) -> None:
    server, _, _ = ran
    tools = server.requests[0].json["tools"]
    assert [t.get("name") for t in tools] == ["echo", "get_weather", "chart", "code_execution"]
    assert "allowed_callers" not in tools[0]
    assert tools[1]["allowed_callers"] == ["code_execution_20260120"]
    assert tools[2]["allowed_callers"] == ["direct", "code_execution_20260120"]
    assert tools[3] == {"type": "code_execution_20260120", "name": "code_execution"}
    assert "container" not in server.requests[0].json


async def test_calls_from_code_keep_their_caller_and_run(ran: Any) -> None:
    _, events, new = ran
    answer_message = new[1]
    assert isinstance(answer_message, AssistantMessage)
    calls = answer_message.tool_calls
    assert [(c.id, c.name, c.arguments, c.caller) for c in calls] == [
        ("toolu_1", "get_weather", {"city": "Paris"}, CALLER),
        ("toolu_2", "get_weather", {"city": "Rome"}, CALLER),
        ("toolu_3", "chart", {}, CALLER),
    ]
    assert answer_message.text == "Let me compare them in code."  # the kept blocks are no text
    results = [m for m in new if isinstance(m, ToolResultMessage)]
    assert [(r.tool_call_id, r.is_error) for r in results] == [
        ("toolu_1", False),
        ("toolu_2", False),
        ("toolu_3", False),
    ]
    for kind in ("tool_execution_start", "tool_execution_end"):
        seen = [e for e in events if e.type == kind]
        assert sorted((e.tool_call_id, e.caller) for e in seen) == [  # type: ignore[union-attr]
            ("toolu_1", CALLER),
            ("toolu_2", CALLER),
            ("toolu_3", CALLER),
        ]
    assert new[-1].text == "Rome is the warmer."


async def test_the_continuation_replays_the_code_run_and_its_container(ran: Any) -> None:
    server, _, _ = ran
    second = server.requests[1].json
    assert second["container"] == CONTAINER
    assistant, results = second["messages"][1], second["messages"][2]
    assert assistant["content"] == [
        {"type": "text", "text": "Let me compare them in code."},
        {"type": "server_tool_use", "id": RUN, "name": "code_execution", "input": {"code": CODE}},
        *[
            {
                "type": "tool_use",
                "id": id,
                "name": name,
                "input": args,
                "caller": {"type": "code_execution_20260120", "tool_id": RUN},
            }
            for id, name, args in (
                ("toolu_1", "get_weather", {"city": "Paris"}),
                ("toolu_2", "get_weather", {"city": "Rome"}),
                ("toolu_3", "chart", {}),
            )
        ],
    ]
    # only tool_result blocks, each text only (the image of the chart left out, with a note)
    assert results["role"] == "user"
    assert [(b["type"], b["tool_use_id"], b["content"]) for b in results["content"]] == [
        ("tool_result", "toolu_1", "sunny in Paris"),
        ("tool_result", "toolu_2", "warm in Rome"),
        (
            "tool_result",
            "toolu_3",
            "a chart\n(an image was left out: code running on the provider receives text only)",
        ),
    ]


async def test_the_next_prompt_replays_the_result_block_without_a_container(ran: Any) -> None:
    server, _, new = ran
    server.enqueue(answer(text("Yes."), stop="end_turn"))
    await run(server, new, prompt="Sure?")
    third = server.requests[2].json
    assert "container" not in third  # no call from code waits for its result
    replayed = third["messages"][3]["content"]
    assert replayed == [RESULT, {"type": "text", "text": "Rome is the warmer."}]


async def test_a_direct_call_of_a_tool_allowed_both_ways_sends_images(
    replay_server: ReplayServer,
) -> None:
    replay_server.enqueue(
        answer(call("toolu_9", "chart", {}), stop="tool_use"),
        answer(text("Here."), stop="end_turn"),
    )
    events, new = await run(replay_server)
    assert new[1].tool_calls[0].caller is None
    assert all(e.caller is None for e in events if e.type == "tool_execution_end")  # type: ignore[union-attr]
    content = replay_server.requests[1].json["messages"][2]["content"][0]["content"]
    assert [b["type"] for b in content] == ["text", "image"]
    assert "container" not in replay_server.requests[1].json


async def test_caller_survives_json_round_trips(ran: Any) -> None:
    _, events, new = ran
    for message in new:  # the kept blocks and the callers, as a session stores them
        assert from_json(json.loads(json.dumps(to_json(message)))) == message
    executions = [e for e in events if e.type.startswith("tool_execution_")]
    assert executions
    for event in executions:
        data = json.loads(json.dumps(event_to_json(event)))
        assert data["caller"] == {"kind": "code_execution_20260120", "id": RUN, "code": CODE}
        assert event_from_json(data) == event


async def test_ag_ui_shows_the_caller(ran: Any) -> None:
    pytest.importorskip("ag_ui.core")
    import ag_ui.core as ag_ui
    from pydantic import TypeAdapter

    from agentcore.web import AgUiTranslator

    _, events, _ = ran
    translator = AgUiTranslator(thread_id="t")
    translator.begin(0, run_id="r")
    out = [e for event in events for e in translator.translate(event)]
    adapter: TypeAdapter[Any] = TypeAdapter(ag_ui.Event)
    for event in out:  # every event valid, the kept (empty) blocks included
        adapter.validate_json(event.model_dump_json(by_alias=True))
    custom = [
        e.value
        for e in out
        if e.type.value == "CUSTOM" and e.name == "agentcore.tool_execution_start"
    ]
    assert [v["caller"] for v in custom] == [
        {"kind": "code_execution_20260120", "id": RUN, "code": CODE}
    ] * 3
    texts = [e.delta for e in out if e.type.value == "TEXT_MESSAGE_CONTENT"]
    assert "".join(texts) == "Warmer: Paris or Rome?Let me compare them in code.Rome is the warmer."


async def test_another_provider_gets_plain_calls(ran: Any) -> None:
    from agentcore.llm.transform import transform_messages

    server, _, new = ran
    other = Model(
        id="gpt-test", api="openai-completions", provider="openai", base_url=server.base_url()
    )
    for message in transform_messages(new, other):  # the kept blocks and callers dropped
        if isinstance(message, AssistantMessage):
            assert all(b.caller is None for b in message.tool_calls)
            assert all(
                b.text and b.text_signature is None
                for b in message.content
                if isinstance(b, TextContent)
            )
    server.enqueue(ScriptedResponse.sse(load_fixture("openai-completions", "text")))
    context = AgentContext(system_prompt="", messages=list(new), tools=TOOLS)
    config = AgentLoopConfig(model=other, api_key="k")
    async with agent_loop([UserMessage(content="Sure?")], context, config) as stream:
        async for _ in stream:
            pass
    payload = server.requests[2].json
    assistant = payload["messages"][1]
    assert assistant["content"] == "Let me compare them in code."
    assert [c["id"] for c in assistant["tool_calls"]] == ["toolu_1", "toolu_2", "toolu_3"]
    assert "caller" not in json.dumps(payload) and "srvtoolu" not in json.dumps(payload)
    assert payload["messages"][5] == {"role": "assistant", "content": "Rome is the warmer."}
    assert [t["function"]["name"] for t in payload["tools"]] == ["echo", "get_weather", "chart"]


def _plain(text: str) -> str:
    """Repeat the text."""
    return text


def test_allowed_callers_must_be_known() -> None:
    for wrong in ("hosted_code", [], ["direct", "direct"], ["server"]):
        with pytest.raises(ToolDefinitionError, match="allowed_callers"):
            tool(allowed_callers=wrong)(_plain)
    assert get_weather.llm_tool.allowed_callers == ("hosted_code",)
    assert echo.allowed_callers == ("direct",)


async def test_a_call_from_code_waits_for_approval_and_resumes_in_its_container(
    replay_server: ReplayServer,
) -> None:
    from agentcore import Agent

    sent: list[str] = []

    @tool(requires_approval=True, allowed_callers=("hosted_code",))
    def pay(amount: int) -> str:
        """Pay an amount."""
        sent.append(str(amount))
        return f"paid {amount}"

    replay_server.enqueue(
        answer(
            server_use(RUN, "code_execution", {"code": "await pay(amount=5)"}),
            call("toolu_p", "pay", {"amount": 5}, caller=RUN),
            stop="tool_use",
            container=CONTAINER,
        ),
        answer(whole(RESULT), text("Paid."), stop="end_turn"),
    )
    agent = Agent(
        initial_state={"model": model(replay_server), "tools": [pay]},
        get_api_key=lambda provider: "k",
    )
    await agent.prompt("Pay 5.")
    (request,) = agent.state.pending_approvals
    assert request.tool_name == "pay" and sent == []  # the pipeline's approval, as for any call
    agent.approve(request.tool_call_id)
    await agent.continue_()
    assert sent == ["5"]
    second = replay_server.requests[1].json
    assert second["container"] == CONTAINER  # the code run still waits for this result
    last = second["messages"][-1]
    assert last["role"] == "user"
    assert [(b["type"], b["tool_use_id"], b["content"]) for b in last["content"]] == [
        ("tool_result", "toolu_p", "paid 5")
    ]
    assert agent.state.messages[-1].text == "Paid."
