"""What the loop puts around each request: the stream options built from the config, the answer
of a request an abort stopped before it was prepared, unique tool-call ids in an answer, the
watch of a request (the instrumentation's observer, its retries, its log line), the run's stream
function (fallbacks) and the transcript as the model sees it.

Every bound the config sets on a request (`request_timeout`, `idle_timeout`, `max_retries`) goes
into the options of every request, so each provider honours it. Tool-call ids are made unique
here, for any stream function, because the loop pairs each call with its one result by id: two
calls sharing an id would give overlapping `tool_execution_start` events and a transcript no model
can match up.

The instrumentation seam itself is in `instrumentation`; a run's totals in `usage`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import fields, replace
from typing import TypeAlias

from ..abort import AbortSignal
from ..config import AgentLoopConfig, default_convert_to_llm
from ..llm.events import ABORTED_ERROR_MESSAGE
from ..llm.fallback import with_fallbacks
from ..llm.model import Model
from ..llm.registry import StreamFn
from ..llm.retries import watch_retries
from ..llm.types import Context, SimpleStreamOptions, ThinkingLevel
from ..messages import (
    AgentMessage,
    AssistantContent,
    AssistantMessage,
    Message,
    ToolCall,
)
from .instrumentation import RequestObserver

__all__ = [
    "LlmTranscript",
    "ReadyRequest",
    "RequestWatch",
    "aborted_answer",
    "run_stream_fn",
    "stream_options",
    "unique_tool_call_ids",
]

_log = logging.getLogger("agentcore")

ReadyRequest: TypeAlias = tuple[Context, SimpleStreamOptions]
"""A request ready to be sent: its context and options (a plain tuple: one per request)."""

_REQUEST_OPTIONS = tuple(
    name
    for name in (f.name for f in fields(SimpleStreamOptions))
    if name != "reasoning" and name in {f.name for f in fields(AgentLoopConfig)}
)
"""The `AgentLoopConfig` options every request takes as they are: the fields the config shares
with `SimpleStreamOptions` (the thinking level goes its own way: "off" sends none)."""


def stream_options(
    config: AgentLoopConfig, signal: AbortSignal, reasoning: ThinkingLevel
) -> SimpleStreamOptions:
    """The options of every request of a run (until the model or thinking level changes)."""
    return SimpleStreamOptions(
        signal=signal,
        reasoning=None if reasoning == "off" else reasoning,
        **{name: getattr(config, name) for name in _REQUEST_OPTIONS},
    )


def aborted_answer(model: Model) -> AssistantMessage:
    """The answer of a request the run's abort stopped before anything was prepared or sent:
    worded as the providers word an aborted request."""
    return AssistantMessage(
        api=model.api,
        provider=model.provider,
        model=model.id,
        stop_reason="aborted",
        error_message=ABORTED_ERROR_MESSAGE,
    )


def unique_tool_call_ids(message: AssistantMessage) -> AssistantMessage:
    """`message` with every tool-call id unique: a repeated id gets the first free suffix
    (`call_1`, `call_1_2`, ...), the rule `MessageBuilder` applies while streaming. The message
    itself when its ids are already unique (the usual case: no copy)."""
    calls = [b for b in message.content if isinstance(b, ToolCall)]
    if len(calls) < 2 or len({c.id for c in calls}) == len(calls):
        return message
    taken: set[str] = set()
    content: list[AssistantContent] = []
    for block in message.content:
        if isinstance(block, ToolCall):
            candidate, n = block.id, 1
            while candidate in taken:
                n += 1
                candidate = f"{block.id}_{n}"
            taken.add(candidate)
            if candidate != block.id:
                block = replace(block, id=candidate)
        content.append(block)
    return replace(message, content=content)


class RequestWatch:
    """One request the loop watches: the instrumentation's observer (if any) is told of it, its
    retries counted, and it is logged to `agentcore` when it ends (model, stop reason, duration,
    retries, usage: DEBUG; a failed or aborted one at INFO with its redacted error; never content).
    """

    __slots__ = ("first", "observer", "retries", "started", "stop_watching")

    def __init__(self, observer: RequestObserver | None) -> None:
        self.observer = observer
        self.retries = 0
        self.first = False
        self.started = time.perf_counter()
        self.stop_watching = watch_retries(self)

    def on_retry(self, attempt: int, error: str, delay: float) -> None:
        self.retries += 1
        if self.observer is not None:
            self.observer.on_retry(attempt, error, delay)

    def first_event(self) -> None:
        self.first = True
        if self.observer is not None:
            self.observer.on_first_event()

    def failed(self, exc: BaseException) -> None:
        """Reading the answer raised `exc` (a failing sink, an outer cancellation)."""
        self.stop_watching()
        if self.observer is not None:
            self.observer.end_request(None, exc)

    def finished(self, model: Model, final: AssistantMessage) -> None:
        """The request ended with `final`."""
        self.stop_watching()
        if self.observer is not None:
            self.observer.end_request(final, None)
        failed = final.stop_reason in ("error", "aborted")
        level = logging.INFO if failed else logging.DEBUG
        if _log.isEnabledFor(level):
            usage = final.usage
            _log.log(
                level,
                "request to %s/%s: %s after %.3f s (%d retries), %d input + %d output tokens%s",
                final.provider or model.provider,  # the model that answered (a fallback?)
                final.model or model.id,
                final.stop_reason,
                time.perf_counter() - self.started,
                self.retries,
                usage.input + usage.cache_read + usage.cache_write,
                usage.output,
                f": {final.error_message}" if final.error_message else "",
            )


def run_stream_fn(config: AgentLoopConfig, stream_fn: StreamFn | None) -> StreamFn:
    """The stream function of a run: the given one (default `stream_simple`), wrapped to try
    `config.fallback_models` in order when a request fails before its first event."""
    if stream_fn is None:
        from ..llm.registry import stream_simple

        stream_fn = stream_simple
    if config.fallback_models:
        stream_fn = with_fallbacks(
            config.fallback_models, stream_fn=stream_fn, get_api_key=config.get_api_key
        )
    return stream_fn


class LlmTranscript:
    """A run's transcript as the model sees it with the default `convert_to_llm`, kept up to
    date as messages are appended, instead of converted again for every request.

    The run only ever appends to its transcript; a hook that replaces it (`prepare_next_turn`)
    gives a new list, which is then converted afresh.
    """

    __slots__ = ("_converted", "_seen", "_source")

    def __init__(self) -> None:
        self._source: list[AgentMessage] | None = None
        self._seen = 0
        self._converted: list[Message] = []

    def of(self, messages: list[AgentMessage]) -> list[Message]:
        """The converted messages (a new list, the request's own)."""
        if messages is not self._source or len(messages) < self._seen:
            self._source, self._seen, self._converted = messages, 0, []
        if len(messages) > self._seen:
            self._converted.extend(default_convert_to_llm(messages[self._seen :]))
            self._seen = len(messages)
        return list(self._converted)
