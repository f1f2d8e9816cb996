"""The `MemoryStore` protocol, the base the agentcore stores share (`BackedMemoryStore`: checks,
embeddings, the hand-off of blocking work to a worker thread), and `InMemoryMemoryStore`.

A store is given a scope with every call and matches it exactly, inside its own query: there is
no call that reads across scopes. Expired records are never returned (nor updated).
"""

from __future__ import annotations

import abc
import builtins
import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from typing import Any, Protocol, TypeVar, runtime_checkable

import anyio.to_thread

from ..messages import now_ms
from ._records import (
    EmbedFn,
    MemoryRecord,
    MemoryScope,
    check_expiry,
    check_kind,
    check_limit,
    check_scope,
    check_text,
    embed_texts,
    fuse,
    new_id,
    pack_vector,
    query_terms,
    rank_by_vector,
)

__all__ = ["KEEP", "BackedMemoryStore", "InMemoryMemoryStore", "MemoryStore"]

_T = TypeVar("_T")


class _Keep:
    def __repr__(self) -> str:
        return "KEEP"


KEEP: Any = _Keep()
"""`update`'s default for `expires_at`: keep the stored expiry."""


@runtime_checkable
class MemoryStore(Protocol):
    """Where memories live. Every call names the scope it reads or writes; records of any other
    scope are never seen. Implementations: `InMemoryMemoryStore`, `SqliteMemoryStore`,
    `PostgresMemoryStore`, or your own (mem0, Zep: see docs/memory.md)."""

    async def add(
        self,
        text: str,
        *,
        scope: MemoryScope,
        kind: str = "fact",
        session_id: str | None = None,
        message_ids: Sequence[str] = (),
        origin: str = "api",
        expires_at: int | None = None,
    ) -> MemoryRecord:
        """Store a memory and return it (with its id and times)."""
        ...

    async def search(
        self,
        query: str,
        *,
        scope: MemoryScope,
        limit: int = 5,
        kinds: Collection[str] | None = None,
    ) -> list[MemoryRecord]:
        """The records of `scope` most relevant to `query`, best first (at most `limit`)."""
        ...

    async def list(self, *, scope: MemoryScope, limit: int | None = None) -> list[MemoryRecord]:
        """The records of `scope`, newest first."""
        ...

    async def update(
        self,
        record_id: str,
        *,
        scope: MemoryScope,
        text: str | None = None,
        kind: str | None = None,
        expires_at: int | None = KEEP,
    ) -> MemoryRecord | None:
        """Change a record of `scope`; None if `scope` has no such (unexpired) record."""
        ...

    async def delete(self, record_id: str, *, scope: MemoryScope) -> bool:
        """Remove a record of `scope`; False if `scope` has no such record."""
        ...


