"""pydantic-monty, imported through `import_sdk` (the `[codemode]` extra)."""

from __future__ import annotations

from typing import Any

from .._optional import import_sdk

__all__ = ["monty"]

monty: Any = import_sdk("pydantic_monty", "codemode", needed_by="agentcore.codemode")
