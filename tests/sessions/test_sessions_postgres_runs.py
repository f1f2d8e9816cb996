"""The PostgreSQL store's record of a run in progress (`checkpoint`): a writer killed mid-run (a
real process, kill -9) leaves a session that the next store closes as it takes it over, with the
partial answer stored as aborted; a run that ended, or whose answer was stored, is left alone.
And schema 1 tables are migrated to schema 2. (The server of `scripts/postgres`: `external`.)"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from agentcore.messages import AssistantMessage, TextContent, UserMessage
from agentcore.sessions import PostgresSessionStore, SessionLockedError
from agentcore.sessions._postgres_schema import POSTGRES_SCHEMA_VERSION
from support.postgres import open_postgres_store, postgres_url, schema_for

pytestmark = pytest.mark.external

# a replica mid-run: it stored the prompt (and maybe more), checkpointed the answer it streams,
# and waits to be killed
RUNNER = """
import os, sys
from agentcore.messages import AssistantMessage, TextContent, ToolCall, UserMessage
from agentcore.sessions import PostgresSessionStore
store = PostgresSessionStore(os.environ["AGENTCORE_TEST_POSTGRES_URL"], schema=sys.argv[1])
session = store.open(sys.argv[2])
mode = sys.argv[3]
session.append(UserMessage(content="question"))
store.checkpoint(session.id, 1)
partial = AssistantMessage(
    content=[
        TextContent(text="the answer so f"),
        ToolCall(id="c1", name="calc", arguments={"expression": "6*"}),
    ],
    provider="faux",
    model="m",
)
if mode == "partial":
    store.checkpoint(session.id, 1, partial)
elif mode == "answered":  # the answer was stored after the checkpoint
    store.checkpoint(session.id, 1, partial)
    session.append(AssistantMessage(content=[TextContent(text="the whole answer")]))
elif mode == "ended":  # the run ended: its lease was given back
    session.append(AssistantMessage(content=[TextContent(text="the whole answer")]))
    session.close()
print("ready", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def store(tmp_path: Path) -> Iterator[PostgresSessionStore]:
    with open_postgres_store(tmp_path) as s:
        yield s


def killed_mid_run(tmp_path: Path, sid: str, mode: str) -> None:
    """Run RUNNER in its own process and kill it (-9) once it is ready."""
    with subprocess.Popen(
        [sys.executable, "-c", RUNNER, schema_for(tmp_path), sid, mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    ) as runner:
        assert runner.stdout is not None
        assert runner.stdout.readline().strip() == "ready"
        runner.kill()
        runner.wait()


def test_a_run_killed_while_streaming_is_closed_with_its_partial_answer(
    store: PostgresSessionStore, tmp_path: Path
) -> None:
    sid = store.create().id
    store.release(sid)
    killed_mid_run(tmp_path, sid, "partial")
    assert len(store.load(sid).messages) == 1  # reading changes nothing
    session = store.open(sid)  # taking it over closes the run
    messages = store.load(sid).messages
    assert [m.role for m in messages] == ["user", "assistant"]
    closing = messages[1]
    assert isinstance(closing, AssistantMessage)
    assert closing.stop_reason == "aborted" and closing.provider == "faux"
    # its text is kept; the tool call that never finished streaming is not
    assert closing.content == [TextContent(text="the answer so f")]
    assert "stopped before the run ended" in (closing.error_message or "")
    session.append(UserMessage(content="go on"))  # the new holder continues
    store.release(sid)
    assert len(store.open(sid).load().messages) == 3  # closed once only


def test_a_run_killed_before_its_answer_streamed_is_closed_empty(
    store: PostgresSessionStore, tmp_path: Path
) -> None:
    sid = store.create().id
    store.release(sid)
    killed_mid_run(tmp_path, sid, "started")
    store.open(sid)
    messages = store.load(sid).messages
    assert [m.role for m in messages] == ["user", "assistant"]
    assert isinstance(messages[1], AssistantMessage) and messages[1].content == []
    assert messages[1].stop_reason == "aborted"


@pytest.mark.parametrize("mode", ["answered", "ended"])
def test_a_run_whose_answer_was_stored_is_left_alone(
    store: PostgresSessionStore, tmp_path: Path, mode: str
) -> None:
    sid = store.create().id
    store.release(sid)
    killed_mid_run(tmp_path, sid, mode)
    store.open(sid)
    messages = store.load(sid).messages
    assert [m.role for m in messages] == ["user", "assistant"]
    assert isinstance(messages[1], AssistantMessage) and messages[1].stop_reason == "stop"


def test_a_checkpoint_needs_the_lease(store: PostgresSessionStore, tmp_path: Path) -> None:
    sid = store.create().id
    store.checkpoint(sid, 0)
    store.release(sid)
    with pytest.raises(SessionLockedError, match="does not hold its write lease"):
        store.checkpoint(sid, 0)
    with open_postgres_store(tmp_path) as other:
        other.open(sid)
        with pytest.raises(SessionLockedError):
            store.checkpoint(sid, 0)  # held by the other store: its row is not touched
        other.checkpoint(sid, 0)


def test_schema_1_tables_are_migrated_to_schema_2(tmp_path: Path) -> None:
    url, schema = postgres_url(), schema_for(tmp_path)
    with open_postgres_store(tmp_path) as store:
        session = store.create(messages=[UserMessage(content="kept")])
        session.close()
    with psycopg.connect(url, options=f"-c search_path={schema}") as conn:  # back to version 1
        conn.execute("DROP TABLE relay")
        conn.execute("ALTER TABLE writers DROP COLUMN run_at, DROP COLUMN partial")
        conn.execute("UPDATE schema_version SET version = 1")
    with PostgresSessionStore(url, schema=schema) as store:
        assert [m.role for m in store.load(session.id).messages] == ["user"]
        store.open(session.id)
        store.checkpoint(session.id, 1)
    with psycopg.connect(url, options=f"-c search_path={schema}") as conn:
        assert conn.execute("SELECT version FROM schema_version").fetchall() == [
            (POSTGRES_SCHEMA_VERSION,)
        ]
        assert conn.execute("SELECT count(*) FROM relay").fetchall() == [(0,)]
