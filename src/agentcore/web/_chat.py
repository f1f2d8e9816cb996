"""One open conversation: an `Agent` bound to a stored session, its runs, and its event log.

A prompt while the agent is idle starts a run in the hub's task group (the run outlives the
request, and the browser that sent it); a message sent while a run goes is queued into it as
steering or a follow-up (`send`; what it became, and why it is never parked: `_steering`).
Every event of every run is translated to AG-UI and appended to the log, which the SSE
streams read.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.abc

from .. import Agent, AgentBusyError, AgentEvent
from ..llm import Model
from ..sessions import Session
from ._convert import messages_snapshot
from ._deps import ag_ui
from ._log import EventLog
from ._steering import Delivery, HeldMessages, MessageKind, next_run, queue, queued_texts
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
        self._stopping = False  # an abort was asked for the run in progress
        self._held = HeldMessages()  # sent while it stops: they start the next run
        self._queued_seen: dict[str, list[str]] = {"steering": [], "followUp": []}
        self.on_idle: Callable[[Chat], None] | None = None  # the hub's: a run has ended
        # set by the relay (`_replicas/relay.py`): a run on another replica, whose events this log
        # holds
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
                    # set for a question of the running tool (an MCP elicitation)
                    "inputSchema": getattr(p, "input_schema", None),
                }
                for p in pending
            ],
            "queued": self._queued_seen,
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
        """Tell the readers the state changed (model, running, approvals, queued messages)."""
        self._queued_seen = queued_texts(self.agent)
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
        if event.type == "message_end" and queued_texts(self.agent) != self._queued_seen:
            self.publish_state()  # a queued message was taken: the readers' list shrinks

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
        self._begin(run_id)
        group.start_soon(self._run, run)

    def _begin(self, run_id: str | None) -> None:
        self._stopping = False
        self._run_start_seq = self.log.seq
        self._run_start_messages = list(self.agent.state.messages)
        self.translator.begin(len(self._run_start_messages), run_id)
        self.publish_state()

    async def _run(self, run: Callable[[], Awaitable[Any]] | None) -> None:
        try:
            while run is not None:
                try:
                    await run()
                except Exception as exc:  # the Agent turns failures into messages: a bug
                    _log.exception("a run of session %s raised", self.id)
                    self.log.append(ag_ui.RunErrorEvent(message=str(exc) or type(exc).__name__))
                # No await from the end of that run to here: what was sent meanwhile was either
                # taken by it, or is still queued (or held) and starts the next run now.
                run = self._next()
        finally:
            self.running = False
            self.log.trim()
            self.publish_state()
            self._idle.set()
            if self.on_idle is not None:
                self.on_idle(self)

    def _next(self) -> Callable[[], Awaitable[Any]] | None:
        chosen = next_run(self.agent, self._held, stopped=self._stopping)
        if chosen is None:
            return None
        run, run_id = chosen
        self.log.trim()  # the run that ended is kept like any ended run
        self._begin(run_id or self.run_id)  # from the queue: the run goes on, under its id
        return run

    @property
    def run_start_seq(self) -> int:
        """The log's event number before the run in progress (or the last one) began."""
        return self._run_start_seq

    @property
    def run_start_messages(self) -> list[Any]:
        """The transcript as it was when the run in progress (or the last one) began."""
        return self._run_start_messages

    @property
    def run_id(self) -> str:
        """The AG-UI run id of the run in progress (or of the last one)."""
        return self.translator.run_id

    def send(
        self,
        group: anyio.abc.TaskGroup,
        kind: MessageKind,
        text: str,
        *,
        run_id: str | None = None,
    ) -> Delivery:
        """Send a message to the conversation: queued into the run in progress as `kind`
        (steering or a follow-up), or the start of the next run (whose AG-UI id is `run_id`,
        if given). Never parked (`_steering`)."""
        if self.running and self._stopping:
            run_id = self._held.hold(text, run_id)
            self.log.append(
                ag_ui.CustomEvent(
                    name="agentcore.message_held", value={"text": text, "runId": run_id}
                )
            )
            return Delivery("started", kind, run_id)
        if self.running:
            queue(self.agent, kind, text)
            name = "agentcore.steering_queued" if kind == "steer" else "agentcore.follow_up_queued"
            self.log.append(ag_ui.CustomEvent(name=name, value={"text": text}))
            self.publish_state()
            return Delivery("queued", kind, self.run_id)
        self.start(group, lambda: self.agent.prompt(text), run_id=run_id)
        return Delivery("started", kind, self.run_id)

    def abort(self, reason: str) -> None:
        """Stop the run in progress (messages sent from now on start the next run)."""
        if self.running:
            self._stopping = True
        self.agent.abort(reason)

    async def wait_idle(self) -> None:
        """Wait until no run is going."""
        await self._idle.wait()

    def close(self) -> None:
        """Give back the session's write lock (the chat must be idle)."""
        self.session.close()


def _has_model(agent: Agent) -> bool:
    model = agent.state.model
    return isinstance(model, Model) and bool(model.id)
