"""Input requests: a running tool asks the user for structured input (an MCP server's
elicitation), through the approval mechanism.

A tool raises `InputRequired` from `execute`: the call stops there and waits, as a call waiting
for approval does, with an `ApprovalRequest` whose `input_schema` is set (its `reason` is the
question). The decision answers it: approved with `arguments` = the content (checked against
the schema), or denied (a decline; `"cancel"` or the new-message denial: a cancel). The next run
executes the call again from the start, with every answer given to it so far for this call in
`input_answer(key)`, so a tool that asks the same question again gets its answer at once. The
call is run again, not resumed: a tool must be safe to re-run up to the point where it asked
(an MCP server on the 2026-07-28 protocol is: it keeps no state between the rounds).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal

from ..messages import AgentMessage, AssistantMessage
from .messages import NEW_MESSAGE_REASON, ApprovalDecision, ApprovalRequest

__all__ = [
    "CANCEL_REASON",
    "InputAnswer",
    "InputRequired",
    "answering_inputs",
    "answers_of",
    "current_answers",
    "input_answer",
    "input_answers",
]

CANCEL_REASON = "cancel"
"""The reason of a denial that answers an input request with a cancel (not a decline)."""


class InputRequired(Exception):
    """Raised by a tool's `execute` when it needs input from the user before it can go on.

    The call waits for a decision as an approval does (see docs/approvals.md, "Input
    requests"); the next run executes it again, and `input_answer(key)` then holds the answer.

    Args:
        key: identifies the question within the call (the same question asked again has the
            same key).
        message: the question, for the user.
        schema: the JSON schema the answer's content must match.
    """

    def __init__(self, key: str, message: str, schema: dict[str, Any]) -> None:
        super().__init__(message)
        self.key = key
        self.message = message
        self.schema = schema


@dataclass(frozen=True, slots=True)
class InputAnswer:
    """The user's answer to an input request: accepted with `content`, declined or cancelled."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None


current_answers: ContextVar[dict[str, dict[str, InputAnswer]] | None] = ContextVar(
    "agentcore_input_answers", default=None
)
"""Tool call id -> question key -> answer, while decided calls run again."""


def input_answer(tool_call_id: str, key: str) -> InputAnswer | None:
    """The answer given to question `key` of call `tool_call_id`, when the call runs again
    after its input request was decided; else None."""
    answers = current_answers.get()
    if answers is None:
        return None
    return answers.get(tool_call_id, {}).get(key)


def input_answers(tool_call_id: str) -> dict[str, InputAnswer]:
    """Every answer given so far to the questions of call `tool_call_id` (key -> answer), while
    the call runs again after a decision; else empty. For a host that runs the tool elsewhere
    (a durable run's worker) and hands them over with `answering_inputs`."""
    answers = current_answers.get()
    return dict(answers.get(tool_call_id, {})) if answers is not None else {}


@contextmanager
def answering_inputs(tool_call_id: str, answers: Mapping[str, InputAnswer]) -> Iterator[None]:
    """Within the block, `input_answer(tool_call_id, key)` returns `answers[key]` (the answers a
    host received with the call, e.g. a durable run's worker)."""
    token = current_answers.set({tool_call_id: dict(answers)})
    try:
        yield
    finally:
        current_answers.reset(token)


def _answer(decision: ApprovalDecision) -> InputAnswer:
    if decision.approved:
        return InputAnswer("accept", dict(decision.arguments or {}))
    if decision.reason in (CANCEL_REASON, NEW_MESSAGE_REASON):
        return InputAnswer("cancel")
    return InputAnswer("decline")


def answers_of(messages: Sequence[AgentMessage]) -> dict[str, dict[str, InputAnswer]]:
    """The decided input requests of the transcript's last batch: call id -> key -> answer (each
    request answered by the first decision after it)."""
    k = len(messages) - 1
    while k >= 0 and not isinstance(messages[k], AssistantMessage):
        k -= 1
    open_requests: dict[str, ApprovalRequest] = {}
    out: dict[str, dict[str, InputAnswer]] = {}
    for message in messages[k + 1 :]:
        if isinstance(message, ApprovalRequest):
            open_requests[message.tool_call_id] = message
        elif isinstance(message, ApprovalDecision):
            request = open_requests.pop(message.tool_call_id, None)
            if request is not None and request.input_key is not None:
                out.setdefault(request.tool_call_id, {})[request.input_key] = _answer(message)
    return out
