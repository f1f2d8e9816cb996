"""Where the command keeps its sessions: one JSONL store for `chat`, `sessions` and `serve`
(and, beside it, the `memory.db` of `--memory`)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from agentcore.sessions import JsonlSessionStore

__all__ = ["default_sessions_dir", "open_store", "private_history", "sessions_directory"]


def default_sessions_dir() -> Path:
    """`$AGENTCORE_HOME/sessions`, else `$XDG_DATA_HOME/agentcore/sessions`, else
    `~/.local/share/agentcore/sessions`."""
    home = os.environ.get("AGENTCORE_HOME")
    if home:
        return Path(home).expanduser() / "sessions"
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data).expanduser() / "agentcore" / "sessions"


def open_store(directory: str | Path | None = None) -> JsonlSessionStore:
    """The session store in `directory` (default: `default_sessions_dir()`), created if missing
    (see `sessions_directory`)."""
    return JsonlSessionStore(sessions_directory(directory))


def sessions_directory(directory: str | Path | None = None) -> Path:
    """`directory` (default: `default_sessions_dir()`), created if missing.

    The default directory and the `agentcore` directory holding it are the command's own: they
    are made readable by their owner only (0700), also when an older version made them 0755.
    A directory given with `--sessions-dir` is created 0700 when missing, else left as it is."""
    if directory is not None:
        path = Path(directory).expanduser()
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        return path
    path = default_sessions_dir()
    for own in (path.parent, path):
        own.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(own, 0o700)
    return path


def private_history(path: Path) -> None:
    """The chat's input history holds the prompts typed: its file is made readable by its owner
    only (created 0600, or set to it if an older version left it 0644)."""
    with contextlib.suppress(OSError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
        os.chmod(path, 0o600)
