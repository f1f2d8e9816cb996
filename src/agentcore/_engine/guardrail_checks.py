"""Guardrails in a run: each check gives a value, and the run keeps it.

`RunGuards.of(config)` is None when the config has no guardrails: then nothing here runs and a
run costs what it did without them. Otherwise (one `RunGuards` per run):

- input guardrails: `before_request` runs the `"before"` ones in order on the request about to be
  sent (a `Rewrite` replaces its messages, a `Block` returns the `GuardrailTrip` and no request is
  sent), and starts the `"alongside"` ones as a task of the run while the request streams, under
  an abort signal of the request's own: a block aborts the request.
- output guardrails: the `"alongside"` ones see the streamed text (the stream function is wrapped,
  `watched`) and abort the request when one blocks; `settle` waits for the alongside input checks,
  then runs every output guardrail on a final answer (one without tool calls) before it joins the
  transcript. A trip withholds the answer: it joins with no content, `stop_reason="error"` and
  the trip as its `error_message`, and `settle` returns it with the `GuardrailTrip` that ends
  the run (`Settled(answer, trip)`).
- tool guardrails (`guardrail_tools`): a block gives the call an error result.

A check that raises, times out or returns something else blocks, naming what went wrong (it fails
closed); `verdict` never raises, outer cancellation aside.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from ..abort import AbortController, cancel_on_abort
from ..guardrails._trip import GuardrailKind, GuardrailTrip
from ..guardrails._values import (
    PASS,
    Block,
    Guardrail,
    GuardrailResult,
    InputGuardrailContext,
    OutputGuardrailContext,
    Pass,
    Rewrite,
)
from ..llm.registry import StreamFn, call_stream_fn
from ..llm.stream import AssistantMessageEventStream
from ..llm.types import Context, SimpleStreamOptions
from ..messages import AssistantMessage, Message, TextContent, UserMessage

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from anyio.abc import TaskGroup

    from ..abort import AbortSignal
    from ..config import AgentLoopConfig
    from ..llm.events import AssistantMessageEvent
    from ..llm.model import Model
    from .request import ReadyRequest

__all__ = ["RunGuards", "Settled", "blocked_answer", "failed_text", "verdict", "withheld"]

_log = logging.getLogger("agentcore")


@dataclass(frozen=True, slots=True)
class Settled:
    """An answer as it joins the transcript under the output guardrails (withheld, rewritten or
    as it came), and the trip of the guardrail that blocked the request or withheld it."""

    message: AssistantMessage
    trip: GuardrailTrip | None = None


def failed_text(value: Any) -> str:
    return f"it returned {type(value).__name__}; expected Pass, Block, Rewrite or None"


async def verdict(
    guard: Guardrail, ctx: Any, signal: AbortSignal | None = None
) -> tuple[GuardrailResult, bool]:
    """The guardrail's result on `ctx`, and whether it failed (raised, timed out, returned
    something else, or the run's `signal` fired while it ran: then a `Block` saying so). Never
    raises, outer cancellation aside."""
    check = guard.check
    with cancel_on_abort(signal) as aborted:
        try:
            if guard.timeout is None:  # on the event loop (the built-ins: quick and bounded)
                value = check(ctx)
                if inspect.isawaitable(value):
                    value = await value
            else:
                with anyio.fail_after(guard.timeout):
                    if _is_async(check):
                        value = check(ctx)
                    else:  # in a worker thread, so that the timeout holds (abandoned then)
                        value = await anyio.to_thread.run_sync(check, ctx, abandon_on_cancel=True)
                    if inspect.isawaitable(value):
                        value = await value
        except TimeoutError:
            return Block(f"it did not answer within {guard.timeout:g} s"), True
        except Exception as exc:
            text = str(exc)
            return Block(f"it raised {type(exc).__name__}" + (f": {text}" if text else "")), True
    if aborted.cancelled_caught:
        return Block("the run was aborted while it ran"), True
    if value is None or isinstance(value, Pass):
        return PASS, False
    if isinstance(value, Block | Rewrite):
        return value, False
    return Block(failed_text(value)), True


def _is_async(check: Any) -> bool:
    """A coroutine function, or an object whose `__call__` is one."""
    call = type(check).__call__ if not inspect.isroutine(check) else None
    return inspect.iscoroutinefunction(check) or inspect.iscoroutinefunction(call)


def trip_of(guard: Guardrail, result: Block, failed: bool) -> GuardrailTrip:
    kind: GuardrailKind = "input" if guard.kind == "input" else "output"
    trip = GuardrailTrip(guardrail=guard.name, kind=kind, reason=result.reason, failed=failed)
    _log.warning("the run ended: %s", trip)
    return trip


def _no_rewrite(guard: Guardrail) -> Block:
    return Block(
        "it returned Rewrite in mode 'alongside' (the step was already under way); "
        "use mode='before' to rewrite"
    )


def _rewritten_input(value: Any, messages: list[Message]) -> list[Message] | None:
    """The request's messages after an input `Rewrite` (None: a value of the wrong type)."""
    if isinstance(value, str):
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if isinstance(message, UserMessage):
                out = list(messages)
                content = message.content
                if isinstance(content, str):
                    new: Any = value
                else:  # the text replaced, the images kept
                    new = [TextContent(text=value)] + [
                        c for c in content if not isinstance(c, TextContent)
                    ]
                out[index] = replace(message, content=new)
                return out
        return list(messages)
    if isinstance(value, list) and all(
        getattr(m, "role", None) in ("user", "assistant", "tool_result") for m in value
    ):
        return list(value)
    return None


