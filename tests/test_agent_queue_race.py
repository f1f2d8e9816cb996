"""A message queued as a run ends is run at once, never parked until the next prompt.

The loop's last poll of the queues comes before `agent_end` is delivered and the session
written; a message steered in that window (a surface that saw the run going, answered
"steered") used to wait in the queue until the next prompt, then run after it, out of order.
Now an Agent whose run ends because the model is done runs what was queued meanwhile (a next
loop, before `prompt()` returns); the check and going idle are one step.
"""

from __future__ import annotations

import random

import anyio
import anyio.abc
import anyio.lowlevel
import pytest

from agentcore import Agent, AgentEvent, UserMessage
from agentcore.messages import AssistantMessage
from agentcore.testing import FauxCall, FauxProvider, check_well_formed, event_types, faux_text

pytestmark = pytest.mark.anyio


async def echo(call: FauxCall) -> AssistantMessage:
    await anyio.lowlevel.checkpoint()
    last = call.context.messages[-1]
    assert isinstance(last, UserMessage)
    return faux_text(f"echo: {last.content}")


async def slow_echo(call: FauxCall) -> AssistantMessage:
    await anyio.sleep(0.004)
    return await echo(call)


def users(agent: Agent) -> list[str]:
    return [str(m.content) for m in agent.state.messages if isinstance(m, UserMessage)]


@pytest.mark.parametrize("queue", ["steer", "follow_up"])
async def test_a_message_queued_while_agent_end_is_delivered_runs_before_prompt_returns(
    queue: str,
) -> None:
    faux = FauxProvider([echo] * 4)
    agent = Agent(initial_state={"model": faux.model})
    events: list[AgentEvent] = []
    late_sent = False

    async def listener(event: AgentEvent) -> None:
        nonlocal late_sent
        events.append(event)
        if event.type == "agent_end" and not late_sent:  # after the loop's last poll
            late_sent = True
            getattr(agent, queue)("late")
            await anyio.lowlevel.checkpoint()

    agent.subscribe(listener)
    added = await agent.prompt("first")
    assert agent.steering_queue == () and agent.follow_up_queue == ()  # nothing parked
    assert users(agent) == ["first", "late"]
    assert [getattr(m, "text", None) for m in added if isinstance(m, AssistantMessage)] == [
        "echo: first",
        "echo: late",
    ]
    assert event_types(events).count("agent_start") == 2  # a next run, in the same prompt()
    first_end = event_types(events).index("agent_end") + 1
    check_well_formed(events[:first_end])
    check_well_formed(events[first_end:])
    assert not agent.state.is_streaming

    await agent.prompt("next")  # and the next prompt comes after it, in order
    assert users(agent) == ["first", "late", "next"]


async def test_an_aborted_run_still_leaves_its_queue_for_the_next_prompt() -> None:
    faux = FauxProvider([echo] * 3)
    agent = Agent(initial_state={"model": faux.model})

    def listener(event: AgentEvent) -> None:
        if event.type == "turn_start":
            agent.abort()
        elif event.type == "agent_end":
            agent.steer("kept")

    agent.subscribe(listener)
    await agent.prompt("stopped")
    assert [str(m.content) for m in agent.steering_queue] == ["kept"]  # type: ignore[attr-defined]


class Surface:
    """What a web or terminal surface does with each prompt: steer the run it sees going, else
    start one (its own `running` flag, cleared when `prompt()` returns)."""

    def __init__(self, agent: Agent, group: anyio.abc.TaskGroup) -> None:
        self.agent = agent
        self.group = group
        self.running = False
        self.sent: list[str] = []
        self.steered = 0

    def send(self, text: str) -> None:
        self.sent.append(text)
        if self.running:
            self.agent.steer(text)
            self.steered += 1
        else:
            self.running = True
            self.group.start_soon(self._run, text)

    async def _run(self, text: str) -> None:
        try:
            await self.agent.prompt(text)
        finally:
            self.running = False


async def test_fifty_concurrent_prompts_are_each_answered_in_order_and_none_parked() -> None:
    rng = random.Random(7)
    faux = FauxProvider([slow_echo] * 200)
    agent = Agent(initial_state={"model": faux.model}, steering_mode="all")

    async def slow_listener(event: AgentEvent) -> None:
        if event.type == "agent_end":  # the window after the loop's last poll, widened
            await anyio.sleep(0.004)

    agent.subscribe(slow_listener)
    delays = sorted(rng.uniform(0, 0.25) for _ in range(50))
    async with anyio.create_task_group() as group:
        surface = Surface(agent, group)

        async def client(i: int) -> None:
            await anyio.sleep(delays[i])
            surface.send(f"p{i}")

        async with anyio.create_task_group() as clients:
            for i in range(50):
                clients.start_soon(client, i)
    parked = len(agent.steering_queue)
    assert parked == 0, f"{parked} of 50 prompts parked in the queue"
    assert users(agent) == surface.sent  # every prompt, in the order it was sent
    assert surface.steered > 10  # the race was exercised: many prompts came during runs
