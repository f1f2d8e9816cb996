"""The stages of one tool call in a batch (`ToolBatch`): `tool_execution_start`, preparation
(find the tool, `prepare_arguments`, validate, the tool guardrails' check, `before_tool_call`, the
approval gate), execution (under the run's abort and the call's timeout, `after_tool_call`, the
tool guardrails), `tool_execution_end` and the result message; and the pump that emits a batch's
progress updates in order.

Each stage returns a value (`prepare`: `Prepared`, `Immediate` or `Waiting`; `execute`: the
result) and never raises, outer cancellation aside; the driver that takes a batch through them is
`tool_execution.run_calls`. The run is reached only through `run_types.ToolRun`.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread
import anyio.to_thread

from .._approvals.inputs import InputRequired
from .._approvals.suspend import CallSuspended
from .._tools.validation import ArgumentsError
from ..abort import AbortSignal, cancel_on_abort
from ..abort._eventloop import current_loop
from ..approvals import SuspendedCall
from ..config import (
    AfterToolCallContext,
    AfterToolCallResult,
    BeforeToolCallContext,
    BeforeToolCallResult,
)
from ..events import ToolExecutionEndEvent, ToolExecutionStartEvent, ToolExecutionUpdateEvent
from ..handoffs import HandoffTool
from ..messages import AssistantMessage, TextContent, ToolResultMessage
from ..tools import AgentToolResult
from .approval_gate import await_approval
from .emit import call_hook, error_text
from .guardrail_tools import check_arguments, execute_guarded
from .input_wait import wait_for_input
from .run_types import CallStage, Executed, Immediate, PipelineCall, Prepared, Waiting
from .skills import preapproved_by_skills
from .tool_outcomes import (
    ABORTED_BEFORE_START,
    ABORTED_WHILE_RUNNING,
    BLOCKED,
    changed_result,
    checked_result,
    error_result,
    invalid_arguments,
    is_stray_cancellation,
    stray_cancel,
    timed_out,
)
from .tool_search import not_loaded

if TYPE_CHECKING:
    from .._approvals.transcript import CallState
    from ..tools import AgentTool
    from .run_types import RunInputs, RunServices, ToolRun

__all__ = ["ToolBatch"]


class _NotCancelled:
    """Stands in for the cancel scope of a run nothing can abort (as `cancel_on_abort(None)`
    gives, without its generator)."""

    cancelled_caught = False


_NO_ABORT = contextlib.nullcontext(_NotCancelled())
"""The scope of a tool call in a run that nothing can abort: no cancel scope (reusable)."""


_log = logging.getLogger("agentcore")


_NOT_STARTED = object()

SUSPENDED = "Tool call did not finish: it is suspended until calls it made are decided:"
"""The start of the `tool_execution_end` result of a call whose tool suspended."""


def _execute_in_thread(
    item: PipelineCall, prepared: Prepared, signal: AbortSignal, on_update: Any
) -> Any:
    """Run a sync tool in its worker thread, and check its result there (off the event loop).

    A worker may pick the call up only after the abort or the timeout fired (it was handed over
    just before): then the tool must not start at all.
    """
    if signal.aborted or item.abandoned:
        return _NOT_STARTED
    tool = prepared.tool
    value = tool.execute(item.call.id, prepared.args, signal, on_update)
    if inspect.isawaitable(value):
        return value
    return checked_result(value, tool)


@dataclass(slots=True, eq=False)
class ToolBatch:
    run: ToolRun
    message: AssistantMessage
    inputs: RunInputs  # the run's
    services: RunServices  # the run's
    updates: deque[tuple[PipelineCall, AgentToolResult]] | None = None  # made at the first update
    pump_running: bool = False
    closed: bool = False  # the batch is over: late updates are dropped, no pump may start
    approved: bool = False  # its calls are approved: none is checked for approval again
    nested: Any = None  # its `nested_calls.NestedCalls`, made when a tool first asks for it
    carried: dict[str, CallState] | None = None  # decided calls of suspended tools, by id
    suspended: dict[str, SuspendedCall] | None = None  # where those tools stopped, by call id

    # -- updates -------------------------------------------------------------------------

    def on_update_for(self, item: PipelineCall) -> Any:
        loop = current_loop()  # the run's: this runs on it

        def on_update(partial: AgentToolResult) -> None:
            if loop.on_loop():
                self.enqueue(item, partial)
                return
            try:  # an anyio worker thread (a sync tool): hand over and wait, keeping the order
                anyio.from_thread.run_sync(self.enqueue, item, partial)
            except RuntimeError:  # a thread the tool started itself (or the run is gone)
                with contextlib.suppress(RuntimeError):
                    loop.call_soon(lambda: self.enqueue(item, partial))

        return on_update

    def enqueue(self, item: PipelineCall, partial: AgentToolResult) -> None:
        # Once the batch is over (also when it was cancelled from outside), the run's task group
        # may be closing: starting the pump there would create its coroutine and fail to spawn
        # it (under trio: "coroutine 'ToolBatch.pump' was never awaited").
        if item.finished or self.closed:
            return
        item.pending_updates += 1
        if self.updates is None:
            self.updates = deque()
        self.updates.append((item, partial))
        if not self.pump_running:
            self.pump_running = True
            self.run.group.start_soon(self.pump)

    async def pump(self) -> None:
        """Emit queued updates in order; exits when the queue is empty."""
        updates = self.updates
        while updates:
            item, partial = updates.popleft()
            call = item.call
            await self.services.emitter.emit(
                ToolExecutionUpdateEvent(
                    tool_call_id=call.id,
                    tool_name=call.name,
                    args=call.arguments,
                    partial_result=partial,
                    parent_tool_call_id=item.parent,
                    caller=call.caller,
                    agent=self.run.transcript.agent,
                )
            )
            item.pending_updates -= 1
            if item.pending_updates == 0 and item.drained is not None:
                item.drained.set()
        self.pump_running = False

    # -- the pipeline --------------------------------------------------------------------

    async def start(self, item: PipelineCall) -> None:
        call = item.call
        observer = self.services.observer
        if observer is not None:
            item.observer = observer.start_tool(call)
        if _log.isEnabledFor(logging.DEBUG):
            item.started = time.perf_counter()
            _log.debug("tool %r (call %s) started", call.name, call.id)
        event = ToolExecutionStartEvent(
            tool_call_id=call.id,
            tool_name=call.name,
            args=call.arguments,
            parent_tool_call_id=item.parent,
            caller=call.caller,
            agent=self.run.transcript.agent,
        )
        if (pending := self.services.emitter.send(event)) is not None:
            await pending

    async def prepare(
        self, item: PipelineCall, known: AgentTool | None = None, *, decided: bool = False
    ) -> CallStage:
        """Find, adapt, validate and gate one call: `Prepared` (ready to execute), `Immediate`
        (it ends here with this result: an error, a block, the abort) or `Waiting` (for
        approval). `known`: the tool itself, for a call another tool makes (code mode);
        `decided`: such a call, approved (it is not checked for approval again)."""
        run = self.run
        inputs = self.inputs
        call = item.call
        if inputs.signal.aborted:
            return Immediate(error_result(ABORTED_BEFORE_START))
        if call.invalid_arguments is not None:  # never guess what the model meant to send
            return Immediate(error_result(invalid_arguments(call, call.invalid_arguments)))
        tool = run.transcript.tools_by_name.get(call.name) if known is None else known
        if tool is None:
            deferred = run.transcript.deferred
            if deferred is not None and call.name in deferred:  # not found by a search yet
                return Immediate(error_result(not_loaded(call.name, run.transcript.native_search)))
            return Immediate(error_result(f"Tool {call.name} not found"))
        handoffs = self.services.handoffs
        if handoffs is not None and isinstance(tool, HandoffTool):
            refused = handoffs.refusal(self.message, call, tool, run.transcript.tools_by_name)
            if refused is not None:
                return Immediate(error_result(refused))
        try:
            raw: Any = call.arguments
            prepared = tool.prepare_arguments(raw)
            if prepared is not None:
                raw = prepared
            args = tool.validator.validate(raw)
            guards = self.services.guards
            if guards is not None and guards.tool_call_before:
                checked = await check_arguments(guards, call, tool, raw, args)
                if isinstance(checked, AgentToolResult):
                    return Immediate(checked)
                raw, args = checked  # (a rewrite is what an approval request shows)
            hook, decision = inputs.hooks.before_tool_call, None
            if hook is not None:
                ctx = BeforeToolCallContext(
                    assistant_message=self.message,
                    tool_call=call,
                    args=args,
                    context=run.transcript.context(),
                )
                decision = await call_hook(hook, ctx, inputs.signal)
                if decision is not None and not isinstance(decision, BeforeToolCallResult):
                    raise TypeError(
                        f"before_tool_call returned {type(decision).__name__}; expected "
                        "BeforeToolCallResult or None"
                    )
                if inputs.signal.aborted:
                    return Immediate(error_result(ABORTED_BEFORE_START))
                if decision is not None and decision.block:
                    return Immediate(
                        AgentToolResult(
                            content=[TextContent(text=decision.reason or BLOCKED)],
                            is_error=True,
                            terminate=bool(decision.terminate),
                        )
                    )
            # A call from code is never pre-approved by its batch, only by its own decision.
            if (not self.approved or known is not None) and not decided:
                waiting = await_approval(call, tool, raw, args, decision)
                if waiting is not None and not (
                    known is None
                    and (decision is None or not decision.require_approval)
                    and preapproved_by_skills(inputs.config, run.transcript, tool.name)
                ):
                    return waiting
        except ArgumentsError as exc:
            return Immediate(error_result(str(exc)))
        except Exception as exc:
            return Immediate(error_result(error_text(exc)))
        return Prepared(tool, args)

    async def execute(self, item: PipelineCall, prepared: Prepared) -> Executed:
        """Run a prepared call and its `after_tool_call` (under the tool guardrails, if any):
        the call's result, or `Waiting` when the tool asked for input; never raises."""
        guards = self.services.guards
        if guards is not None and guards.for_tools:
            return await execute_guarded(guards, item, prepared, self.execute_call)
        return await self.execute_call(item, prepared)

    async def execute_call(self, item: PipelineCall, prepared: Prepared) -> Executed:
        """Run a prepared call and its `after_tool_call`: the call's result, or `Waiting` when
        the tool asked for input; never raises."""
        run = self.run
        inputs = self.inputs
        call = item.call
        if inputs.signal.aborted:
            return error_result(ABORTED_BEFORE_START)
        if item.observer is None:
            result = await self.invoke(item, prepared)
        else:
            with item.observer.executing():
                result = await self.invoke(item, prepared)
        if item.pending_updates:
            item.drained = anyio.Event()
            await item.drained.wait()
        hook = inputs.hooks.after_tool_call
        if hook is None or isinstance(result, Waiting):  # (a waiting call has no result yet)
            return result
        try:
            ctx = AfterToolCallContext(
                assistant_message=self.message,
                tool_call=call,
                args=prepared.args,
                result=result,
                is_error=result.is_error,
                context=run.transcript.context(),
            )
            change = await call_hook(hook, ctx, inputs.signal)
            if change is None:
                return result
            if not isinstance(change, AfterToolCallResult):
                raise TypeError(
                    f"after_tool_call returned {type(change).__name__}; expected "
                    "AfterToolCallResult or None"
                )
            return changed_result(result, change)
        except Exception as exc:
            return error_result(error_text(exc))

    async def invoke(self, item: PipelineCall, prepared: Prepared) -> Executed:
        """Call the tool under the run's abort and the call's timeout; never raises, outer
        cancellation aside."""
        inputs = self.inputs
        tool = prepared.tool
        timeout = tool.timeout if tool.timeout is not None else inputs.config.tool_timeout
        result: Executed | None = None
        try:
            signal = inputs.abort_signal  # None: nothing can abort the run, no scope to set up
            with cancel_on_abort(signal) if signal is not None else _NO_ABORT as scope:
                if timeout is None:
                    result = await self.call_tool(item, prepared)
                else:
                    # Only `execute` is bounded: the hooks are the application's own code.
                    with anyio.move_on_after(timeout) as deadline:
                        result = await self.call_tool(item, prepared)
                    if deadline.cancelled_caught and not inputs.signal.aborted:
                        item.abandoned = True
                        _log.warning(
                            "tool %r (call %s) timed out after %g s",
                            tool.name,
                            item.call.id,
                            timeout,
                        )
                        result = error_result(timed_out(tool, timeout))
        finally:
            item.finished = True  # also on outer cancellation: later updates are dropped
        if result is None or scope.cancelled_caught:
            return error_result(ABORTED_WHILE_RUNNING)
        return result

    async def call_tool(self, item: PipelineCall, prepared: Prepared) -> Executed:
        """`execute`, its value checked; any failure of the tool becomes an error result, a
        request for input (`InputRequired`) the call's `Waiting`."""
        inputs = self.inputs
        tool = prepared.tool
        on_update = self.on_update_for(item)
        try:
            if tool.is_async():
                value = await tool.execute(item.call.id, prepared.args, inputs.signal, on_update)  # type: ignore[misc]
            else:
                value = await anyio.to_thread.run_sync(
                    _execute_in_thread,
                    item,
                    prepared,
                    inputs.signal,
                    on_update,
                    abandon_on_cancel=True,
                )
                if value is _NOT_STARTED:
                    return error_result(ABORTED_BEFORE_START)
            if not isinstance(value, AgentToolResult) and inspect.isawaitable(value):
                value = await value
            return checked_result(value, tool)
        except InputRequired as exc:  # the tool asked the user: the call waits (input_wait)
            return wait_for_input(item.call, exc)
        except CallSuspended as exc:  # calls it made wait for decisions: so does it
            return self.suspend(item, exc)
        except Exception as exc:
            item.error = exc
            return error_result(error_text(exc))
        except SystemExit as exc:  # e.g. a wrapped CLI's argparse: must not end the host
            return error_result(f"The tool exited (SystemExit: {exc.code!r}).")
        except BaseException as exc:
            if is_stray_cancellation(exc):
                return error_result(stray_cancel(tool))
            raise

    def suspend(self, item: PipelineCall, suspended: CallSuspended) -> Executed:
        """A tool that suspended (`CallSuspended`, code mode): its call waits for the requests
        of the calls it made, its state kept in a `SuspendedCall` (joined at its end)."""
        call = item.call
        foreign = [r.tool_call_id for r in suspended.requests if r.parent_tool_call_id != call.id]
        if foreign:
            return error_result(
                f"Tool {call.name} suspended on calls it did not make ({', '.join(foreign)}): "
                "a tool suspends only on the requests of its own calls (CallWaits)."
            )
        nested = self.nested
        made = nested.counts.get(call.id, 0) if nested is not None else 0
        first, *more = suspended.requests
        n = len(suspended.requests)
        text = f"{SUSPENDED} {n} call{'s' if n > 1 else ''} it made wait{'' if n > 1 else 's'}."
        return Waiting(
            first,
            AgentToolResult(content=[TextContent(text=text)]),
            more=tuple(more),
            suspended=SuspendedCall(
                tool_call_id=call.id, tool_name=call.name, state=suspended.state, nested_calls=made
            ),
        )

    async def end(self, item: PipelineCall, outcome: Executed) -> Waiting | None:
        """The call's outcome: its result kept on `item` and published as its
        `tool_execution_end`; the `Waiting` of a call that waits (no result message then; a
        suspended call's `SuspendedCall` joins the transcript here, before its end)."""
        if isinstance(outcome, Waiting):
            waiting: Waiting | None = outcome
            result = outcome.result
            if outcome.suspended is not None:
                await self.run.transcript.join(outcome.suspended)
        else:
            waiting, result = None, outcome
        item.result = result
        item.finished = True
        call = item.call
        observer = item.observer
        if observer is not None:
            item.observer = None  # ended: not again if the batch is cancelled
            observer.end_tool(result, result.is_error, item.error)
        if item.started:
            _log.debug(
                "tool %r (call %s) finished in %.3f s%s",
                call.name,
                call.id,
                time.perf_counter() - item.started,
                " with an error" if result.is_error else "",
            )
        event = ToolExecutionEndEvent(
            tool_call_id=call.id,
            tool_name=call.name,
            result=result,
            is_error=result.is_error,
            parent_tool_call_id=item.parent,
            caller=call.caller,
            agent=self.run.transcript.agent,
        )
        if (pending := self.services.emitter.send(event)) is not None:
            await pending
        return waiting

    async def publish(self, item: PipelineCall) -> ToolResultMessage:
        result = item.result
        assert result is not None
        message = ToolResultMessage(
            tool_call_id=item.call.id,
            tool_name=item.call.name,
            content=list(result.content),
            details=result.details,
            usage=result.usage,
            added_tool_names=list(result.added_tool_names) if result.added_tool_names else None,
            is_error=result.is_error,
            agent=self.run.transcript.agent,  # (named here: no copy when it joins)
        )
        return await self.run.transcript.join(message)

    async def run_one(self, item: PipelineCall, prepared: Prepared) -> Waiting | None:
        """Execute a prepared call and end it: its `Waiting` if it asked for input."""
        return await self.end(item, await self.execute(item, prepared))
