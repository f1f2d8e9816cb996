"""What a memory is (`MemoryRecord`), whose it is (`MemoryScope`), and what the stores share: the
checks of what is stored, the terms of a search query, and ranking by embeddings.

A scope is matched exactly: its canonical key (`MemoryScope.key`, JSON of every part, sorted) is
a column of every store, and every read compares it for equality inside the store's query. A
search in one user's scope cannot return another user's memory, nor a memory of a wider or
narrower scope (user "alice" alone is not user "alice" of agent "support").
"""

from __future__ import annotations

import json
import math
import re
import struct
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from ..messages import now_ms

__all__ = [
    "MAX_MEMORY_CHARS",
    "MAX_QUERY_TERMS",
    "EmbedFn",
    "MemoryStoreError",
    "MemoryKind",
    "MemoryRecord",
    "MemoryScope",
    "check_expiry",
    "check_kind",
    "check_limit",
    "check_scope",
    "check_text",
    "embed_texts",
    "expiry_now",
    "fuse",
    "new_id",
    "pack_vector",
    "query_terms",
    "rank_by_vector",
    "unpack_vector",
]

MAX_MEMORY_CHARS = 4000
"""The longest text one memory holds; a longer one is refused (`ValueError`), not cut."""

MAX_QUERY_TERMS = 32
"""The words of a search query used (the first ones; a longer query is not an error)."""

MemoryKind: TypeAlias = Literal["fact", "preference", "episode"] | str
"""What a memory is: `"fact"`, `"preference"`, `"episode"`, or the caller's own kind."""

EmbedFn: TypeAlias = Callable[[list[str]], "Awaitable[list[list[float]]] | list[list[float]]"]
"""An embedding function: texts in, one vector each out (sync or async). None by default."""

_KIND = re.compile(r"[a-z][a-z0-9_-]{0,31}")
_WORD = re.compile(r"\w+", re.UNICODE)
_MAX_TERM = 64


class MemoryStoreError(Exception):
    """A memory store failed (the database cannot be reached, its tables are newer than this
    agentcore, a file that is not a database). The driver's exception is `__cause__`."""


