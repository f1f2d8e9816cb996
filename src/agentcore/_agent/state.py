"""The state of an `Agent` and its two message queues.

`AgentState` holds what a caller may set (system prompt, model, thinking level, tools, transcript)
and what a run reports (streaming flag, the message being streamed, running tool calls, the last
error, the bound that ended the last run). `Queues` holds the steering and follow-up queues
behind one lock, so `steer` and `follow_up` are safe from any thread; messages the loop has taken
but that have not reached the transcript yet are kept "in flight" and go back to the front of
their queue if the run ends without them.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, TypeAlias, get_args

from .._engine.usage import add_usage
from ..approvals import ApprovalRequest, pending_approvals
from ..config import AgentContext
from ..errors import ConfigError
from ..events import (
    AgentEndEvent,
    AgentEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    TurnEndEvent,
)
from ..guardrails._trip import GuardrailTrip
from ..limits import LimitReached
from ..llm.model import Model
from ..llm.types import ThinkingLevel
from ..messages import AgentMessage, Usage
from ..tools import AgentTool

__all__ = [
    "RESET",
    "UNKNOWN_MODEL",
    "AgentState",
    "Decided",
    "QueueMode",
    "Reset",
    "run_context",
]


class Reset:
    """What `Agent.reset` hands the reducer (`AgentState._reduce`): the transcript, streaming
    state, error, limit, guardrail and output cleared, as by no event of a run."""

    __slots__ = ()


RESET = Reset()
"""The one `Reset` value."""


class Decided:
    """What an Agent hands the reducer when a decision on a waiting tool call joins the
    transcript outside of a run (`approve`, `deny`, `reopen`'s new request, and the denials of
    `prompt`): the message is added as it is (it has no usage)."""

    __slots__ = ("message",)

    def __init__(self, message: AgentMessage) -> None:
        self.message = message


QueueMode: TypeAlias = Literal["one-at-a-time", "all"]
"""How a queue is drained at a poll point: the oldest message only, or all of them."""

_QUEUE_MODES: tuple[str, ...] = get_args(QueueMode)

UNKNOWN_MODEL = Model(id="unknown", name="No model set", api="unknown", provider="unknown")
"""The placeholder model of a new `AgentState`; a run with it ends in an error message."""

_FIELDS = ("system_prompt", "model", "thinking_level", "tools", "messages")
_RUNTIME = (
    "is_streaming",
    "streaming_message",
    "pending_tool_calls",
    "error_message",
    "limit",
    "output",
)


class AgentState:
    """What an `Agent` works on, and what its current run reports.

    `system_prompt`, `model`, `thinking_level`, `tools` and `messages` may be assigned at any
    time; a running run keeps what it started with, the next run uses the new values.
    Assigning `tools` or `messages` stores a copy of the list; the lists returned are the
    state's own (appending to `state.messages` changes the transcript).

    The transcript grows only at `message_end` events; `streaming_message` is the message being
    streamed (the partial assistant message), `pending_tool_calls` the ids of running tools,
    `error_message` the error of the last failed or aborted turn, `limit` the bound that ended
    the last run (both reset when a run starts), `guardrail` the input or output guardrail that
    ended the last run, `output` the last run's typed output,
    `usage` the total of every run so far.
    """

    __slots__ = (
        "_error_message",
        "_guardrail",
        "_is_streaming",
        "_limit",
        "_messages",
        "_output",
        "_pending",
        "_streaming",
        "_tools",
        "_usage",
        "model",
        "system_prompt",
        "thinking_level",
    )

    def __init__(
        self,
        *,
        system_prompt: str = "",
        model: Model | None = None,
        thinking_level: ThinkingLevel = "off",
        tools: Iterable[AgentTool] = (),
        messages: Iterable[AgentMessage] = (),
    ) -> None:
        self.system_prompt = system_prompt
        self.model: Model = model if model is not None else UNKNOWN_MODEL
        self.thinking_level: ThinkingLevel = thinking_level
        self._tools: list[AgentTool] = list(tools)
        self._messages: list[AgentMessage] = list(messages)
        self._is_streaming = False
        self._streaming: AgentMessage | MessageUpdateEvent | None = None
        self._pending: frozenset[str] = frozenset()
        self._error_message: str | None = None
        self._limit: LimitReached | None = None
        self._guardrail: GuardrailTrip | None = None
        self._output: Any = None
        self._usage = Usage()

    @property
    def tools(self) -> list[AgentTool]:
        """The tools of the next run."""
        return self._tools

    @tools.setter
    def tools(self, tools: Iterable[AgentTool]) -> None:
        self._tools = list(tools)

    @property
    def messages(self) -> list[AgentMessage]:
        """The transcript."""
        return self._messages

    @messages.setter
    def messages(self, messages: Iterable[AgentMessage]) -> None:
        self._messages = list(messages)

    @property
    def pending_approvals(self) -> list[ApprovalRequest]:
        """The `ApprovalRequest`s of the tool calls waiting for a decision (`Agent.approve` or
        `Agent.deny`), in call order; empty when none waits."""
        return pending_approvals(self._messages)

    @property
    def is_streaming(self) -> bool:
        """True from the start of a run until it has settled, listeners of `agent_end`
        included."""
        return self._is_streaming

    @property
    def streaming_message(self) -> AgentMessage | None:
        """The message between its `message_start` and `message_end` (for the assistant: the
        partial message as streamed so far), else None."""
        streaming = self._streaming
        if isinstance(streaming, MessageUpdateEvent):
            return streaming.message  # the snapshot is built only when someone asks
        return streaming

    @property
    def pending_tool_calls(self) -> frozenset[str]:
        """Ids of the tool calls between `tool_execution_start` and `tool_execution_end`."""
        return self._pending

    @property
    def error_message(self) -> str | None:
        """The `error_message` of the last failed or aborted turn of the current or last run."""
        return self._error_message

    @property
    def limit(self) -> LimitReached | None:
        """The bound (`max_turns`, a usage limit) that ended the last run, from its `agent_end`;
        None while a run is going, or when no bound ended the last run."""
        return self._limit

    @property
    def guardrail(self) -> GuardrailTrip | None:
        """The input or output guardrail that ended the last run (a `GuardrailTrip`, from its
        `agent_end`); None while a run is going, or when none ended the last run."""
        return self._guardrail

    @property
    def output(self) -> Any:
        """The validated final answer of the last run, when it had an `output_type` (from its
        `agent_end`); None while a run is going, or when the last run ended without one."""
        return self._output

    @property
    def usage(self) -> Usage:
        """The total usage and cost of this agent's runs since it was created: every answer and
        the usage tool results report, counted at their `message_end` (`reset()` and a resumed
        session's earlier transcript do not change it). For one run's total, use
        `agentcore.run_usage(messages)` on what `prompt()` returned."""
        return self._usage

    def _begin_run(self) -> None:
        self._is_streaming = True
        self._streaming = None
        self._pending = frozenset()
        self._error_message = None
        self._limit = None
        self._output = None
        self._guardrail = None

    def _reduce(
        self, event: AgentEvent | Reset | Decided, *, keep: bool = True
    ) -> AgentMessage | None:
        """The one place a run's events (and `Agent.reset`, `RESET`, and a decision, `Decided`)
        change the state, called before the listeners see each event. Returns the message that
        joined the transcript (at its `message_end`, or the decision), else None; with
        `keep=False` a `message_end` closes its message without adding it (a session could not
        store it in any form)."""
        match event:
            case MessageUpdateEvent():
                self._streaming = event
            case MessageStartEvent():
                self._streaming = event.message
            case MessageEndEvent():
                self._streaming = None
                if keep:
                    message = event.message
                    self._messages.append(message)
                    self._usage = add_usage(self._usage, message)
                    return message
            case ToolExecutionStartEvent():
                self._pending = self._pending | {event.tool_call_id}
            case ToolExecutionEndEvent():
                self._pending = self._pending - {event.tool_call_id}
            case TurnEndEvent():
                if event.message.error_message:
                    self._error_message = event.message.error_message
            case AgentEndEvent():
                self._streaming = None
                self._limit = event.limit
                self._output = event.output
                self._guardrail = event.guardrail
            case Decided():
                self._messages.append(event.message)
                return event.message
            case Reset():
                self._messages = []
                self._end_run()
                self._error_message = None
                self._limit = None
                self._guardrail = None
                self._output = None
        return None

    def _end_run(self) -> None:
        self._is_streaming = False
        self._streaming = None
        self._pending = frozenset()

    def __repr__(self) -> str:
        return (
            f"AgentState(model={self.model.provider}/{self.model.id}, "
            f"thinking_level={self.thinking_level!r}, tools={[t.name for t in self._tools]}, "
            f"messages={len(self._messages)}, is_streaming={self._is_streaming})"
        )


def state_fields(initial: AgentState | Mapping[str, Any] | None) -> dict[str, Any]:
    """The fields an initial state sets explicitly: keys of a mapping, or the non-default
    fields of an `AgentState`.

    Raises:
        ConfigError: an unknown key, or a runtime field (they are the Agent's to set).
    """
    if initial is None:
        return {}
    if isinstance(initial, AgentState):
        given: dict[str, Any] = {}
        if initial.system_prompt:
            given["system_prompt"] = initial.system_prompt
        if initial.model is not UNKNOWN_MODEL:
            given["model"] = initial.model
        if initial.thinking_level != "off":
            given["thinking_level"] = initial.thinking_level
        if initial.tools:
            given["tools"] = list(initial.tools)
        if initial.messages:
            given["messages"] = list(initial.messages)
        return given
    if not isinstance(initial, Mapping):
        raise ConfigError(
            f"initial_state must be an AgentState or a dict, got {type(initial).__name__}"
        )
    for key in initial:
        if key in _RUNTIME:
            raise ConfigError(f"initial_state cannot set {key!r}: the Agent's runs set it")
        if key not in _FIELDS:
            raise ConfigError(f"unknown initial_state key {key!r}; expected some of {_FIELDS}")
    return dict(initial)


def check_queue_mode(mode: Any) -> QueueMode:
    if mode not in _QUEUE_MODES:
        raise ConfigError(f"queue mode must be one of {_QUEUE_MODES}, got {mode!r}")
    return mode  # type: ignore[no-any-return]


QueueKind: TypeAlias = Literal["steering", "follow_up"]


class Queues:
    """The steering and follow-up queues, thread-safe, with in-flight tracking."""

    __slots__ = ("_in_flight", "_lock", "_queues", "modes", "version")

    def __init__(self, steering_mode: QueueMode, follow_up_mode: QueueMode) -> None:
        self._lock = threading.Lock()
        self._queues: dict[QueueKind, deque[AgentMessage]] = {
            "steering": deque(),
            "follow_up": deque(),
        }
        self._in_flight: list[tuple[QueueKind, AgentMessage]] = []
        self.version = 0
        """Bumped by every change of what `snapshot` returns."""
        self.modes: dict[QueueKind, QueueMode] = {
            "steering": check_queue_mode(steering_mode),
            "follow_up": check_queue_mode(follow_up_mode),
        }

    def push(self, kind: QueueKind, message: AgentMessage) -> None:
        with self._lock:
            self._queues[kind].append(message)
            self.version += 1

    def extend(self, kind: QueueKind, messages: Sequence[AgentMessage]) -> None:
        with self._lock:
            self._queues[kind].extend(messages)
            self.version += 1

    def take(self, kind: QueueKind) -> list[AgentMessage]:
        """Drain per the queue's mode; what is taken stays in flight until `landed`."""
        with self._lock:
            queue = self._queues[kind]
            if not queue:
                return []
            if self.modes[kind] == "all":
                taken = list(queue)
                queue.clear()
            else:
                taken = [queue.popleft()]
            self._in_flight.extend((kind, m) for m in taken)
            self.version += 1
            return taken

    def landed(self, message: AgentMessage) -> None:
        """A message reached the transcript: it is no longer in flight."""
        with self._lock:
            for i, (_kind, m) in enumerate(self._in_flight):
                if m is message:
                    del self._in_flight[i]
                    self.version += 1
                    return

    def restore(self) -> None:
        """Put the messages still in flight back at the front of their queues, in order."""
        with self._lock:
            for kind in ("steering", "follow_up"):
                back = [m for k, m in self._in_flight if k == kind]
                self._queues[kind].extendleft(reversed(back))
            self._in_flight.clear()
            self.version += 1

    def clear(self, *kinds: QueueKind) -> None:
        with self._lock:
            for kind in kinds:
                self._queues[kind].clear()
            self.version += 1

    def snapshot(self) -> tuple[list[AgentMessage], list[AgentMessage]]:
        """(steering, follow_up), in-flight messages first: what to store in a session."""
        with self._lock:
            out: dict[QueueKind, list[AgentMessage]] = {"steering": [], "follow_up": []}
            for kind, m in self._in_flight:
                out[kind].append(m)
            out["steering"].extend(self._queues["steering"])
            out["follow_up"].extend(self._queues["follow_up"])
            return out["steering"], out["follow_up"]

    def queued(self, kind: QueueKind) -> tuple[AgentMessage, ...]:
        with self._lock:
            return tuple(self._queues[kind])

    def __bool__(self) -> bool:
        with self._lock:
            return bool(self._queues["steering"] or self._queues["follow_up"])

    def end_unless_queued(self, end: Callable[[], None]) -> bool:
        """Call `end` (the run goes idle) unless a message is queued, atomically with `push`:
        a message queued from any thread is either seen here or queued after `end`. Returns
        whether `end` was called."""
        with self._lock:
            if self._queues["steering"] or self._queues["follow_up"]:
                return False
            end()
            return True


def run_context(state: AgentState) -> AgentContext:
    """The context a run starts from: the state's system prompt, transcript and tools (copies)."""
    return AgentContext(
        system_prompt=state.system_prompt, messages=list(state.messages), tools=list(state.tools)
    )
