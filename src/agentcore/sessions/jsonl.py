"""`JsonlSessionStore`: one append-only JSON Lines file per session.

Layout of a directory store: `<id>.jsonl` holds the session, `<id>.lock` is its advisory lock
file (`fcntl.flock`, `msvcrt.locking` on Windows; held by the one store writing the session; it
names the writer's pid).

Format 2 (`SESSION_FORMAT_VERSION`), one JSON object per line, each ending in its checksum
(`_jsonl_format` has the details):

```
{"type":"session","format":2,"id":...,"created_at":ms,"parent":null,"metadata":{},"state":{...},"crc":"…"}
{"type":"message","message":{...},"crc":"…"}          one per message_end, as messages.to_json
{"type":"update","truncate_to":n,"messages":[...],"state":{...},"crc":"…"}   each key optional
```

Each record is written with one `write` and flushed at once (and `fsync`ed with `fsync=True`), so a
process killed at any moment leaves every earlier record intact and at most a torn last line.
Recovery: an unterminated last line that is not a complete record (a torn write) is dropped on
load with a `SessionRecoveryWarning`, and cut off the file when the session is next opened for
writing. Any other unreadable line — bad JSON, a checksum that does not match, a record of the
wrong shape — raises `SessionCorruptError` naming the file and line, on load and on open: nothing
is skipped or cut silently, and the file is never changed because of it.

Older formats are read, and rewritten in format 2 when the session is first opened for writing
(which also drops the header values earlier versions stored):
- format 1: the same records without checksums;
- format 0: a file of bare messages, one `to_json` object per line, optionally after a header line
  without a `role`: `{"system_prompt": str, "model": "provider/model-id", "thinking_level": str}`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ModelNotFoundError
from ..messages import AgentMessage, to_json
from ._base import (
    PRIVATE_DIR,
    PRIVATE_FILE,
    SESSION_FORMAT_VERSION,
    SessionCorruptError,
    SessionError,
    SessionInfo,
    SessionLockedError,
    SessionNotFoundError,
    SessionRecoveryWarning,
    SessionState,
    message_from_json,
    parent_from_json,
    parent_to_json,
    state_from_json,
    state_to_json,
)
from ._jsonl_format import (
    Unreadable,
    decode_header,
    decode_line,
    encode_line,
    first_title,
    is_torn,
    read_lines,
)
from ._store import RawSession, SessionStore

__all__ = ["JsonlSessionStore"]

_log = logging.getLogger("agentcore.sessions")


def _try_lock(fd: int) -> bool:
    """Take an exclusive advisory lock on an open lock file without waiting; False if taken."""
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


_CHUNK = 1 << 16


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _mtime_ms(path: Path) -> int:
    return path.stat().st_mtime_ns // 1_000_000


class _Writer:
    __slots__ = ("fd", "lock_fd")

    def __init__(self, fd: int, lock_fd: int) -> None:
        self.fd = fd
        self.lock_fd = lock_fd

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)
        with contextlib.suppress(OSError):
            os.close(self.lock_fd)  # closing the descriptor releases the flock


class JsonlSessionStore(SessionStore):
    """Sessions as JSON Lines files in `directory` (created if missing).

    Args:
        directory: where the `<id>.jsonl` files live.
        fsync: `os.fsync` after every record (survives power loss, not just a killed process;
            much slower).

    Two writers of one session are refused with `SessionLockedError` (an advisory `flock` per
    session; local file systems only). Readers need no lock.

    Sessions hold conversations: the files the store writes are readable by their owner only
    (0600), and a directory it creates too (0700); an existing directory is left as it is.
    """

    def __init__(self, directory: str | os.PathLike[str], *, fsync: bool = False) -> None:
        super().__init__()
        self.directory = Path(directory)
        self.directory.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
        self.fsync = fsync
        self._writers: dict[str, _Writer] = {}
        self._write_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"JsonlSessionStore({str(self.directory)!r})"

    @property
    def blocking_writes(self) -> bool:
        """Only with `fsync`: otherwise a write is one append to the page cache."""
        return self.fsync

    def path(self, session_id: str) -> Path:
        """The file of a session."""
        return self.directory / f"{session_id}.jsonl"

    def _lock_path(self, session_id: str) -> Path:
        return self.directory / f"{session_id}.lock"

    # -- creating and reading --------------------------------------------------------------

    def exists(self, session_id: str) -> bool:
        return self.path(session_id).is_file()

    def _header(self, raw: RawSession) -> dict[str, Any]:
        info = raw.info
        return {
            "type": "session",
            "format": SESSION_FORMAT_VERSION,
            "id": info.id,
            "created_at": info.created_at,
            "parent": parent_to_json(info.parent),
            "metadata": dict(info.metadata),
            "state": state_to_json(raw.state),
        }

    def _create(self, raw: RawSession) -> None:
        path = self.path(raw.info.id)
        if path.exists():
            raise SessionError(f"session {raw.info.id!r} already exists in {self.directory}")
        self._replace(path, self._file(raw))

    def _file(self, raw: RawSession) -> bytes:
        """A whole session file: the header and one record per message."""
        return encode_line(self._header(raw)) + b"".join(
            encode_line({"type": "message", "message": to_json(m)}) for m in raw.messages
        )

    def _replace(self, path: Path, data: bytes) -> None:
        """Write a whole file atomically (a temporary file renamed over it)."""
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
            with open(fd, "wb") as f:
                f.write(data)
                f.flush()
                if self.fsync:
                    os.fsync(f.fileno())
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
        if self.fsync:
            fd = os.open(self.directory, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def _read(self, session_id: str) -> RawSession:
        path = self.path(session_id)
        with self._write_lock:  # no torn line from a write of this store in progress
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                raise SessionNotFoundError(
                    f"no session {session_id!r} in {self.directory}"
                ) from None
        return self._parse(session_id, path, data)

    def _parse(
        self, session_id: str, path: Path, data: bytes, *, cutting: bool = False
    ) -> RawSession:
        _, records = read_lines(path, data, cutting=cutting)
        header = records[0][1]
        if header.get("type") != "session":
            return self._parse_v0(session_id, path, records)
        where = f"{path}:{records[0][0]}"
        metadata = header.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise SessionCorruptError(f"{where}: metadata must be an object")
        created = header.get("created_at")
        if isinstance(created, bool) or not isinstance(created, int):
            raise SessionCorruptError(f"{where}: created_at must be an integer")
        parent = parent_from_json(header.get("parent"), where)
        state = state_from_json(header.get("state", {}), where)
        messages: list[AgentMessage] = []
        for number, record in records[1:]:
            where = f"{path}:{number}"
            kind = record.get("type")
            if kind == "message":
                messages.append(message_from_json(record.get("message"), where))
            elif kind == "update":
                cut = record.get("truncate_to")
                if cut is not None:
                    if isinstance(cut, bool) or not isinstance(cut, int) or cut < 0:
                        raise SessionCorruptError(f"{where}: invalid truncate_to {cut!r}")
                    del messages[cut:]
                items = record.get("messages", [])
                if not isinstance(items, list):
                    raise SessionCorruptError(f"{where}: messages must be a list")
                messages.extend(message_from_json(m, where) for m in items)
                if record.get("state") is not None:
                    state = state_from_json(record["state"], where)
            else:
                raise SessionCorruptError(f"{where}: unknown record type {kind!r}")
        info = SessionInfo(
            id=session_id,
            created_at=created,
            updated_at=_mtime_ms(path),
            parent=parent,
            metadata=metadata,
        )
        return RawSession(info=info, state=state, messages=messages)

    def _parse_v0(
        self, session_id: str, path: Path, records: list[tuple[int, dict[str, Any]]]
    ) -> RawSession:
        state = SessionState()
        if "role" not in records[0][1]:
            header = records[0][1]
            records = records[1:]
            model = None
            ref = header.get("model")
            if isinstance(ref, str) and "/" in ref:
                from ..llm.models import get_model

                provider, _, model_id = ref.partition("/")
                with contextlib.suppress(ModelNotFoundError):
                    model = get_model(provider, model_id)
            state = state_from_json(
                {
                    "system_prompt": header.get("system_prompt", ""),
                    "thinking_level": header.get("thinking_level", "off"),
                },
                f"{path}:1",
            )
            state = SessionState(
                system_prompt=state.system_prompt, model=model, thinking_level=state.thinking_level
            )
        messages = [message_from_json(r, f"{path}:{n}") for n, r in records]
        mtime = _mtime_ms(path)
        info = SessionInfo(id=session_id, created_at=mtime, updated_at=mtime)
        return RawSession(info=info, state=state, messages=messages)

    def _list(self) -> list[SessionInfo]:
        out: list[SessionInfo] = []
        for path in self.directory.glob("*.jsonl"):
            if path.name.startswith("."):
                continue
            try:
                with open(path, "rb") as f:
                    first = f.readline()
                    header, checked = decode_header(first.strip())
                    if header.get("type") != "session":  # format 0: bare messages
                        mtime = _mtime_ms(path)
                        title = first_title(f, checked, [header])
                        out.append(
                            SessionInfo(
                                id=path.stem, created_at=mtime, updated_at=mtime, title=title
                            )
                        )
                        continue
                    title = first_title(f, checked, [])
                out.append(
                    SessionInfo(
                        id=path.stem,
                        created_at=int(header["created_at"]),
                        updated_at=_mtime_ms(path),
                        parent=parent_from_json(header.get("parent"), f"{path}:1"),
                        metadata=header.get("metadata") or {},
                        title=title,
                    )
                )
            except (
                OSError,
                ValueError,
                KeyError,
                TypeError,
                Unreadable,
                SessionCorruptError,
            ) as exc:
                _log.warning("skipping unreadable session file %s: %s", path, exc)
        return out

    # -- writing ---------------------------------------------------------------------------

    def _acquire(self, session_id: str) -> None:
        if session_id in self._writers:
            return
        path = self.path(session_id)
        if not path.is_file():
            raise SessionNotFoundError(f"no session {session_id!r} in {self.directory}")
        lock_path = self._lock_path(session_id)
        lock_fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
        try:
            locked = _try_lock(lock_fd)
        except BaseException:
            os.close(lock_fd)
            raise
        if not locked:
            try:
                with open(lock_path, "rb") as f:
                    holder = f.read(64).decode(errors="replace").strip() or "unknown"
            except OSError:
                holder = "unknown"
            os.close(lock_fd)
            raise SessionLockedError(
                f"session {session_id!r} is open for writing by another store (pid {holder}); "
                f"close it there first (lock file {lock_path})"
            )
        try:
            os.ftruncate(lock_fd, 0)
            os.lseek(lock_fd, 0, os.SEEK_SET)
            os.write(lock_fd, f"{os.getpid()}\n".encode())
            if not path.is_file():  # deleted while we waited for the lock
                raise SessionNotFoundError(f"no session {session_id!r} in {self.directory}")
            self._prepare_for_append(session_id, path)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        except BaseException:
            os.close(lock_fd)
            raise
        self._writers[session_id] = _Writer(fd, lock_fd)

    def _prepare_for_append(self, session_id: str, path: Path) -> None:
        """Rewrite a file of an older format in the current one; then deal with an unterminated
        last line: complete it if it is a whole record, cut it off if it is a torn write, refuse
        (SessionCorruptError) if it is neither. A newline-terminated line is never cut."""
        with open(path, "rb") as f:
            first = f.readline()
            try:
                header, checked = decode_header(first.strip())
            except Unreadable:  # read in full below, to say what is wrong
                header, checked = {}, False
            except SessionCorruptError as exc:  # a newer format
                raise SessionCorruptError(f"{path}: {exc}") from None
            if header.get("type") != "session" or not checked:
                raw = self._parse(session_id, path, path.read_bytes(), cutting=True)
                self._replace(path, self._file(raw))
                _log.info("rewrote session %s in format %d", path, SESSION_FORMAT_VERSION)
                return
            size = f.seek(0, os.SEEK_END)
            start = self._last_line_start(f, size)
            f.seek(start)
            last = f.read()
        if last.endswith(b"\n") or not last.strip():
            return
        line = last.strip()
        try:
            decode_header(line) if start == 0 else decode_line(line, checked)
        except Unreadable:
            if start == 0 or not is_torn(line, checked):
                number = path.read_bytes()[:start].count(b"\n") + 1
                raise SessionCorruptError(
                    f"{path}:{number}: the last line is damaged (not a complete record, and not "
                    "a write cut short); the file was left as it is"
                ) from None
        else:  # a complete record that lost only its newline
            with open(path, "ab") as f:
                f.write(b"\n")
                f.flush()
                if self.fsync:
                    os.fsync(f.fileno())
            return
        warnings.warn(
            f"{path}: cut off a torn last record (a write cut short by a crash) before appending",
            SessionRecoveryWarning,
            stacklevel=5,
        )
        with open(path, "r+b") as f:
            f.truncate(start)
            f.flush()
            if self.fsync:
                os.fsync(f.fileno())

    @staticmethod
    def _last_line_start(f: Any, size: int) -> int:
        """Offset of the file's last line (its final newline, if any, is part of that line)."""
        if size == 0:
            return 0
        f.seek(size - 1)
        end = size - 1 if f.read(1) == b"\n" else size
        pos = end
        while pos > 0:
            step = min(_CHUNK, pos)
            pos -= step
            f.seek(pos)
            i: int = f.read(step).rfind(b"\n")
            if i >= 0:
                return pos + i + 1
        return 0

    def _write(
        self,
        session_id: str,
        truncate_to: int | None,
        messages: Sequence[AgentMessage],
        state: SessionState | None,
    ) -> None:
        if truncate_to is None and state is None and len(messages) == 1:
            record: dict[str, Any] = {"type": "message", "message": to_json(messages[0])}
        else:
            record = {"type": "update"}
            if truncate_to is not None:
                record["truncate_to"] = truncate_to
            if messages:
                record["messages"] = [to_json(m) for m in messages]
            if state is not None:
                record["state"] = state_to_json(state)
        line = encode_line(record)
        writer = self._writers[session_id]
        with self._write_lock:
            _write_all(writer.fd, line)
            if self.fsync:
                os.fsync(writer.fd)

    def _release(self, session_id: str) -> None:
        writer = self._writers.pop(session_id, None)
        if writer is not None:
            writer.close()

    def _delete(self, session_id: str) -> None:
        path = self.path(session_id)
        try:
            path.unlink()
        except FileNotFoundError:
            raise SessionNotFoundError(f"no session {session_id!r} in {self.directory}") from None
        finally:
            with contextlib.suppress(FileNotFoundError):
                self._lock_path(session_id).unlink()
            self._release(session_id)

    def close(self) -> None:
        with self._lock:
            for session_id in list(self._writers):
                self._release(session_id)
