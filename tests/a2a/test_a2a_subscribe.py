"""`SubscribeToTask` through the a2a-sdk's own client, with and without a session store: every
subscriber gets the task as it stands and then the rest of its events, ending with the final
status; a finished task is refused at once; and the SDK never replaces a task's first event (its
"already exists. Ignoring task replacement." log)."""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
import pytest
from a2a.types.a2a_pb2 import GetTaskRequest, SubscribeToTaskRequest
from a2a.utils.errors import UnsupportedOperationError
from a2a_support import collect, new_agent, sdk_client, served, states, user_message
from google.protobuf.json_format import MessageToDict

from agentcore import tool
from agentcore.messages import ToolCall
from agentcore.sessions import JsonlSessionStore
from agentcore.testing import FauxProvider, faux_message, faux_text

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("store", [False, True], ids=["in-memory", "session-store"])
@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_every_subscriber_gets_the_rest_of_the_task(
    binding: str, store: bool, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    gate = anyio.Event()

    @tool
    async def slow() -> str:
        """Wait for the test."""
        await gate.wait()
        return "slow done"

    faux = FauxProvider(
        [faux_message(ToolCall(id="s1", name="slow", arguments={})), faux_text("All done.")]
    )
    options = {"sessions": JsonlSessionStore(tmp_path)} if store else {}
    caplog.set_level(logging.WARNING, logger="a2a")
    async with (
        served(new_agent(faux.model, [slow]), **options) as url,
        sdk_client(url, binding) as client,
    ):
        dropped = client.send_message(user_message("go"))
        first = MessageToDict(await anext(dropped))
        await dropped.aclose()  # the first client goes away mid-task
        task_id = first["task"]["id"]
        # one subscriber whose stream stays open while a second one comes
        async with sdk_client(url, binding) as one, sdk_client(url, binding) as two:
            streams = [one.subscribe(SubscribeToTaskRequest(id=task_id)) for _ in range(2)]
            streams.append(two.subscribe(SubscribeToTaskRequest(id=task_id)))
            with anyio.fail_after(20):
                snapshots = [MessageToDict(await anext(s)) for s in streams]
                gate.set()  # only now may the run go on
                rests = [await collect(s) for s in streams]
        with anyio.fail_after(20):
            task = MessageToDict(await client.get_task(GetTaskRequest(id=task_id)))
            # a finished task has nothing more to stream: refused at once (A2A 1.0)
            with pytest.raises(UnsupportedOperationError, match="terminal state"):
                await collect(client.subscribe(SubscribeToTaskRequest(id=task_id)))
    for snapshot, rest in zip(snapshots, rests, strict=True):
        now = snapshot["task"]
        assert now["status"]["state"] == "TASK_STATE_WORKING"
        # the task as the SDK stored it from its first event: the user's message
        assert [m["role"] for m in now["history"]] == ["ROLE_USER"]
        assert states(rest)[-1] == "TASK_STATE_COMPLETED"
        assert rest[-1]["statusUpdate"]["status"]["message"]["parts"][0]["text"] == "All done."
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    replaced = [r for r in caplog.records if "Ignoring task replacement" in r.getMessage()]
    assert replaced == []
