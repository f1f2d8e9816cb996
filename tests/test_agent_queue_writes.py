"""A queue change made on the run's own event-loop thread, with a store whose writes wait: awaiting
`_queues_stored` (what the web surfaces await before answering "queued") returns once the queue is
in the store, and while the store holds that write the run's events go on (the loop is never
blocked, and the run does not wait on it)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from agentcore import Agent
from agentcore.events import AgentEvent
from agentcore.messages import AgentMessage
from agentcore.sessions import JsonlSessionStore, SessionState
from agentcore.testing import FauxProvider, faux_text
from support import BACKENDS


class HeldStore(JsonlSessionStore):
    """A store whose writes may wait, and whose write of a steering queue waits for `release`."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.holding = threading.Event()
        self.release = threading.Event()

    @property
    def blocking_writes(self) -> bool:
        return True

    def update(
        self,
        session_id: str,
        *,
        truncate_to: int | None = None,
        messages: Sequence[AgentMessage] = (),
        state: SessionState | None = None,
    ) -> None:
        if state is not None and state.steering and not messages:
            self.holding.set()
            assert self.release.wait(60), "the held write was never released"
        super().update(session_id, truncate_to=truncate_to, messages=messages, state=state)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_a_steer_on_the_loop_thread_is_stored_when_awaited_and_the_run_goes_on_meanwhile(
    tmp_path: Path,
) -> None:
    store = HeldStore(tmp_path)
    session = store.create()
    faux = FauxProvider([faux_text("word " * 400), faux_text("turned")], tokens_per_second=2000)
    agent = Agent(initial_state={"model": faux.model}, session=session)
    updates = 0
    streaming = anyio.Event()
    more: list[tuple[int, anyio.Event]] = []

    def count(event: AgentEvent) -> None:
        nonlocal updates
        if event.type == "message_update":
            updates += 1
            streaming.set()
            for target, reached in more:
                if updates >= target:
                    reached.set()

    agent.subscribe(count)
    acknowledged = anyio.Event()

    async def acknowledge() -> None:
        await agent._queues_stored()
        acknowledged.set()

    async with anyio.create_task_group() as group:
        group.start_soon(agent.prompt, "go")
        await streaming.wait()
        agent.steer("turn left")  # on the run's loop thread, during the run
        group.start_soon(acknowledge)
        await anyio.to_thread.run_sync(store.holding.wait)  # the write is held in the store
        reached = anyio.Event()
        more.append((updates + 20, reached))
        await reached.wait()  # the run streams on while its queue's write is held
        assert not acknowledged.is_set()  # not answered before it is stored
        assert store.load(session.id).state.steering == []
        store.release.set()
        await acknowledged.wait()
        # acknowledged: in the store, though the run has not taken it yet
        assert [m.content for m in store.load(session.id).state.steering] == ["turn left"]
        assert agent.state.is_streaming and agent.steering_queue
    said = [m.content for m in store.load(session.id).messages if m.role == "user"]
    assert said == ["go", "turn left"]
    assert store.load(session.id).state.steering == []
    store.close()
