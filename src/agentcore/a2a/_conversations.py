"""What an A2A server runs: a fresh `Agent` per A2A task, built from a template, on its own
session when the server has a session store.

The template is the `Agent` or the `AgentLoopConfig` (with its context) that was served: its
system prompt, model, thinking level, tools, leading messages and loop options. Each task gets an
`Agent` of its own, whose session id is the task id, so a task waiting for an approval can be
answered after the server restarted: the new server opens the session and finds the waiting
calls. A new task of an A2A context starts from the transcript of the context's latest task, so
the conversation carries over from task to task.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Sequence
from typing import Any

from .. import Agent, AgentContext, AgentLoopConfig, AgentMessage, ConfigError
from ..llm import StreamFn
from ..sessions import Session, SessionStore

__all__ = ["CONTEXT_KEY", "Conversations", "session_id_for"]

CONTEXT_KEY = "a2a_context_id"
"""The session metadata key holding the A2A context id of a task's session."""

# what an Agent takes besides its state: every loop option but the ones a run owns
_NOT_OPTIONS = frozenset({"model", "reasoning", "get_steering_messages", "get_follow_up_messages"})
_OPTIONS = tuple(f.name for f in dataclasses.fields(AgentLoopConfig) if f.name not in _NOT_OPTIONS)
_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")


def session_id_for(task_id: str) -> str:
    """The session id of a task: the task id when it is one (the SDK's are UUIDs), else a
    digest of it."""
    if _SESSION_ID.fullmatch(task_id):
        return task_id
    return "a2a-" + hashlib.sha256(task_id.encode("utf-8")).hexdigest()[:40]


class Conversations:
    """The per-task agents of one server (see the module docstring)."""

    def __init__(
        self,
        agent: Agent | AgentLoopConfig,
        *,
        context: AgentContext | None,
        stream_fn: StreamFn | None,
        sessions: SessionStore | None,
    ) -> None:
        if isinstance(agent, Agent):
            if context is not None or stream_fn is not None:
                raise ConfigError(
                    "context and stream_fn are for a loop configuration; an Agent has its own"
                )
            state = agent.state
            self._state: dict[str, Any] = {
                "system_prompt": state.system_prompt,
                "model": state.model,
                "thinking_level": state.thinking_level,
                "tools": list(state.tools),
            }
            self._leading: list[AgentMessage] = list(state.messages)
            self._options = {name: getattr(agent, name) for name in _OPTIONS}
            self._stream_fn = agent.stream_fn
        elif isinstance(agent, AgentLoopConfig):
            if context is not None and not isinstance(context, AgentContext):
                raise ConfigError(f"context must be an AgentContext, got {type(context).__name__}")
            context = context or AgentContext()
            self._state = {
                "system_prompt": context.system_prompt,
                "model": agent.model,
                "thinking_level": agent.reasoning,
                "tools": list(context.tools),
            }
            self._leading = list(context.messages)
            self._options = {name: getattr(agent, name) for name in _OPTIONS}
            self._stream_fn = stream_fn
        else:
            raise ConfigError(
                f"an A2A server serves an Agent or an AgentLoopConfig, got {type(agent).__name__}"
            )
        if sessions is not None and not isinstance(sessions, SessionStore):
            raise ConfigError(
                "sessions must be an agentcore.sessions.SessionStore (JsonlSessionStore, "
                f"SqliteSessionStore, PostgresSessionStore), got {type(sessions).__name__}"
            )
        self.sessions = sessions
        self._agents: dict[str, Agent] = {}
        self._context_of: dict[str, str] = {}
        self._last_of_context: dict[str, str] = {}
        # without a store: context -> the transcript of its latest finished task
        self._transcripts: dict[str, list[AgentMessage]] = {}

    @property
    def tools(self) -> Sequence[Any]:
        """The template's tools (for the agent card's skills)."""
        tools: list[Any] = self._state["tools"]
        return tools

    @property
    def system_prompt(self) -> str:
        """The template's system prompt."""
        prompt: str = self._state["system_prompt"]
        return prompt

    def _agent(self, session: Session | None, messages: Sequence[AgentMessage] | None) -> Agent:
        state = dict(self._state, tools=list(self._state["tools"]))
        if messages is not None:
            state["messages"] = list(messages)
        return Agent(
            initial_state=state, stream_fn=self._stream_fn, session=session, **self._options
        )

    def start(self, task_id: str, context_id: str) -> Agent:
        """A fresh agent for a new task (on a new session, with the context's history)."""
        history = self._history(context_id)
        session = None
        if self.sessions is not None:
            session = self.sessions.create(
                messages=history,
                metadata={CONTEXT_KEY: context_id, "a2a_task_id": task_id},
                session_id=session_id_for(task_id),
            )
            agent = self._agent(session, None)
        else:
            agent = self._agent(None, history)
        self._agents[task_id] = agent
        self._context_of[task_id] = context_id
        self._last_of_context[context_id] = task_id
        return agent

    def runs(self, task_id: str) -> bool:
        """Whether this server holds the task's agent (started or resumed, not finished)."""
        return task_id in self._agents

    def resume(self, task_id: str, context_id: str) -> Agent | None:
        """The agent of an existing task: the one in memory, or one on its reopened session
        (after a restart); None when neither exists."""
        agent = self._agents.get(task_id)
        if agent is not None:
            return agent
        store = self.sessions
        if store is None or not store.exists(session_id_for(task_id)):
            return None
        agent = self._agent(store.open(session_id_for(task_id)), None)
        self._agents[task_id] = agent
        self._context_of[task_id] = context_id
        self._last_of_context.setdefault(context_id, task_id)
        return agent

    def finish(self, task_id: str) -> None:
        """Forget a task that reached a final state (its session's write lock is released)."""
        agent = self._agents.pop(task_id, None)
        context_id = self._context_of.pop(task_id, None)
        if agent is None:
            return
        latest = context_id is not None and self._last_of_context.get(context_id) == task_id
        if latest and self.sessions is None:  # with a store, the session holds it
            self._transcripts[str(context_id)] = list(agent.state.messages)
        if self.sessions is not None:
            self.sessions.release(session_id_for(task_id))

    def close(self) -> None:
        """Release every session still held (server shutdown)."""
        for task_id in list(self._agents):
            self.finish(task_id)

    def _history(self, context_id: str) -> list[AgentMessage]:
        """The leading messages of a new task: the context's latest task's transcript."""
        previous = self._last_of_context.get(context_id)
        agent = self._agents.get(previous) if previous is not None else None
        if agent is not None:
            return list(agent.state.messages)
        store = self.sessions
        if store is None:
            return list(self._transcripts.get(context_id, self._leading))
        if previous is not None and store.exists(session_id_for(previous)):
            return store.load(session_id_for(previous)).messages
        earlier = [s for s in store.list() if s.metadata.get(CONTEXT_KEY) == context_id]
        if earlier:  # a context of an earlier server on this store
            return store.load(earlier[-1].id).messages
        return list(self._leading)
