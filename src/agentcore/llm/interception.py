"""The seam recorded model traffic (`agentcore.testing.recorded`) plugs into: every SDK client
an adapter builds is shown to the active interceptor, if there is one, before its first request.

The model layer knows nothing of recordings (they live in `agentcore.testing`); it only calls
`intercept_http` on each httpx (or httpx2) client it hands to an SDK, `intercept_botocore` on
each boto3 client, asks `replay_key` for a stand-in when a request has no API key (and
`replay_token` before fetching a cloud access token), and `made_up_id` for ids it invents. With
no interceptor installed each of these is a context-variable read and nothing more.

An interceptor is found in the current context first (so concurrent tasks may each replay their
own recording); a thread that did not inherit the context (the sync facade of `agent_loop`) sees
the one installed process-wide, when exactly one is.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextvars import ContextVar, Token
from typing import Any, Protocol

__all__ = [
    "Interceptor",
    "active",
    "current",
    "install",
    "intercept_botocore",
    "intercept_http",
    "made_up_id",
    "replay_key",
    "replay_token",
    "uninstall",
]


class Interceptor(Protocol):
    """What a recording provides to the model layer."""

    def wrap_http(self, client: Any) -> None:
        """Route the requests of an httpx or httpx2 `AsyncClient` through the recording."""

    def wrap_botocore(self, client: Any) -> None:
        """Route the requests of a botocore client through the recording."""

    def stand_in_key(self) -> str | None:
        """The key to use when a request has none (replaying needs no key), or None."""

    def replays_only(self) -> bool:
        """Whether every request is answered from the recording (nothing can be sent)."""

    def next_id(self) -> int:
        """A number for an id the adapter makes up (so that a replay makes up the same)."""


_current: ContextVar[Interceptor | None] = ContextVar("agentcore_interceptor", default=None)
_installed: list[Interceptor] = []
_lock = threading.Lock()


def install(interceptor: Interceptor) -> Token[Interceptor | None]:
    """Make `interceptor` the active one in this context (and process-wide, while alone)."""
    with _lock:
        _installed.append(interceptor)
    return _current.set(interceptor)


def uninstall(interceptor: Interceptor, token: Token[Interceptor | None]) -> None:
    """Undo `install`."""
    with _lock:
        if interceptor in _installed:
            _installed.remove(interceptor)
    try:
        _current.reset(token)
    except ValueError:  # left in another context than it was entered in
        _current.set(None)


def current() -> Interceptor | None:
    """The interceptor installed in this context (not one inherited process-wide), or None."""
    return _current.get()


def active() -> Interceptor | None:
    """The interceptor requests made here go through, or None."""
    current = _current.get()
    if current is not None or not _installed:
        return current
    with _lock:
        return _installed[0] if len(_installed) == 1 else None


def intercept_http(client: Any) -> Any:
    """Hand an httpx/httpx2 `AsyncClient` to the active interceptor; returns the client."""
    interceptor = active()
    if interceptor is not None:
        interceptor.wrap_http(client)
    return client


def intercept_botocore(client: Any) -> Any:
    """Hand a botocore client to the active interceptor; returns the client."""
    interceptor = active()
    if interceptor is not None:
        interceptor.wrap_botocore(client)
    return client


def replay_key() -> str | None:
    """A stand-in API key while a recording that can replay is active, else None."""
    interceptor = active()
    return interceptor.stand_in_key() if interceptor is not None else None


def replay_token() -> str | None:
    """A stand-in access token while a recording answers every request (so a cloud's token is
    not fetched for a request that is never sent), else None."""
    interceptor = active()
    if interceptor is None or not interceptor.replays_only():
        return None
    return interceptor.stand_in_key()


def made_up_id(prefix: str, random_hex: Callable[[], str]) -> str:
    """An id an adapter makes up (a tool call the API gave none): `prefix` and random hex, or,
    while a recording is active, a counter, so that replaying gives the same ids."""
    interceptor = active()
    if interceptor is None:
        return prefix + random_hex()
    return f"{prefix}{interceptor.next_id():024x}"
