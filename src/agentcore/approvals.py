"""Approvals: tool calls that wait for a person's decision, across turns and process restarts.

A tool built with `requires_approval=True` (or a function of the validated arguments), or a
`before_tool_call` hook returning `BeforeToolCallResult(require_approval=True)`, makes a call wait
instead of running. The run ends after that batch with one `ApprovalRequest` per waiting call in
the transcript (and in `AgentEndEvent.pending_approvals`). Later — in the same process, or in
another one that opened the same session — each request gets an `ApprovalDecision` and the next
run carries the decisions out: an approved call runs (marked first by an `ApprovedCallStarted`
message, so that it never runs twice), a denied one gets an error result with the reason.

A decision records who took it (`decided_by`, e.g. `"cli"` for the terminal chat), and an agent
decides only for tools it holds (`Agent.approve`/`deny` refuse others): a surface that runs
calls can tell a decision it took from one taken elsewhere (`decided_approvals`) and ask again
(`Agent.reopen`) instead of running, unseen, what someone else approved.

A tool that calls tools (a code snippet, `agentcore.codemode`) can suspend while calls it made
wait (`CallSuspended`, with a `SuspendedCall` message keeping where it stopped): their requests
name it as `parent_tool_call_id`, and once they are decided the tool runs again and goes on.

These messages are application-defined messages (registered with `register_message_type`):
sessions store them, and the default `convert_to_llm` drops them, so the model sees only the tool
calls and their results. See docs/approvals.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ._approvals.inputs import CANCEL_REASON as CANCEL_REASON
from ._approvals.inputs import InputAnswer as InputAnswer
from ._approvals.inputs import InputRequired as InputRequired
from ._approvals.inputs import answering_inputs as answering_inputs
from ._approvals.inputs import input_answer as input_answer
from ._approvals.inputs import input_answers as input_answers
from ._approvals.messages import APPROVAL_ROLES as APPROVAL_ROLES
from ._approvals.messages import INTERRUPTED_APPROVED_CALL as INTERRUPTED_APPROVED_CALL
from ._approvals.messages import NEW_MESSAGE_REASON as NEW_MESSAGE_REASON
from ._approvals.messages import ApprovalDecision as ApprovalDecision
from ._approvals.messages import ApprovalRequest as ApprovalRequest
from ._approvals.messages import ApprovedCallStarted as ApprovedCallStarted
from ._approvals.messages import SuspendedCall as SuspendedCall
from ._approvals.suspend import CallSuspended as CallSuspended
from ._approvals.suspend import CallWaits as CallWaits
from ._approvals.transcript import last_batch
from .messages import AgentMessage

__all__ = [
    "APPROVAL_ROLES",
    "CANCEL_REASON",
    "INTERRUPTED_APPROVED_CALL",
    "NEW_MESSAGE_REASON",
    "ApprovalDecision",
    "ApprovalRequest",
    "ApprovedCallStarted",
    "CallSuspended",
    "CallWaits",
    "DecidedApproval",
    "InputAnswer",
    "InputRequired",
    "SuspendedCall",
    "answering_inputs",
    "decided_approvals",
    "input_answer",
    "input_answers",
    "pending_approvals",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class DecidedApproval:
    """A call of the last batch that was decided and has not started: the next run carries
    the decision out (see `decided_approvals`).

    Attributes:
        request: the call's (latest) request.
        decision: the decision on it.
    """

    request: ApprovalRequest
    decision: ApprovalDecision


def decided_approvals(messages: Sequence[AgentMessage]) -> list[DecidedApproval]:
    """The calls of a transcript's last batch that were decided but have not started (what the
    next run would carry out), in call order. A surface about to run them checks who decided
    each (`decision.decided_by`) and asks again (`Agent.reopen`) for those it did not decide."""
    batch = last_batch(messages)
    if batch is None:
        return []
    return [
        DecidedApproval(request=s.request, decision=s.decision)
        for s in batch.decided
        if s.decision is not None and not s.started
    ]


def pending_approvals(messages: Sequence[AgentMessage]) -> list[ApprovalRequest]:
    """The requests of a transcript that wait for a decision (what `Agent.state.pending_approvals`
    returns), in call order."""
    batch = last_batch(messages)
    return batch.undecided if batch is not None else []
