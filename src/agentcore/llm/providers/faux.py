"""The `faux` provider: scripted answers streamed like a real model, for tests, demos and benches.

Queue responses on a `FauxProvider` (ready assistant messages, or functions of the request that
return one); each request takes the next one and streams it block by block in small chunks, with
optional pacing, honouring the abort signal at every chunk. Usage is estimated at four characters
a token, and prompt caching is simulated per `session_id` (the longest prefix shared with the
session's previous prompt is read from cache).

The bounds apply as to a real provider: a `latency` longer than `request_timeout` ends the answer
with "no response within request_timeout (…)" (not retried: every attempt would wait as long), a
pause between chunks longer than `idle_timeout` ends it with "the stream was silent for longer
than idle_timeout (…)", keeping what was streamed; an abort that fired before the request calls
nothing (not even `on_response`).
"""

from __future__ import annotations

import itertools
import json
import math
import random
import weakref
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeAlias

import anyio
import anyio.lowlevel

from ...abort import cancel_on_abort
from ...messages import (
    AssistantContent,
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)
from .._adapter import ABORTED, call_hook, is_aborted, report_response
from .._failures import StreamIdle
from .._retry import RequestTimedOut
from ..builder import MessageBuilder
from ..events import (
    AssistantMessageEvent,
    TextStartEvent,
    ThinkingStartEvent,
    ToolCallStartEvent,
)
from ..model import Model, ModelCost
from ..models import calculate_cost
from ..registry import ApiProvider
from ..stream import AssistantMessageEventStream
from ..types import Context, SimpleStreamOptions, StreamOptions

__all__ = ["FauxCall", "FauxProvider", "FauxResponse", "PROVIDER"]

FauxResponse: TypeAlias = (
    AssistantMessage | Callable[["FauxCall"], AssistantMessage | Awaitable[AssistantMessage]]
)
"""A scripted answer: a message, or a function of the request that returns one."""

_BlockStart: TypeAlias = TextStartEvent | ThinkingStartEvent | ToolCallStartEvent


@dataclass(frozen=True, slots=True, kw_only=True)
class FauxCall:
    """One request the faux provider received."""

    model: Model
    context: Context
    options: StreamOptions
    index: int


_instances: weakref.WeakValueDictionary[str, FauxProvider] = weakref.WeakValueDictionary()
_ids = itertools.count(1)


