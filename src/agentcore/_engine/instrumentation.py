"""The instrumentation seam that tracing plugs into (public names of `agentcore`).

The instrumentation seam (`Instrumentation`, installed with `set_instrumentation`) is how tracing
sees a run from the inside: events alone cannot give nesting, because a listener does not run in
the task that executes a tool, so a span it makes current is not current inside the tool. The loop
calls the hooks in the task where the work happens:

- `Instrumentation.start_run` and `RunObserver.end_run`: in the run's task, at its very start and
  after `agent_end` (also when an outer cancellation ends it), so an implementation may make a
  span current between them: the run's requests, tools and anything started from them see it.
- `RunObserver.start_request`, `RequestObserver.on_first_event`, `on_retry`, `end_request`: in
  the run's task, around one request (after the request's hooks ran: `transform_context`,
  `convert_to_llm`, `get_api_key`). `on_retry` comes from the model layer while it retries an
  attempt (the declared seam `agentcore.llm.retries`).
- `RunObserver.start_tool`: at `tool_execution_start`, in the run's task; `ToolObserver.executing`
  is entered in the task that calls the tool's `execute` (its own task for parallel tools) around
  that call, so a run started inside `execute` sees what it makes current; `end_tool` at
  `tool_execution_end`, in the task that settled the call.

- `guardrail_tripped(trip)`, an optional method of a `RunObserver`: just before `end_run`, when
  an input or output guardrail ended the run (the `GuardrailTrip`); an observer without it is
  not called (a tool guardrail's block shows as the call's error result).
- `agent_switched(from_agent, to_agent, tool_call_id, returns)`, an optional method of a
  `RunObserver`: in the run's task, at a handoff's `agent_switch` (see docs/handoffs.md), so an
  implementation may open a span for the new agent's segment and make it current; an observer
  without it is not called.

With nothing installed the loop's cost is one check per run, request and tool call. Hooks should
not raise: an exception from `start_run` or `end_run` is logged and ignored, one from the others
fails the run like a raising config hook.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from ..abort import AbortSignal
from ..limits import LimitReached
from ..llm.model import Model
from ..llm.retries import RetryObserver
from ..llm.types import Context
from ..messages import AgentMessage, AssistantMessage, ToolCall
from ..tools import AgentTool, AgentToolResult

__all__ = [
    "Instrumentation",
    "RequestObserver",
    "RunInfo",
    "RunObserver",
    "ToolObserver",
    "end_observing",
    "get_instrumentation",
    "installed",
    "set_instrumentation",
    "start_observing",
]

_log = logging.getLogger("agentcore")


@dataclass(frozen=True, slots=True, kw_only=True)
class RunInfo:
    """What an instrumentation learns when a run starts.

    Attributes:
        model: the model of the run's first request.
        system_prompt: the system prompt the run starts with.
        messages: the transcript the run starts from (its prompts not included).
        prompts: the run's new prompts (empty for a continue run).
        tools: the tools the run starts with.
        signal: the run's abort signal (tells an aborted call from a failed one).
    """

    model: Model
    system_prompt: str
    messages: Sequence[AgentMessage]
    prompts: Sequence[AgentMessage]
    tools: Sequence[AgentTool]
    signal: AbortSignal


class RequestObserver(RetryObserver, Protocol):
    """Watches one model request of a run (all calls in the run's task)."""

    def on_first_event(self) -> None:
        """The first streamed event after `start` arrived (the time to first token)."""

    def end_request(self, message: AssistantMessage | None, error: BaseException | None) -> None:
        """The request is over: its final message (stop reason, usage, error text), or the
        exception that ended reading it (a failing listener, an outer cancellation)."""


class ToolObserver(Protocol):
    """Watches one tool call of a run."""

    def executing(self) -> AbstractContextManager[object]:
        """Entered around the call of the tool's `execute`, in the task that calls it (not
        entered for a call that fails before, such as an unknown tool or invalid arguments)."""

    def end_tool(
        self, result: AgentToolResult, is_error: bool, error: BaseException | None
    ) -> None:
        """The call is settled (at its `tool_execution_end`): its result, whether it is an error,
        and the exception the tool raised, if it raised."""


class RunObserver(Protocol):
    """Watches one run; returned by `Instrumentation.start_run`."""

    def start_request(self, model: Model, context: Context) -> RequestObserver | None:
        """A request is about to be sent with `context` (the messages as the model sees them)."""

    def start_tool(self, call: ToolCall) -> ToolObserver | None:
        """A tool call starts (its `tool_execution_start`)."""

    def end_run(
        self,
        messages: Sequence[AgentMessage],
        limit: LimitReached | None,
        error: BaseException | None,
    ) -> None:
        """The run is over: the messages it added (as in `agent_end`), the bound that ended it,
        or the exception that left it (an outer cancellation, KeyboardInterrupt)."""


class Instrumentation(Protocol):
    """Sees every run from the inside; install one with `set_instrumentation`.

    `agentcore.tracing.instrument()` installs the OpenTelemetry one. Each `start_*` may return
    None to leave that run, request or call alone.
    """

    def start_run(self, run: RunInfo) -> RunObserver | None:
        """A run starts (in its own task, before `agent_start`)."""


installed: Instrumentation | None = None
"""The installed instrumentation (the loop reads it once per run)."""


def set_instrumentation(instrumentation: Instrumentation | None) -> Instrumentation | None:
    """Install `instrumentation` for every run started from now on (None removes it), in every
    thread; returns the one it replaces."""
    global installed
    previous = installed
    installed = instrumentation
    return previous


def get_instrumentation() -> Instrumentation | None:
    """The installed instrumentation, or None."""
    return installed


def start_observing(instrumentation: Instrumentation, info: RunInfo) -> RunObserver | None:
    """`start_run`, a raising one logged and ignored (the run goes on unobserved)."""
    try:
        return instrumentation.start_run(info)
    except Exception:
        _log.exception("the instrumentation's start_run raised; the run is not observed")
        return None


def end_observing(
    observer: RunObserver,
    messages: Sequence[AgentMessage],
    limit: LimitReached | None,
    error: BaseException | None,
    guardrail: Any = None,
) -> None:
    """`end_run` (after the optional `guardrail_tripped` when a guardrail ended the run), a
    raising one logged and ignored."""
    try:
        if guardrail is not None:
            tripped = getattr(observer, "guardrail_tripped", None)
            if tripped is not None:
                tripped(guardrail)
        observer.end_run(messages, limit, error)
    except Exception:
        _log.exception("the instrumentation's end_run raised")
