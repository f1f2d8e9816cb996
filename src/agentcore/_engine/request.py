"""What the loop puts around each request: the stream options built from the config, the answer
of a request an abort stopped before it was prepared, unique tool-call ids in an answer, the
totals of a run, and the instrumentation seam that tracing plugs into.

Every bound the config sets on a request (`request_timeout`, `idle_timeout`, `max_retries`) goes
into the options of every request, so each provider honours it. Tool-call ids are made unique
here, for any stream function, because the loop pairs each call with its one result by id: two
calls sharing an id would give overlapping `tool_execution_start` events and a transcript no model
can match up.

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

With nothing installed the loop's cost is one check per run, request and tool call. Hooks should
not raise: an exception from `start_run` or `end_run` is logged and ignored, one from the others
fails the run like a raising config hook.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, fields, replace
from typing import Protocol

from ..abort import AbortSignal
from ..config import AgentLoopConfig, default_convert_to_llm
from ..limits import LimitReached
from ..llm.events import ABORTED_ERROR_MESSAGE
from ..llm.fallback import with_fallbacks
from ..llm.model import Model
from ..llm.registry import StreamFn
from ..llm.retries import RetryObserver, watch_retries
from ..llm.types import Context, SimpleStreamOptions, ThinkingLevel
from ..messages import (
    AgentMessage,
    AssistantContent,
    AssistantMessage,
    Cost,
    Message,
    ToolCall,
    Usage,
)
from ..tools import AgentTool, AgentToolResult

__all__ = [
    "LlmTranscript",
    "run_stream_fn",
    "Instrumentation",
    "RequestObserver",
    "RequestWatch",
    "RunInfo",
    "RunObserver",
    "ToolObserver",
    "aborted_answer",
    "add_usage",
    "get_instrumentation",
    "run_usage",
    "set_instrumentation",
    "stream_options",
    "unique_tool_call_ids",
]

_log = logging.getLogger("agentcore")


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


# --- run totals ------------------------------------------------------------------------------


def run_usage(messages: Iterable[object], *, include_tools: bool = True) -> Usage:
    """The total usage and cost of `messages` (a run's `agent_end.messages`, a transcript).

    Sums the `usage` of every assistant message (failed and aborted answers included: their
    tokens were spent), of compaction markers (their summaries') and, with `include_tools` (the
    default), the `usage` tool results report (a sub-agent's, a paid API's), so that the total is
    what the run cost.
    """
    total = Usage()
    for message in messages:
        total = add_usage(total, message, include_tools=include_tools)
    return total


def add_usage(total: Usage, message: object, *, include_tools: bool = True) -> Usage:
    """`total` plus the usage of `message` when it is an answer, a compaction marker (its
    summary's cost) or (with `include_tools`) a tool result that reports usage; `total` itself
    otherwise."""
    role = getattr(message, "role", None)
    if role not in ("assistant", "compaction") and (not include_tools or role != "tool_result"):
        return total
    usage = getattr(message, "usage", None)
    if not isinstance(usage, Usage) or (not usage.total_tokens and not usage.cost.total):
        return total
    a, b = total.cost, usage.cost
    return Usage(
        input=total.input + usage.input,
        output=total.output + usage.output,
        cache_read=total.cache_read + usage.cache_read,
        cache_write=total.cache_write + usage.cache_write,
        cost=Cost(
            input=a.input + b.input,
            output=a.output + b.output,
            cache_read=a.cache_read + b.cache_read,
            cache_write=a.cache_write + b.cache_write,
        ),
    )


# --- the instrumentation seam ---------------------------------------------------------------


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


_instrumentation: Instrumentation | None = None


def set_instrumentation(instrumentation: Instrumentation | None) -> Instrumentation | None:
    """Install `instrumentation` for every run started from now on (None removes it), in every
    thread; returns the one it replaces."""
    global _instrumentation
    previous = _instrumentation
    _instrumentation = instrumentation
    return previous


def get_instrumentation() -> Instrumentation | None:
    """The installed instrumentation, or None."""
    return _instrumentation


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
) -> None:
    """`end_run`, a raising one logged and ignored."""
    try:
        observer.end_run(messages, limit, error)
    except Exception:
        _log.exception("the instrumentation's end_run raised")


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
