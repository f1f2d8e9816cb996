"""An Agent's memory extractions (`Memory(extract=...)`): after a run has settled (its
`agent_end` delivered, the agent idle), the extractor reads the messages the run added, and the
`memory_update` event goes to the listeners. `prompt()` returns once it is done;
`wait_for_idle()` waits for extractions too (a run started by another task)."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import anyio

from .._engine.request import stream_options
from ..abort import AbortController
from ..llm.model import Model
from ..llm.registry import call_stream_fn, stream_simple
from ..llm.types import Context
from ..memory.extract import extract_memories
from ..messages import AgentMessage, AssistantMessage
from .run import Subscription, deliver

if TYPE_CHECKING:
    from ..config import AgentLoopConfig
    from ..llm.registry import StreamFn

__all__ = ["Extractions"]


class Extractions:
    """The extractions of one Agent in flight (usually none or one)."""

    __slots__ = ("_pending",)

    def __init__(self) -> None:
        self._pending: set[anyio.Event] = set()

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
        indices) and send the `memory_update` event, if any, to `listeners`.

        Raises:
            Exception: the first exception a listener raised (the records are stored).
        """
        memory = config.memory
        extractor = memory.extractor if memory is not None else None
        if memory is None or extractor is None or not added:
            return
        where = {id(m): i for i, m in enumerate(transcript)}
        messages = [(where[id(m)], m) for m in added if id(m) in where]
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

        done = anyio.Event()
        self._pending.add(done)
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
            with anyio.CancelScope(shield=True):  # the records are written: the event is sent
                failure = await deliver(listeners, event, controller.signal)
        finally:
            self._pending.discard(done)
            done.set()
        if failure is not None:
            raise failure
