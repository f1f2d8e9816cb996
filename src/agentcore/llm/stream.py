"""`AssistantMessageEventStream`: one model response as an async iterator of protocol events.

The stream pulls events from its source (a provider's async generator) in the consumer's own task:
no producer task and no hand-off per event, so reading a delta costs about as much as the provider
takes to make it. The stream enforces the protocol for its consumers: whatever its source does
(raises, ends early), exactly one terminal event comes out, and `await result()` returns the final
message. Leaving early with `async with`/`aclose()` closes the source, which releases its
connection. A provider's stream may be given a `redact` function: the terminal error text passes
through it however it was made (by the provider, or here when the source failed), so a secret a
server echoed never reaches a message, an event or a session.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable
from dataclasses import replace
from types import TracebackType
from typing import Protocol, Self

from ..messages import AssistantMessage
from .events import AssistantMessageEvent, ErrorEvent

__all__ = ["AssistantMessageEventStream"]


class _HasPartial(Protocol):
    @property
    def partial(self) -> AssistantMessage: ...


class AssistantMessageEventStream:
    """An async iterator of `AssistantMessageEvent`s whose `result()` is the final message.

    Args:
        source: the events, typically a provider's async generator.
        fallback: the message to fail with if `source` raises before its `start` event or ends
            without a terminal event (api, provider and model are taken from it).
        redact: applied to the `error_message` of the terminal `error` event (a provider passes
            one that hides the request's secrets).
    """

    __slots__ = ("_fallback", "_iterator", "_partial", "_redact", "_result", "_source")

    def __init__(
        self,
        source: AsyncIterable[AssistantMessageEvent],
        *,
        fallback: AssistantMessage | None = None,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        self._source = source
        self._iterator: AsyncIterator[AssistantMessageEvent] | None = None
        self._result: AssistantMessage | None = None
        self._partial: _HasPartial | None = None
        self._fallback = fallback
        self._redact = redact

    @classmethod
    def from_events(cls, events: Iterable[AssistantMessageEvent]) -> AssistantMessageEventStream:
        """A stream replaying ready-made events (for tests and custom stream functions)."""
        items = list(events)

        async def replay() -> AsyncIterator[AssistantMessageEvent]:
            for event in items:
                yield event

        return cls(replay())

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> AssistantMessageEvent:
        if self._result is not None:
            raise StopAsyncIteration
        if self._iterator is None:
            self._iterator = aiter(self._source)
        try:
            event = await anext(self._iterator)
        except StopAsyncIteration:
            event = self._failure("the model stream ended without a terminal event")
        except Exception as exc:  # a provider must not raise; turn it into the protocol's error
            event = self._failure(f"{type(exc).__name__}: {exc}" if str(exc) else repr(exc))
        if event.type == "done":
            self._result = event.message
            await self._close_source()
        elif event.type == "error":
            if self._redact is not None and event.error.error_message:
                event = self._redacted(event)
            self._result = event.error
            await self._close_source()
        else:
            self._partial = event  # its `partial` is resolved only if the source fails later
        return event

    def _redacted(self, event: ErrorEvent) -> ErrorEvent:
        assert self._redact is not None and event.error.error_message is not None
        text = self._redact(event.error.error_message)
        if text == event.error.error_message:
            return event
        return replace(event, error=replace(event.error, error_message=text))

    def _failure(self, text: str) -> ErrorEvent:
        last = self._partial
        base = last.partial if last is not None else self._fallback or AssistantMessage()
        error = replace(base, content=list(base.content), stop_reason="error", error_message=text)
        return ErrorEvent(reason="error", error=error)

    async def result(self) -> AssistantMessage:
        """The final message, reading the rest of the stream if needed."""
        while self._result is None:
            await self.__anext__()
        return self._result

    async def _close_source(self) -> None:
        closer = getattr(self._iterator, "aclose", None)
        self._iterator = None
        if closer is not None:
            await closer()

    async def aclose(self) -> None:
        """Stop reading and release the source (its HTTP connection, for a provider)."""
        if self._result is None:
            self._result = self._failure("the stream was closed before it finished").error
        await self._close_source()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
