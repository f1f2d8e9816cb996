"""The lines of a JSONL session file: how a record is written, checked, and told torn or corrupt.

Format 2 (`SESSION_FORMAT_VERSION`) writes each record as one line: its compact JSON (UTF-8,
`separators=(",", ":")`) with one last key added, `"crc"`, eight lowercase hex digits of the
CRC-32 (zlib's) of the record as written *without* that key — that is, of the line's bytes up to
`,"crc":"` followed by `}`:

```
{"type":"message","message":{"v":1,"content":"Hi","timestamp":1,"role":"user"},"crc":"00db53b4"}
```

So a line stays plain JSON (any tool reads it), and a flipped bit anywhere in it — text, key,
digit, checksum — is detected. Format 1 (no checksums) and format 0 (bare messages) are read as
they are, without that check.

Torn or corrupt: a record is written with one `write` of the line and its newline, so a write cut
short (a crash, a power loss) leaves an *unterminated* last line that is not a complete record.
Only that is a torn write: it is dropped on load with a `SessionRecoveryWarning`. Every other
line that cannot be read — a newline-terminated one, or an unterminated one that is complete JSON
or a complete record with a damaged line end — is corruption: `SessionCorruptError` naming the
file and line. An unterminated last line that *is* a complete, valid record lost only its newline
and is kept.
"""

from __future__ import annotations

import json
import re
import warnings
import zlib
from pathlib import Path
from typing import Any

from ._base import (
    SESSION_FORMAT_VERSION,
    SessionCorruptError,
    SessionRecoveryWarning,
    encode_json,
    load_json,
    message_from_json,
)
from ._titles import session_title

__all__ = [
    "FIRST_CHECKED_FORMAT",
    "Unreadable",
    "decode_header",
    "decode_line",
    "encode_line",
    "first_title",
    "is_torn",
    "read_lines",
]

FIRST_CHECKED_FORMAT = 2
"""The first format whose records carry a checksum."""

_KEY = b',"crc":"'
_SUFFIX = len(_KEY) + 8 + 2  # ,"crc":"xxxxxxxx"}
_HEX = re.compile(rb"[0-9a-f]{8}")


class Unreadable(Exception):
    """A line that cannot be read as a record; the text says why."""


def encode_line(record: dict[str, Any]) -> bytes:
    """One record as a line of format 2, newline included.

    Raises:
        MessageFormatError: the record holds a value that is not JSON.
    """
    _, body = encode_json(record)
    return b'%s,"crc":"%08x"}\n' % (body[:-1], zlib.crc32(body))


def _has_checksum(line: bytes) -> bool:
    return (
        len(line) > _SUFFIX + 1
        and line.endswith(b'"}')
        and line[-_SUFFIX:-10] == _KEY
        and _HEX.fullmatch(line, len(line) - 10, len(line) - 2) is not None
    )


