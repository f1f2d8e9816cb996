"""The request of a turn (`TurnRequests`, a layer of `loop.LoopRun`): prepared (the transcript
converted or compacted, the key, the typed answer's tool or schema), sent, and its answer
streamed into the transcript; under the run's guardrails when it has any.

A delta is the hot path: `request` sends each one straight to a plain function sink (no
coroutine), and is called straight from the turn, so that a streaming run is one frame
shallower. What goes around a request (its options, the stream function with fallbacks, the
watch of the instrumentation and the log) is in `request`.
"""

from __future__ import annotations

import inspect
import logging
from dataclasses import replace
from typing import TypeAlias

from ..events import MessageEndEvent, MessageStartEvent, message_update
from ..guardrails._trip import GuardrailTrip
from ..llm.events import AssistantMessageEvent
from ..llm.registry import call_stream_fn
from ..llm.types import Context, SimpleStreamOptions
from ..messages import AssistantMessage, Message
from .compaction import Compacted, convert_view, request_messages, retry_after_overflow
from .emit import call_hook
from .guardrail_checks import RunGuards, blocked_answer
from .outcome import StopCause, Stopped
from .request import RequestWatch, aborted_answer, stream_options, unique_tool_call_ids
from .run_state import Phase, RunState

__all__ = ["TurnRequests"]


_log = logging.getLogger("agentcore")


_Prepared: TypeAlias = tuple[Context, SimpleStreamOptions]
"""A request ready to be sent: its context and options."""


class TurnRequests(RunState):
    """A run's requests: prepared, sent (guarded), their answers streamed into the transcript."""

    def options(self) -> SimpleStreamOptions:
        if self._options is None:
            self._options = stream_options(self.inputs.config, self.inputs.signal, self.reasoning)
        return self._options

    async def prepare_request(self) -> _Prepared | None:
        """The next request's context and options; None when the abort fired before it could
        be sent (also one fired by a preparing hook): then nothing further is called."""
        config = self.inputs.config
        signal = self.inputs.signal
        if signal.aborted:
            return None
        if self.inputs.plain_transcript:  # the default conversion, no hook: kept as the run grows
            llm_messages: list[Message] = self.transcript.of(self.messages)
        else:
            converted = await request_messages(self.inputs, self)  # compacted first if due
            if isinstance(converted, Compacted):
                if await self.keep(converted):
                    if signal.aborted:
                        return None
                    converted = await convert_view(self.inputs, self.messages)
                else:
                    converted = converted.messages
            if converted is None:
                return None
            llm_messages = converted
        context = Context(
            system_prompt=self.system_prompt,
            messages=llm_messages,  # the request's own list
            tools=list(self.llm_tools),
        )
        options = self.options()
        if config.get_api_key is not None:
            key = await call_hook(config.get_api_key, self.model.provider)
            if key:
                options = replace(options, api_key=key)
        typed = self.typed
        if typed is not None:  # the final-answer tool, or the native schema
            context, options = typed.request(self.model, context, options)
            if (tool := typed.answer_tool) is not None:  # a batch may run it
                self.tools_by_name[tool.name] = tool
        if signal.aborted:
            return None
        return context, options

    async def keep(self, compacted: Compacted) -> bool:
        """Keep what a compaction returned: its marker joins the transcript (True), a failure
        is remembered (only an overflow compacts again in this run)."""
        if compacted.failed:
            self.compaction_failed = True
        if compacted.marker is None:
            return False
        await self.add_message(compacted.marker)
        return True

    async def guarded_request(self, guards: RunGuards) -> AssistantMessage | Stopped:
        """A turn's request under the run's guardrails (see `guardrail_checks`): its answer,
        or, when a guardrail blocked the request or withheld the answer, the run's stop (the
        turn closed)."""
        prepared = await guards.before_request(
            self.model, await self.prepare_request(), self.group, self.inputs.signal
        )
        if isinstance(prepared, GuardrailTrip):
            answer = blocked_answer(self.model, prepared)
            await self.add_message(answer)
            await self.turn_end(answer, [])
            return Stopped(StopCause.GUARDRAIL, prepared)
        message = await self.request(prepared)
        if self.inputs.config.compaction is not None and guards.trip is None:
            compacted = await retry_after_overflow(self.inputs, self, message)
            if compacted is not None and await self.keep(compacted):
                prepared = await guards.before_request(
                    self.model, await self.prepare_request(), self.group, self.inputs.signal
                )
                if isinstance(prepared, GuardrailTrip):
                    guards.trip = prepared
                else:
                    message = await self.request(prepared)  # once, after it
        trip = guards.take_trip()
        if trip is not None:
            if self.bounds is not None:
                self.bounds.count(message)
            await self.turn_end(message, [])
            return Stopped(StopCause.GUARDRAIL, trip)
        return message

    async def request(
        self, prepared: tuple[Context, SimpleStreamOptions] | None
    ) -> AssistantMessage:
        """Send a prepared request (None: the abort answers it) and stream its answer into the
        transcript. Called straight from the turn, so a streaming run is one frame shallower."""
        if prepared is None:
            return await self.aborted()
        context, options = prepared
        watch = None
        inputs = self.inputs
        if inputs.observer is not None or _log.isEnabledFor(logging.INFO):
            # watched: seen by the instrumentation, logged (see `RequestWatch`)
            observer = inputs.observer
            watch = RequestWatch(
                observer.start_request(self.model, context) if observer is not None else None
            )
        emitter = inputs.emitter
        sink = emitter.sink if emitter.sync else None  # the hot path: one call per delta
        started = False
        latest: AssistantMessageEvent | None = None  # the latest event of the open message
        try:
            stream = await call_stream_fn(inputs.stream_fn, self.model, context, options)
            try:
                async for event in stream:
                    if event.type == "done" or event.type == "error":
                        break
                    if event.type == "start":
                        if started:  # a provider repeating `start`: the message is open
                            continue
                        started = True
                        self.phase = Phase.STREAMING
                        latest = event
                        pending = emitter.send(MessageStartEvent(message=event.partial))
                        if pending is not None:
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
                                emitter.error = exc
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
            if inputs.guards is not None:  # withheld or rewritten before it joins
                final = await inputs.guards.settle(final, self.model)
            if not started:  # nothing streamed: the message starts and ends here
                pending = emitter.send(MessageStartEvent(message=final))
                if pending is not None:
                    await pending
            self.messages.append(final)
            self.new_messages.append(final)
            self.phase, self.partial_event = Phase.IN_TURN, None
            if (pending := emitter.send(MessageEndEvent(message=final))) is not None:
                await pending
        except BaseException as exc:
            self.partial_event = latest  # what the failure path keeps of a streaming answer
            if inputs.guards is not None:
                inputs.guards.cancel_pending()
            if watch is not None:
                watch.failed(exc)
            raise
        if watch is not None:
            watch.finished(self.model, final)
        return final

    async def aborted(self) -> AssistantMessage:
        """The answer of a request the abort stopped before it was sent."""
        answer = aborted_answer(self.model)
        await self.add_message(answer)
        return answer
