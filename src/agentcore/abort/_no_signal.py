"""The signal of a run that was given none: it never fires. The engine gives it to such a run
(tools, hooks and requests still get a signal); the model layer recognises it and reads a
request's events as without a signal. Private to agentcore: a declared seam of the shared layer
(see `tests/test_layers.py`), not public API.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio

from . import AbortSignal

__all__ = ["NEVER_ABORTED", "NeverAborted"]


def _no_listener() -> None:
    """Removes a listener that was never kept."""


class NeverAborted(AbortSignal):
    """The signal of a run that nothing can abort (no signal was given): it never fires, so a
    listener is never kept and nothing is allocated for one. One instance serves every such run.
    """

    __slots__ = ()

    def add_listener(self, listener: Callable[[Any], Any]) -> Callable[[], None]:
        """Never calls `listener`: this signal never fires."""
        return _no_listener

    async def wait(self) -> None:
        """Wait forever (until cancelled): this signal never fires."""
        await anyio.sleep_forever()

    def _fire(self, reason: Any) -> None:
        raise RuntimeError("this signal has no controller and cannot fire")


NEVER_ABORTED: AbortSignal = NeverAborted()
"""The run's signal when the caller gave none (tools, hooks and requests still get a signal)."""