def _object(text: bytes) -> dict[str, Any]:
    try:
        value = load_json(text)
    except ValueError as exc:  # UnicodeDecodeError is a ValueError
        raise Unreadable(f"not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise Unreadable(f"expected a JSON object, got {type(value).__name__}")
    return value


def decode_checked(line: bytes) -> dict[str, Any]:
    """The record of a format-2 line (without its `crc` key)."""
    actual = zlib.crc32(b"}", zlib.crc32(memoryview(line)[:-_SUFFIX]))
    if len(line) <= _SUFFIX + 1 or line[-_SUFFIX:] != b',"crc":"%08x"}' % actual:
        if not _has_checksum(line):
            _object(line)  # says why, when it is not even JSON
            raise Unreadable('no checksum: expected a record ending in ,"crc":"<8 hex digits>"}')
        raise Unreadable(
            f"checksum mismatch (stored {line[-10:-2].decode()}, computed {actual:08x}): the "
            "record was changed after it was written"
        )
    record = _object(line)
    record.pop("crc", None)
    return record


def decode_line(line: bytes, checked: bool) -> dict[str, Any]:
    """The record of a line after the header (`checked`: the file's records carry checksums)."""
    return decode_checked(line) if checked else _object(line)


def decode_header(line: bytes) -> tuple[dict[str, Any], bool]:
    """The first record of a file and whether the file's records carry checksums.

    Raises:
        Unreadable: the line is not a readable record.
        SessionCorruptError: a session header of a newer format (message without a location).
    """
    checked = _has_checksum(line)
    record = decode_checked(line) if checked else _object(line)
    if record.get("type") != "session":
        return record, False  # format 0: bare messages
    version = record.get("format")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise Unreadable(f"invalid session format {version!r}")
    if version > SESSION_FORMAT_VERSION:
        raise SessionCorruptError(
            f"session format {version} is newer than this agentcore reads "
            f"(up to {SESSION_FORMAT_VERSION}); upgrade agentcore"
        )
    if version >= FIRST_CHECKED_FORMAT and not checked:
        raise Unreadable(
            f"the format-{version} session header has no valid checksum (the line was damaged)"
        )
    return record, version >= FIRST_CHECKED_FORMAT


def is_torn(line: bytes, checked: bool) -> bool:
    """Whether an unreadable, unterminated last line can be a write cut short: not when it is
    complete JSON, nor when it is a complete record followed by one stray byte (a damaged
    newline) — a torn write leaves only a prefix of a record."""
    try:
        json.loads(line)
    except ValueError:
        pass
    else:
        return False
    try:
        decode_line(line[:-1], checked)
    except Unreadable:
        return True
    return False


def read_lines(
    path: Path, data: bytes, *, cutting: bool = False
) -> tuple[bool, list[tuple[int, dict[str, Any]]]]:
    """Every record of a file with its 1-based line number, and whether they were checksummed.

    A torn last line is dropped with a `SessionRecoveryWarning` (saying it is cut off when
    `cutting`, i.e. the file is being rewritten).

    Raises:
        SessionCorruptError: any other unreadable line, naming the file and line.
    """
    parts = data.split(b"\n")
    tail = len(parts) if not data.endswith(b"\n") else 0  # the unterminated last line, if any
    lines = [(n, line.strip()) for n, line in enumerate(parts, start=1)]
    lines = [(n, line) for n, line in lines if line]
    if not lines:
        raise SessionCorruptError(f"{path}: the session file is empty")
    records: list[tuple[int, dict[str, Any]]] = []
    checked = False
    for k, (number, line) in enumerate(lines):
        try:
            if k == 0:
                record, checked = decode_header(line)
            else:
                record = decode_line(line, checked)
        except Unreadable as exc:
            if number == tail and k > 0 and is_torn(line, checked):
                what = "cut off" if cutting else "dropped"
                warnings.warn(
                    f"{path}:{number}: {what} a torn last record (a write cut short by a "
                    f"crash): {exc}",
                    SessionRecoveryWarning,
                    stacklevel=5,
                )
                break
            raise SessionCorruptError(f"{path}:{number}: {exc}") from None
        except SessionCorruptError as exc:
            raise SessionCorruptError(f"{path}: {exc}") from None
        records.append((number, record))
    return checked, records


_TITLE_RECORDS = 16
"""The most records after the header `list()` reads for a session's title."""
_TITLE_BYTES = 1 << 18
"""The most bytes after the header `list()` reads for a session's title."""


def first_title(f: Any, checked: bool, records: list[dict[str, Any]]) -> str:
    """The title of a session file read from its current position: the first user message
    among its first records (`_TITLE_RECORDS` of them, `_TITLE_BYTES` at most; "" if none is
    there). `records` are records already read (a format-0 file's first message)."""
    budget = _TITLE_BYTES
    read = 0
    while True:
        for record in records:
            if record.get("type") == "message":
                items = [record.get("message")]
            elif record.get("type") == "update":
                items = record.get("messages") or []
            else:  # format 0: the record is a message (or a header without a role)
                items = [record] if "role" in record else []
            for item in items if isinstance(items, list) else ():
                if isinstance(item, dict) and item.get("role") == "user":
                    try:
                        title = session_title([message_from_json(item, "title")])
                    except SessionCorruptError:
                        continue  # loading the session reports it
                    return title or ""
        if read >= _TITLE_RECORDS or budget <= 0:
            return ""
        read += 1
        line = f.readline(budget)
        if not line.endswith(b"\n"):  # the end, a torn write, or too long to read here
            return ""
        budget -= len(line)
        try:
            records = [decode_line(line.strip(), checked)]
        except Unreadable:
            return ""
