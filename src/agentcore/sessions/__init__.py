"""Durable sessions: an Agent's transcript and what is needed to resume it, stored as it happens.

```python
from agentcore import Agent
from agentcore.sessions import SqliteSessionStore

store = SqliteSessionStore("chats.db")
agent = Agent(initial_state={"model": model}, session=store.create())
await agent.prompt("hello")          # each message is stored at its message_end

agent = Agent(session=store.open(session_id))   # later, maybe in another process: resume
await agent.prompt("where were we?")
```

Three stores share one interface (`SessionStore`): `JsonlSessionStore` (a directory of append-only
JSON Lines files, one per session), `SqliteSessionStore` (one database, many sessions) and
`PostgresSessionStore` (a PostgreSQL database shared by many processes and hosts; the `postgres`
extra).
"""

from __future__ import annotations

import typing as _typing
from importlib import import_module as _import_module

from ._base import INTERRUPTED_TOOL_RESULT as INTERRUPTED_TOOL_RESULT
from ._base import SESSION_FORMAT_VERSION as SESSION_FORMAT_VERSION
from ._base import SessionCorruptError as SessionCorruptError
from ._base import SessionData as SessionData
from ._base import SessionError as SessionError
from ._base import SessionInfo as SessionInfo
from ._base import SessionLockedError as SessionLockedError
from ._base import SessionNotFoundError as SessionNotFoundError
from ._base import SessionParent as SessionParent
from ._base import SessionRecoveryWarning as SessionRecoveryWarning
from ._base import SessionState as SessionState
from ._base import repair_transcript as repair_transcript
from ._store import Session as Session
from ._store import SessionStore as SessionStore
from ._titles import TITLE_LENGTH as TITLE_LENGTH
from ._titles import session_title as session_title

if _typing.TYPE_CHECKING:
    from .jsonl import JsonlSessionStore as JsonlSessionStore
    from .postgres import PostgresSessionStore as PostgresSessionStore
    from .sqlite import SqliteSessionStore as SqliteSessionStore

# The stores are imported when first used (module `__getattr__`): an Agent that keeps its
# session in memory, or in JSONL files, never imports `sqlite3`.
_STORES = {
    "JsonlSessionStore": ".jsonl",
    "PostgresSessionStore": ".postgres",
    "SqliteSessionStore": ".sqlite",
}


def __getattr__(name: str) -> object:
    module = _STORES.get(name)
    if module is None:
        raise AttributeError(f"module 'agentcore.sessions' has no attribute {name!r}")
    value = getattr(_import_module(module, __name__), name)
    globals()[name] = value  # the next lookup is an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_STORES))


__all__ = [
    "INTERRUPTED_TOOL_RESULT",
    "JsonlSessionStore",
    "PostgresSessionStore",
    "SESSION_FORMAT_VERSION",
    "Session",
    "SessionCorruptError",
    "SessionData",
    "SessionError",
    "SessionInfo",
    "SessionLockedError",
    "SessionNotFoundError",
    "SessionParent",
    "SessionRecoveryWarning",
    "SessionState",
    "SessionStore",
    "SqliteSessionStore",
    "TITLE_LENGTH",
    "repair_transcript",
    "session_title",
]