def withheld(message: AssistantMessage, trip: GuardrailTrip) -> AssistantMessage:
    """An answer a guardrail withheld: no content, the trip as its error (usage kept)."""
    return replace(message, content=[], stop_reason="error", error_message=str(trip))


def _unchecked(message: AssistantMessage, guardrail: str, kind: str) -> AssistantMessage:
    """An answer whose input or output check the run's abort cut short: withheld, as
    aborted."""
    checked = "the request" if kind == "input" else "the answer"
    return replace(
        message,
        content=[],
        stop_reason="aborted",
        error_message=f"the run was aborted before {kind} guardrail {guardrail!r} had checked "
        f"{checked}",
    )


def blocked_answer(model: Model, trip: GuardrailTrip) -> AssistantMessage:
    """The answer of a request an input guardrail blocked before it was sent."""
    return AssistantMessage(
        api=model.api,
        provider=model.provider,
        model=model.id,
        stop_reason="error",
        error_message=str(trip),
    )


def _is_final(message: AssistantMessage) -> bool:
    return message.stop_reason in ("stop", "length") and not message.tool_calls


def _answer_text(message: AssistantMessage) -> str:
    return "".join(c.text for c in message.content if isinstance(c, TextContent))


class _Pending:
    """The guardrails running alongside one request."""

    __slots__ = (
        "checking",
        "checking_input",
        "checks",
        "chunks",
        "controller",
        "done",
        "partial",
        "remove",
        "scope",
        "trip",
        "wake",
    )

    def __init__(self, controller: AbortController, remove: Any) -> None:
        self.controller = controller
        self.remove = remove
        self.trip: GuardrailTrip | None = None
        self.done: anyio.Event | None = None  # set when the alongside input checks are over
        self.scope = anyio.CancelScope()  # the watcher of the streamed text
        self.checks = anyio.CancelScope()  # the alongside input checks
        self.chunks: list[str] = []
        self.checking: str | None = None  # the output guardrail checking streamed text now
        self.checking_input: str | None = None  # the alongside input guardrail checking now
        self.partial: AssistantMessage | None = None
        self.wake = anyio.Event()

    def tripped(self, trip: GuardrailTrip) -> None:
        if self.trip is None:
            self.trip = trip
            self.controller.abort(str(trip))


