"""The approval half of `Agent`: `approve`, `deny`, and what `prompt`/`continue_` do with calls
that wait for a decision (see `agentcore.approvals`).

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

import threading
from collections.abc import Mapping
from typing import Any

from .._approvals.transcript import CallState, last_batch, undecided_message
from .._tools.validation import ArgumentsError
from ..approvals import ApprovalDecision, ApprovalRequest, decided_approvals
from ..errors import AgentBusyError, ConfigError
from .run import ActiveRun
from .session import SessionBinding, storable
from .state import AgentState

__all__ = ["ApprovalMethods", "checked_answer"]

_BUSY = "the agent is running: approve() and deny() need an idle agent (await wait_for_idle())"


class ApprovalMethods:
    """Approvals of an `Agent` (a base class of it; see `Agent`)."""

    _state: AgentState
    _active: ActiveRun | None
    _run_lock: threading.Lock
    _binding: SessionBinding | None

    def approve(
        self,
        tool_call_id: str,
        *,
        arguments: Mapping[str, Any] | None = None,
        decided_by: str | None = None,
    ) -> None:
        """Approve a waiting tool call: the next run (`continue_()`) executes it, on `arguments`
        instead of the requested ones if given (validated now, and again before it runs). The
        decision joins the transcript and, with a session, is stored before this returns.

        For an input request (`request.input_schema` set: the tool asked the user for input
        while it ran), `arguments` is the answer's content, required and checked against that
        schema; the call runs again and is given the answer. `deny` declines it (reason
        `"cancel"`: cancels it).

        Args:
            tool_call_id: the waiting call.
            arguments: edited arguments (None: as requested).
            decided_by: who decides (a surface's name, e.g. `"cli"`), recorded in the decision.

        Raises:
            ConfigError: no call with this id waits for a decision, the call's tool is not
                among `state.tools` (an agent decides only for tools it holds), or `arguments`
                are invalid.
            AgentBusyError: a run is active.
        """
        request = self._waiting(tool_call_id, "approve")
        if request.input_schema is not None:  # an input request: the arguments are the answer
            arguments = checked_answer(request, arguments)
        elif arguments is not None:
            arguments = self._checked_arguments(request, arguments)
        self._decide(
            ApprovalDecision.approve(
                request, arguments=arguments, decided_by=_who(decided_by, "approve")
            )
        )

    def deny(
        self, tool_call_id: str, reason: str | None = None, *, decided_by: str | None = None
    ) -> None:
        """Deny a waiting tool call: the next run gives it an error result with `reason`. The
        decision joins the transcript and, with a session, is stored before this returns.

        Args:
            tool_call_id: the waiting call.
            reason: why (the model is told).
            decided_by: who decides (a surface's name, e.g. `"cli"`), recorded in the decision.

        Raises:
            ConfigError: no call with this id waits for a decision, or the call's tool is not
                among `state.tools` (an agent decides only for tools it holds).
            AgentBusyError: a run is active.
        """
        if reason is not None and not isinstance(reason, str):
            raise ConfigError(f"deny(): reason must be a string, got {type(reason).__name__}")
        request = self._waiting(tool_call_id, "deny")
        self._decide(ApprovalDecision.deny(request, reason, decided_by=_who(decided_by, "deny")))

    def reopen(self, tool_call_id: str) -> ApprovalRequest:
        """Set aside the decision on a call that was decided but has not started, and make it
        wait again: a new `ApprovalRequest` for it (with the arguments the model sent) joins
        the transcript and, with a session, is stored before this returns. A surface that is
        about to run calls it did not decide itself (`decided_approvals`, `decided_by`) uses it
        to ask the person in front of it. Returns the new request.

        Raises:
            ConfigError: no decided call with this id is waiting to run (undecided, already
                started or answered, or unknown).
            AgentBusyError: a run is active.
        """
        if self._active is not None:
            raise AgentBusyError(_BUSY)
        for item in decided_approvals(self._state.messages):
            if item.request.tool_call_id == tool_call_id:
                old = item.request
                request = ApprovalRequest(
                    tool_call_id=old.tool_call_id,
                    tool_name=old.tool_name,
                    arguments=dict(self._call_of(tool_call_id).call.arguments),
                    reason=old.reason,
                    input_schema=old.input_schema,
                    input_key=old.input_key,
                )
                self._decide(request)
                return request
        raise ConfigError(
            f"reopen(): no decided tool call {tool_call_id!r} waits to run "
            "(only a call decided and not yet started can be decided again)"
        )

    def _call_of(self, tool_call_id: str) -> CallState:
        batch = last_batch(self._state.messages)
        assert batch is not None
        return next(s for s in batch.calls if s.call.id == tool_call_id)

    def _waiting(self, tool_call_id: str, what: str) -> ApprovalRequest:
        if self._active is not None:
            raise AgentBusyError(_BUSY)
        request = self._find_waiting(tool_call_id)
        if not any(t.name == request.tool_name for t in self._state.tools):
            raise ConfigError(
                f"{what}(): tool call {tool_call_id!r} calls {request.tool_name!r}, which this "
                f"agent does not have: an agent decides only for tools it holds (the one that "
                f"will run the call decides)"
            )
        return request

    def _find_waiting(self, tool_call_id: str) -> ApprovalRequest:
        batch = last_batch(self._state.messages)
        if batch is not None:
            for state in batch.calls:
                if state.call.id != tool_call_id:
                    continue
                if state.decision is not None or state.answered:
                    raise ConfigError(f"tool call {tool_call_id!r} was already decided")
                return state.request
        waiting = ", ".join(repr(r.tool_call_id) for r in self._state.pending_approvals)
        raise ConfigError(
            f"no tool call {tool_call_id!r} waits for approval (waiting: {waiting or 'none'})"
        )

    def _checked_arguments(
        self, request: ApprovalRequest, arguments: Mapping[str, Any]
    ) -> dict[str, Any]:
        if not isinstance(arguments, Mapping):
            raise ConfigError(
                f"approve(): arguments must be a dict (a JSON object), got "
                f"{type(arguments).__name__}"
            )
        edited = dict(arguments)
        tool = next(t for t in self._state.tools if t.name == request.tool_name)
        try:
            prepared = tool.prepare_arguments(edited)
            tool.validator.validate(edited if prepared is None else prepared)
        except ArgumentsError as exc:
            raise ConfigError(f"approve(): {exc}") from None
        return edited

    def _decide(self, decision: ApprovalDecision | ApprovalRequest) -> None:
        """Add a decision to the transcript and store it (all or nothing)."""
        with self._run_lock:
            if self._active is not None:
                raise AgentBusyError(_BUSY)
            binding = self._binding
            kept = storable(decision) if binding is not None else decision
            messages = self._state.messages
            messages.append(kept)
            if binding is not None:
                try:
                    binding.sync(list(messages))
                except BaseException:
                    messages.pop()
                    raise

    def _check_decided(self) -> None:
        """`continue_` cannot start while a call waits for a decision."""
        waiting = self._state.pending_approvals
        if waiting:
            raise ConfigError(undecided_message(waiting, "cannot continue"))

    def _deny_waiting(self, reason: str) -> None:
        """Deny every call that waits (`prompt` with a new message); stored by the run's start."""
        for request in self._state.pending_approvals:
            self._state.messages.append(ApprovalDecision.deny(request, reason))


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
