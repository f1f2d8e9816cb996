"""The approval messages (`ApprovalRequest`, `ApprovalDecision`, `ApprovedCallStarted`,
`SuspendedCall`) and the constants around them: the bottom of the approvals feature. The public
face is `agentcore.approvals`, which re-exports them; `transcript` reads where a transcript's
approvals stand.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..messages import now_ms, register_message_type

__all__ = [
    "APPROVAL_ROLES",
    "INTERRUPTED_APPROVED_CALL",
    "NEW_MESSAGE_REASON",
    "ApprovalDecision",
    "ApprovalRequest",
    "ApprovedCallStarted",
    "SuspendedCall",
]

INTERRUPTED_APPROVED_CALL = (
    "The approved tool call was interrupted: it had started, but its result was never recorded "
    "(the process stopped), so it may or may not have completed. It was not run again."
)
"""The error result of an approved call that started but has no result (never run twice)."""

NEW_MESSAGE_REASON = "not approved: the user sent a new message"
"""The reason `Agent.prompt` gives the calls it denies because they were still waiting."""


def _check(cls: str, name: str, value: Any, kind: type | tuple[type, ...], what: str) -> None:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TypeError(f"{cls}.{name} must be {what}, got {type(value).__name__}")


def _check_arguments(cls: str, value: Any, optional: bool) -> None:
    if value is None and optional:
        return
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise TypeError(
            f"{cls}.arguments must be a dict with string keys (a JSON object)"
            f"{' or None' if optional else ''}, got {type(value).__name__}"
        )


@register_message_type
@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRequest:
    """A tool call waiting for a decision; it was not executed.

    Attributes:
        tool_call_id: the id of the waiting call.
        tool_name: the tool it calls.
        arguments: its arguments (validated; after the tool's `prepare_arguments`).
        reason: why approval is needed (from the hook), or None; for an input request, the
            question.
        timestamp: when the run asked (ms since the epoch).
        input_schema: set when the running tool asks the user for input (an MCP server's
            elicitation): the JSON schema the answer must match. Approving answers it, with
            `arguments` as the content; denying declines it. None: an ordinary approval.
        input_key: which question of the call this is (with `input_schema`).
        parent_tool_call_id: set for a call a running tool made (a code snippet's, see
            `agentcore.codemode`): the id of that call, which is suspended until this one is
            decided and then carries it out (its `SuspendedCall` holds where it stopped).
    """

    tool_call_id: str
    tool_name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    reason: str | None = None
    timestamp: int = field(default_factory=now_ms)
    input_schema: dict[str, Any] | None = None
    input_key: str | None = None
    parent_tool_call_id: str | None = None
    role: Literal["approval_request"] = "approval_request"

    def __post_init__(self) -> None:
        name = "ApprovalRequest"
        _check(name, "tool_call_id", self.tool_call_id, str, "a string")
        _check(name, "tool_name", self.tool_name, str, "a string")
        _check_arguments(name, self.arguments, optional=False)
        _check(name, "reason", self.reason, (str, type(None)), "a string or None")
        _check(name, "timestamp", self.timestamp, int, "an integer (ms since the epoch)")
        _check(name, "input_schema", self.input_schema, (dict, type(None)), "a dict or None")
        _check(name, "input_key", self.input_key, (str, type(None)), "a string or None")
        _check(
            name,
            "parent_tool_call_id",
            self.parent_tool_call_id,
            (str, type(None)),
            "a string or None",
        )


@register_message_type
@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalDecision:
    """The decision on one `ApprovalRequest`: approved (optionally with edited arguments, which
    are validated again before the call runs) or denied (the call gets an error result with the
    reason).

    Attributes:
        tool_call_id: the id of the decided call.
        approved: True to run it, False to deny it.
        arguments: edited arguments for the approved call (None: as requested).
        reason: why it was denied (or any note), or None.
        timestamp: when it was decided (ms since the epoch).
        decided_by: who took the decision: a name for the surface or program (`"cli"` for
            `agentcore chat`), or None when not said. A surface that runs decided calls asks
            again for those it did not decide itself (see docs/approvals.md).
    """

    tool_call_id: str
    approved: bool
    arguments: dict[str, Any] | None = None
    reason: str | None = None
    timestamp: int = field(default_factory=now_ms)
    decided_by: str | None = None
    role: Literal["approval_decision"] = "approval_decision"

    def __post_init__(self) -> None:
        name = "ApprovalDecision"
        _check(name, "tool_call_id", self.tool_call_id, str, "a string")
        _check(name, "approved", self.approved, bool, "True or False")
        _check_arguments(name, self.arguments, optional=True)
        _check(name, "reason", self.reason, (str, type(None)), "a string or None")
        _check(name, "timestamp", self.timestamp, int, "an integer (ms since the epoch)")
        _check(name, "decided_by", self.decided_by, (str, type(None)), "a string or None")

    @classmethod
    def approve(
        cls,
        request: ApprovalRequest,
        arguments: Mapping[str, Any] | None = None,
        *,
        decided_by: str | None = None,
    ) -> ApprovalDecision:
        """Approve `request`, as requested or with edited `arguments`."""
        return cls(
            tool_call_id=request.tool_call_id,
            approved=True,
            arguments=dict(arguments) if arguments is not None else None,
            decided_by=decided_by,
        )

    @classmethod
    def deny(
        cls, request: ApprovalRequest, reason: str | None = None, *, decided_by: str | None = None
    ) -> ApprovalDecision:
        """Deny `request`; the call gets an error result saying so, with `reason`."""
        return cls(
            tool_call_id=request.tool_call_id,
            approved=False,
            reason=reason,
            decided_by=decided_by,
        )


@register_message_type
@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovedCallStarted:
    """Written (and, with a session, stored) just before an approved call executes: a call with
    this marker and no result was interrupted, and is never run again (its result then says it
    may or may not have completed)."""

    tool_call_id: str
    timestamp: int = field(default_factory=now_ms)
    role: Literal["approved_call_started"] = "approved_call_started"

    def __post_init__(self) -> None:
        _check("ApprovedCallStarted", "tool_call_id", self.tool_call_id, str, "a string")
        _check("ApprovedCallStarted", "timestamp", self.timestamp, int, "an integer (ms)")


@register_message_type
@dataclass(frozen=True, slots=True, kw_only=True)
class SuspendedCall:
    """Where a running tool stopped because calls it made wait for a decision (a code snippet,
    see `agentcore.codemode`): it joins the transcript when the call suspends, before the
    requests of the calls it waits for (their `parent_tool_call_id` is this call's id). Once
    they are decided, the next run executes the call again, and the tool reads `state` back
    (`ToolPipeline.suspended_state`) to go on where it stopped. A later `SuspendedCall` of the
    same call (it suspended again) sets the earlier one and its requests aside.

    Attributes:
        tool_call_id: the id of the suspended call.
        tool_name: the tool it calls.
        state: what the tool needs to go on: its own JSON object, trusted as the rest of the
            session is (see docs/security.md for what code mode checks).
        nested_calls: how many calls the tool had made (the ids of its later calls go on from
            there: `<id>.<n + 1>`).
        timestamp: when it stopped (ms since the epoch).
    """

    tool_call_id: str
    tool_name: str
    state: dict[str, Any] = field(default_factory=dict)
    nested_calls: int = 0
    timestamp: int = field(default_factory=now_ms)
    role: Literal["suspended_call"] = "suspended_call"

    def __post_init__(self) -> None:
        name = "SuspendedCall"
        _check(name, "tool_call_id", self.tool_call_id, str, "a string")
        _check(name, "tool_name", self.tool_name, str, "a string")
        _check(name, "state", self.state, dict, "a dict (a JSON object)")
        _check(name, "nested_calls", self.nested_calls, int, "an integer (calls made)")
        _check(name, "timestamp", self.timestamp, int, "an integer (ms since the epoch)")


APPROVAL_ROLES = frozenset(
    {"approval_request", "approval_decision", "approved_call_started", "suspended_call"}
)
"""The roles of the approval messages (they sit among a batch's tool results)."""
