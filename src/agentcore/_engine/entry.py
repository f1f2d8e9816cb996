"""The loop's entry points: each checks its call (misuse raises at once, before any event),
starts a run (`loop.LoopRun`) and hands back the messages it added, or its events as they happen.
`first_request` is the first request such a run would send, built by the turn's own
`turn_request.prepare` and not sent (for provider batch APIs: `agentcore eval --batch`)."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import anyio

from ..abort import AbortSignal
from ..config import AgentContext, AgentLoopConfig
from ..events import AgentEndEvent, AgentEvent, AgentEventSink
from ..llm.registry import StreamFn
from ..messages import AgentMessage
from .checks import check_call, check_continue, check_prompts
from .event_stream import EventStream
from .loop import LoopRun

if TYPE_CHECKING:
    from ..llm.model import Model
    from ..llm.types import Context, SimpleStreamOptions

__all__ = [
    "agent_loop",
    "agent_loop_continue",
    "first_request",
    "run_agent_loop",
    "run_agent_loop_continue",
]


async def run_agent_loop(
    prompts: Sequence[AgentMessage],
    context: AgentContext,
    config: AgentLoopConfig,
    emit: AgentEventSink,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> list[AgentMessage]:
    """Run the loop with new prompts, awaiting `emit` for every event.

    Returns the messages the run added (prompts included), as in `agent_end`; which bound
    ended the run, if one did, is the `limit` of the `agent_end` event `emit` received.

    Raises:
        MessageFormatError: `prompts` is not a list of messages.
        ConfigError: `context` or `config` is not of the expected type.
    """
    checked = check_prompts(prompts)
    check_call(context, config, emit)
    run = LoopRun(context, config, emit, signal, stream_fn)
    await run.run(checked)
    return run.transcript.new_messages


async def run_agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    emit: AgentEventSink,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> list[AgentMessage]:
    """Continue from the transcript as it is (its last message must not be an assistant's).

    Raises:
        ConfigError (a ValueError): the transcript is empty or ends with an assistant message.
    """
    check_call(context, config, emit)
    check_continue(context)
    run = LoopRun(context, config, emit, signal, stream_fn)
    await run.run(None)
    return run.transcript.new_messages


def agent_loop(
    prompts: Sequence[AgentMessage],
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> EventStream[AgentEvent, list[AgentMessage]]:
    """Start a run with new prompts and stream its events.

    ```python
    async with agent_loop([UserMessage(content="hi")], context, config) as events:
        async for event in events:
            ...
        messages = await events.result()
    ```

    Raises at once (before any event): `MessageFormatError` for prompts that are not messages,
    `ConfigError` for a context or config of the wrong type.
    """
    checked = check_prompts(prompts)
    check_call(context, config)

    return _stream(context, config, signal, stream_fn, checked)


def agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> EventStream[AgentEvent, list[AgentMessage]]:
    """Continue a run from the transcript as it is, streaming its events.

    Raises:
        ConfigError (a ValueError): at once, when the transcript is empty or ends with an
            assistant message.
    """
    check_call(context, config)
    check_continue(context)

    return _stream(context, config, signal, stream_fn, None)


def _stream(
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    stream_fn: StreamFn | None,
    prompts: list[AgentMessage] | None,
) -> EventStream[AgentEvent, list[AgentMessage]]:
    """The stream of a run that starts when it is first read."""
    start = functools.partial(_start, context, config, signal, stream_fn, prompts)
    return EventStream._of_run(start)


def _start(
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    stream_fn: StreamFn | None,
    prompts: list[AgentMessage] | None,
    push: Callable[[Any], Awaitable[None] | None],
    ended: Callable[[AgentEndEvent], None],
) -> Awaitable[list[AgentMessage]]:
    # The run hands its `agent_end` to the stream's channel (`ended`), never holding the stream
    # itself, so that a stream its reader dropped can be collected (and its run stopped).
    run = LoopRun(context, config, push, signal, stream_fn, sync_sink=True, on_end=ended)
    return run.run(prompts)


def _discard(event: AgentEvent) -> None:
    return None


async def first_request(
    prompts: Sequence[AgentMessage], context: AgentContext, config: AgentLoopConfig
) -> tuple[Model, Context, SimpleStreamOptions]:
    """The first request a run of `prompts` on `context` under `config` would send: its model,
    `Context` and options, built as the run builds it (`turn_request.prepare`: the transcript
    converted by `transform_context` and `convert_to_llm`, compacted if due, the skills prompt,
    the key of `get_api_key`, the offered tools, a typed output's tool or schema), and not sent.

    No event is delivered and no guardrail runs (a caller sending the request elsewhere, such
    as a provider batch, answers for those); `fallback_models` are not tried.

    Raises:
        MessageFormatError: `prompts` is not a list of messages.
        ConfigError: `context` or `config` is not of the expected type.
    """
    checked = check_prompts(prompts)
    check_call(context, config)
    run = LoopRun(context, config, _discard, None, None, sync_sink=True)
    async with anyio.create_task_group() as run.group:
        ready = await run.first_request(checked)
    assert ready is not None  # (no signal: nothing aborts it)
    return run.model, ready[0], ready[1]
