"""The A2A `AgentExecutor` of an agentcore server: one agentcore run per A2A request.

- A new task: the task's agent is prompted with the message's text. While it runs, the text of
  each answer streams as an artifact (`answer-<n>`, chunks appended), and each tool call is a
  `working` status update whose metadata (`agentcore_event`) names the tool. With an output
  guardrail, an answer is its artifact only once settled (a blocked one never is).
- The run ends: `completed` (the answer as the status message), `failed` (the error),
  `canceled` (aborted), or `input-required` when tool calls wait for approval: the status
  message lists them, as text and as a data part `{"approvals": [...]}`. Every final and
  interrupted status carries `{"agentcore": {"usage": ..., "stop_reason": ..., "turns": ...}}`
  as metadata, which the SDK merges into the task's metadata.
- The answer to `input-required` decides the waiting calls: a data part
  `{"approvals": {"<tool_call_id>": true | false | {"approved": ..., "reason": ...,
  "arguments": {...}}}}`, or the text `approve` / `deny` (`deny: <reason>`) for all of them;
  any other text is a new message (the waiting calls are denied, as `Agent.prompt` does).
- Cancel is the agent's abort: the run ends as an aborted run does (every call answered).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

import anyio

from .. import (
    Agent,
    AgentEvent,
    AgentMessage,
    AssistantMessage,
    ConfigError,
    Cost,
    ImageContent,
    MessageEndEvent,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolResultMessage,
    Usage,
)
from ._conversations import Conversations
from ._json import plain
from ._sdk import import_sdk_server
from ._task_store import EVENT_KEY

__all__ = ["AgentcoreExecutor", "usage_json"]


def _server() -> Any:
    return import_sdk_server()


_APPROVE_WORDS = frozenset({"approve", "approved", "yes", "y", "ok", "allow"})
_DENY_WORDS = frozenset({"deny", "denied", "no", "n", "reject"})


def usage_json(messages: Sequence[AgentMessage]) -> dict[str, Any]:
    """The summed usage and cost of a run's answers (and of tools that reported their own)."""
    parts: list[Usage] = []
    for message in messages:
        usage = getattr(message, "usage", None)
        if isinstance(message, AssistantMessage | ToolResultMessage) and usage is not None:
            parts.append(usage)
    cost = Cost(
        input=sum(u.cost.input for u in parts),
        output=sum(u.cost.output for u in parts),
        cache_read=sum(u.cost.cache_read for u in parts),
        cache_write=sum(u.cost.cache_write for u in parts),
    )
    return {
        "input": sum(u.input for u in parts),
        "output": sum(u.output for u in parts),
        "cache_read": sum(u.cache_read for u in parts),
        "cache_write": sum(u.cache_write for u in parts),
        "total_tokens": sum(u.total_tokens for u in parts),
        "cost": {
            "input": cost.input,
            "output": cost.output,
            "cache_read": cost.cache_read,
            "cache_write": cost.cache_write,
            "total": cost.total,
        },
    }


def _message_text(message: Any) -> str:
    return "\n".join(part.text for part in message.parts if part.WhichOneof("content") == "text")


def _prompt_of(message: Any) -> tuple[str, list[ImageContent]]:
    """What a user's A2A message says, as a prompt: its text parts, its data parts as JSON
    (in the parts' order), and its inline images (`raw` parts of an `image/*` media type).
    Other files are not passed on."""
    fmt = _server().json_format
    texts: list[str] = []
    images: list[ImageContent] = []
    for part in message.parts:
        kind = part.WhichOneof("content")
        if kind == "text":
            texts.append(part.text)
        elif kind == "data":
            texts.append(json.dumps(plain(fmt.MessageToDict(part.data)), ensure_ascii=False))
        elif kind == "raw" and part.media_type.startswith("image/"):
            data = base64.b64encode(part.raw).decode("ascii")
            images.append(ImageContent(data=data, mime_type=part.media_type))
    return "\n".join(texts), images


def _message_data(message: Any) -> list[Any]:
    fmt = _server().json_format
    return [
        plain(fmt.MessageToDict(part.data))
        for part in message.parts
        if part.WhichOneof("content") == "data"
    ]


