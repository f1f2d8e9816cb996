"""Reading where the approvals of a transcript's last batch stand (see `agentcore.approvals`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import ConfigError
from ..messages import AgentMessage, AssistantMessage, ToolCall, ToolResultMessage
from .messages import ApprovalDecision, ApprovalRequest, ApprovedCallStarted, SuspendedCall

_FAILED = ("error", "aborted")  # their calls never ran: not a batch

__all__ = [
    "ApprovalBatch",
    "CallState",
    "check_decided",
    "denied_text",
    "last_batch",
    "undecided_message",
]


def denied_text(decision: ApprovalDecision) -> str:
    """The error text a denied call's result carries."""
    reason = f": {decision.reason}" if decision.reason else "."
    return f"Tool call was not executed: it was denied{reason}"


@dataclass(slots=True, eq=False)
class CallState:
    """Where one requested call of the last batch stands. For a call a running tool made
    (`request.parent_tool_call_id` set: a snippet's, `agentcore.codemode`), `call` is the
    calling tool's call (the one the next run executes again), and `started` and `answered`
    are that call's: it started going on after the decisions (and never runs twice), or it has
    its result."""

    call: ToolCall
    request: ApprovalRequest
    decision: ApprovalDecision | None = None
    started: bool = False
    answered: bool = False


@dataclass(slots=True, eq=False)
class ApprovalBatch:
    """The last batch of a transcript that asked for approvals: its assistant message and the
    state of each requested call, in call order."""

    message: AssistantMessage
    calls: list[CallState]
    suspended: dict[str, SuspendedCall] = field(default_factory=dict)  # by the suspended call id

    @property
    def undecided(self) -> list[ApprovalRequest]:
        """Requests without a decision (and without a result)."""
        return [s.request for s in self.calls if s.decision is None and not s.answered]

    @property
    def decided(self) -> list[CallState]:
        """Decided calls that have no result yet: what the next run carries out."""
        return [s for s in self.calls if s.decision is not None and not s.answered]


def last_batch(messages: Sequence[AgentMessage]) -> ApprovalBatch | None:
    """The approval state of the transcript's last batch (the calls of its last assistant message
    that did not fail), or None when that batch asked for no approval."""
    k = len(messages) - 1
    assistant: AssistantMessage | None = None
    while k >= 0 and assistant is None:
        message = messages[k]
        if isinstance(message, AssistantMessage) and message.stop_reason not in _FAILED:
            assistant = message
        else:
            k -= 1
    if assistant is None:
        return None
    calls = {c.id: c for c in assistant.tool_calls}
    if not calls:
        return None
    states: dict[str, CallState] = {}
    decisions: dict[str, ApprovalDecision] = {}
    started: set[str] = set()
    answered: set[str] = set()
    suspended: dict[str, SuspendedCall] = {}
    for message in messages[k + 1 :]:
        if isinstance(message, ApprovalRequest):
            # A call a running tool made (code mode) waits with the calling tool's call.
            parent = message.parent_tool_call_id
            call = calls.get(message.tool_call_id if parent is None else parent)
            key = message.tool_call_id
            if call is not None:  # a later request asks again: earlier decisions are set aside
                states[key] = CallState(call=call, request=message)
                decisions.pop(key, None)
                started.discard(key)  # (a call that ran and asked for input, waiting again)
        elif isinstance(message, ApprovalDecision):
            if message.tool_call_id in states:  # a decision answers the request before it
                decisions.setdefault(message.tool_call_id, message)
        elif isinstance(message, ApprovedCallStarted):
            started.add(message.tool_call_id)
        elif isinstance(message, SuspendedCall):  # (again: its earlier requests are done)
            if message.tool_call_id in calls:
                parent = message.tool_call_id
                suspended[parent] = message
                started.discard(parent)  # it went on, and stopped again: it waits again
                for key in [k for k, s in states.items() if s.request.parent_tool_call_id]:
                    if states[key].call.id == parent:
                        del states[key]
                        decisions.pop(key, None)
        elif isinstance(message, ToolResultMessage):
            answered.add(message.tool_call_id)
    if not states:
        return None
    for key, state in states.items():
        state.decision = decisions.get(key)
        nested = state.request.parent_tool_call_id is not None
        state.started = (state.call.id if nested else key) in started
        state.answered = state.call.id in answered
    order = list(calls)
    return ApprovalBatch(
        message=assistant,
        calls=sorted(states.values(), key=lambda s: order.index(s.call.id)),
        suspended=suspended,
    )


def undecided_message(requests: Sequence[ApprovalRequest], what: str) -> str:
    """The error text for a run that cannot start while `requests` wait for a decision."""
    names = ", ".join(f"{r.tool_name} ({r.tool_call_id})" for r in requests)
    calls = "a tool call waits" if len(requests) == 1 else f"{len(requests)} tool calls wait"
    return f"{what}: {calls} for a decision: {names}; approve or deny each first"


def check_decided(messages: Sequence[AgentMessage]) -> None:
    """A run cannot start while tool calls of the transcript wait for a decision.

    Raises:
        ConfigError: naming each waiting call.
    """
    batch = last_batch(messages)
    waiting = batch.undecided if batch is not None else []
    if waiting:
        raise ConfigError(undecided_message(waiting, "cannot run"))
