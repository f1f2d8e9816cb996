"""An agentcore agent with an output guardrail served over A2A, called by the a2a-sdk's own
client over real HTTP on 127.0.0.1: a blocked answer's text is in no task `SendMessage`,
`GetTask` or `ListTasks` returns, nor in what a streaming client receives (issue 30)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types.a2a_pb2 import GetTaskRequest, ListTasksRequest
from a2a_support import answer_text, collect, new_agent, sdk_client, served, states, user_message
from google.protobuf.json_format import MessageToDict

from agentcore.guardrails import Block, Rewrite, output_guardrail
from agentcore.testing import FauxProvider, faux_text

pytestmark = pytest.mark.anyio

SECRET = "the launch code is 0000"


def _guard(mode: str) -> Any:
    @output_guardrail(mode=mode)  # type: ignore[call-overload]
    def no_launch_codes(ctx: Any) -> Any:
        return Block("leaks a launch code") if "launch code" in ctx.text else None

    return no_launch_codes


@pytest.mark.parametrize("mode", ["before", "alongside"])
async def test_a_blocked_answer_is_in_no_task_a_client_gets(mode: str) -> None:
    faux = FauxProvider([faux_text(SECRET), faux_text(SECRET)])
    agent = new_agent(faux.model, [], guardrails=[_guard(mode)])
    async with served(agent) as url, httpx.AsyncClient(timeout=30) as http:
        # a client that never streams
        client = await create_client(url, ClientConfig(streaming=False, httpx_client=http))
        try:
            sent = [MessageToDict(e) async for e in client.send_message(user_message("code?"))]
            task_id = sent[-1]["task"]["id"]
            got = MessageToDict(await client.get_task(GetTaskRequest(id=task_id)))
            listed = MessageToDict(await client.list_tasks(ListTasksRequest()))
        finally:
            await client.close()
        # and one that streams
        async with sdk_client(url) as streaming:
            events = await collect(streaming.send_message(user_message("code?")))
    assert sent[-1]["task"]["status"]["state"] == "TASK_STATE_FAILED"
    assert states(events)[-1] == "TASK_STATE_FAILED"
    for seen in (sent, got, listed, events):
        text = json.dumps(seen)
        assert "launch code is" not in text, seen
    assert "leaks a launch code" in json.dumps(got)  # the failure says why, not what


async def test_a_rewritten_answer_is_the_tasks_artifact() -> None:
    @output_guardrail
    def polite(ctx: Any) -> Any:
        return Rewrite(ctx.text.replace("darn", "gosh"))

    faux = FauxProvider([faux_text("darn it")])
    async with (
        served(new_agent(faux.model, [], guardrails=[polite])) as url,
        sdk_client(url) as client,
    ):
        events = await collect(client.send_message(user_message("hi")))
        task = MessageToDict(await client.get_task(GetTaskRequest(id=events[0]["task"]["id"])))
    assert states(events)[-1] == "TASK_STATE_COMPLETED"
    assert answer_text(events) == "gosh it"
    assert "darn" not in json.dumps(events) + json.dumps(task)


async def test_without_output_guardrails_the_answer_still_streams_in_chunks() -> None:
    faux = FauxProvider([faux_text("one two three four five six seven eight")])
    async with served(new_agent(faux.model, [])) as url, sdk_client(url) as client:
        events = await collect(client.send_message(user_message("hi")))
    chunks = [e for e in events if "artifactUpdate" in e]
    assert len(chunks) > 2
    assert answer_text(events) == "one two three four five six seven eight"