class BackedMemoryStore(abc.ABC):
    """What agentcore's stores share: the checks of every call, the embeddings (from `embed`,
    fused with the text ranking by reciprocal rank), and blocking work run in a worker thread
    (`threaded`). Subclasses provide the synchronous primitives."""

    threaded = True
    """Whether the primitives block (file or network I/O): then they run in a worker thread."""

    def __init__(self, *, embed: EmbedFn | None = None) -> None:
        if embed is not None and not callable(embed):
            raise TypeError(f"embed must be a function (texts -> vectors), got {embed!r}")
        self.embed = embed
        self._lock = threading.RLock()

    async def _call(self, fn: Callable[..., _T], *args: Any) -> _T:
        if not self.threaded:
            return fn(*args)
        return await anyio.to_thread.run_sync(fn, *args)

    # -- primitives ------------------------------------------------------------------------

    @abc.abstractmethod
    def _insert(self, record: MemoryRecord, vector: bytes | None) -> None: ...

    @abc.abstractmethod
    def _search_text(
        self, terms: builtins.list[str], scope: str, now: int, limit: int, kinds: tuple[str, ...]
    ) -> builtins.list[MemoryRecord]: ...

    @abc.abstractmethod
    def _vectors(
        self, scope: str, now: int, kinds: tuple[str, ...]
    ) -> builtins.list[tuple[str, bytes]]: ...

    @abc.abstractmethod
    def _get(
        self, ids: builtins.list[str], scope: str, now: int
    ) -> builtins.list[MemoryRecord]: ...

    @abc.abstractmethod
    def _list(self, scope: str, now: int, limit: int | None) -> builtins.list[MemoryRecord]: ...

    @abc.abstractmethod
    def _replace(self, record: MemoryRecord, vector: bytes | None, now: int) -> bool:
        """Store `record` over the unexpired record of its id and scope (False: none)."""

    @abc.abstractmethod
    def _delete(self, record_id: str, scope: str) -> bool: ...

    @abc.abstractmethod
    def close(self) -> None:
        """Close the store's files or connections."""

    def __enter__(self) -> BackedMemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the protocol ----------------------------------------------------------------------

    async def add(
        self,
        text: str,
        *,
        scope: MemoryScope,
        kind: str = "fact",
        session_id: str | None = None,
        message_ids: Sequence[str] = (),
        origin: str = "api",
        expires_at: int | None = None,
    ) -> MemoryRecord:
        """Store a memory and return it (see `MemoryStore.add`).

        Raises:
            ValueError: an empty or too long text (`MAX_MEMORY_CHARS`), a bad kind or expiry.
            TypeError: `scope` is not a `MemoryScope`.
            MemoryStoreError: the store failed.
        """
        check_scope(scope)
        now = now_ms()
        if session_id is not None and not isinstance(session_id, str):
            raise ValueError(f"session_id must be a string or None, got {session_id!r}")
        if isinstance(message_ids, str) or not all(isinstance(m, str) for m in message_ids):
            raise ValueError(f"message_ids must be a sequence of strings, got {message_ids!r}")
        record = MemoryRecord(
            id=new_id(),
            text=check_text(text),
            kind=check_kind(kind),
            scope=scope,
            session_id=session_id,
            message_ids=tuple(message_ids),
            origin=check_kind(origin),
            created_at=now,
            updated_at=now,
            expires_at=check_expiry(expires_at),
        )
        vector = await self._vector_of(record.text)
        await self._call(self._insert, record, vector)
        return record

    async def _vector_of(self, text: str) -> bytes | None:
        if self.embed is None:
            return None
        (vector,) = await embed_texts(self.embed, [text])
        return pack_vector(vector)

    async def search(
        self,
        query: str,
        *,
        scope: MemoryScope,
        limit: int = 5,
        kinds: Collection[str] | None = None,
    ) -> builtins.list[MemoryRecord]:
        """The records of `scope` most relevant to `query`, best first: the full-text ranking,
        fused with the embedding ranking when the store has an `embed` function. Any text is a
        valid query: only its words are searched (`query_terms`)."""
        check_scope(scope)
        check_limit(limit)
        wanted = tuple(check_kind(k) for k in kinds) if kinds is not None else ()
        terms = query_terms(query)
        now = now_ms()
        key = scope.key
        if self.embed is None:
            if not terms:
                return []
            return await self._call(self._search_text, terms, key, now, limit, wanted)
        pool = max(limit * 4, 20)
        by_text = (
            await self._call(self._search_text, terms, key, now, pool, wanted) if terms else []
        )
        (vector,) = await embed_texts(self.embed, [query])
        rows = await self._call(self._vectors, key, now, wanted)
        by_vector = rank_by_vector(vector, rows, pool)
        ids = fuse([[r.id for r in by_text], by_vector], limit)
        known = {r.id: r for r in by_text}
        missing = [rid for rid in ids if rid not in known]
        if missing:
            known.update({r.id: r for r in await self._call(self._get, missing, key, now)})
        return [known[rid] for rid in ids if rid in known]

    async def list(
        self, *, scope: MemoryScope, limit: int | None = None
    ) -> builtins.list[MemoryRecord]:
        """The unexpired records of `scope`, newest first (at most `limit`)."""
        check_scope(scope)
        if limit is not None:
            check_limit(limit)
        return await self._call(self._list, scope.key, now_ms(), limit)

    async def get(self, record_id: str, *, scope: MemoryScope) -> MemoryRecord | None:
        """The unexpired record of `scope` with this id, or None."""
        check_scope(scope)
        found = await self._call(self._get, [record_id], scope.key, now_ms())
        return found[0] if found else None

    async def update(
        self,
        record_id: str,
        *,
        scope: MemoryScope,
        text: str | None = None,
        kind: str | None = None,
        expires_at: int | None = KEEP,
    ) -> MemoryRecord | None:
        """Change a record's text, kind or expiry (the others are kept); None if `scope` has no
        unexpired record with this id."""
        old = await self.get(record_id, scope=scope)
        if old is None:
            return None
        new = replace(
            old,
            text=check_text(text) if text is not None else old.text,
            kind=check_kind(kind) if kind is not None else old.kind,
            expires_at=old.expires_at if expires_at is KEEP else check_expiry(expires_at),
            updated_at=max(now_ms(), old.updated_at),
        )
        vector = await self._vector_of(new.text) if text is not None else None
        if not await self._call(self._replace, new, vector, now_ms()):
            return None
        return new

    async def delete(self, record_id: str, *, scope: MemoryScope) -> bool:
        """Remove a record of `scope` (expired or not); False if there is none."""
        check_scope(scope)
        if not isinstance(record_id, str):
            raise TypeError(f"record_id must be a string, got {type(record_id).__name__}")
        return await self._call(self._delete, record_id, scope.key)


