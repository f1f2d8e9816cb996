"""Where the command keeps its sessions: one JSONL store for `chat`, `sessions` and `serve`."""

from __future__ import annotations

import os
from pathlib import Path

from agentcore.sessions import JsonlSessionStore

__all__ = ["default_sessions_dir", "open_store"]


def default_sessions_dir() -> Path:
    """`$AGENTCORE_HOME/sessions`, else `$XDG_DATA_HOME/agentcore/sessions`, else
    `~/.local/share/agentcore/sessions`."""
    home = os.environ.get("AGENTCORE_HOME")
    if home:
        return Path(home).expanduser() / "sessions"
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data).expanduser() / "agentcore" / "sessions"


def open_store(directory: str | Path | None = None) -> JsonlSessionStore:
    """The session store in `directory` (default: `default_sessions_dir()`), created if missing."""
    path = Path(directory).expanduser() if directory is not None else default_sessions_dir()
    path.mkdir(parents=True, exist_ok=True)
    return JsonlSessionStore(path)