class FauxProvider:
    """A scripted model. Use `model` in a config, or pass `stream_fn` as the stream function.

    Args:
        responses: answers to queue now.
        model_id: the id of `model`.
        provider: the provider id of `model` (unique per instance by default).
        chunk_chars: the size of streamed chunks: a number, or a (min, max) range picked at
            random (seeded, so runs repeat).
        tokens_per_second: pace the stream (None streams as fast as the consumer reads).
        latency: seconds to wait before the first event of each answer.
        seed: seed of the chunk-size generator.
        context_window: the `context_window` of `model`.
        max_tokens: the `max_tokens` of `model`.
        reasoning: the `reasoning` flag of `model`.
        input: the `input` kinds of `model`.
        cost: the `cost` of `model`.
        structured_output: `True` makes typed runs use the native mode (the faux provider
            streams its script whatever `output_schema` says).
    """

    def __init__(
        self,
        responses: Iterable[FauxResponse] = (),
        *,
        model_id: str = "faux-1",
        provider: str | None = None,
        chunk_chars: int | tuple[int, int] = (12, 20),
        tokens_per_second: float | None = None,
        latency: float = 0.0,
        seed: int = 0,
        context_window: int = 128_000,
        max_tokens: int = 16_384,
        reasoning: bool = True,
        input: tuple[str, ...] = ("text", "image"),
        cost: ModelCost | None = None,
        structured_output: bool | None = None,
    ) -> None:
        self.provider_id = provider or f"faux-{next(_ids)}"
        self.model = Model(
            id=model_id,
            name=f"Faux {model_id}",
            api="faux",
            provider=self.provider_id,
            reasoning=reasoning,
            input=list(input),  # type: ignore[arg-type]
            context_window=context_window,
            max_tokens=max_tokens,
            cost=cost or ModelCost(),
            structured_output=structured_output,
        )
        sizes = (chunk_chars,) if isinstance(chunk_chars, int) else chunk_chars
        if len(sizes) not in (1, 2) or min(sizes) < 1 or sizes[0] > sizes[-1]:
            raise ValueError(f"chunk_chars must be >= 1 or a (min, max) range, got {chunk_chars!r}")
        self.chunk_chars = chunk_chars
        self.tokens_per_second = tokens_per_second
        self.latency = latency
        self.calls: list[FauxCall] = []
        self._queue: deque[FauxResponse] = deque(responses)
        self._random = random.Random(seed)
        self._prompts: dict[str, str] = {}
        _instances[self.provider_id] = self

    # -- the script ------------------------------------------------------------------------

    def set_responses(self, responses: Iterable[FauxResponse]) -> None:
        """Replace the queued answers."""
        self._queue = deque(responses)

    def append_responses(self, *responses: FauxResponse) -> None:
        """Queue more answers."""
        self._queue.extend(responses)

    @property
    def pending(self) -> int:
        """How many answers are still queued."""
        return len(self._queue)

    @property
    def call_count(self) -> int:
        """How many requests were received."""
        return len(self.calls)

    # -- streaming -------------------------------------------------------------------------

    def stream_fn(
        self, model: Model, context: Context, options: SimpleStreamOptions
    ) -> AssistantMessageEventStream:
        """A `StreamFn` answering from this provider's queue, whatever `model` says."""
        return self.stream(model, context, options)

    def stream(
        self, model: Model, context: Context, options: StreamOptions | None = None
    ) -> AssistantMessageEventStream:
        """Answer one request with the next queued response."""
        options = options or StreamOptions()
        call = FauxCall(model=model, context=context, options=options, index=len(self.calls))
        self.calls.append(call)
        # a failing function response fails before `start`: the error still names the model
        fallback = AssistantMessage(api=model.api, provider=model.provider, model=model.id)
        return AssistantMessageEventStream(self._events(call), fallback=fallback)

    def _chunks(self, text: str) -> Iterable[str]:
        size = self.chunk_chars
        i = 0
        while i < len(text):
            n = size if isinstance(size, int) else self._random.randint(size[0], size[1])
            yield text[i : i + n]
            i += max(n, 1)

    def _usage(self, call: FauxCall, output_chars: int) -> Usage:
        prompt = _prompt_text(call.context)
        session = call.options.session_id
        cached = 0
        if session is not None and call.options.cache_retention != "none":
            previous = self._prompts.get(session, "")
            cached = _common_prefix(previous, prompt)
            self._prompts[session] = prompt
        fresh = len(prompt) - cached
        usage = Usage(
            input=math.ceil(fresh / 4),
            output=math.ceil(output_chars / 4),
            cache_read=math.ceil(cached / 4),
            cache_write=math.ceil(fresh / 4) if session is not None and cached < len(prompt) else 0,
        )
        return calculate_cost(call.model, usage)

    async def _pause(self, chars: int, call: FauxCall) -> bool:
        """Wait for one chunk's worth of time, at most `idle_timeout`; False if the run was
        aborted meanwhile.

        Raises:
            StreamIdle: the pause is longer than `idle_timeout`.
        """
        signal = call.options.signal
        if self.tokens_per_second:
            with cancel_on_abort(signal), anyio.move_on_after(call.options.idle_timeout) as idle:
                await anyio.sleep(max(chars / 4, 1) / self.tokens_per_second)
            if idle.cancelled_caught and not is_aborted(signal):
                raise StreamIdle(call.options.idle_timeout or 0.0)
        else:
            await anyio.lowlevel.checkpoint()
        return not is_aborted(signal)

    async def _events(self, call: FauxCall) -> AsyncIterator[AssistantMessageEvent]:
        builder = MessageBuilder(call.model)
        options = call.options
        signal = options.signal
        if is_aborted(signal):  # nothing is called for a request aborted before it began
            yield builder.error("aborted", ABORTED)
            return
        if self.latency:
            # the latency is the same on every attempt, so a timed-out one is not retried
            with cancel_on_abort(signal), anyio.move_on_after(options.request_timeout) as waiting:
                await anyio.sleep(self.latency)
            if waiting.cancelled_caught and not is_aborted(signal):
                yield builder.error("error", str(RequestTimedOut(options.request_timeout or 0.0)))
                return
        if is_aborted(signal):
            yield builder.error("aborted", ABORTED)
            return
        await report_response(options, call.model, 200, {})
        if is_aborted(signal):
            yield builder.error("aborted", ABORTED)
            return
        if not self._queue:
            yield builder.error("error", "no more faux responses queued")
            return
        scripted = self._queue.popleft()
        if not isinstance(scripted, AssistantMessage):
            scripted = await call_hook(scripted, call)
        yield builder.start()
        output = 0
        for block in scripted.content:
            start, text, delta = _open_block(builder, block)
            yield start
            index = start.content_index
            for chunk in self._chunks(text):
                try:
                    going = await self._pause(len(chunk), call)
                except StreamIdle as idle:
                    builder.set_usage(self._usage(call, output))
                    yield builder.error("error", str(idle))
                    return
                if not going:
                    builder.set_usage(self._usage(call, output))
                    yield builder.error("aborted", ABORTED)
                    return
                output += len(chunk)
                yield delta(index, chunk)
            yield _close_block(builder, index, block)
        builder.set_usage(self._usage(call, output))
        reason = scripted.stop_reason
        if reason == "error" or reason == "aborted":
            yield builder.error(reason, scripted.error_message or f"faux {reason}")
        elif reason == "stop" and any(isinstance(b, ToolCall) for b in scripted.content):
            yield builder.done("tool_use")
        else:
            yield builder.done(reason)


