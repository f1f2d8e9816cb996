"""The caller's side: start a durable run on DBOS, follow it, decide its approvals, cancel it,
read its result. Every method goes through the system database (a `dbos.DBOSClient`), from any
process: the one that started the run, another one, or one started days later."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..approvals import ApprovalRequest
from ..durable import RunOptions, event_from_json, messages_from_json, messages_to_json
from ..durable_handoffs import check_run_agent
from ..errors import ConfigError
from ..events import AgentEvent
from ..limits import LimitReached
from ..messages import AgentMessage, UserMessage
from ._names import (
    ABORT_ATTRIBUTE,
    DECIDE_TOPIC,
    DEFAULT_QUEUE,
    EVENTS_STREAM,
    PENDING_EVENT,
    SKILL_TOOLS,
    WORKFLOW_NAME,
)
from ._sdk import dbos

__all__ = ["DurableRun", "RunOutcome", "get_run", "start_run"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOutcome:
    """How a durable run ended.

    Attributes:
        messages: the messages the run added, as an in-process run returns them.
        limit: the bound that ended the run, if one did.
    """

    messages: list[AgentMessage]
    limit: LimitReached | None


def _messages(value: str | AgentMessage | Sequence[AgentMessage], what: str) -> list[AgentMessage]:
    if isinstance(value, str):
        return [UserMessage(content=value)]
    if hasattr(value, "role"):
        return [value]
    if isinstance(value, Sequence):
        return list(value)
    raise ConfigError(f"{what} must be a str, a message or a list of messages, got {value!r}")


class DurableRun:
    """A handle on one durable agent run (a DBOS workflow), by its id."""

    def __init__(self, client: dbos.DBOSClient, id: str) -> None:
        self.client = client
        self.id = id

    async def events(
        self, *, since: int = 0, poll_interval: float = 0.02
    ) -> AsyncIterator[AgentEvent]:
        """The run's events from index `since`, as they happen, until `agent_end` (or until the
        workflow ends without one: cancelled or failed). Text deltas are not part of a durable
        run's events: each answer arrives whole in its `message_end`. The stream is read again every
        `poll_interval` seconds while nothing new has arrived (a SQLite database has no
        notifications)."""
        index = 0
        stream = self.client.read_stream_async(
            self.id, EVENTS_STREAM, polling_interval_sec=poll_interval
        )
        async for entry in stream:
            for data in entry:
                if index >= since:
                    yield event_from_json(data)
                index += 1
                if data.get("type") == "agent_end":
                    return

    async def pending_approvals(self) -> list[ApprovalRequest]:
        """The tool calls waiting for a decision (empty while the run is busy or done)."""
        data = await self.client.get_event_async(self.id, PENDING_EVENT, timeout_seconds=0)
        requests = messages_from_json(data or [])
        return [r for r in requests if isinstance(r, ApprovalRequest)]

    async def approve(self, tool_call_id: str, *, arguments: dict[str, Any] | None = None) -> None:
        """Approve a waiting call, as requested or with edited `arguments` (for a question of the
        running tool, the answer, checked against its schema). The run goes on once every
        waiting call is decided; a decision sent while no worker runs waits in the database.

        Raises:
            ConfigError: no call with this id waits for a decision.
        """
        request = await self._waiting(tool_call_id)
        if request.input_schema is not None:
            from ..output import OutputSpec

            if not isinstance(arguments, dict):
                raise ConfigError(
                    f"tool call {tool_call_id!r} asks for input ({request.reason}): give the "
                    f"answer as arguments={{...}} (a dict), got {type(arguments).__name__}"
                )
            try:
                OutputSpec(request.input_schema).validate(arguments)
            except Exception as exc:
                raise ConfigError(
                    f"the answer does not match the requested schema: {exc}"
                ) from None
        elif arguments is not None and not isinstance(arguments, dict):
            raise ConfigError(f"arguments must be a dict or None, got {arguments!r}")
        await self._send({"tool_call_id": tool_call_id, "approved": True, "arguments": arguments})

    async def deny(self, tool_call_id: str, reason: str | None = None) -> None:
        """Deny a waiting call: it gets an error result with `reason`.

        Raises:
            ConfigError: no call with this id waits for a decision.
        """
        await self._waiting(tool_call_id)
        await self._send({"tool_call_id": tool_call_id, "approved": False, "reason": reason})

    async def _waiting(self, tool_call_id: str) -> ApprovalRequest:
        waiting = await self.pending_approvals()
        for request in waiting:
            if request.tool_call_id == tool_call_id:
                return request
        names = [r.tool_call_id for r in waiting]
        raise ConfigError(
            f"no tool call {tool_call_id!r} waits for a decision (waiting: {names or 'none'})"
        )

    async def _send(self, decision: dict[str, Any]) -> None:
        key = f"{self.id}:{decision['tool_call_id']}"  # one decision per call, sent once
        await self.client.send_async(self.id, decision, DECIDE_TOPIC, idempotency_key=key)

    async def abort(self, reason: str = "aborted") -> None:
        """Abort the run, as `Agent.abort` does in-process: the running model request or tool
        call is cut off (the tool's `AbortSignal` fires), every tool call still gets its one
        result (`Tool execution was aborted.`, or a denial for a call waiting for approval), and
        the run completes: `events()` ends with `agent_end` and `result()` returns the
        transcript. The worker learns of it within `ABORT_POLL_SECONDS` (0.1 s) while a step
        runs, or when its next step starts; an abort sent while no worker runs waits in the
        database. Aborting twice, or a run that ended, changes nothing.

        For DBOS's own cancellation (the workflow stops where it is, without those results),
        use `client.cancel_workflow_async(run.id)`."""
        if not isinstance(reason, str):
            raise ConfigError(f"reason must be a str, got {type(reason).__name__}")
        await self.client.update_workflow_attributes_async(
            self.id, {ABORT_ATTRIBUTE: reason}, merge=True
        )
        await self.client.send_async(  # wakes a run waiting for decisions
            self.id,
            {"abort": True, "reason": reason},
            DECIDE_TOPIC,
            idempotency_key=f"{self.id}:abort",
        )

    async def outcome(self, *, poll_interval: float = 0.02) -> RunOutcome:
        """Wait for the run to end (asking every `poll_interval` seconds); how it ended."""
        handle: Any = await self.client.retrieve_workflow_async(self.id)
        data: dict[str, Any] = await handle.get_result(polling_interval_sec=poll_interval)
        limit = data.get("limit")
        return RunOutcome(
            messages=messages_from_json(data["messages"]),
            limit=None if limit is None else LimitReached(**limit),
        )

    async def result(self) -> list[AgentMessage]:
        """Wait for the run to end; the messages it added (as `run_agent_loop` returns)."""
        return (await self.outcome()).messages


async def start_run(
    client: dbos.DBOSClient,
    prompts: str | AgentMessage | Sequence[AgentMessage] = (),
    *,
    id: str,
    model: str,
    tools: Sequence[str] = (),
    skills: Sequence[str] = (),
    system_prompt: str = "",
    messages: Sequence[AgentMessage] = (),
    options: RunOptions | None = None,
    queue: str = DEFAULT_QUEUE,
    agent: str | None = None,
) -> DurableRun:
    """Start a durable agent run: enqueue its workflow on `queue`, which the workers serving
    `model` and `tools` take runs from; returns its handle.

    Args:
        client: a `dbos.DBOSClient` on the workers' system database.
        prompts: the new prompts (a str is one user message). Empty to continue `messages`.
        id: the workflow id (use it to find the run again; a second start with the same id
            returns the first run).
        model: the name a worker registered the model under.
        tools: the names of the tools the run may call (registered on the workers).
        skills: the names of the Agent Skills the run may use (registered on the workers):
            their catalogue joins the system prompt, and the run gets `activate_skill` and
            `read_skill_file`, which run on the workers.
        system_prompt: the system prompt.
        messages: the transcript so far.
        options: the run's options (`agentcore.durable.RunOptions`; the Temporal-only fields
            `heartbeat_timeout`, `model_deadline`, `tool_deadline` and `history_limit` are
            not used).
        queue: the queue the workers serve.
        agent: start the run as this agent, registered on the workers with
            `launch_worker(agents=[...])`: its system prompt, tools, model (if it names one) and
            handoffs are the first agent's, and the run may hand the conversation to the agents
            they reach (see docs/handoffs.md). `system_prompt`, `tools` and `skills` stay empty
            then; `model` serves the agents that name none.

    Raises:
        ConfigError: bad arguments (named), or nothing to run.
    """
    new = _messages(prompts, "prompts")
    history = list(messages)
    if not new and (not history or getattr(history[-1], "role", None) == "assistant"):
        raise ConfigError(
            "start_run needs prompts, or messages ending with a user or tool-result message "
            "to continue from"
        )
    if not isinstance(model, str) or not model:
        raise ConfigError(f"model must be the name a worker registered, got {model!r}")
    if isinstance(tools, str) or not all(isinstance(t, str) for t in tools):
        raise ConfigError(f"tools must be a list of tool names, got {tools!r}")
    if isinstance(skills, str) or not all(isinstance(s, str) and s for s in skills):
        raise ConfigError(f"skills must be a list of skill names, got {skills!r}")
    if len(set(skills)) != len(skills):
        raise ConfigError(f"skills must name each skill once, got {list(skills)!r}")
    clash = [t for t in tools if t in SKILL_TOOLS]
    if skills and clash:
        raise ConfigError(
            f"tools {clash!r} are the skills' own: a run with skills gets them without naming "
            "them in tools"
        )
    check_run_agent(agent, system_prompt, tools, skills)
    options = RunOptions() if options is None else options
    if not isinstance(options, RunOptions):
        raise ConfigError(f"options must be a RunOptions, got {type(options).__name__}")
    data: dict[str, Any] = {
        "v": 1,
        "model": model,
        "tools": list(tools),
        "skills": list(skills),
        "system_prompt": system_prompt,
        "messages": messages_to_json(history),
        "prompts": messages_to_json(new),
        "options": options.to_json(),
        "started_at": int(time.time() * 1000),
    }
    if agent is not None:
        data["agent"] = agent
    enqueue: Any = {"queue_name": queue, "workflow_name": WORKFLOW_NAME, "workflow_id": id}
    await client.enqueue_async(enqueue, data)
    return DurableRun(client, id)


def get_run(client: dbos.DBOSClient, id: str) -> DurableRun:
    """The handle of the run with workflow id `id`."""
    return DurableRun(client, id)