def _decide(agent: Agent, message: Any) -> tuple[str | None, str | None]:
    """Apply an answer to `input-required`: (text to prompt with, or None to continue the run;
    a problem with the answer, or None)."""
    waiting = {r.tool_call_id for r in agent.state.pending_approvals}
    for data in _message_data(message):
        if isinstance(data, dict) and isinstance(data.get("approvals"), dict):
            try:
                for call_id, decision in data["approvals"].items():
                    if call_id not in waiting:
                        raise ConfigError(f"no tool call {call_id!r} waits for approval")
                    if isinstance(decision, bool):
                        decision = {"approved": decision}
                    if not isinstance(decision, dict) or not isinstance(
                        decision.get("approved"), bool
                    ):
                        raise ConfigError(
                            f"the decision on {call_id!r} must be true, false or "
                            '{"approved": true|false, "reason": ..., "arguments": {...}}'
                        )
                    if decision["approved"]:
                        agent.approve(
                            call_id, arguments=decision.get("arguments"), decided_by="a2a"
                        )
                    else:
                        agent.deny(call_id, decision.get("reason"), decided_by="a2a")
            except ConfigError as exc:
                return None, str(exc)
            return None, None
    text = _message_text(message).strip()
    word, _, rest = text.partition(":")
    word = word.strip().lower()
    if word in _APPROVE_WORDS and not rest.strip():
        for call_id in waiting:
            agent.approve(call_id, decided_by="a2a")
        return None, None
    if word in _DENY_WORDS:
        for call_id in waiting:
            agent.deny(call_id, rest.strip() or None, decided_by="a2a")
        return None, None
    return text, None


class _Forward:
    """Agent events -> A2A events on the task's queue.

    With an output guardrail (`settled`), an answer's text is not streamed: it becomes its
    artifact only at `message_end`, as the transcript has it, so the text of an answer the
    check blocks (whose `message_end` has no content) is never sent nor stored in the task."""

    def __init__(self, updater: Any, *, settled: bool = False) -> None:
        self.updater = updater
        self.settled = settled
        self.answers = 0
        self.open_artifact: str | None = None

    async def __call__(self, event: AgentEvent) -> None:
        server = _server()
        types = server.a2a_types
        if isinstance(event, MessageEndEvent) and self.settled:
            text = event.message.text if isinstance(event.message, AssistantMessage) else ""
            if text:
                self.answers += 1
                await self.updater.add_artifact(
                    [types.Part(text=text)],
                    artifact_id=f"answer-{self.answers}",
                    name="answer",
                    last_chunk=True,
                )
        elif isinstance(event, MessageUpdateEvent) and not self.settled:
            delta = event.assistant_message_event
            if delta.type == "text_delta" and delta.delta:
                first = self.open_artifact is None
                if first:
                    self.answers += 1
                    self.open_artifact = f"answer-{self.answers}"
                await self.updater.add_artifact(
                    [types.Part(text=delta.delta)],
                    artifact_id=self.open_artifact,
                    name="answer",
                    append=not first,
                )
        elif isinstance(event, MessageEndEvent) and isinstance(event.message, AssistantMessage):
            if self.open_artifact is not None:
                await self.updater.add_artifact(
                    [], artifact_id=self.open_artifact, append=True, last_chunk=True
                )
                self.open_artifact = None
        elif isinstance(event, ToolExecutionStartEvent | ToolExecutionEndEvent):
            info: dict[str, Any] = {
                "type": event.type,
                "tool_call_id": event.tool_call_id,
                "tool_name": event.tool_name,
            }
            if isinstance(event, ToolExecutionEndEvent):
                info["is_error"] = event.is_error
            await self.updater.update_status(
                types.TaskState.TASK_STATE_WORKING, metadata={EVENT_KEY: info}
            )


class AgentcoreExecutor:
    """An `a2a.server.agent_execution.AgentExecutor` running agentcore agents (built as a
    subclass at first use, so that importing this module needs no SDK)."""

    def __new__(cls, conversations: Conversations) -> Any:
        return _executor_class()(conversations)


_CLASS: Any = None


def _executor_class() -> Any:
    global _CLASS
    if _CLASS is None:
        _CLASS = _build_class()
    return _CLASS


