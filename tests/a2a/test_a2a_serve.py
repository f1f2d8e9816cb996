"""An agentcore agent served over A2A (`serve_a2a`), called by the a2a-sdk's own client over real
HTTP on 127.0.0.1: the agent card, both bindings with streaming, task states and usage metadata,
cancel mid-task, a dropped stream resubscribed, and a call waiting for approval answered as
`input-required`, also after the server was restarted on the same session store."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import httpx
import pytest
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    SubscribeToTaskRequest,
    TaskState,
)
from a2a_support import (
    add,
    answer_text,
    collect,
    delete_file,
    new_agent,
    sdk_client,
    served,
    states,
    user_message,
    wait_forever,
)
from google.protobuf.json_format import MessageToDict

from agentcore import AgentContext, AgentLoopConfig, ConfigError
from agentcore.a2a import a2a_app
from agentcore.messages import ToolCall
from agentcore.sessions import JsonlSessionStore
from agentcore.testing import FauxProvider, faux_message, faux_text

pytestmark = pytest.mark.anyio


def adder_script() -> FauxProvider:
    return FauxProvider(
        [
            faux_message(ToolCall(id="c1", name="add", arguments={"a": 2, "b": 3})),
            faux_text("The sum is 5."),
        ]
    )


async def test_the_agent_card_is_built_from_the_agent() -> None:
    faux = adder_script()
    async with (
        served(new_agent(faux.model, [add, delete_file]), name="adder") as url,
        httpx.AsyncClient() as http,
    ):
        card = (await http.get(url + "/.well-known/agent-card.json")).json()
    assert card["name"] == "adder"
    # a fixed default: the system prompt ("You help.\nBe brief.") is never published
    assert card["description"] == "An agentcore agent."
    assert "You help" not in json.dumps(card) and "Be brief" not in json.dumps(card)
    assert [s["id"] for s in card["skills"]] == ["add", "delete_file"]
    assert card["skills"][0]["description"] == "Add two numbers."
    assert card["capabilities"]["streaming"] is True
    interfaces = {
        (i["protocolBinding"], i["url"], i["protocolVersion"]) for i in card["supportedInterfaces"]
    }
    assert interfaces == {
        (binding, where, version)
        for binding, where in (("JSONRPC", url + "/"), ("HTTP+JSON", url + "/rest"))
        for version in ("1.0", "0.3")
    }
    # the 0.3 fields, for 0.3 clients that discover the endpoint from the card
    assert (card["url"], card["preferredTransport"]) == (url + "/", "JSONRPC")


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_a_task_streams_and_completes_with_its_usage(binding: str) -> None:
    faux = adder_script()
    async with served(new_agent(faux.model, [add])) as url, sdk_client(url, binding) as client:
        events = await collect(client.send_message(user_message("What is 2 + 3?")))
        task_id = events[0]["task"]["id"]
        task = MessageToDict(await client.get_task(GetTaskRequest(id=task_id)))
        listed = MessageToDict(await client.list_tasks(ListTasksRequest()))
    seen = states(events)
    assert seen[0] == "TASK_STATE_SUBMITTED" and seen[-1] == "TASK_STATE_COMPLETED"
    # a tool event belongs to its status update, not to the task (issue 30)
    assert "agentcore_event" not in task["metadata"]
    assert all("agentcore_event" not in t.get("metadata", {}) for t in listed["tasks"])
    assert "TASK_STATE_WORKING" in seen
    tools = [
        e["statusUpdate"]["metadata"]["agentcore_event"]
        for e in events
        if "agentcore_event" in e.get("statusUpdate", {}).get("metadata", {})
    ]
    assert [(t["type"], t["tool_name"]) for t in tools] == [
        ("tool_execution_start", "add"),
        ("tool_execution_end", "add"),
    ]
    assert answer_text(events) == "The sum is 5."  # streamed in chunks, appended
    final = events[-1]["statusUpdate"]
    assert final["status"]["message"]["parts"][0]["text"] == "The sum is 5."
    usage = task["metadata"]["agentcore"]["usage"]
    assert usage["input"] > 0 and usage["output"] > 0
    assert task["metadata"]["agentcore"]["turns"] == 2
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.parametrize("where", ["memory", "store", "store, restarted"])
async def test_a_loop_configuration_is_served_and_a_context_carries_over(
    where: str, tmp_path: Path
) -> None:
    faux = FauxProvider([faux_text("Noted: 7."), faux_text("You said 7.")])
    config = AgentLoopConfig(model=faux.model)
    context = AgentContext(system_prompt="You remember numbers.")
    with JsonlSessionStore(tmp_path) as store:
        options = {} if where == "memory" else {"sessions": store}
        async with served(config, context=context, **options) as url, sdk_client(url) as client:
            first = await collect(client.send_message(user_message("Remember 7")))
            context_id = first[0]["task"]["contextId"]
            if where != "store, restarted":
                again = user_message("What was it?", context_id=context_id)
                second = await collect(client.send_message(again))
    if where == "store, restarted":
        with JsonlSessionStore(tmp_path) as store:
            async with (
                served(config, context=context, sessions=store) as url,
                sdk_client(url) as client,
            ):
                again = user_message("What was it?", context_id=context_id)
                second = await collect(client.send_message(again))
    assert answer_text(second) == "You said 7."
    assert second[0]["task"]["id"] != first[0]["task"]["id"]
    # the second task's request held the first exchange
    roles = [m.role for m in faux.calls[-1].context.messages]
    assert roles == ["user", "assistant", "user"]


async def test_cancel_mid_task_aborts_the_run() -> None:
    faux = FauxProvider(
        [faux_message(ToolCall(id="w1", name="wait_forever", arguments={})), faux_text("never")]
    )
    async with served(new_agent(faux.model, [wait_forever])) as url, sdk_client(url) as client:
        events: list[dict[str, object]] = []
        stream = client.send_message(user_message("wait"))
        with anyio.fail_after(20):
            async for event in stream:
                events.append(MessageToDict(event))
                update = events[-1].get("statusUpdate", {})
                if update.get("metadata", {}).get("agentcore_event", {}).get("type") == (
                    "tool_execution_start"
                ):
                    break
            await stream.aclose()
            task_id = events[0]["task"]["id"]  # type: ignore[index]
            task = await client.cancel_task(CancelTaskRequest(id=task_id))
            assert task.status.state == TaskState.TASK_STATE_CANCELED
            task = await client.get_task(GetTaskRequest(id=task_id))
    assert task.status.state == TaskState.TASK_STATE_CANCELED
    assert faux.call_count == 1  # the model was not asked again after the abort


async def test_a_dropped_stream_is_resubscribed() -> None:
    gate = anyio.Event()

    from agentcore import tool

    @tool
    async def slow() -> str:
        """Wait for the test."""
        await gate.wait()
        return "slow done"

    faux = FauxProvider(
        [faux_message(ToolCall(id="s1", name="slow", arguments={})), faux_text("All done.")]
    )
    async with served(new_agent(faux.model, [slow])) as url:
        async with sdk_client(url) as client:
            stream = client.send_message(user_message("go"))
            first = MessageToDict(await anext(stream))
            await stream.aclose()  # the client goes away mid-task
        task_id = first["task"]["id"]
        async with sdk_client(url) as client:
            resumed = client.subscribe(SubscribeToTaskRequest(id=task_id))
            with anyio.fail_after(20):
                now = MessageToDict(await anext(resumed))  # the task as it stands
                assert now["task"]["status"]["state"] == "TASK_STATE_WORKING"
                gate.set()  # only now may the run go on
                events = [now, *await collect(resumed)]
    assert states(events)[-1] == "TASK_STATE_COMPLETED"
    assert events[-1]["statusUpdate"]["status"]["message"]["parts"][0]["text"] == "All done."


def approval_script() -> FauxProvider:
    return FauxProvider(
        [
            faux_message(ToolCall(id="d1", name="delete_file", arguments={"path": "old.log"})),
            faux_text("Deleted old.log."),
        ]
    )


async def test_input_required_is_answered_with_approve() -> None:
    faux = approval_script()
    async with served(new_agent(faux.model, [delete_file])) as url, sdk_client(url) as client:
        first = await collect(client.send_message(user_message("Clean up")))
        assert states(first)[-1] == "TASK_STATE_INPUT_REQUIRED"
        asked = first[-1]["statusUpdate"]["status"]["message"]["parts"]
        assert "d1: delete_file" in asked[0]["text"]
        assert asked[1]["data"]["approvals"][0]["tool_call_id"] == "d1"
        task_id, context_id = first[0]["task"]["id"], first[0]["task"]["contextId"]
        second = await collect(
            client.send_message(user_message("approve", task_id=task_id, context_id=context_id))
        )
    assert states(second)[-1] == "TASK_STATE_COMPLETED"
    assert answer_text(second) == "Deleted old.log."
    results = [m for m in faux.calls[-1].context.messages if m.role == "tool_result"]
    assert results[0].content[0].text == "deleted old.log"


async def test_input_required_survives_a_restart(tmp_path: object) -> None:
    directory = str(tmp_path)
    faux = approval_script()
    with JsonlSessionStore(directory) as store:
        async with (
            served(new_agent(faux.model, [delete_file]), sessions=store) as url,
            sdk_client(url) as client,
        ):
            first = await collect(client.send_message(user_message("Clean up")))
    assert states(first)[-1] == "TASK_STATE_INPUT_REQUIRED"
    task_id, context_id = first[0]["task"]["id"], first[0]["task"]["contextId"]
    # a new server (a new process, as far as the SDK knows) on the same session store
    with JsonlSessionStore(directory) as store:
        async with (
            served(new_agent(faux.model, [delete_file]), sessions=store) as url,
            sdk_client(url) as client,
        ):
            task = await client.get_task(GetTaskRequest(id=task_id))
            assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            data = {"approvals": {"d1": {"approved": False, "reason": "keep it"}}}
            second = await collect(
                client.send_message(user_message(task_id=task_id, context_id=context_id, data=data))
            )
        transcript = store.load(task_id).messages
    assert states(second)[-1] == "TASK_STATE_COMPLETED"
    result = next(m for m in transcript if getattr(m, "role", "") == "tool_result")
    assert result.is_error and "denied: keep it" in result.content[0].text
    decision = next(m for m in transcript if getattr(m, "role", "") == "approval_decision")
    assert decision.decided_by == "a2a"


async def test_a_wrong_answer_asks_again() -> None:
    faux = approval_script()
    async with served(new_agent(faux.model, [delete_file])) as url, sdk_client(url) as client:
        first = await collect(client.send_message(user_message("Clean up")))
        task_id, context_id = first[0]["task"]["id"], first[0]["task"]["contextId"]
        again = await collect(
            client.send_message(
                user_message(
                    task_id=task_id, context_id=context_id, data={"approvals": {"x": True}}
                )
            )
        )
    assert states(again)[-1] == "TASK_STATE_INPUT_REQUIRED"
    text = again[-1]["statusUpdate"]["status"]["message"]["parts"][0]["text"]
    assert "no tool call 'x' waits for approval" in text and "d1: delete_file" in text


def test_off_loopback_needs_a_token() -> None:
    faux = adder_script()
    with pytest.raises(ConfigError, match="needs a token"):
        a2a_app(new_agent(faux.model, []), host="0.0.0.0")
    with pytest.raises(ConfigError, match="at least 16 characters"):
        a2a_app(new_agent(faux.model, []), token="short")
    with pytest.raises(ConfigError, match="an Agent or an AgentLoopConfig"):
        a2a_app("agent")  # type: ignore[arg-type]


async def test_an_a2a_0_3_client_is_answered_on_the_json_rpc_endpoint() -> None:
    """The SDK's 0.3 compatibility layer: the 0.3 method names and message shape (`kind`)."""
    faux = FauxProvider([faux_text("Hello, 0.3.")])
    message = {"role": "user", "kind": "message", "messageId": "m1"}
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/send",
        "params": {"message": {**message, "parts": [{"kind": "text", "text": "hi"}]}},
    }
    async with served(new_agent(faux.model, [])) as url, httpx.AsyncClient(timeout=10) as http:
        reply = (await http.post(url + "/", json=request)).json()
    task = reply["result"]
    assert task["kind"] == "task" and task["status"]["state"] == "completed"
    assert task["artifacts"][0]["parts"][0] == {"kind": "text", "text": "Hello, 0.3."}


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_the_sdks_own_0_3_client_is_served(binding: str) -> None:
    """The SDK's 0.3 transports (chosen when the card offers only 0.3 interfaces) get the
    answer, streamed, through the server's compatibility layer."""
    from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
    from a2a.types.a2a_pb2 import AgentCard

    faux = FauxProvider([faux_text("Hello, 0.3 client.")])
    async with served(new_agent(faux.model, [])) as url, httpx.AsyncClient(timeout=10) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        legacy = AgentCard()
        legacy.CopyFrom(card)
        del legacy.supported_interfaces[:]
        legacy.supported_interfaces.extend(
            i for i in card.supported_interfaces if i.protocol_version == "0.3"
        )
        config = ClientConfig(
            streaming=True, httpx_client=http, supported_protocol_bindings=[binding]
        )
        client = ClientFactory(config).create(legacy)
        events = await collect(client.send_message(user_message("hi")))
    assert states(events)[-1] == "TASK_STATE_COMPLETED"
    assert answer_text(events) == "Hello, 0.3 client."


