"""The caller's side: start a durable run, follow it, steer it, abort it, read its result."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from ..approvals import ApprovalRequest
from ..durable import RunOptions, event_from_json, messages_from_json, messages_to_json
from ..durable_handoffs import check_run_agent
from ..errors import ConfigError, OutputValidationError
from ..events import AgentEvent
from ..limits import LimitReached
from ..messages import AgentMessage, UserMessage
from ..output import OutputSpec
from ._activities import SKILL_TOOLS
from ._sdk import client as temporal_client
from ._sdk import service
from ._workflow import WORKFLOW_NAME

__all__ = ["DurableRun", "RunOutcome", "get_run", "start_run"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOutcome:
    """How a durable run ended.

    Attributes:
        messages: the messages the run added, as an in-process run returns them.
        limit: the bound that ended the run, if one did.
        unsent: steering and follow-up messages still queued when the run ended (by an abort,
            a bound or a failed request), by queue (`"steering"`, `"follow_up"`).
    """

    messages: list[AgentMessage]
    limit: LimitReached | None
    unsent: dict[str, list[AgentMessage]]


def _messages(value: str | AgentMessage | Sequence[AgentMessage], what: str) -> list[AgentMessage]:
    if isinstance(value, str):
        return [UserMessage(content=value)]
    if hasattr(value, "role"):
        return [value]
    if isinstance(value, Sequence):
        return list(value)
    raise ConfigError(f"{what} must be a str, a message or a list of messages, got {value!r}")


class DurableRun:
    """A handle on one durable agent run (a workflow and its continuations).

    Every method reaches the run through the Temporal server, from any process: the one that
    started the run, another one, or one started days later (`get_run`).
    """

    def __init__(self, client: temporal_client.Client, id: str) -> None:
        self.client = client
        self.handle = client.get_workflow_handle(id)  # not pinned to a run: follows the chain

    @property
    def id(self) -> str:
        """The workflow id."""
        return self.handle.id

    async def events(
        self, *, since: int = 0, poll_interval: float = 0.1
    ) -> AsyncIterator[AgentEvent]:
        """The run's events from index `since`, as they happen, until `agent_end`.

        Polls the workflow's `events` query every `poll_interval` seconds while nothing new
        has happened. Text deltas are not part of a durable run's events: each answer arrives
        whole in its `message_end` (see docs/temporal.md).
        """
        index = since
        idle = 0
        while True:
            page = await self._page(index)
            for data in page["events"]:
                yield event_from_json(data)
            index = page["next"]
            if page["done"]:
                return
            if page["events"]:
                idle = 0
                continue
            idle += 1
            if idle % _CHECK_EVERY == 0 and not await self._running():
                # ended without its agent_end (terminated, timed out, failed): read what is
                # left, then stop instead of waiting forever
                page = await self._page(index)
                for data in page["events"]:
                    yield event_from_json(data)
                if not page["events"]:
                    return
            await anyio.sleep(poll_interval)

    async def _running(self) -> bool:
        """Whether the run's latest workflow is still running."""
        status = (await self.handle.describe()).status
        return status in (
            temporal_client.WorkflowExecutionStatus.RUNNING,
            temporal_client.WorkflowExecutionStatus.CONTINUED_AS_NEW,
        )

    async def _page(self, index: int) -> dict[str, Any]:
        """The events from `index`, from the run of the chain that published them."""
        page = await _query(self.handle, index)
        while index < page["first"] and page["previous_run"] is not None:
            earlier = self.client.get_workflow_handle(self.id, run_id=page["previous_run"])
            page = await _query(earlier, index)
        return page

    async def transcript(self) -> list[AgentMessage]:
        """The whole transcript as it stands (the context's messages and the run's)."""
        return messages_from_json(await self.handle.query("transcript"))

    async def steer(self, message: str | AgentMessage | Sequence[AgentMessage]) -> None:
        """Queue steering messages: injected at the run's next turn (a str is a user message)."""
        await self.handle.signal("steer", messages_to_json(_messages(message, "message")))

    async def follow_up(self, message: str | AgentMessage | Sequence[AgentMessage]) -> None:
        """Queue follow-up messages: sent when the run would otherwise stop."""
        await self.handle.signal("follow_up", messages_to_json(_messages(message, "message")))

    async def pending_approvals(self) -> list[ApprovalRequest]:
        """The tool calls waiting for a decision (empty while the run is busy or done)."""
        requests = messages_from_json(await self.handle.query("pending_approvals"))
        return [r for r in requests if isinstance(r, ApprovalRequest)]

    async def approve(self, tool_call_id: str, *, arguments: dict[str, Any] | None = None) -> None:
        """Approve a waiting call, as requested or with edited `arguments`; once every waiting
        call is decided, the run carries the decisions out and goes on. For a question of the
        running tool (`request.input_schema` set), `arguments` is the answer, checked against
        that schema here.

        Raises:
            ConfigError: no call with this id waits for a decision.
        """
        for request in await self.pending_approvals():
            if request.tool_call_id == tool_call_id and request.input_schema is not None:
                arguments = _checked_answer(request, arguments)  # a question: the answer
        await self._decide({"tool_call_id": tool_call_id, "approved": True, "arguments": arguments})

    async def deny(self, tool_call_id: str, reason: str | None = None) -> None:
        """Deny a waiting call: it gets an error result with `reason`.

        Raises:
            ConfigError: no call with this id waits for a decision.
        """
        await self._decide({"tool_call_id": tool_call_id, "approved": False, "reason": reason})

    async def _decide(self, decision: dict[str, Any]) -> None:
        try:
            await self.handle.execute_update("decide", decision)
        except temporal_client.WorkflowUpdateFailedError as exc:
            cause = exc.cause
            raise ConfigError(str(getattr(cause, "message", None) or cause or exc)) from exc

    async def abort(self) -> None:
        """Abort the run (cancel its workflow): running steps are cancelled, every tool call
        gets its one result, and the run ends with a transcript that can be continued."""
        await self.handle.cancel()

    async def outcome(self) -> RunOutcome:
        """Wait for the run to end; how it ended."""
        data = await self.handle.result()
        limit = data.get("limit")
        return RunOutcome(
            messages=messages_from_json(data["messages"]),
            limit=None if limit is None else LimitReached(**limit),
            unsent={k: messages_from_json(v) for k, v in data["unsent"].items()},
        )

    async def result(self) -> list[AgentMessage]:
        """Wait for the run to end; the messages it added (as `run_agent_loop` returns)."""
        return (await self.outcome()).messages