def _build_class() -> Any:
    server = _server()
    types = server.a2a_types
    TaskUpdater = server.TaskUpdater

    class _Executor(server.AgentExecutor):  # type: ignore[misc,name-defined]
        def __init__(self, conversations: Conversations) -> None:
            self.conversations = conversations
            self.running: dict[str, tuple[Agent, anyio.Event]] = {}
            self.cancelled: set[str] = set()

        async def execute(self, context: Any, event_queue: Any) -> None:
            task_id, context_id = context.task_id, context.context_id
            updater = TaskUpdater(event_queue, task_id, context_id)
            message = context.message
            if context.current_task is None:
                await event_queue.enqueue_event(
                    types.Task(
                        id=task_id,
                        context_id=context_id,
                        status=types.TaskStatus(state=types.TaskState.TASK_STATE_SUBMITTED),
                        history=[message] if message is not None else [],
                    )
                )
                agent = self.conversations.start(task_id, context_id)
                prompt: str | None
                prompt, images = _prompt_of(message) if message is not None else ("", [])
            else:
                resumed = self.conversations.resume(task_id, context_id)
                if resumed is None:
                    await updater.failed(
                        updater.new_agent_message(
                            [
                                types.Part(
                                    text="this task's conversation is gone: the server was "
                                    "restarted without a session store"
                                )
                            ]
                        )
                    )
                    return
                agent = resumed
                images = []
                if agent.state.pending_approvals and message is not None:
                    prompt, problem = _decide(agent, message)
                else:
                    (prompt, images), problem = (
                        _prompt_of(message) if message is not None else ("", []),
                        None,
                    )
                if problem is not None:
                    await self._ask(updater, agent, f"Could not use the answer: {problem}.")
                    return
                if prompt is None and agent.state.pending_approvals:
                    await self._ask(updater, agent, None)
                    return
            finished = anyio.Event()
            self.running[task_id] = (agent, finished)
            try:
                await updater.start_work()
                messages = await self._run(task_id, agent, prompt, images, updater)
                with anyio.CancelScope(shield=True):
                    await self._finish(task_id, updater, agent, messages)
            except BaseException:
                self.conversations.finish(task_id)  # the SDK marks the task failed
                raise
            finally:
                self.running.pop(task_id, None)
                finished.set()

        async def _run(
            self,
            task_id: str,
            agent: Agent,
            prompt: str | None,
            images: list[ImageContent],
            updater: Any,
        ) -> list[AgentMessage]:
            done = anyio.Event()
            settled = any(g.kind == "output" for g in agent.guardrails)
            forward = _Forward(updater, settled=settled)
            unsubscribe = agent.subscribe(forward)
            outcome: list[list[AgentMessage]] = []

            async def run() -> None:
                # Shielded: a cancellation reaches the run as its abort, so it ends well formed.
                with anyio.CancelScope(shield=True):
                    try:
                        if prompt is None:
                            outcome.append(await agent.continue_())
                        else:
                            outcome.append(await agent.prompt(prompt, images or None))
                    finally:
                        done.set()

            try:
                async with anyio.create_task_group() as group:
                    group.start_soon(run)
                    try:
                        await done.wait()
                    except anyio.get_cancelled_exc_class():
                        self.cancelled.add(task_id)
                        agent.abort()
                        raise
            finally:
                unsubscribe()
            return outcome[0] if outcome else []

        async def _ask(
            self, updater: Any, agent: Agent, note: str | None, metadata: Any = None
        ) -> None:
            requests = agent.state.pending_approvals
            lines = [note] if note else []
            lines.append("Waiting for approval:")
            lines += [f"- {r.tool_call_id}: {r.tool_name}({r.arguments})" for r in requests]
            lines.append(
                'Answer "approve" or "deny: <reason>" for all of them, or a data part '
                '{"approvals": {"<tool_call_id>": true | false}}.'
            )
            data = {
                "approvals": [
                    {
                        "tool_call_id": r.tool_call_id,
                        "tool_name": r.tool_name,
                        "arguments": r.arguments,
                        "reason": r.reason,
                    }
                    for r in requests
                ]
            }
            value = server.json_format.ParseDict(data, server.struct_pb2.Value())
            await updater.update_status(
                types.TaskState.TASK_STATE_INPUT_REQUIRED,
                message=updater.new_agent_message(
                    [types.Part(text="\n".join(lines)), types.Part(data=value)]
                ),
                metadata=metadata,
            )

        async def _finish(
            self, task_id: str, updater: Any, agent: Agent, messages: list[AgentMessage]
        ) -> None:
            answers = [m for m in messages if isinstance(m, AssistantMessage)]
            last = answers[-1] if answers else None
            metadata = {
                "agentcore": {
                    "usage": usage_json(messages),
                    "stop_reason": last.stop_reason if last is not None else None,
                    "turns": len(answers),
                }
            }
            state = types.TaskState
            if agent.state.pending_approvals:
                await self._ask(updater, agent, None, metadata)
                return
            self.conversations.finish(task_id)
            aborted = task_id in self.cancelled
            self.cancelled.discard(task_id)
            if aborted or (last is not None and last.stop_reason == "aborted"):
                await updater.update_status(state.TASK_STATE_CANCELED, metadata=metadata)
                return
            if last is None or last.stop_reason == "error":
                error = last.error_message if last is not None else None
                text = f"the agent failed: {error or 'it gave no answer'}"
                await updater.update_status(
                    state.TASK_STATE_FAILED,
                    message=updater.new_agent_message([types.Part(text=text)]),
                    metadata=metadata,
                )
                return
            await updater.update_status(
                state.TASK_STATE_COMPLETED,
                message=updater.new_agent_message([types.Part(text=last.text)]),
                metadata=metadata,
            )

        async def cancel(self, context: Any, event_queue: Any) -> None:
            task_id = context.task_id
            running = self.running.get(task_id)
            if running is not None:
                runner, finished = running
                self.cancelled.add(task_id)
                runner.abort()
                await finished.wait()  # `execute` reports the aborted run as `canceled`
                return
            agent = self.conversations.resume(task_id, context.context_id or "")
            if agent is not None:
                for request in agent.state.pending_approvals:
                    agent.deny(request.tool_call_id, "the A2A task was cancelled", decided_by="a2a")
                self.conversations.finish(task_id)
            updater = TaskUpdater(event_queue, task_id, context.context_id or "")
            await updater.cancel()

    return _Executor
