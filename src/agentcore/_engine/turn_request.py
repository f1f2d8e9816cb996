"""The request of a turn, as plain functions of the run (its inputs, services, settings and
transcript) returning values: `prepare` (the transcript converted or compacted, the key, the
typed output's tool or schema), `send` (the answer streamed into the transcript), and
`guarded` (a request under the run's input and output guardrails: the answer and any trip).

None of them writes the run: what the request changes is the transcript's (its answer, a
compaction's marker, the final-answer tool offered), through the transcript's own methods.

A delta is the hot path: `send` gives each one straight to a plain function sink (no
coroutine), and is called straight from the turn, so that a streaming run is one frame
shallower. What goes around a request (its options, the stream function with fallbacks, the
watch of the instrumentation and the log) is in `request`.
"""

from __future__ import annotations

import inspect
import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol, overload

from ..events import message_update
from ..llm.registry import call_stream_fn
from ..llm.types import Context, SimpleStreamOptions
from ..messages import AssistantMessage, Message
from .compaction import Compacted, convert_view, request_messages, retry_after_overflow
from .emit import call_hook
from .guardrail_checks import RunGuards, Settled, blocked_answer
from .memory import recall, request_system_prompt
from .request import ReadyRequest, RequestWatch, aborted_answer, unique_tool_call_ids

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from ..guardrails._trip import GuardrailTrip
    from ..llm.events import AssistantMessageEvent
    from ..llm.model import Model
    from ..llm.types import ThinkingLevel
    from .run_types import RunInputs, RunServices
    from .transcript import Transcript
    from .typed_output import TypedRun

__all__ = ["RequestRun", "guarded", "prepare", "send"]


_log = logging.getLogger("agentcore")


class RequestRun(Protocol):
    """The run as its requests read it (read-only: they change only the transcript)."""

    @property
    def inputs(self) -> RunInputs: ...
    @property
    def services(self) -> RunServices: ...
    @property
    def transcript(self) -> Transcript: ...
    @property
    def model(self) -> Model: ...
    @property
    def reasoning(self) -> ThinkingLevel: ...
    @property
    def options(self) -> SimpleStreamOptions: ...
    @property
    def typed(self) -> TypedRun | None: ...
    @property
    def group(self) -> TaskGroup: ...


async def prepare(run: RequestRun) -> ReadyRequest | None:
    """The next request's context and options; None when the abort fired before it could be
    sent (also one fired by a preparing hook): then nothing further is called."""
    inputs = run.inputs
    signal = inputs.signal
    if signal.aborted:
        return None
    transcript = run.transcript
    config = inputs.config
    recalled = await recall(config.memory, transcript)  # once: the estimate counts it too
    if inputs.plain_transcript:  # the default conversion, no hook: kept as the run grows
        llm_messages: list[Message] = transcript.llm.of(transcript.messages)
    else:
        converted = await request_messages(inputs, run, recalled)  # compacted first if due
        if isinstance(converted, Compacted):
            if await transcript.keep(converted):
                if signal.aborted:
                    return None
                converted = await convert_view(inputs, transcript.messages)
            else:
                converted = converted.messages
        if converted is None:
            return None
        llm_messages = converted
    handoffs = run.services.handoffs
    if handoffs is not None:  # the current agent's view of the transcript
        llm_messages = handoffs.view(llm_messages, transcript.tools_by_name)
    context = Context(
        system_prompt=request_system_prompt(config, transcript, recalled),
        messages=llm_messages,  # the request's own list
        tools=list(transcript.llm_tools),
    )
    options = run.options
    model = run.model
    if config.get_api_key is not None:
        key = await call_hook(config.get_api_key, model.provider)
        if key:
            options = replace(options, api_key=key)
    typed = run.typed
    if typed is not None:  # the final-answer tool, or the native schema
        context, options = typed.request(model, context, options)
        if (tool := typed.answer_tool) is not None:  # a batch may run it
            transcript.offer(tool)
    if signal.aborted:
        return None
    return context, options


