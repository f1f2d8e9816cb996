"""The SDK's task store, backed by agentcore sessions across restarts.

Tasks live in the SDK's in-memory store while the server runs. A task it does not know (the
server restarted) is rebuilt from the task's session, when the server has a session store: its
state is what the transcript says (calls waiting for approval: `input-required`; the last
message an answer that stopped, failed or was aborted: `completed` with the answer, `failed`,
`canceled`; a transcript that stops mid-run: `failed`, the server stopped while the task ran).
So the answer to an `input-required` task reaches the restarted server's executor, which reopens
the session.

A task this server runs is never rebuilt: its session exists from the moment the executor starts
it, before the SDK has stored the task's first event, and a rebuilt copy would replace that
event (the SDK logs "already exists. Ignoring task replacement.") with a task whose state the
half-written transcript guesses, which is what a subscriber would then be given.
"""

from __future__ import annotations

from typing import Any

from .. import AssistantMessage
from ..approvals import pending_approvals
from ..sessions import SessionError, SessionStore
from ._conversations import CONTEXT_KEY, Conversations, session_id_for
from ._sdk import import_sdk_server

__all__ = ["EVENT_KEY", "session_task_store"]

EVENT_KEY = "agentcore_event"
"""The metadata key of a `working` status update that reports a tool call's start or end."""


def session_task_store(sessions: SessionStore | None, conversations: Conversations) -> Any:
    """An `a2a.server.tasks.TaskStore`: in memory, falling back to `sessions` for the tasks
    `conversations` does not run (see the module docstring)."""
    server = import_sdk_server()
    types = server.a2a_types
    state = types.TaskState

    class _SessionTaskStore(server.InMemoryTaskStore):  # type: ignore[misc,name-defined]
        async def save(self, task: Any, context: Any = None) -> None:
            # A tool event is news for the status update that carries it, not the task's
            # state: the SDK merges an update's metadata into the task's, so without this the
            # task would keep the last tool event for good (GetTask, ListTasks).
            if EVENT_KEY in task.metadata:
                del task.metadata[EVENT_KEY]
            await super().save(task, context)

        async def get(self, task_id: str, context: Any = None) -> Any:
            task = await super().get(task_id, context)
            if task is not None or sessions is None or conversations.runs(task_id):
                return task
            task = _rebuild(task_id)
            if task is not None:
                await self.save(task, context)
            return task

    def _rebuild(task_id: str) -> Any:
        assert sessions is not None
        sid = session_id_for(task_id)
        try:
            if not sessions.exists(sid):
                return None
            data = sessions.load(sid)
        except SessionError:
            return None
        if data.metadata.get("a2a_task_id") != task_id:
            return None
        last = data.messages[-1] if data.messages else None
        text = ""
        if pending_approvals(data.messages):
            now = state.TASK_STATE_INPUT_REQUIRED
        elif isinstance(last, AssistantMessage) and last.stop_reason in ("stop", "length"):
            now, text = state.TASK_STATE_COMPLETED, last.text
        elif isinstance(last, AssistantMessage) and last.stop_reason == "aborted":
            now = state.TASK_STATE_CANCELED
        elif isinstance(last, AssistantMessage) and last.stop_reason == "error":
            now, text = state.TASK_STATE_FAILED, f"the agent failed: {last.error_message}"
        else:  # the transcript stops in the middle of a run: the server stopped during it
            now, text = state.TASK_STATE_FAILED, "the server stopped while the task ran"
        status = types.TaskStatus(state=now)
        if text:
            status.message.CopyFrom(
                types.Message(
                    role=types.Role.ROLE_AGENT,
                    message_id=f"{task_id}-restored",
                    task_id=task_id,
                    parts=[types.Part(text=text)],
                )
            )
        return types.Task(
            id=task_id, context_id=str(data.metadata.get(CONTEXT_KEY, "")), status=status
        )

    return _SessionTaskStore()