async def test_data_parts_and_images_reach_the_model() -> None:
    from a2a.types.a2a_pb2 import Part

    faux = FauxProvider([faux_text("Seen.")])
    request = user_message("Describe this", data={"size": 3})
    request.message.parts.append(Part(raw=b"\x89PNG fake", media_type="image/png"))
    async with served(new_agent(faux.model, [])) as url, sdk_client(url) as client:
        await collect(client.send_message(request))
    (prompt,) = [m for m in faux.calls[0].context.messages if m.role == "user"]
    text, image = prompt.content  # type: ignore[misc]
    assert text.text == 'Describe this\n{"size": 3}'
    assert (image.mime_type, image.data) == ("image/png", "iVBORyBmYWtl")


async def test_a_failed_run_is_a_failed_task_and_a2a_tool_names_it() -> None:
    from agentcore import AbortController
    from agentcore.a2a import a2a_tool
    from agentcore.testing import faux_error

    faux = FauxProvider([faux_error("the model fell over"), faux_error("the model fell over")])
    async with served(new_agent(faux.model, [], max_retries=0)) as url:
        async with sdk_client(url) as client:
            events = await collect(client.send_message(user_message("hi")))
        result = await a2a_tool(url, name="shaky", description="x").execute(
            "c1", {"task": "hi"}, AbortController().signal, lambda _u: None
        )
    assert states(events)[-1] == "TASK_STATE_FAILED"
    message = events[-1]["statusUpdate"]["status"]["message"]["parts"][0]["text"]
    assert message == "the agent failed: the model fell over"
    assert result.is_error
    assert result.content[0].text == (  # type: ignore[union-attr]
        f"The A2A agent 'shaky' at {url} failed: the agent failed: the model fell over"
    )
