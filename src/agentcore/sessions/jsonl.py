"""`JsonlSessionStore`: one append-only JSON Lines file per session.

Layout of a directory store: `<id>.jsonl` holds the session, `<id>.lock` is its advisory lock
file (`fcntl.flock`, `msvcrt.locking` on Windows; held by the one store writing the session; it
names the writer's pid).

Format 1 (`SESSION_FORMAT_VERSION`), one JSON object per line:

```
{"type":"session","format":1,"id":...,"created_at":ms,"parent":null,"metadata":{},"state":{...}}
{"type":"message","message":{...}}                    one per message_end, as messages.to_json
{"type":"update","truncate_to":n,"messages":[...],"state":{...}}   each key optional
```

Each record is written with one `write` and flushed at once (and `fsync`ed with `fsync=True`), so a
process killed at any moment leaves every earlier record intact and at most a torn last line.
Recovery: a last line that is not valid JSON is dropped on load with a `SessionRecoveryWarning`,
and cut off the file when the session is next opened for writing. Any other unreadable line raises
`SessionCorruptError` naming the file and line: nothing is skipped silently.

Format 0 (read, and rewritten as format 1 when first opened for writing): a file of bare messages,
one `to_json` object per line, optionally after a header line without a `role`:
`{"system_prompt": str, "model": "provider/model-id", "thinking_level": str}`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import threading
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ModelNotFoundError
from ..messages import AgentMessage, to_json
from ._base import (
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
from ._store import RawSession, SessionStore, iter_lines

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


def _dumps(record: Mapping[str, Any]) -> bytes:
    try:
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        from ..errors import MessageFormatError

        raise MessageFormatError(
            f"cannot store the session record: {exc} (tool result `details` and message "
            "fields must be JSON values to be stored)"
        ) from exc
    return text.encode() + b"\n"


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
    """

    def __init__(self, directory: str | os.PathLike[str], *, fsync: bool = False) -> None:
        super().__init__()
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
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
        data = _dumps(self._header(raw)) + b"".join(
            _dumps({"type": "message", "message": to_json(m)}) for m in raw.messages
        )
        self._replace(path, data)

    def _replace(self, path: Path, data: bytes) -> None:
        """Write a whole file atomically (a temporary file renamed over it)."""
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            with open(tmp, "wb") as f:
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

    def _parse(self, session_id: str, path: Path, data: bytes) -> RawSession:
        lines = list(iter_lines(data))
        if not lines:
            raise SessionCorruptError(f"{path}: the session file is empty")
        records: list[tuple[int, Any]] = []
        for k, (number, line) in enumerate(lines):
            try:
                records.append((number, json.loads(line)))
            except ValueError as exc:
                if k == len(lines) - 1 and k > 0:
                    warnings.warn(
                        f"{path}:{number}: dropped a torn last record (a write cut short by a "
                        f"crash): {exc}",
                        SessionRecoveryWarning,
                        stacklevel=4,
                    )
                    break
                raise SessionCorruptError(f"{path}:{number}: not valid JSON: {exc}") from None
        for number, record in records:
            if not isinstance(record, dict):
                raise SessionCorruptError(f"{path}:{number}: expected a JSON object")
        header = records[0][1]
        if header.get("type") != "session":
            return self._parse_v0(session_id, path, records)
        version = header.get("format")
        if not isinstance(version, int) or version < 1:
            raise SessionCorruptError(f"{path}:1: invalid session format {version!r}")
        if version > SESSION_FORMAT_VERSION:
            raise SessionCorruptError(
                f"{path}: session format {version} is newer than this agentcore reads "
                f"(up to {SESSION_FORMAT_VERSION}); upgrade agentcore"
            )
        where = f"{path}:1"
        metadata = header.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise SessionCorruptError(f"{where}: metadata must be an object")
        created = header.get("created_at")
        if not isinstance(created, int):
            raise SessionCorruptError(f"{where}: created_at must be an integer")
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
                    if not isinstance(cut, int) or cut < 0:
                        raise SessionCorruptError(f"{where}: invalid truncate_to {cut!r}")
                    del messages[cut:]
                items = record.get("messages", [])
                if not isinstance(items, list):
                    raise SessionCorruptError(f"{where}: messages must be a list")
                messages.extend(message_from_json(m, f"{where}") for m in items)
                if record.get("state") is not None:
                    state = state_from_json(record["state"], where)
            else:
                raise SessionCorruptError(f"{where}: unknown record type {kind!r}")
        info = SessionInfo(
            id=session_id,
            created_at=created,
            updated_at=_mtime_ms(path),
            parent=parent_from_json(header.get("parent"), f"{path}:1"),
            metadata=metadata,
        )
        return RawSession(info=info, state=state, messages=messages)

    def _parse_v0(self, session_id: str, path: Path, records: list[tuple[int, Any]]) -> RawSession:
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
                header = json.loads(first)
                if not isinstance(header, dict):
                    raise ValueError("not an object")
                if header.get("type") != "session":  # format 0
                    mtime = _mtime_ms(path)
                    out.append(SessionInfo(id=path.stem, created_at=mtime, updated_at=mtime))
                    continue
                out.append(
                    SessionInfo(
                        id=path.stem,
                        created_at=int(header["created_at"]),
                        updated_at=_mtime_ms(path),
                        parent=parent_from_json(header.get("parent"), f"{path}:1"),
                        metadata=header.get("metadata") or {},
                    )
                )
            except (OSError, ValueError, KeyError, TypeError, SessionCorruptError) as exc:
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
        lock_fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
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
        """Rewrite a format-0 file as format 1, and cut off a torn last line."""
        with open(path, "rb") as f:
            first = f.readline()
            try:
                header = json.loads(first)
            except ValueError:
                header = None
            if not isinstance(header, dict) or header.get("type") != "session":
                raw = self._parse(session_id, path, path.read_bytes())
                self._replace(
                    path,
                    _dumps(self._header(raw))
                    + b"".join(
                        _dumps({"type": "message", "message": to_json(m)}) for m in raw.messages
                    ),
                )
                _log.info("rewrote session %s in format %d", path, SESSION_FORMAT_VERSION)
                return
            size = f.seek(0, os.SEEK_END)
            start = self._last_line_start(f, size)
            f.seek(start)
            last = f.read()
        ends_cleanly = last.endswith(b"\n")
        valid = ends_cleanly
        if valid and start > 0:
            try:
                json.loads(last)
            except ValueError:
                valid = False
        if valid:
            return
        if start == 0:
            raise SessionCorruptError(f"{path}:1: the session header is not valid JSON")
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
        line = _dumps(record)
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