async def _query(handle: temporal_client.WorkflowHandle[Any, Any], index: int) -> dict[str, Any]:
    """The `events` query, asked again (a few times, after a pause) when the server timed out,
    could not reach a worker or the run had not started yet: a busy or restarting worker, or a
    run continuing as new, is not the end of the watch."""
    for attempt in range(_QUERY_ATTEMPTS):
        try:
            page: dict[str, Any] = await handle.query("events", index)
            return page
        except service.RPCError as exc:
            transient = exc.status in (
                service.RPCStatusCode.DEADLINE_EXCEEDED,
                service.RPCStatusCode.UNAVAILABLE,
                service.RPCStatusCode.FAILED_PRECONDITION,  # a new run not started yet
            ) or (
                # the SDK's own client-side timeout (seen while the worker holding the run was
                # killed on a loaded machine): reported as CANCELLED, "Timeout expired"
                exc.status == service.RPCStatusCode.CANCELLED and "timeout" in exc.message.lower()
            )
            if not transient or attempt == _QUERY_ATTEMPTS - 1:
                raise
        await anyio.sleep(0.5 * (attempt + 1))
    raise AssertionError("unreachable")


_QUERY_ATTEMPTS = 5
_CHECK_EVERY = 10  # empty polls between two checks that the workflow still runs


async def start_run(
    client: temporal_client.Client,
    prompts: str | AgentMessage | Sequence[AgentMessage] = (),
    *,
    id: str,
    task_queue: str,
    model: str,
    tools: Sequence[str] = (),
    skills: Sequence[str] = (),
    system_prompt: str = "",
    messages: Sequence[AgentMessage] = (),
    options: RunOptions | None = None,
    agent: str | None = None,
    **start_options: Any,
) -> DurableRun:
    """Start a durable agent run as a workflow; returns its handle.

    Args:
        client: a connected `temporalio.client.Client`.
        prompts: the new prompts (a str is one user message). Empty to continue `messages`,
            which must then end with a user or tool-result message.
        id: the workflow id (unique among running workflows; use it to find the run again).
        task_queue: the queue whose workers serve `model` and `tools`.
        model: the name a worker registered the model under.
        tools: the names of the tools the run may call (registered on the workers).
        skills: the names of the Agent Skills the run may use (registered on the workers with
            `create_worker(skills=...)`): their catalogue joins the system prompt, and the run
            gets the `activate_skill` and `read_skill_file` tools, which run on the workers.
        system_prompt: the system prompt.
        messages: the transcript so far.
        options: the run's options (`RunOptions`).
        agent: start the run as this agent, registered on the workers with
            `create_worker(agents=[...])`: its system prompt, tools, model (if it names one) and
            handoffs are the first agent's, and the run may hand the conversation to the agents
            they reach (see docs/handoffs.md). `system_prompt`, `tools` and `skills` stay empty
            then; `model` serves the agents that name none.
        start_options: more `Client.start_workflow` options (`execution_timeout`, ...).

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
    }
    if agent is not None:
        data["agent"] = agent
    await client.start_workflow(WORKFLOW_NAME, data, id=id, task_queue=task_queue, **start_options)
    return DurableRun(client, id)


def get_run(client: temporal_client.Client, id: str) -> DurableRun:
    """The handle of the run with workflow id `id` (its latest continuation)."""
    return DurableRun(client, id)


def _checked_answer(request: ApprovalRequest, content: dict[str, Any] | None) -> dict[str, Any]:
    """The answer to an input request, checked against its schema.

    Raises:
        ConfigError: not an object, or a field that does not match (named).
    """
    if not isinstance(content, dict):
        raise ConfigError(
            f"tool call {request.tool_call_id!r} asks for input ({request.reason}): give the "
            f"answer as arguments={{...}} (a dict), got {type(content).__name__}"
        )
    try:
        OutputSpec(request.input_schema or {}).validate(content)
    except OutputValidationError as exc:
        raise ConfigError(f"the answer does not match the requested schema: {exc}") from None
    return content