def _open_block(
    builder: MessageBuilder, block: AssistantContent
) -> tuple[_BlockStart, str, Callable[[int, str], AssistantMessageEvent]]:
    """The start event of a scripted block, the text to stream for it, and its delta maker."""
    if isinstance(block, TextContent):
        return builder.text_start(), block.text, builder.text_delta
    if isinstance(block, ThinkingContent):
        return (
            builder.thinking_start(redacted=block.redacted),
            block.thinking,
            builder.thinking_delta,
        )
    start = builder.toolcall_start(
        id=block.id, name=block.name, thought_signature=block.thought_signature
    )
    # A scripted call with `invalid_arguments` streams that text as it is, so the builder's
    # strict parse flags it exactly as it would a real model's malformed arguments.
    text = block.invalid_arguments
    return start, json.dumps(block.arguments) if text is None else text, builder.toolcall_delta


def _close_block(
    builder: MessageBuilder, index: int, block: AssistantContent
) -> AssistantMessageEvent:
    if isinstance(block, TextContent):
        return builder.text_end(index, signature=block.text_signature)
    if isinstance(block, ThinkingContent):
        return builder.thinking_end(index, signature=block.thinking_signature)
    if block.invalid_arguments is not None:
        return builder.toolcall_end(index)
    return builder.toolcall_end(index, arguments=block.arguments)


def _prompt_text(context: Context) -> str:
    parts = [context.system_prompt]
    parts.extend(f"{t.name}:{t.description}:{json.dumps(t.parameters)}" for t in context.tools)
    parts.extend(_message_text(m) for m in context.messages)
    return "\n".join(parts)


def _message_text(message: Message) -> str:
    content: Any = message.content
    if isinstance(content, str):
        return content
    out: list[str] = []
    for block in content:
        if isinstance(block, TextContent):
            out.append(block.text)
        elif isinstance(block, ThinkingContent):
            out.append(block.thinking)
        elif isinstance(block, ToolCall):
            out.append(f"{block.name}({json.dumps(block.arguments)})")
        elif isinstance(block, ImageContent):
            out.append("[image]" * 300)
    return "".join(out)


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _lookup(model: Model) -> FauxProvider:
    provider = _instances.get(model.provider)
    if provider is None:
        raise LookupError(
            f"no FauxProvider named {model.provider!r} is alive; create one with "
            "agentcore.testing.FauxProvider and use its `model`"
        )
    return provider


def _stream(model: Model, context: Context, options: StreamOptions) -> AssistantMessageEventStream:
    return _lookup(model).stream(model, context, options)


def _stream_simple(
    model: Model, context: Context, options: SimpleStreamOptions
) -> AssistantMessageEventStream:
    return _lookup(model).stream(model, context, options)


PROVIDER = ApiProvider(api="faux", stream=_stream, stream_simple=_stream_simple)
"""The faux adapter, as `get_api_provider` returns it."""
