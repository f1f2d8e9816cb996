"""One open conversation: an `Agent` bound to a stored session, its runs, and its event log.

A prompt while the agent is idle starts a run in the hub's task group (the run outlives the
request, and the browser that sent it); a prompt while a run goes steers it (`Agent.steer`).
Every event of every run is translated to AG-UI and appended to the log, which the SSE
streams read.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.abc

from .. import Agent, AgentBusyError, AgentEvent, UserMessage
from ..llm import Model
from ..sessions import Session
from ._convert import messages_snapshot
from ._deps import ag_ui
from ._log import EventLog
from ._translate import AgUiTranslator

__all__ = ["Chat"]

_log = logging.getLogger("agentcore.web")


def model_ref(model: Model | None) -> str | None:
    """`provider/id` of a model."""
    return None if model is None else f"{model.provider}/{model.id}"


class Chat:
    """One session open in the server.

    Args:
        agent: the agent, bound to `session`.
        session: the open store session (closed by `close`).
        keep: how many events the log keeps between runs.
    """

    def __init__(self, agent: Agent, session: Session, keep: int) -> None:
        self.id = session.id
        self.agent = agent
        self.session = session
        self.log = EventLog(keep)
        self.translator = AgUiTranslator(thread_id=session.id)
        self.running = False
        self.readers = 0
        self.parent: dict[str, Any] | None = None
        self._run_start_seq = 0
        self._run_start_messages: list[Any] = []
        self._idle = anyio.Event()
        self._idle.set()
        self.on_idle: Callable[[Chat], None] | None = None  # the hub's: a run has ended
        # set by the relay (`_relay`): a run on another replica, whose events this log holds
        # from the number after this one
        self.remote_start: int | None = None
        self._unsubscribe = agent.subscribe(self._on_event)

    def rebind(self, agent: Agent, session: Session) -> None:
        """Follow another agent (the session reloaded from the store: another replica may have
        changed it); the chat must be idle."""
        self._unsubscribe()
        self.agent = agent
        self.session = session
        self._unsubscribe = agent.subscribe(self._on_event)

    # -- what a new reader is sent first ------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """The STATE_SNAPSHOT value: the session's settings and what is going on."""
        agent = self.agent
        pending = agent.state.pending_approvals
        return {
            "sessionId": self.id,
            "model": model_ref(agent.state.model if _has_model(agent) else None),
            "thinkingLevel": agent.state.thinking_level,
            "running": self.running,
            "parent": self.parent,
            "tools": [t.name for t in agent.state.tools],
            "pendingApprovals": [
                {
                    "toolCallId": str(getattr(p, "tool_call_id", "")),
                    "toolName": str(getattr(p, "tool_name", "")),
                    "arguments": getattr(p, "arguments", None),
                    "reason": getattr(p, "reason", None),
                }
                for p in pending
            ],
        }

    def snapshot(self) -> tuple[int, list[ag_ui.BaseEvent]]:
        """The events that bring a new reader up to the log's event number returned with them:
        the transcript as of the start of the run in progress (or all of it when idle), and the
        state. The reader then follows the log from that number."""
        if self.remote_start is not None and not self.running:
            return self.remote_start, []  # the log holds the run's own snapshot
        if self.running:
            seq, messages = self._run_start_seq, self._run_start_messages
        else:
            seq, messages = self.log.seq, list(self.agent.state.messages)
        return seq, [
            ag_ui.MessagesSnapshotEvent(messages=messages_snapshot(messages)),
            ag_ui.StateSnapshotEvent(snapshot=self.state()),
        ]

    def publish_state(self) -> None:
        """Tell the readers the state changed (model, running, approvals)."""
        self.log.append(ag_ui.StateSnapshotEvent(snapshot=self.state()))

    def publish_transcript(self) -> None:
        """Send the readers the whole transcript again (after a change outside a run)."""
        self.log.append(
            ag_ui.MessagesSnapshotEvent(messages=messages_snapshot(self.agent.state.messages))
        )
        self.publish_state()

    # -- runs -------------------------------------------------------------------------------

    def _on_event(self, event: AgentEvent) -> None:
        for out in self.translator.translate(event):
            self.log.append(out)

    def start(
        self,
        group: anyio.abc.TaskGroup,
        run: Callable[[], Awaitable[Any]],
        *,
        run_id: str | None = None,
    ) -> None:
        """Start a run (`agent.prompt(...)` or `agent.continue_()`) in `group`; `run_id` is its
        AG-UI run id (default: a fresh one).

        Raises:
            AgentBusyError: a run is going.
        """
        if self.running:
            raise AgentBusyError("a run is going: steer it, or stop it first")
        self.running = True
        self._idle = anyio.Event()
        self._run_start_seq = self.log.seq
        self._run_start_messages = list(self.agent.state.messages)
        self.translator.begin(len(self._run_start_messages), run_id)
        self.publish_state()
        group.start_soon(self._run, run)

    async def _run(self, run: Callable[[], Awaitable[Any]]) -> None:
        try:
            await run()
        except Exception as exc:  # the Agent turns failures into messages; this is a bug
            _log.exception("a run of session %s raised", self.id)
            self.log.append(ag_ui.RunErrorEvent(message=str(exc) or type(exc).__name__))
        finally:
            self.running = False
            self.log.trim()
            self.publish_state()
            self._idle.set()
            if self.on_idle is not None:
                self.on_idle(self)

    def prompt(self, group: anyio.abc.TaskGroup, text: str) -> str:
        """Run `text` as a prompt, or steer the running run with it. Returns `"started"` or
        `"steered"`."""
        if self.running:
            self.agent.steer(UserMessage(content=text))
            self.log.append(
                ag_ui.CustomEvent(name="agentcore.steering_queued", value={"text": text})
            )
            return "steered"
        self.start(group, lambda: self.agent.prompt(text))
        return "started"

    async def wait_idle(self) -> None:
        """Wait until no run is going."""
        await self._idle.wait()

    def close(self) -> None:
        """Give back the session's write lock (the chat must be idle)."""
        self.session.close()


def _has_model(agent: Agent) -> bool:
    model = agent.state.model
    return isinstance(model, Model) and bool(model.id)
