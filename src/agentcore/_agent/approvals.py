"""The approval half of `Agent`: `approve`, `deny`, and what `prompt`/`continue_` do with calls
that wait for a decision (see `agentcore.approvals`).

A decision joins the transcript at once and, with a session, is written before `approve`/`deny`
returns, so a process that stops right after deciding loses nothing; the next run (`continue_`,
or `prompt`) carries it out. `prompt` while calls still wait denies them first (reason
`NEW_MESSAGE_REASON`), so the transcript stays one the model can read: every call answered
before the new message. `continue_` refuses to start while a call waits.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from .._approvals.transcript import last_batch, undecided_message
from .._tools.validation import ArgumentsError
from ..approvals import ApprovalDecision, ApprovalRequest
from ..errors import AgentBusyError, ConfigError
from .run import ActiveRun
from .session import SessionBinding, storable
from .state import AgentState

__all__ = ["ApprovalMethods"]

_BUSY = "the agent is running: approve() and deny() need an idle agent (await wait_for_idle())"


class ApprovalMethods:
    """Approvals of an `Agent` (a base class of it; see `Agent`)."""

    _state: AgentState
    _active: ActiveRun | None
    _run_lock: threading.Lock
    _binding: SessionBinding | None

    def approve(self, tool_call_id: str, *, arguments: Mapping[str, Any] | None = None) -> None:
        """Approve a waiting tool call: the next run (`continue_()`) executes it, on `arguments`
        instead of the requested ones if given (validated now when the tool is among
        `state.tools`, and again before it runs). The decision joins the transcript and, with
        a session, is stored before this returns.

        Raises:
            ConfigError: no call with this id waits for a decision, or `arguments` are invalid.
            AgentBusyError: a run is active.
        """
        request = self._waiting(tool_call_id)
        if arguments is not None:
            arguments = self._checked_arguments(request, arguments)
        self._decide(ApprovalDecision.approve(request, arguments=arguments))

    def deny(self, tool_call_id: str, reason: str | None = None) -> None:
        """Deny a waiting tool call: the next run gives it an error result with `reason`. The
        decision joins the transcript and, with a session, is stored before this returns.

        Raises:
            ConfigError: no call with this id waits for a decision.
            AgentBusyError: a run is active.
        """
        if reason is not None and not isinstance(reason, str):
            raise ConfigError(f"deny(): reason must be a string, got {type(reason).__name__}")
        self._decide(ApprovalDecision.deny(self._waiting(tool_call_id), reason))

    def _waiting(self, tool_call_id: str) -> ApprovalRequest:
        if self._active is not None:
            raise AgentBusyError(_BUSY)
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
        tool = next((t for t in self._state.tools if t.name == request.tool_name), None)
        if tool is not None:
            try:
                prepared = tool.prepare_arguments(edited)
                tool.validator.validate(edited if prepared is None else prepared)
            except ArgumentsError as exc:
                raise ConfigError(f"approve(): {exc}") from None
        return edited

    def _decide(self, decision: ApprovalDecision) -> None:
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
