"""`CodeLimits`: what one snippet may use."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import ToolDefinitionError

__all__ = ["CodeLimits"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CodeLimits:
    """What one snippet may use; a limit reached ends the snippet with an error result naming
    it. Every limit must be positive.

    Args:
        timeout: seconds of wall time for the whole snippet, its tool calls included.
        memory: bytes of the sandbox's heap.
        recursion: depth of function calls in the sandbox.
        tool_calls: calls of the tools a snippet may make.
        output: characters of printed output kept (the rest is cut, with a note) and, apart,
            characters of the result's value.
        snapshot: bytes of the sandbox's snapshot kept in the transcript while a snippet waits
            for a decision on a call it made; a larger one does not suspend, the waiting calls
            fail instead (an error the code sees).
    """

    timeout: float = 30.0
    memory: int = 256 * 1024 * 1024
    recursion: int = 200
    tool_calls: int = 100
    output: int = 64 * 1024
    snapshot: int = 4 * 1024 * 1024

    def __post_init__(self) -> None:
        if not (isinstance(self.timeout, (int, float)) and 0 < self.timeout < math.inf):
            raise ToolDefinitionError(
                f"CodeLimits.timeout must be a positive number of seconds, got {self.timeout!r}"
            )
        for name in ("memory", "recursion", "tool_calls", "output", "snapshot"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ToolDefinitionError(
                    f"CodeLimits.{name} must be a positive int, got {value!r}"
                )
