"""Live events across replicas: a run's AG-UI events reach the readers of every `serve` process
sharing one PostgreSQL database, whichever replica runs it.

Publishing: the events of a run going here (`EventLog.tap`) are collected for `flush_seconds`, then
stored as one row per session in the `relay` table (the relay's own: `schema`), in one transaction
that ends with `NOTIFY` on the store's channel. A notification carries only the publisher's id
(PostgreSQL refuses payloads over 8000 bytes; an event can be a whole transcript), so events of any
size take the same path. A Stop sent to a replica not running the session goes the same way, to the
one running it, and so do steering and follow-up messages (`_forward`: claimed by exactly one
replica, acknowledged with what they became). A run's first row starts with the transcript as it
was when the run began, so a replica that did not see the run start can show it whole. Rows are
kept `keep_seconds` and written under a transaction lock, so their ids are committed in order and a
reader that has seen id N has seen everything before it.

Receiving: a thread `LISTEN`s on its own connection, and on each notification (and at least
every `poll_seconds`, which bounds the delay when a notification is lost, say over a reconnect)
reads the rows after the last one it read. Rows for sessions open here are appended to their
event logs, which the SSE readers follow as if the run were local. A session opened here while
a run goes elsewhere is caught up from the run's first row. When the run ends, the chat reloads
from the store. Every replica also notifies at least once a second while it lives: when a
publisher falls silent mid-run for `dead_after` seconds (killed), the receiver takes the
session's lease, which closes the interrupted run in the store (its partial answer stored as
aborted), and shows the readers the stored transcript.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Sequence, Set
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread
import anyio.to_thread

from ..._optional import import_sdk
from ...messages import now_ms
from .._chat import Chat
from .._convert import event_json, messages_snapshot
from .._deps import ag_ui
from .._forward import Forwards, Row
from .schema import migrate_relay

if TYPE_CHECKING:
    from ...sessions import PostgresSessionStore
    from .._hub import Hub

__all__ = ["Relay", "relay_for", "relayed_snapshot"]

_log = logging.getLogger("agentcore.web")

_READ_LIMIT = 2000  # rows read at once

# rows without events: a Stop or a message sent to another replica, or an answer to one
_CONTROL = ('[["msg"', '[["abort"]', '[["ack"')


class Relay:
    """The cross-replica event relay of one server over a `PostgresSessionStore`'s database.

    Args:
        store: the hub's store (its URL and schema name the database and tables).
        hub: the server's conversations.
        flush_seconds: how long events are collected before they are stored and announced.
        poll_seconds: the longest a receiver waits without a notification before reading.
        keep_seconds: how long rows are kept (a run longer than this is caught up only from
            its last `keep_seconds` when a session is opened mid-run).
        dead_after: seconds of silence after which a publisher with a run going is taken for
            dead.
    """

    def __init__(
        self,
        store: PostgresSessionStore,
        hub: Hub,
        *,
        flush_seconds: float = 0.05,
        poll_seconds: float = 1.0,
        keep_seconds: float = 600.0,
        dead_after: float = 5.0,
    ) -> None:
        self.psycopg = import_sdk("psycopg", "postgres", needed_by="agentcore.web's relay")
        self.url = store.url
        self.schema = store.schema
        self.channel = f"agentcore_relay_{store.schema}"
        self.hub = hub
        self.origin = uuid.uuid4().hex[:16]
        self.flush_seconds = flush_seconds
        self.poll_seconds = poll_seconds
        self.keep_seconds = keep_seconds
        self.dead_after = dead_after
        self._pending: dict[str, list[str]] = {}
        self._starts: set[str] = set()
        self._live: set[str] = set()  # sessions whose run here is being published
        self._wake = anyio.Event()
        self._stop = threading.Event()
        self._seen: dict[str, int] = {}  # session -> the last row applied to its chat
        self._remote: dict[str, tuple[str, float]] = {}  # session -> (origin, last heard)
        self._heard: dict[str, float] = {}  # origin -> when it last notified
        self._catching_up: dict[str, list[Row]] = {}
        self._conn: Any = None
        self._query_conn: Any = None
        self._query_lock = threading.Lock()
        self._migrated = False
        self._migrate_lock = threading.Lock()
        self.forwards = Forwards(self)

    def _connect(self, name: str) -> Any:
        """A connection of its own (autocommit), the relay's table migrated on the first one."""
        conn = self.psycopg.Connection.connect(
            self.url,
            autocommit=True,
            connect_timeout=10,
            options=f"-c search_path={self.schema}",
            application_name=f"agentcore-relay-{name}",
        )
        if not self._migrated:
            try:
                with self._migrate_lock:
                    if not self._migrated:
                        migrate_relay(conn, self.schema)
                        self._migrated = True
            except BaseException:
                conn.close()
                raise
        return conn

    # -- publishing ---------------------------------------------------------------------------

    def attach(self, chat: Chat) -> None:
        """Publish the runs of `chat` that go here."""
        chat.log.tap = lambda event, data: self._tap(chat, event, data)

    def _tap(self, chat: Chat, event: ag_ui.BaseEvent, data: str) -> None:
        sid = chat.id
        if chat.running:
            if sid not in self._live:
                self._live.add(sid)
                self._remote.pop(sid, None)
                chat.remote_start = None
                start = ag_ui.MessagesSnapshotEvent(
                    messages=messages_snapshot(chat.run_start_messages)
                )
                self._starts.add(sid)
                self._pending.setdefault(sid, []).append(f'["start",{event_json(start)}]')
            self._pending.setdefault(sid, []).append(f'["e",{data}]')
        elif sid in self._live:
            self._pending.setdefault(sid, []).append(f'["e",{data}]')
            if isinstance(event, ag_ui.StateSnapshotEvent):  # the run's last event
                self._live.discard(sid)
                self._pending[sid].append('["end"]')
        else:
            return
        self._wake.set()

    def abort(self, chat: Chat) -> bool:
        """Ask the replica running `chat`'s session to stop the run (the page's Stop, sent to
        another replica); False if no run is known to go elsewhere."""
        if chat.running or chat.remote_start is None:
            return False
        self._pending.setdefault(chat.id, []).append('["abort"]')
        self._wake.set()
        return True

    def send_entry(self, sid: str, entry: str) -> None:
        """Publish one encoded entry (`["ack", ...]`) in the session's next row."""
        self._pending.setdefault(sid, []).append(entry)
        self._wake.set()

    def publisher(self, sid: str) -> str | None:
        """The id of the replica whose run of the session this one follows (None: none known)."""
        known = self._remote.get(sid)
        return None if known is None else known[0]

    def insert(self, sid: str, entry: list[Any]) -> int:
        """Store and announce a row holding only `entry` (a forwarded message) at once; its id.
        Called in a worker thread."""
        with self._query_lock:
            conn = self._query()
            try:
                with conn.transaction():
                    conn.execute(
                        "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                        (f"{self.schema}:relay",),
                    )
                    row = conn.execute(
                        "INSERT INTO relay (session_id, origin, at, run_start, events) "
                        "VALUES (%s, %s, %s, false, %s) RETURNING id",
                        (sid, self.origin, now_ms(), json.dumps([entry], ensure_ascii=False)),
                    ).fetchone()
                    conn.execute("SELECT pg_notify(%s, %s)", (self.channel, self.origin))
            except Exception:
                conn.close()
                raise
        return int(row[0]) if row else 0

    def reclaim(self, row_id: int) -> bool:
        """Delete a forwarded message's row unless another replica claimed it first: whether
        this call deleted it (nobody took the message). Called in a worker thread."""
        with self._query_lock:
            conn = self._query()
            try:
                return bool(
                    conn.execute("DELETE FROM relay WHERE id=%s RETURNING id", (row_id,)).fetchall()
                )
            except Exception:
                conn.close()
                raise

    def _query(self) -> Any:
        conn = self._query_conn
        if conn is None or conn.closed or conn.broken:
            conn = self._query_conn = self._connect(f"query-{self.origin}")
        return conn

    async def publish(self) -> None:
        """Store and announce what was collected, until cancelled (at least a beat a second)."""
        last_beat = 0.0
        last_sweep = time.monotonic()
        while True:
            with anyio.move_on_after(1.0):
                await self._wake.wait()
            self._wake = anyio.Event()
            await anyio.sleep(self.flush_seconds)
            batch, self._pending = self._pending, {}
            starts, self._starts = self._starts, set()
            now = time.monotonic()
            sweep = now - last_sweep > 30
            if not batch and now - last_beat < 1.0 and not sweep:
                continue
            try:
                await anyio.to_thread.run_sync(self._store, batch, starts, sweep)
            except Exception as exc:  # the database is away: the readers elsewhere miss these
                _log.warning("relay: could not publish %d sessions' events: %s", len(batch), exc)
                self._conn = None
            last_beat = now
            if sweep:
                last_sweep = now

    def _store(self, batch: dict[str, list[str]], starts: set[str], sweep: bool) -> None:
        conn = self._conn
        if conn is None or conn.closed or conn.broken:
            conn = self._conn = self._connect(f"publish-{self.origin}")
        at = now_ms()
        with conn.transaction():
            if batch:
                # one writer at a time: ids are committed in order, so no reader skips one
                conn.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                    (f"{self.schema}:relay",),
                )
                with conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO relay (session_id, origin, at, run_start, events) "
                        "VALUES (%s, %s, %s, %s, %s)",
                        [
                            (sid, self.origin, at, sid in starts, "[" + ",".join(entries) + "]")
                            for sid, entries in batch.items()
                        ],
                    )
            if sweep:
                conn.execute(
                    "DELETE FROM relay WHERE at < %s", (at - int(self.keep_seconds * 1000),)
                )
            conn.execute("SELECT pg_notify(%s, %s)", (self.channel, self.origin))

    # -- receiving ----------------------------------------------------------------------------

    async def receive(self) -> None:
        """Follow the other replicas' rows until cancelled."""
        try:
            await anyio.to_thread.run_sync(self._listen, abandon_on_cancel=True)
        finally:
            self._stop.set()

    def stop(self) -> None:
        """End the listening thread (within `poll_seconds`) and the publishing connection."""
        self._stop.set()
        for conn in (self._conn, self._query_conn):
            if conn is not None:
                conn.close()
        self._conn = self._query_conn = None

    def _listen(self) -> None:
        last: int | None = None
        conn = None
        more = False  # the last read was cut at its limit: read again at once
        while not self._stop.is_set():
            try:
                if conn is None or conn.closed or conn.broken:
                    conn = self._connect(f"listen-{self.origin}")
                    conn.execute(f'LISTEN "{self.channel}"')
                    if last is None:
                        row = conn.execute("SELECT COALESCE(max(id), 0) FROM relay").fetchone()
                        last = int(row[0]) if row else 0
                for note in conn.notifies(timeout=0 if more else self.poll_seconds, stop_after=1):
                    self._heard[note.payload] = time.monotonic()
                rows = conn.execute(
                    "SELECT id, session_id, origin, run_start, events FROM relay "
                    "WHERE id > %s ORDER BY id LIMIT %s",
                    (last, _READ_LIMIT),
                ).fetchall()
                more = len(rows) == _READ_LIMIT
                if rows:
                    last = rows[-1][0]
                    mine = [r for r in rows if r[2] != self.origin]
                    if mine:
                        claimed = self._claim(conn, mine)
                        anyio.from_thread.run_sync(self._deliver, mine, claimed)
                anyio.from_thread.run_sync(self._check_publishers)
            except Exception as exc:
                if self._stop.is_set():
                    break
                _log.warning("relay: listening failed (%s); again in a second", exc)
                if conn is not None:
                    conn.close()
                conn = None
                self._stop.wait(1.0)
        if conn is not None:
            conn.close()

    def _claim(self, conn: Any, rows: Sequence[Row]) -> set[int]:
        """Claim the forwarded messages this replica takes (deleting their rows: one replica
        takes each). Called in the listening thread."""
        if not any(r[4].startswith('[["msg"') for r in rows):
            return set()
        ours = anyio.from_thread.run_sync(self.forwards.ours, rows)
        if not ours:
            return set()
        got = conn.execute("DELETE FROM relay WHERE id = ANY(%s) RETURNING id", (ours,))
        return {int(r[0]) for r in got.fetchall()}

    def _deliver(self, rows: Sequence[Row], claimed: Set[int] = frozenset()) -> None:
        self.forwards.answered(rows)
        for row in rows:
            sid = row[1]
            if row[0] in claimed:
                self.forwards.take(self.hub.opened(sid), row)
                continue
            waiting = self._catching_up.get(sid)
            if waiting is not None:
                waiting.append(row)
                continue
            chat = self.hub.opened(sid)
            if chat is not None:
                self._apply(chat, row)
            else:  # not open here: nothing to remember of it
                self._seen.pop(sid, None)
                self._remote.pop(sid, None)

    def _apply(self, chat: Chat, row: Row) -> None:
        row_id, sid, origin, _start, events = row
        if chat.running:  # ours: only a Stop sent to another replica concerns it
            if '["abort"]' in events:
                chat.abort("stopped from the page (on another replica)")
            return
        if row_id <= self._seen.get(sid, 0) or events.startswith(_CONTROL):
            return  # a Stop or a message for another replica: no events, not the publisher's
        self._seen[sid] = row_id
        self._remote[sid] = (origin, time.monotonic())
        for entry in json.loads(events):
            kind = entry[0]
            if kind == "start":
                chat.remote_start = chat.log.seq
                chat.log.append_encoded(json.dumps(entry[1], ensure_ascii=False))
            elif kind == "e":
                chat.log.append_encoded(json.dumps(entry[1], ensure_ascii=False))
            elif kind == "end":
                self._ended(chat)
            # "abort": for the replica running the session

    def _ended(self, chat: Chat) -> None:
        chat.remote_start = None
        self._remote.pop(chat.id, None)
        chat.log.trim()
        group = self.hub.group
        if group is not None:
            group.start_soon(self.hub.leases.refresh, chat)

    def _check_publishers(self) -> None:
        """A run whose publisher fell silent: take the session over (closing the run)."""
        now = time.monotonic()
        for sid, (origin, heard) in list(self._remote.items()):
            last = max(heard, self._heard.get(origin, 0.0))
            if now - last < self.dead_after:
                continue
            chat = self.hub.opened(sid)
            self._remote.pop(sid, None)
            if chat is None or chat.remote_start is None or self.hub.group is None:
                continue
            self.hub.group.start_soon(self._take_over, chat)

    async def _take_over(self, chat: Chat) -> None:
        try:
            async with self.hub.leases.writing(chat):
                pass  # the store closed the interrupted run; the chat reloaded
        except Exception as exc:  # still alive after all, or the database is away
            _log.info("relay: session %s not taken over: %s", chat.id, exc)
            return
        chat.remote_start = None
        chat.log.trim()
        chat.publish_transcript()

    async def catch_up(self, chat: Chat) -> None:
        """A chat opened here: follow its session's rows, from the start of a run going on
        elsewhere."""
        sid = chat.id
        self.attach(chat)
        self._catching_up[sid] = []
        try:
            rows = await anyio.to_thread.run_sync(self._run_rows, sid)
        except Exception as exc:
            _log.warning("relay: catching up session %s: %s", sid, exc)
            rows = []
        finally:
            buffered = self._catching_up.pop(sid, [])
        going = False  # whether the last run of these rows has not ended
        for row in rows:
            for entry in json.loads(row[4]):
                if entry[0] in ("start", "end"):
                    going = entry[0] == "start"
        if going:
            for row in rows:
                self._apply(chat, row)
        elif rows:
            self._seen[sid] = rows[-1][0]
        for row in buffered:
            self._apply(chat, row)

    def _run_rows(self, sid: str) -> list[Row]:
        """The rows of the session's last run here or elsewhere (none if none is kept)."""
        with self._query_lock:
            conn = self._query()
            try:
                rows = conn.execute(
                    "SELECT id, session_id, origin, run_start, events FROM relay "
                    "WHERE session_id=%s AND id >= (SELECT max(id) FROM relay "
                    "WHERE session_id=%s AND run_start) ORDER BY id",
                    (sid, sid),
                ).fetchall()
            except Exception:
                conn.close()
                raise
        return [(r[0], r[1], r[2], r[3], r[4]) for r in rows if r[2] != self.origin]


def relay_for(store: object, hub: Hub) -> Relay | None:
    """The relay of a hub whose store is a `PostgresSessionStore` (None for other stores: their
    sessions are one machine's)."""
    from ...sessions import PostgresSessionStore

    if not isinstance(store, PostgresSessionStore):
        return None
    relay = Relay(store, hub)
    hub.on_open.append(relay.catch_up)
    hub.abort_elsewhere = relay.abort
    hub.forward = relay.forwards.send
    return relay


def relayed_snapshot(entries: Sequence[tuple[int, str]]) -> list[Any]:
    """What `GET /api/sessions/{id}` shows of a run going on another replica: the transcript as
    the run began, and the last state, from the events relayed so far (a chat's log entries)."""
    events = [json.loads(data) for _seq, data in entries]
    first = next((e for e in events if e.get("type") == "MESSAGES_SNAPSHOT"), None)
    last = next((e for e in reversed(events) if e.get("type") == "STATE_SNAPSHOT"), None)
    return [e for e in (first, last) if e is not None]
