"""The DBOS SDK, imported when `agentcore.dbos` first needs it.

`import agentcore.dbos` works without the `[dbos]` extra; its names import their module, which
imports the SDK from here: a missing SDK is then a `MissingExtraError` naming the extra instead
of a bare `ModuleNotFoundError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._optional import import_sdk

__all__ = ["dbos"]

if TYPE_CHECKING:
    import dbos as dbos
else:
    dbos = import_sdk("dbos", "dbos", needed_by="agentcore.dbos")