@dataclass(slots=True, eq=False)
class RunGuards:
    """A run's guardrails, by kind and mode, and what they decided (see the module)."""

    input_before: Sequence[Guardrail]
    input_alongside: Sequence[Guardrail]
    output: Sequence[Guardrail]
    output_alongside: Sequence[Guardrail]
    tool_call_before: Sequence[Guardrail]
    tool_call_alongside: Sequence[Guardrail]
    tool_result: Sequence[Guardrail]
    abort_signal: AbortSignal | None = None
    pending: _Pending | None = None  # what runs alongside the request under way

    @staticmethod
    def of(config: AgentLoopConfig, abort_signal: AbortSignal | None) -> RunGuards | None:
        """The run's guardrails; None when the config has none (nothing to run)."""
        return RunGuards.of_guardrails(config.guardrails, abort_signal)

    @staticmethod
    def of_guardrails(
        guards: Sequence[Guardrail], abort_signal: AbortSignal | None
    ) -> RunGuards | None:
        """These guardrails as a run runs them; None when there are none."""
        if not guards:
            return None

        def pick(kind: str, mode: str | None = None) -> tuple[Guardrail, ...]:
            return tuple(g for g in guards if g.kind == kind and (mode is None or g.mode == mode))

        return RunGuards(
            input_before=pick("input", "before"),
            input_alongside=pick("input", "alongside"),
            output=pick("output"),
            output_alongside=pick("output", "alongside"),
            tool_call_before=pick("tool_call", "before"),
            tool_call_alongside=pick("tool_call", "alongside"),
            tool_result=pick("tool_result"),
            abort_signal=abort_signal,
        )

    def aborted(self) -> bool:
        """Whether the run's signal fired (then a guardrail cut short is no trip)."""
        return self.abort_signal is not None and self.abort_signal.aborted

    @property
    def for_tools(self) -> bool:
        """Whether a tool call is checked while or after it runs."""
        return bool(self.tool_call_alongside or self.tool_result)

    # -- input -----------------------------------------------------------------------------

    async def before_request(
        self, model: Model, prepared: ReadyRequest | None, group: TaskGroup, signal: AbortSignal
    ) -> ReadyRequest | GuardrailTrip | None:
        """The request to send after the input guardrails (None: the abort answers it), or the
        trip of one that blocked it. Starts the alongside checks."""
        if prepared is None:
            return None
        context, options = prepared
        if self.input_before:
            ctx = InputGuardrailContext(
                messages=context.messages, system_prompt=context.system_prompt, model=model
            )
            for guard in self.input_before:
                result, failed = await verdict(guard, ctx, self.abort_signal)
                if isinstance(result, Rewrite):
                    messages = _rewritten_input(result.value, ctx.messages)
                    if messages is None:
                        result, failed = (
                            Block(
                                f"it returned Rewrite({type(result.value).__name__}); expected "
                                "a str (the latest user message's text) or a list of messages"
                            ),
                            True,
                        )
                    else:
                        ctx = replace(ctx, messages=messages)
                        continue
                if isinstance(result, Block):
                    if signal.aborted:  # the abort answers the request, not the guardrail
                        return None
                    return trip_of(guard, result, failed)
            if ctx.messages is not context.messages:
                context = replace(context, messages=ctx.messages)
        if self.input_alongside or self.output_alongside:
            controller = AbortController()
            remove = signal.add_listener(controller.abort)
            pending = self.pending = _Pending(controller, remove)
            options = replace(options, signal=controller.signal)
            if self.input_alongside:
                pending.done = anyio.Event()
                ctx = InputGuardrailContext(
                    messages=context.messages, system_prompt=context.system_prompt, model=model
                )
                group.start_soon(self._input_alongside, pending, ctx)
            if self.output_alongside:
                group.start_soon(self._watch, pending, model)
        return context, options

    async def _input_alongside(self, pending: _Pending, ctx: InputGuardrailContext) -> None:
        assert pending.done is not None
        try:
            with pending.checks, cancel_on_abort(self.abort_signal):
                for guard in self.input_alongside:
                    pending.checking_input = guard.name  # (left set when the abort cuts it short)
                    result, failed = await verdict(guard, ctx, self.abort_signal)
                    if isinstance(result, Rewrite):
                        result, failed = _no_rewrite(guard), True
                    if isinstance(result, Block):
                        if not self.aborted():
                            pending.checking_input = None
                            pending.tripped(trip_of(guard, result, failed))
                        return
                    pending.checking_input = None
        finally:
            pending.done.set()

    # -- output ----------------------------------------------------------------------------

    def watched(self, fn: StreamFn) -> StreamFn:
        """`fn` with its text deltas shown to the alongside output guardrails."""

        async def watched_fn(
            model: Model, context: Context, options: SimpleStreamOptions
        ) -> AssistantMessageEventStream:
            inner = await call_stream_fn(fn, model, context, options)
            pending = self.pending
            if pending is None:
                return inner

            async def source() -> AsyncIterator[AssistantMessageEvent]:
                try:
                    async for event in inner:
                        if event.type == "text_delta":
                            pending.chunks.append(event.delta)
                            pending.partial = event.partial
                            pending.wake.set()
                        yield event
                finally:
                    await inner.aclose()

            return AssistantMessageEventStream(source())

        return watched_fn

    async def _watch(self, pending: _Pending, model: Model) -> None:
        """Check the streamed text whenever more arrived, until `settle` ends the watch."""
        with pending.scope, cancel_on_abort(self.abort_signal):
            while pending.trip is None:
                await pending.wake.wait()
                pending.wake = anyio.Event()
                partial = pending.partial
                assert partial is not None
                ctx = OutputGuardrailContext(
                    text="".join(pending.chunks), message=partial, final=False, model=model
                )
                for guard in self.output_alongside:
                    pending.checking = guard.name  # (left set when the abort cuts it short)
                    result, failed = await verdict(guard, ctx, self.abort_signal)
                    if isinstance(result, Rewrite):
                        result, failed = _no_rewrite(guard), True
                    if isinstance(result, Block):
                        if not self.aborted():
                            pending.tripped(trip_of(guard, result, failed))
                        return
                    pending.checking = None

    async def settle(
        self, final: AssistantMessage, model: Model
    ) -> tuple[AssistantMessage, GuardrailTrip | None]:
        """The answer as it joins the transcript, withheld when a guardrail blocked it (with
        the trip), its text rewritten, or as it came (no trip)."""
        pending = self.pending
        if pending is not None:
            self.pending = None
            pending.scope.cancel()
            if pending.done is not None and pending.trip is None:
                await pending.done.wait()
            pending.remove()
            if pending.trip is not None:
                return withheld(final, pending.trip), pending.trip
            if self.aborted():  # a check the abort cut short: the answer was never checked
                if pending.checking_input is not None:
                    return _unchecked(final, pending.checking_input, "input"), None
                if pending.checking is not None:
                    return _unchecked(final, pending.checking, "output"), None
        if self.output and _is_final(final):
            ctx = OutputGuardrailContext(
                text=_answer_text(final), message=final, final=True, model=model
            )
            for guard in self.output:
                result, failed = await verdict(guard, ctx, self.abort_signal)
                if isinstance(result, Rewrite):
                    if not isinstance(result.value, str):
                        result = Block(
                            f"it returned Rewrite({type(result.value).__name__}); expected a "
                            "str (the answer's text)"
                        )
                        failed = True
                    else:
                        content = [c for c in final.content if not isinstance(c, TextContent)]
                        final = replace(final, content=[*content, TextContent(text=result.value)])
                        ctx = replace(ctx, text=result.value, message=final)
                        continue
                if isinstance(result, Block):
                    if self.aborted():  # unchecked: withheld all the same, as aborted
                        return _unchecked(final, guard.name, "output"), None
                    trip = trip_of(guard, result, failed)
                    return withheld(final, trip), trip
        return final, None

    def cancel_pending(self) -> None:
        """The request failed: stop what runs alongside it."""
        pending, self.pending = self.pending, None
        if pending is not None:
            pending.scope.cancel()
            pending.checks.cancel()
            pending.remove()
            pending.controller.abort("the request failed")
