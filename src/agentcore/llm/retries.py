"""Watching the retries of requests: the seam between the model layer, which retries a request's
failed attempts (and, with fallback models, tries the next model), and whoever reads the request's
stream, such as the agent loop's instrumentation.

A `StreamFn` takes only a model, a context and options, so the retries of a request cannot be
reported through its call. Instead the reader says, for the context it reads in, who watches:
`watch_retries(observer)` makes `observer.on_retry(...)` be called for every retried attempt of the
requests read from then on in this context (the current task and the tasks it starts; a
`contextvars.ContextVar` holds it), until the returned function is called. The model layer asks
`current_retry_observer()` when an attempt fails. The agent loop watches each request this way
(`agentcore.RequestObserver.on_retry`); nothing else travels on this channel.

```python
stop = watch_retries(observer)
try:
    async with stream_simple(model, context, options) as stream:
        ...
finally:
    stop()
```
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Protocol

__all__ = ["RetryObserver", "current_retry_observer", "watch_retries"]


class RetryObserver(Protocol):
    """Told of each retried attempt of the requests read while it is watched."""

    def on_retry(self, attempt: int, error: str, delay: float) -> None:
        """Attempt number `attempt` (1 for the first) failed with `error` (redacted text: no key
        or header value), and the next attempt follows in `delay` seconds (a fallback model is
        tried at once: 0)."""


_observer: ContextVar[RetryObserver | None] = ContextVar("agentcore_retry_observer", default=None)


def watch_retries(observer: RetryObserver | None) -> Callable[[], None]:
    """Make `observer` see the retries of the requests read from now on in this context (the
    current task and the tasks it starts; None: nobody); returns the function that stops
    watching (it restores the observer that watched before)."""
    token = _observer.set(observer)
    return lambda: _observer.reset(token)


def current_retry_observer() -> RetryObserver | None:
    """The observer watching the retries of requests read in this context, or None."""
    return _observer.get()
