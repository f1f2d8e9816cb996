"""The rows of the SQL session stores (SQLite and PostgreSQL), apart from any SQL dialect.

Both stores keep the same two tables: `sessions(id, created_at, updated_at, parent_id,
parent_index, metadata, state, message_count, header_crc, state_crc, title)` and
`messages(session_id, seq, data, crc)`. `title` (`session_title` of the first user message
stored; NULL while there is none) is set by the change that stores that message, in its
transaction; it is derived data, outside the checksums, so listing reads only `sessions`.

This module turns a `RawSession` into those rows (with their checksums) and rows read back into
records, checking every checksum; the stores keep their SQL, connections, transactions and write
leases.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from typing import Any

from ..messages import AgentMessage, to_json
from ._base import (
    SessionCorruptError,
    SessionInfo,
    SessionParent,
    SessionState,
    encode_json,
    load_json,
    message_from_json,
    state_from_json,
    state_to_json,
)
from ._sqlite_schema import header_crc
from ._store import RawSession
from ._titles import session_title, title_text

SessionRow = tuple[str, int, int, "str | None", "int | None", str, str, int, int, int, "str | None"]
"""A `sessions` row in column order: id, created_at, updated_at, parent_id, parent_index,
metadata, state, message_count, header_crc, state_crc, title."""

MessageRow = tuple[str, int, str, int]
"""A `messages` row in column order: session_id, seq, data, crc."""


def encoded(value: Any) -> tuple[str, int]:
    """A value's JSON text and its checksum."""
    text, data = encode_json(value)
    return text, zlib.crc32(data)


def encode_messages(messages: Sequence[AgentMessage]) -> list[tuple[str, int]]:
    """Each message's JSON text and checksum."""
    return [encoded(to_json(m)) for m in messages]


def encode_state(state: SessionState | None) -> tuple[str | None, int | None]:
    """The state's JSON text and checksum; `(None, None)` for no state (kept as stored)."""
    return encoded(state_to_json(state)) if state is not None else (None, None)


def message_rows(session_id: str, start: int, datas: Sequence[tuple[str, int]]) -> list[MessageRow]:
    """`messages` rows for encoded messages numbered from `start`."""
    return [(session_id, start + i, d, c) for i, (d, c) in enumerate(datas)]


def session_rows(raw: RawSession) -> tuple[SessionRow, list[MessageRow]]:
    """A new session's `sessions` row and its `messages` rows, with their checksums."""
    info = raw.info
    parent = info.parent
    parent_id = parent.session_id if parent else None
    parent_index = parent.index if parent else None
    rows = message_rows(info.id, 0, encode_messages(raw.messages))
    state, state_crc = encoded(state_to_json(raw.state))
    metadata, metadata_bytes = encode_json(dict(info.metadata))
    checksum = header_crc(
        info.id.encode(),
        info.created_at,
        parent_id.encode() if parent_id is not None else None,
        parent_index,
        metadata_bytes,
    )
    header: SessionRow = (
        info.id,
        info.created_at,
        info.updated_at,
        parent_id,
        parent_index,
        metadata,
        state,
        len(rows),
        checksum,
        state_crc,
        session_title(raw.messages),
    )
    return header, rows


def check(actual: int, stored: Any, where: str) -> None:
    """Raise `SessionCorruptError` unless the stored checksum is the computed one."""
    if stored != actual:
        shown = f"{stored:08x}" if isinstance(stored, int) else repr(stored)
        raise SessionCorruptError(
            f"{where}: checksum mismatch (stored {shown}, computed {actual:08x}): the record "
            "was changed after it was written"
        )


def check_header(
    session_id: bytes,
    created_at: object,
    parent_id: bytes | None,
    parent_index: object,
    metadata: bytes,
    stored: Any,
    where: str,
) -> None:
    """Check a `sessions` row's header checksum (ids as stored, UTF-8)."""
    check(header_crc(session_id, created_at, parent_id, parent_index, metadata), stored, where)


def load(data: bytes, where: str) -> Any:
    """Stored JSON (UTF-8) as a value; `SessionCorruptError` if it is not valid JSON."""
    try:
        return load_json(data)
    except ValueError as exc:  # UnicodeDecodeError is a ValueError
        raise SessionCorruptError(f"{where}: not valid JSON: {exc}") from None


def session_parent(parent_id: str | None, index: int | None) -> SessionParent | None:
    """The parent a row's `parent_id` and `parent_index` name (None for a root session)."""
    if parent_id is None or index is None:
        return None
    return SessionParent(session_id=parent_id, index=index)


def session_info(
    session_id: str,
    created_at: int,
    updated_at: int,
    parent_id: str | None,
    parent_index: int | None,
    metadata: bytes,
    where: str,
    title: Any = None,
    message_count: Any = None,
) -> SessionInfo:
    """The `SessionInfo` of a `sessions` row whose checksum was checked (`title` and
    `message_count` as stored: a value of the wrong type is left out)."""
    return SessionInfo(
        id=session_id,
        created_at=created_at,
        updated_at=updated_at,
        parent=session_parent(parent_id, parent_index),
        metadata=load(metadata, f"{where} metadata"),
        title=title_text(title) if isinstance(title, str) else "",
        message_count=message_count if type(message_count) is int else None,
    )


def read_session(
    session_id: str,
    where: str,
    header: Sequence[Any],
    rows: Sequence[Sequence[Any]],
    blob: Callable[[Any], bytes],
) -> RawSession:
    """A session from its `sessions` row (created_at, updated_at, parent_id, parent_index,
    metadata, state, message_count, header_crc, state_crc) and its `messages` rows (seq, data,
    crc) in seq order, every checksum checked; `blob` turns a stored JSON column into its bytes.

    Raises:
        SessionCorruptError: a checksum does not match, a message is missing, or JSON is invalid.
    """
    created, updated, parent_id, parent_index, metadata, state, count, checksum, state_crc = header
    metadata_bytes = blob(metadata)
    check_header(
        session_id.encode(),
        created,
        parent_id.encode() if parent_id is not None else None,
        parent_index,
        metadata_bytes,
        checksum,
        f"{where} header",
    )
    state_bytes = blob(state)
    check(zlib.crc32(state_bytes), state_crc, f"{where} state")
    if len(rows) != count:
        raise SessionCorruptError(
            f"{where}: {len(rows)} message rows, expected {count} (rows were lost)"
        )
    messages: list[AgentMessage] = []
    for i, (seq, data, crc) in enumerate(rows):
        at = f"{where} message {seq}"
        if seq != i:
            raise SessionCorruptError(f"{where}: message {i} is missing (found {seq!r})")
        data_bytes = blob(data)
        check(zlib.crc32(data_bytes), crc, at)
        messages.append(message_from_json(load(data_bytes, at), at))
    return RawSession(
        info=session_info(
            session_id, created, updated, parent_id, parent_index, metadata_bytes, where
        ),
        state=state_from_json(load(state_bytes, f"{where} state"), f"{where} state"),
        messages=messages,
    )
