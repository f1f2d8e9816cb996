"""Session files and directories are readable by their owner only: 0600 and 0700.

Sessions hold whole conversations (a terminal chat's included); with the usual umask 022 they
used to be written 0644 in 0755 directories, readable by every local user.
"""

from __future__ import annotations

import io
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcore import Agent
from agentcore.cli import main
from agentcore.cli._store import default_sessions_dir
from agentcore.llm import register_model
from agentcore.sessions import JsonlSessionStore, SessionStore, SqliteSessionStore
from agentcore.testing import FauxProvider, faux_text

if sys.platform == "win32":
    pytest.skip("POSIX modes", allow_module_level=True)


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def files(where: Path) -> list[Path]:
    return sorted(p for p in where.rglob("*") if p.is_file())


@pytest.mark.parametrize("kind", ["jsonl", "sqlite"])
def test_a_store_writes_private_files_in_private_directories(tmp_path: Path, kind: str) -> None:
    where = tmp_path / "new" / "sessions"
    store: SessionStore
    if kind == "jsonl":
        store = JsonlSessionStore(where)
    else:
        where.mkdir(parents=True, mode=0o700)
        store = SqliteSessionStore(where / "s.db")
    faux = FauxProvider([faux_text("one"), faux_text("two")])
    with store:
        session = store.create()
        agent = Agent(initial_state={"model": faux.model}, session=session)
        agent.prompt_sync("hello")
        agent.reset()  # a whole file written again
        agent.prompt_sync("again")
        written = files(where)
        assert written, "nothing written"
        for path in written:  # the session, its lock; the database, its -wal and -shm
            assert mode(path) == 0o600, f"{path.name}: {oct(mode(path))}"
        session.close()
    assert mode(where) == 0o700


def test_the_chat_keeps_sessions_and_history_private(tmp_path: Path) -> None:
    home = default_sessions_dir().parent
    home.mkdir(parents=True, exist_ok=True)
    os.chmod(home, 0o755)  # as an older version left it
    faux = FauxProvider([faux_text("hi")])
    register_model(faux.model)
    out, err = io.StringIO(), io.StringIO()
    model = f"{faux.provider_id}/{faux.model.id}"
    assert main(["chat", "-m", model], stdin=io.StringIO("hello\n"), stdout=out, stderr=err) == 0
    sessions = default_sessions_dir()
    assert mode(home) == 0o700 and mode(sessions) == 0o700
    (session,) = [p for p in files(sessions) if p.suffix == ".jsonl"]
    assert mode(session) == 0o600
    assert main(["sessions", "list"], stdout=io.StringIO(), stderr=err) == 0
