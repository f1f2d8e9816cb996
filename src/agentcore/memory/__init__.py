"""Long-term memory: what an agent remembers across sessions, per user (see docs/memory.md).

A `MemoryStore` holds `MemoryRecord`s (text, kind, scope, provenance, times, expiry); every call
names a `MemoryScope` and sees only that scope's records. Stores: `InMemoryMemoryStore` (tests),
`SqliteMemoryStore` (FTS5, standard library), `PostgresMemoryStore` (text search; the
`postgres` extra, imported when used). `Extractor` (`Memory(extract=...)`) stores what a
model finds worth remembering after each run, grounded in the user's own messages.
"""

from __future__ import annotations

import typing as _typing
from importlib import import_module as _import_module

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
from .extract import (
    EXTRACT_SYSTEM_PROMPT,
    ExtractionError,
    Extractor,
    Proposal,
    extraction_context,
    parse_proposals,
)
from .inject import RECALLED_NOTICE, Memory, recalled_block
from .tools import (
    MAX_RECALL_CHARS,
    MAX_RECALL_LIMIT,
    RECALL_MEMORY,
    REMEMBER,
    recall_memory_tool,
    remember_tool,
)

if _typing.TYPE_CHECKING:
    from .postgres import POSTGRES_MEMORY_VERSION, PostgresMemoryStore
    from .sqlite import SQLITE_MEMORY_VERSION, SqliteMemoryStore

# The stores are imported when first used (module `__getattr__`): `Memory` is an option of every
# `AgentLoopConfig`, and a program that uses no SQLite store does not load `sqlite3`.
_MODULE_OF = {
    "POSTGRES_MEMORY_VERSION": "postgres",
    "PostgresMemoryStore": "postgres",
    "SQLITE_MEMORY_VERSION": "sqlite",
    "SqliteMemoryStore": "sqlite",
}


def __getattr__(name: str) -> object:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'agentcore.memory' has no attribute {name!r}")
    value = getattr(_import_module(f".{module}", __name__), name)
    globals()[name] = value  # the next lookup is an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULE_OF))


__all__ = [
    "BackedMemoryStore",
    "EXTRACT_SYSTEM_PROMPT",
    "EmbedFn",
    "ExtractionError",
    "Extractor",
    "InMemoryMemoryStore",
    "KEEP",
    "MAX_MEMORY_CHARS",
    "MAX_QUERY_TERMS",
    "MAX_RECALL_CHARS",
    "MAX_RECALL_LIMIT",
    "Memory",
    "MemoryKind",
    "MemoryRecord",
    "MemoryScope",
    "MemoryStore",
    "MemoryStoreError",
    "POSTGRES_MEMORY_VERSION",
    "PostgresMemoryStore",
    "Proposal",
    "RECALLED_NOTICE",
    "RECALL_MEMORY",
    "REMEMBER",
    "SQLITE_MEMORY_VERSION",
    "SqliteMemoryStore",
    "extraction_context",
    "parse_proposals",
    "query_terms",
    "recall_memory_tool",
    "recalled_block",
    "remember_tool",
]
