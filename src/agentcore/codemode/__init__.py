"""Code mode: the model writes Python over selected tools, run in a Monty sandbox (extra
`[codemode]`, on `pydantic-monty`). `code_mode(tools)` returns one `run_code` tool; each call a
snippet makes goes through the run's one tool pipeline (docs/codemode.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._optional import lazy_exports

if TYPE_CHECKING:
    from ._limits import CodeLimits as CodeLimits
    from ._tool import code_mode as code_mode

__all__ = ["CodeLimits", "code_mode"]

__getattr__ = lazy_exports(__name__, {"CodeLimits": "._limits", "code_mode": "._tool"}, globals())
