"""Approvals: tool calls that wait for a person's decision, across turns and process restarts.

A tool built with `requires_approval=True` (or a function of the validated arguments), or a
`before_tool_call` hook returning `BeforeToolCallResult(require_approval=True)`, makes a call wait
instead of running. The run ends after that batch with one `ApprovalRequest` per waiting call in
the transcript (and in `AgentEndEvent.pending_approvals`). Later — in the same process, or in
another one that opened the same session — each request gets an `ApprovalDecision` and the next
run carries the decisions out: an approved call runs (marked first by an `ApprovedCallStarted`
message, so that it never runs twice), a denied one gets an error result with the reason.

These three messages are application-defined messages (registered with `register_message_type`):
sessions store them, and the default `convert_to_llm` drops them, so the model sees only the tool
calls and their results. See docs/approvals.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._approvals.messages import APPROVAL_ROLES as APPROVAL_ROLES
from ._approvals.messages import INTERRUPTED_APPROVED_CALL as INTERRUPTED_APPROVED_CALL
from ._approvals.messages import NEW_MESSAGE_REASON as NEW_MESSAGE_REASON
from ._approvals.messages import ApprovalDecision as ApprovalDecision
from ._approvals.messages import ApprovalRequest as ApprovalRequest
from ._approvals.messages import ApprovedCallStarted as ApprovedCallStarted
from ._approvals.transcript import last_batch
from .messages import AgentMessage

__all__ = [
    "APPROVAL_ROLES",
    "INTERRUPTED_APPROVED_CALL",
    "NEW_MESSAGE_REASON",
    "ApprovalDecision",
    "ApprovalRequest",
    "ApprovedCallStarted",
    "pending_approvals",
]


def pending_approvals(messages: Sequence[AgentMessage]) -> list[ApprovalRequest]:
    """The requests of a transcript that wait for a decision (what `Agent.state.pending_approvals`
    returns), in call order."""
    batch = last_batch(messages)
    return batch.undecided if batch is not None else []
