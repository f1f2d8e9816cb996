"""What `Agent.approve`, `deny`, `reopen`, `prompt` and `continue_` do with tool calls that wait
for a decision (see `agentcore.approvals`), as plain functions of the agent's state: each
returns the decision, and the Agent records it (`record`) through its state's reducer.

A decision joins the transcript at once and, with a session, is written before `approve`/`deny`
returns, so a process that stops right after deciding loses nothing; the next run (`continue_`,
or `prompt`) carries it out. `prompt` while calls still wait denies them first (reason
`NEW_MESSAGE_REASON`), so the transcript stays one the model can read: every call answered
before the new message. `continue_` refuses to start while a call waits.

An agent decides only for tools it holds (`state.tools`): it is the one that can check edited
arguments and knows what the tool does; a decision for another tool is refused. A decision
records who took it (`decided_by`); `reopen` sets a decision aside (a new request for the call),
so that a surface that did not take it can ask again before anything runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._approvals.transcript import CallState, last_batch, undecided_message
from .._tools.validation import ArgumentsError
from ..approvals import ApprovalDecision, ApprovalRequest, decided_approvals
from ..errors import ConfigError
from ..handoffs import caller_tools
from .session import SessionBinding, storable
from .state import AgentState, Decided

if TYPE_CHECKING:
    from ..tools import AgentTool

__all__ = [
    "BUSY",
    "approval",
    "check_decided",
    "checked_answer",
    "denial",
    "denials",
    "record",
    "reopened",
]

BUSY = "the agent is running: approve() and deny() need an idle agent (await wait_for_idle())"


def approval(
    state: AgentState,
    tool_call_id: str,
    arguments: Mapping[str, Any] | None,
    decided_by: str | None,
) -> ApprovalDecision:
    """The approval of a waiting call (`Agent.approve`), its edited arguments checked, or the
    answer of an input request checked against its schema.

    Raises:
        ConfigError: no such waiting call, a tool the agent does not hold, invalid arguments.
    """
    request = _waiting(state, tool_call_id, "approve")
    if request.input_schema is not None:  # an input request: the arguments are the answer
        arguments = checked_answer(request, arguments)
    elif arguments is not None and request.parent_tool_call_id is not None:
        raise ConfigError(
            f"approve(): tool call {tool_call_id!r} was made by the code of call "
            f"{request.parent_tool_call_id!r}: it runs with the arguments the code gave (the "
            "agent cannot check edited ones for a tool it reaches only through code); approve "
            "it as it is, or deny it"
        )
    elif arguments is not None:
        arguments = _checked_arguments(state, request, arguments)
    return ApprovalDecision.approve(
        request, arguments=arguments, decided_by=_who(decided_by, "approve")
    )


def denial(
    state: AgentState, tool_call_id: str, reason: str | None, decided_by: str | None
) -> ApprovalDecision:
    """The denial of a waiting call (`Agent.deny`).

    Raises:
        ConfigError: no such waiting call, or a tool the agent does not hold.
    """
    request = _waiting(state, tool_call_id, "deny")
    return ApprovalDecision.deny(request, reason, decided_by=_who(decided_by, "deny"))


def reopened(state: AgentState, tool_call_id: str) -> ApprovalRequest:
    """A new request for a call decided but not started (`Agent.reopen`), with the arguments
    the model sent.

    Raises:
        ConfigError: no decided call with this id is waiting to run.
    """
    for item in decided_approvals(state.messages):
        if item.request.tool_call_id == tool_call_id:
            old = item.request
            return ApprovalRequest(
                tool_call_id=old.tool_call_id,
                tool_name=old.tool_name,
                arguments=dict(
                    old.arguments
                    if old.parent_tool_call_id is not None  # (the code's, not the model's)
                    else _call_of(state, tool_call_id).call.arguments
                ),
                reason=old.reason,
                input_schema=old.input_schema,
                input_key=old.input_key,
                parent_tool_call_id=old.parent_tool_call_id,
            )
    raise ConfigError(
        f"reopen(): no decided tool call {tool_call_id!r} waits to run "
        "(only a call decided and not yet started can be decided again)"
    )


def record(
    state: AgentState,
    binding: SessionBinding | None,
    decision: ApprovalDecision | ApprovalRequest,
) -> None:
    """Add a decision to the transcript (through the reducer) and store it, all or nothing: with
    a session it is stored first, and joins only once stored."""
    if binding is None:
        state._reduce(Decided(decision))
        return
    kept = storable(decision)
    binding.sync([*state.messages, kept])
    state._reduce(Decided(kept))


def check_decided(state: AgentState) -> None:
    """`continue_` cannot start while a call waits for a decision.

    Raises:
        ConfigError: a call waits.
    """
    waiting = state.pending_approvals
    if waiting:
        raise ConfigError(undecided_message(waiting, "cannot continue"))


def denials(state: AgentState, reason: str) -> list[ApprovalDecision]:
    """The denials of every call that waits (`prompt` with a new message)."""
    return [ApprovalDecision.deny(request, reason) for request in state.pending_approvals]


def _held(state: AgentState, tool_call_id: str) -> Sequence[AgentTool]:
    """The tools of the agent whose call it is (a handoff target's, after a handoff)."""
    return caller_tools(state.tools, state.messages, tool_call_id)


def _call_of(state: AgentState, tool_call_id: str) -> CallState:
    batch = last_batch(state.messages)
    assert batch is not None
    return next(s for s in batch.calls if s.request.tool_call_id == tool_call_id)


def _waiting(state: AgentState, tool_call_id: str, what: str) -> ApprovalRequest:
    request = _find_waiting(state, tool_call_id)
    # A call a snippet made (code mode): the agent holds the tool that made it.
    held_id = request.parent_tool_call_id or tool_call_id
    name = _call_of(state, tool_call_id).call.name
    if not any(t.name == name for t in _held(state, held_id)):
        raise ConfigError(
            f"{what}(): tool call {tool_call_id!r} calls {name!r}, which this agent does not "
            f"have: an agent decides only for tools it holds (the one that will run the call "
            f"decides)"
        )
    return request


def _find_waiting(state: AgentState, tool_call_id: str) -> ApprovalRequest:
    batch = last_batch(state.messages)
    if batch is not None:
        for call in batch.calls:
            if call.request.tool_call_id != tool_call_id:
                continue
            if call.decision is not None or call.answered:
                raise ConfigError(f"tool call {tool_call_id!r} was already decided")
            return call.request
    waiting = ", ".join(repr(r.tool_call_id) for r in state.pending_approvals)
    raise ConfigError(
        f"no tool call {tool_call_id!r} waits for approval (waiting: {waiting or 'none'})"
    )


def _checked_arguments(
    state: AgentState, request: ApprovalRequest, arguments: Mapping[str, Any]
) -> dict[str, Any]:
    if not isinstance(arguments, Mapping):
        raise ConfigError(
            f"approve(): arguments must be a dict (a JSON object), got {type(arguments).__name__}"
        )
    edited = dict(arguments)
    tool = next(t for t in _held(state, request.tool_call_id) if t.name == request.tool_name)
    try:
        prepared = tool.prepare_arguments(edited)
        tool.validator.validate(edited if prepared is None else prepared)
    except ArgumentsError as exc:
        raise ConfigError(f"approve(): {exc}") from None
    return edited


def checked_answer(request: ApprovalRequest, content: Mapping[str, Any] | None) -> dict[str, Any]:
    """The content answering an input request, checked against its schema."""
    from ..errors import OutputValidationError
    from ..output import OutputSpec

    if not isinstance(content, Mapping):
        raise ConfigError(
            f"approve(): tool call {request.tool_call_id!r} asks for input ({request.reason}): "
            f"give the answer as arguments={{...}} (a dict), got {type(content).__name__}"
        )
    answer = dict(content)
    try:
        OutputSpec(request.input_schema or {}).validate(answer)
    except OutputValidationError as exc:
        raise ConfigError(
            f"approve(): the answer does not match the requested schema: {exc}"
        ) from None
    return answer


def _who(decided_by: str | None, what: str) -> str | None:
    if decided_by is not None and not isinstance(decided_by, str):
        raise ConfigError(
            f"{what}(): decided_by must be a string (who decides) or None, "
            f"got {type(decided_by).__name__}"
        )
    return decided_by
