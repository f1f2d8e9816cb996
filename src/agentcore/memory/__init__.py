"""Long-term memory: what an agent remembers across sessions, per user (see docs/memory.md).

A `MemoryStore` holds `MemoryRecord`s (text, kind, scope, provenance, times, expiry); every call
names a `MemoryScope` and sees only that scope's records. Stores: `InMemoryMemoryStore` (tests),
`SqliteMemoryStore` (FTS5, standard library), `PostgresMemoryStore` (text search; the
`postgres` extra, imported when used).
"""

from __future__ import annotations

from ._records import (
    MAX_MEMORY_CHARS,
    MAX_QUERY_TERMS,
    EmbedFn,
    MemoryKind,
    MemoryRecord,
    MemoryScope,
    MemoryStoreError,
    query_terms,
)
from ._store import KEEP, BackedMemoryStore, InMemoryMemoryStore, MemoryStore
from .postgres import POSTGRES_MEMORY_VERSION, PostgresMemoryStore  # psycopg: when one is made
from .sqlite import SQLITE_MEMORY_VERSION, SqliteMemoryStore
from .tools import (
    MAX_RECALL_CHARS,
    MAX_RECALL_LIMIT,
    RECALL_MEMORY,
    REMEMBER,
    recall_memory_tool,
    remember_tool,
)

__all__ = [
    "BackedMemoryStore",
    "EmbedFn",
    "InMemoryMemoryStore",
    "KEEP",
    "MAX_MEMORY_CHARS",
    "MAX_QUERY_TERMS",
    "MAX_RECALL_CHARS",
    "MAX_RECALL_LIMIT",
    "MemoryKind",
    "MemoryRecord",
    "MemoryScope",
    "MemoryStore",
    "MemoryStoreError",
    "POSTGRES_MEMORY_VERSION",
    "PostgresMemoryStore",
    "RECALL_MEMORY",
    "REMEMBER",
    "SQLITE_MEMORY_VERSION",
    "SqliteMemoryStore",
    "query_terms",
    "recall_memory_tool",
    "remember_tool",
]