_Entry = tuple[MemoryRecord, bytes | None, frozenset[str]]


class InMemoryMemoryStore(BackedMemoryStore):
    """Memories in a dict (for tests and short-lived programs: nothing is written anywhere).

    Search matches whole words (lower-cased); a record ranks by how many of the query's words
    it holds, then by recency.
    """

    threaded = False

    def __init__(self, *, embed: EmbedFn | None = None) -> None:
        super().__init__(embed=embed)
        self._records: dict[str, tuple[MemoryRecord, bytes | None, frozenset[str]]] = {}

    def __repr__(self) -> str:
        return f"InMemoryMemoryStore({len(self._records)} records)"

    def _live(
        self, scope: str, now: int
    ) -> builtins.list[tuple[MemoryRecord, bytes | None, frozenset[str]]]:
        return [
            entry
            for entry in self._records.values()
            if entry[0].scope.key == scope
            and (entry[0].expires_at is None or entry[0].expires_at > now)
        ]

    def _insert(self, record: MemoryRecord, vector: bytes | None) -> None:
        with self._lock:
            self._records[record.id] = (record, vector, frozenset(query_terms(record.text)))

    def _search_text(
        self, terms: builtins.list[str], scope: str, now: int, limit: int, kinds: tuple[str, ...]
    ) -> builtins.list[MemoryRecord]:
        with self._lock:
            scored = []
            for record, _, words in self._live(scope, now):
                if kinds and record.kind not in kinds:
                    continue
                hits = sum(1 for t in terms if t in words)
                if hits:
                    scored.append((hits, record.updated_at, record))
        scored.sort(key=lambda s: (-s[0], -s[1]))
        return [s[2] for s in scored[:limit]]

    def _vectors(
        self, scope: str, now: int, kinds: tuple[str, ...]
    ) -> builtins.list[tuple[str, bytes]]:
        with self._lock:
            return [
                (r.id, v)
                for r, v, _ in self._live(scope, now)
                if v is not None and (not kinds or r.kind in kinds)
            ]

    def _get(self, ids: builtins.list[str], scope: str, now: int) -> builtins.list[MemoryRecord]:
        with self._lock:
            live = {r.id: r for r, _, _ in self._live(scope, now)}
        return [live[i] for i in ids if i in live]

    def _list(self, scope: str, now: int, limit: int | None) -> builtins.list[MemoryRecord]:
        with self._lock:
            records = [r for r, _, _ in self._live(scope, now)]
        records.sort(key=lambda r: (-r.created_at, r.id))
        return records[:limit] if limit is not None else records

    def _replace(self, record: MemoryRecord, vector: bytes | None, now: int) -> bool:
        with self._lock:
            entry = self._records.get(record.id)
            if entry is None or entry[0].scope.key != record.scope.key:
                return False
            if entry[0].expires_at is not None and entry[0].expires_at <= now:
                return False
            kept = vector if vector is not None else entry[1]
            self._records[record.id] = (record, kept, frozenset(query_terms(record.text)))
            return True

    def _delete(self, record_id: str, scope: str) -> bool:
        with self._lock:
            entry = self._records.get(record_id)
            if entry is None or entry[0].scope.key != scope:
                return False
            del self._records[record_id]
            return True

    def close(self) -> None:
        """Nothing to close (the records stay until the store is dropped)."""