@dataclass(frozen=True, slots=True)
class MemoryScope:
    """Whose memories: a user, an agent, and any keys the caller adds (a tenant, a project).

    Scopes are matched exactly: `MemoryScope(user="alice")` and
    `MemoryScope(user="alice", agent="support")` are two scopes sharing nothing.

    Args:
        user: the user's id.
        agent: the agent's name.
        keys: more parts (strings to strings), e.g. `{"tenant": "acme"}`.
    """

    user: str | None = None
    agent: str | None = None
    keys: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("user", "agent"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise ValueError(
                    f"MemoryScope {name} must be a non-empty string or None, got {value!r}"
                )
        if not isinstance(self.keys, Mapping) or not all(
            isinstance(k, str) and k and isinstance(v, str) for k, v in self.keys.items()
        ):
            raise ValueError(
                f"MemoryScope keys must map non-empty strings to strings, got {self.keys!r}"
            )
        object.__setattr__(self, "keys", dict(sorted(self.keys.items())))

    @property
    def key(self) -> str:
        """The canonical key the stores match exactly (JSON, sorted, compact)."""
        return json.dumps(
            {"agent": self.agent, "keys": dict(self.keys), "user": self.user},
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )

    @classmethod
    def from_key(cls, key: str) -> MemoryScope:
        """The scope of a stored key (the inverse of `key`)."""
        data = json.loads(key)
        return cls(user=data["user"], agent=data["agent"], keys=data["keys"])

    def __hash__(self) -> int:
        return hash(self.key)


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryRecord:
    """One memory.

    Attributes:
        id: the store's id for it.
        text: what is remembered.
        kind: `"fact"`, `"preference"`, `"episode"` or the caller's kind.
        scope: whose memory it is.
        session_id: the session it came from (provenance), if any.
        message_ids: the messages it came from: a tool call's id for the `remember` tool,
            `"#<index>"` (the message's index in the transcript) for the extractor.
        origin: who wrote it: `"remember"` (the model's tool), `"extractor"`, or `"api"`.
        created_at, updated_at: milliseconds since the epoch.
        expires_at: when it stops being returned (milliseconds), or None.
    """

    id: str
    text: str
    kind: str
    scope: MemoryScope
    session_id: str | None = None
    message_ids: tuple[str, ...] = ()
    origin: str = "api"
    created_at: int
    updated_at: int
    expires_at: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (for tool results, the CLI and the web page)."""
        return {
            "id": self.id,
            "text": self.text,
            "kind": self.kind,
            "scope": {"user": self.scope.user, "agent": self.scope.agent, **self.scope.keys},
            "session_id": self.session_id,
            "message_ids": list(self.message_ids),
            "origin": self.origin,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "expires_at": self.expires_at,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MemoryRecord:
        """The record of a `to_dict` form (an event sent as JSON, say).

        Raises:
            ValueError: `data` is not such a form (what is missing or wrong is named).
        """
        try:
            parts = dict(data["scope"])
            scope = MemoryScope(user=parts.pop("user"), agent=parts.pop("agent"), keys=parts)
            return cls(
                id=str(data["id"]),
                text=str(data["text"]),
                kind=str(data["kind"]),
                scope=scope,
                session_id=data["session_id"],
                message_ids=tuple(data["message_ids"]),
                origin=str(data["origin"]),
                created_at=int(data["created_at"]),
                updated_at=int(data["updated_at"]),
                expires_at=data["expires_at"],
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a memory record's dict ({exc!r}): {data!r:.120}") from None


def new_id() -> str:
    """A fresh memory id."""
    return "mem_" + uuid.uuid4().hex


def check_text(text: Any) -> str:
    """`text` if it is a non-empty string within `MAX_MEMORY_CHARS`, else ValueError."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"a memory's text must be a non-empty string, got {text!r:.80}")
    if len(text) > MAX_MEMORY_CHARS:
        raise ValueError(
            f"a memory's text is {len(text)} characters; at most {MAX_MEMORY_CHARS} are stored "
            "(store a summary, not a document)"
        )
    if "\x00" in text:
        raise ValueError("a memory's text must not contain NUL characters")
    return text


def check_kind(kind: Any) -> str:
    """`kind` if it is a short lower-case name (letters, digits, `_`, `-`), else ValueError."""
    if not isinstance(kind, str) or not _KIND.fullmatch(kind):
        raise ValueError(
            f"a memory's kind must be 'fact', 'preference', 'episode' or a lower-case name of "
            f"at most 32 letters, digits, '_' or '-', got {kind!r:.80}"
        )
    return kind


def check_scope(scope: Any) -> MemoryScope:
    """`scope` if it is a `MemoryScope`, else TypeError."""
    if not isinstance(scope, MemoryScope):
        raise TypeError(f"scope must be a MemoryScope, got {type(scope).__name__}")
    return scope


def check_expiry(expires_at: Any) -> int | None:
    """`expires_at` (milliseconds since the epoch) if an int or None, else ValueError."""
    if expires_at is not None and (isinstance(expires_at, bool) or not isinstance(expires_at, int)):
        raise ValueError(
            f"expires_at must be milliseconds since the epoch (an int) or None, got {expires_at!r}"
        )
    return expires_at


def query_terms(query: str) -> list[str]:
    """The words of a search query: runs of letters and digits, lower-cased, each at most 64
    characters, the first `MAX_QUERY_TERMS` distinct ones. Everything else (quotes, operators,
    `*`, `:`, parentheses, `NEAR`, column filters) is dropped, so no query can be a syntax error
    or match more than its words would."""
    if not isinstance(query, str):
        raise TypeError(f"a search query must be a string, got {type(query).__name__}")
    seen: dict[str, None] = {}
    for word in _WORD.findall(query[: MAX_QUERY_TERMS * (_MAX_TERM + 8)]):
        word = word.lower().strip("_")[:_MAX_TERM]
        if word and word not in seen:
            seen[word] = None
            if len(seen) == MAX_QUERY_TERMS:
                break
    return list(seen)


def check_limit(limit: Any) -> int:
    """`limit` if an int from 1 to 1000, else ValueError."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
        raise ValueError(f"limit must be an int from 1 to 1000, got {limit!r}")
    return limit


def pack_vector(vector: Sequence[float]) -> bytes:
    """A vector as float32 bytes (how the stores keep embeddings)."""
    return struct.pack(f"<{len(vector)}f", *vector)


def unpack_vector(data: bytes) -> list[float]:
    """The vector `pack_vector` packed."""
    return list(struct.unpack(f"<{len(data) // 4}f", data))


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = math.fsum(x * y for x, y in zip(a, b, strict=False))
    na = math.sqrt(math.fsum(x * x for x in a))
    nb = math.sqrt(math.fsum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def rank_by_vector(
    query: Sequence[float], rows: Sequence[tuple[str, bytes]], limit: int
) -> list[str]:
    """The ids of `rows` (id, packed vector) most similar to `query` (cosine), best first."""
    scored = [(_cosine(query, unpack_vector(data)), rid) for rid, data in rows if data]
    scored.sort(key=lambda pair: -pair[0])
    return [rid for _, rid in scored[:limit]]


def fuse(rankings: Sequence[Sequence[str]], limit: int, k: int = 60) -> list[str]:
    """Reciprocal-rank fusion of several rankings of ids (best first), best first."""
    score: dict[str, float] = {}
    for ranking in rankings:
        for rank, rid in enumerate(ranking):
            score[rid] = score.get(rid, 0.0) + 1.0 / (k + rank + 1)
    return sorted(score, key=lambda rid: -score[rid])[:limit]


async def embed_texts(embed: EmbedFn, texts: list[str]) -> list[list[float]]:
    """Call an embedding function (sync or async) and check it gave one vector per text."""
    import inspect

    result = embed(texts)
    if inspect.isawaitable(result):
        result = await result
    vectors = [list(map(float, v)) for v in result]
    if len(vectors) != len(texts):
        raise ValueError(
            f"the embedding function returned {len(vectors)} vectors for {len(texts)} texts"
        )
    return vectors


def expiry_now() -> int:
    """The time records are checked against for expiry (now, in milliseconds)."""
    return now_ms()