async def guarded(run: RequestRun, guards: RunGuards) -> Settled:
    """A turn's request under the run's guardrails (see `guardrail_checks`): its answer as it
    joined, and the trip of a guardrail that blocked the request (the answer then says so) or
    withheld the answer."""
    model = run.model
    ready = await guards.before_request(model, await prepare(run), run.group, run.inputs.signal)
    if isinstance(ready, tuple) or ready is None:
        settled = await send(run, ready, guards)
    else:  # blocked before it was sent
        answer = await run.transcript.join(blocked_answer(model, ready))
        return Settled(answer, ready)
    if run.inputs.config.compaction is not None and settled.trip is None:
        compacted = await retry_after_overflow(run.inputs, run, settled.message)
        if compacted is not None and await run.transcript.keep(compacted):
            ready = await guards.before_request(
                model, await prepare(run), run.group, run.inputs.signal
            )
            if isinstance(ready, tuple) or ready is None:
                settled = await send(run, ready, guards)  # once, after it
            else:
                settled = Settled(settled.message, ready)
    return settled


@overload
async def send(run: RequestRun, ready: ReadyRequest | None) -> AssistantMessage: ...
@overload
async def send(run: RequestRun, ready: ReadyRequest | None, guards: RunGuards) -> Settled: ...


async def send(
    run: RequestRun, ready: ReadyRequest | None, guards: RunGuards | None = None
) -> AssistantMessage | Settled:
    """Send a prepared request (None: the abort answers it) and stream its answer into the
    transcript; under `guards`, the answer is settled by them before it joins (then the value
    is `Settled`, with any trip). Called straight from the turn, so a streaming run is one frame
    shallower."""
    model = run.model
    transcript = run.transcript
    if ready is None:
        answer = await transcript.join(aborted_answer(model))
        return answer if guards is None else Settled(answer, None)
    context, options = ready
    watch = None
    inputs = run.inputs
    services = run.services
    if services.observer is not None or _log.isEnabledFor(logging.INFO):
        # watched: seen by the instrumentation, logged (see `RequestWatch`)
        observer = services.observer
        watch = RequestWatch(
            observer.start_request(model, context) if observer is not None else None
        )
    emitter = services.emitter
    sink = emitter.sink if emitter.sync else None  # the hot path: one call per delta
    started = False
    latest: AssistantMessageEvent | None = None  # the latest event of the open message
    trip: GuardrailTrip | None = None
    try:
        stream = await call_stream_fn(inputs.stream_fn, model, context, options)
        try:
            async for event in stream:
                if event.type == "done" or event.type == "error":
                    break
                if event.type == "start":
                    if started:  # a provider repeating `start`: the message is open
                        continue
                    started = True
                    latest = event
                    if (pending := transcript.open(event.partial)) is not None:
                        await pending
                elif started:
                    if watch is not None and not watch.first:
                        watch.first_event()
                    latest = event
                    update = message_update(event)
                    if sink is None:
                        await emitter.emit(update)
                    else:  # no coroutine for a plain function sink
                        try:
                            pending = sink(update)
                        except Exception as exc:
                            emitter.failed(exc)
                            break
                        if pending is None:
                            continue  # (nothing else can have failed the sink meanwhile)
                        if inspect.isawaitable(pending):
                            await emitter.wait(pending)
                if emitter.error is not None:
                    break
            emitter.check()
            final = unique_tool_call_ids(await stream.result())
        finally:
            await stream.aclose()
        if guards is not None:  # withheld or rewritten before it joins
            final, trip = await guards.settle(final, model)
        final = await transcript.join(final, started=started)
    except BaseException as exc:
        transcript.interrupted(latest)  # what the failure path keeps of a streaming answer
        if guards is not None:
            guards.cancel_pending()
        if watch is not None:
            watch.failed(exc)
        raise
    if watch is not None:
        watch.finished(model, final)
    if guards is not None:
        return Settled(final, trip)
    return final
