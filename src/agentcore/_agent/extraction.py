"""An Agent's memory extractions (`Memory(extract=...)`), off the run's path.

After a run has settled (its `agent_end` delivered, the agent idle), the messages the run added
are handed to the extractor. Inside `async with agent:` the extraction is a task of the Agent's
own task group: `prompt()` returns at once, and the extraction's `memory_update` event reaches
the listeners later (`wait_for_idle()` waits for it; leaving the `async with` block waits for
every extraction). Outside such a block there is nowhere for a task to outlive `prompt()`, so the
extraction runs before `prompt()` returns, still after `agent_end` and with the agent idle.

An extraction never raises into the caller: a failed request, a refused answer or a failed store
is the event's `error` (and a logged warning), a raising listener or an unexpected failure is
logged, and the run's result is never lost.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Sequence
from dataclasses import replace
from types import TracebackType
from typing import TYPE_CHECKING

import anyio
import anyio.abc

from .._compaction.protocol import CompactionSummary
from .._compaction.view import compacted_view
from .._engine.request import stream_options
from ..abort import AbortController
from ..errors import UsageError
from ..llm.model import Model
from ..llm.registry import call_stream_fn, stream_simple
from ..llm.types import Context
from ..memory.extract import extract_memories
from ..messages import AgentMessage, AssistantMessage
from .run import Subscription, deliver

if TYPE_CHECKING:
    from ..config import AgentLoopConfig
    from ..llm.registry import StreamFn
    from ..memory.inject import Memory

__all__ = ["Extractions", "compacted"]

_log = logging.getLogger("agentcore")


def compacted(
    transcript: Sequence[AgentMessage], added: Sequence[AgentMessage], where: dict[int, int]
) -> list[AgentMessage]:
    """The transcript's messages the compactions among `added` replaced (`where`: each
    message's index by `id`), oldest first: for each marker, the older part of the view it was
    made from (what `compacted_view` stops sending). Messages that are not the transcript's
    own (an earlier summary, a cut tool result) are left out."""
    out: dict[int, AgentMessage] = {}
    for marker in added:
        index = where.get(id(marker))
        if not isinstance(marker, CompactionSummary) or index is None:
            continue
        view = compacted_view(transcript[:index])
        if (
            marker.reason == "overflow"
            and view
            and isinstance(view[-1], AssistantMessage)
            and view[-1].stop_reason == "error"
        ):
            view.pop()  # the answer that overflowed: never sent again, not compacted either
        for m in view[: len(view) - min(marker.kept_messages, len(view))]:
            if id(m) in where:
                out.setdefault(where[id(m)], m)
    return [out[i] for i in sorted(out)]


class Extractions:
    """The extractions of one Agent: its task group (while `async with agent:` is open) and the
    extractions in flight (usually none or one)."""

    __slots__ = ("_group", "_pending")

    def __init__(self) -> None:
        self._pending: set[anyio.Event] = set()
        self._group: anyio.abc.TaskGroup | None = None

    async def open(self) -> None:
        """Open the task group the extractions run in (`Agent.__aenter__`).

        Raises:
            UsageError: it is open already (an Agent is entered once at a time).
        """
        if self._group is not None:
            raise UsageError("this Agent is already open (`async with agent:` is not re-entrant)")
        group = anyio.create_task_group()
        await group.__aenter__()
        self._group = group

    async def close(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Wait for the extractions in flight, then close the task group (`Agent.__aexit__`)."""
        group, self._group = self._group, None
        if group is not None:
            await group.__aexit__(exc_type, exc, tb)

    async def wait(self) -> None:
        """Return once every extraction started so far has finished."""
        while self._pending:
            await next(iter(self._pending)).wait()

    async def after_run(
        self,
        config: AgentLoopConfig,
        stream_fn: StreamFn | None,
        transcript: Sequence[AgentMessage],
        added: Sequence[AgentMessage],
        listeners: list[Subscription],
    ) -> None:
        """Extract the memories of a run's `added` messages (found in `transcript` for their
        indices, the ids a memory cites): in the task group when it is open (this returns at
        once), else now. Never raises."""
        memory = config.memory
        extractor = memory.extractor if memory is not None else None
        if memory is None or extractor is None or not added:
            return
        where = {id(m): i for i, m in enumerate(transcript)}
        read = added if extractor.after == "run" else compacted(transcript, added, where)
        messages = [(where[id(m)], m) for m in read if id(m) in where]
        if not messages:
            return
        done = anyio.Event()
        self._pending.add(done)
        group = self._group
        if group is not None:
            group.start_soon(self._extract, memory, config, stream_fn, messages, listeners, done)
        else:
            await self._extract(memory, config, stream_fn, messages, listeners, done)

    async def _extract(
        self,
        memory: Memory,
        config: AgentLoopConfig,
        stream_fn: StreamFn | None,
        messages: list[tuple[int, AgentMessage]],
        listeners: list[Subscription],
        done: anyio.Event,
    ) -> None:
        extractor = memory.extractor
        assert extractor is not None
        model = extractor.model or config.model
        controller = AbortController()
        stream = stream_fn or stream_simple

        async def complete(model: Model, context: Context, max_tokens: int) -> AssistantMessage:
            key = config.api_key if model.provider == config.model.provider else None
            if config.get_api_key is not None:
                got = config.get_api_key(model.provider)
                got = await got if inspect.isawaitable(got) else got
                key = got or key
            options = replace(
                stream_options(config, controller.signal, "off"),
                api_key=key,
                max_tokens=min(max_tokens, model.max_tokens) if model.max_tokens else max_tokens,
                session_id=None,
                output_schema=None,
            )
            answer_stream = await call_stream_fn(stream, model, context, options)
            async with answer_stream:
                return await answer_stream.result()

        try:
            event = await extract_memories(
                memory.store,
                memory.scope,
                extractor,
                messages,
                kinds=memory.kinds,
                model=model,
                session_id=config.session_id,
                complete=complete,
            )
            if event is None:
                return
            if event.error is not None:
                _log.warning("memory extraction %s: %s", event.extraction_id, event.error)
            with anyio.CancelScope(shield=True):  # the records are written: the event is sent
                failure = await deliver(listeners, event, controller.signal)
            if failure is not None:
                _log.error(
                    "a listener of the memory_update event %s raised",
                    event.extraction_id,
                    exc_info=failure,
                )
        except Exception:
            _log.exception("the memory extraction after a run failed")
        finally:
            self._pending.discard(done)
            done.set()
