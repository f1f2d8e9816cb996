"""The open conversations of one server, created, opened, branched and closed here.

Sessions are opened on first use and stay open while they are in use: a run goes, a page follows
their events, or a request used them less than `close_idle_after` seconds ago; then `sweep`
closes them. An open session holds its store write lease only while this server writes it (a run
goes, a decision is stored: `_replicas/lease.py`), so another replica, or `agentcore chat
--continue`, can
continue it whenever it is idle here. At most `max_open`
stay open: past that, the least recently used idle one without readers is closed at once (it
opens again, from the store, on its next use). Store calls run in worker threads.

The session list reads each session once (for its title) and keeps the title until the session
changes (its `updated_at`), so listing is not loading every session whole each time.
"""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread

from .. import Agent, AgentTool
from ..llm import Model, StreamFn
from ..sessions import (
    Session,
    SessionInfo,
    SessionNotFoundError,
    SessionState,
    SessionStore,
)
from ._chat import Chat
from ._replicas.lease import Leases
from ._steering import Delivery, MessageKind

__all__ = ["Hub", "HubSettings"]

_log = logging.getLogger("agentcore.web")
_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")


@dataclass(frozen=True, slots=True, kw_only=True)
class HubSettings:
    """How every conversation's agent is made."""

    model: Model
    tools: Sequence[AgentTool] = ()
    system_prompt: str = ""
    stream_fn: StreamFn | None = None
    agent_options: Mapping[str, Any] = field(default_factory=dict)
    event_log_size: int = 2000
    max_open: int = 64
    close_idle_after: float = 10.0


class Hub:
    """The server's conversations. `group` runs the agents' runs (the app's lifespan)."""

    def __init__(self, store: SessionStore, settings: HubSettings) -> None:
        self.store = store
        self.settings = settings
        self.group: anyio.abc.TaskGroup | None = None
        self._chats: OrderedDict[str, Chat] = OrderedDict()
        self._lock = anyio.Lock()
        self._used: dict[str, float] = {}
        self._counts: dict[str, tuple[int, int]] = {}  # id -> (updated_at, message count)
        self.leases = Leases(store, self._reload, self.task_group)
        self.on_open: list[Any] = []  # called with each chat opened here (the relay's)
        # asks the replica running a session to stop its run (the relay's; None: one server)
        self.abort_elsewhere: Callable[[Chat], bool] | None = None
        # forwards a message to the replica running a session (the relay's, `_forward`)
        self.forward: Callable[[Chat, MessageKind, str], Awaitable[Delivery]] | None = None

    def task_group(self) -> anyio.abc.TaskGroup:
        """The task group runs go in.

        Raises:
            RuntimeError: the app's lifespan is not running.
        """
        if self.group is None:
            raise RuntimeError(
                "the agentcore.web app's lifespan is not running: serve it with uvicorn (which "
                "runs it), or when mounting it in your own app pass "
                "lifespan=web_app.router.lifespan_context (see docs/web.md)"
            )
        return self.group

    def _agent(self, session: Session, *, new: bool) -> Agent:
        s = self.settings
        state: dict[str, Any] = {"tools": list(s.tools)}
        if new:
            state["system_prompt"] = s.system_prompt
        agent = Agent(state, session=session, stream_fn=s.stream_fn, **dict(s.agent_options))
        if not (isinstance(agent.state.model, Model) and agent.state.model.id):
            agent.state.model = s.model
        return agent

    async def _add(self, session: Session, *, new: bool) -> Chat:
        try:
            agent = await anyio.to_thread.run_sync(lambda: self._agent(session, new=new))
        except BaseException:
            session.close()
            raise
        chat = Chat(agent, session, self.settings.event_log_size)
        chat.on_idle = self.leases.ended
        info = await anyio.to_thread.run_sync(session.load)
        if info.parent is not None:
            chat.parent = {"sessionId": info.parent.session_id, "index": info.parent.index}
        self._chats[chat.id] = chat
        self.touch(chat)
        self._evict(keep=chat)
        for hook in self.on_open:
            await hook(chat)
        return chat

    async def _reload(self, chat: Chat) -> None:
        """Bring an idle chat's agent up to date with the store (another replica may have
        continued the session); the readers get the transcript again if it changed."""
        before = list(chat.agent.state.messages)
        agent = await anyio.to_thread.run_sync(lambda: self._agent(chat.session, new=False))
        chat.rebind(agent, chat.session)
        if agent.state.messages != before:
            chat.publish_transcript()

    def _evict(self, keep: Chat) -> None:
        """Close idle chats beyond `max_open`, never `keep` (the one just opened: its caller
        uses it; when every other one is in use, there are more than `max_open` for a while)."""
        while len(self._chats) > self.settings.max_open:
            victim = next(
                (
                    c
                    for c in self._chats.values()
                    if c is not keep
                    and not c.running
                    and c.readers == 0
                    and not self.leases.busy(c)
                ),
                None,
            )
            if victim is None:
                return
            del self._chats[victim.id]
            self._used.pop(victim.id, None)
            victim.close()

    async def sweep(self) -> None:
        """Close, until cancelled, the sessions no run, reader or recent request uses."""
        period = max(0.05, min(self.settings.close_idle_after / 2, 5.0))
        while True:
            await anyio.sleep(period)
            self.close_idle()

    def close_idle(self) -> None:
        """Close the open sessions idle for `close_idle_after` seconds (no run, no reader)."""
        now = anyio.current_time()
        limit = self.settings.close_idle_after
        for chat in list(self._chats.values()):
            if chat.running or chat.readers or now - self._used.get(chat.id, now) < limit:
                continue
            if self.leases.busy(chat):
                continue
            del self._chats[chat.id]
            self._used.pop(chat.id, None)
            try:
                chat.close()
            except Exception:
                _log.exception("closing session %s", chat.id)

    def touch(self, chat: Chat) -> None:
        """Note that `chat` was used now (it stays open `close_idle_after` seconds more)."""
        self._used[chat.id] = anyio.current_time()

    def opened(self, session_id: str) -> Chat | None:
        """The conversation if it is open here (None if not)."""
        return self._chats.get(session_id)

    async def get(self, session_id: str) -> Chat:
        """The open conversation, opened from the store if needed.

        Raises:
            SessionNotFoundError: no such session.
        """
        async with self._lock:
            chat = self._chats.get(session_id)
            if chat is not None:
                self._chats.move_to_end(session_id)
                self.touch(chat)
                return chat
            if not _SESSION_ID.fullmatch(session_id):  # the stores' rule (sessions._base)
                raise SessionNotFoundError(
                    f"invalid session id {session_id!r}: expected 1-128 letters, digits, '_' or '-'"
                )
            if not await anyio.to_thread.run_sync(self.store.exists, session_id):
                raise SessionNotFoundError(f"no session {session_id!r}")
            # read, not written: the write lease is taken for a change (`leases.writing`)
            return await self._add(Session(self.store, session_id), new=False)

    async def create(self, model: Model | None = None, *, session_id: str | None = None) -> Chat:
        """A new conversation (with `model`, else the default one; under `session_id`, else a
        fresh id)."""
        state = SessionState(
            system_prompt=self.settings.system_prompt, model=model or self.settings.model
        )
        async with self._lock:
            session = await anyio.to_thread.run_sync(
                lambda: self.store.create(state=state, session_id=session_id)
            )
            return await self._opened(session, new=True)

    async def _opened(self, session: Session, *, new: bool) -> Chat:
        """A chat for a session this server just made (and holds): its lease is given back."""
        chat = await self._add(session, new=new)
        self.leases.adopt(chat)
        await self.leases.release(chat)
        return chat

    async def branch(self, session_id: str, index: int) -> Chat:
        """A new conversation holding the first `index` messages of another.

        Raises:
            SessionNotFoundError: no such session. IndexError: `index` out of range.
        """
        async with self._lock:
            session = await anyio.to_thread.run_sync(self.store.branch, session_id, index)
            return await self._opened(session, new=False)

    async def list(self, limit: int = 100, offset: int = 0) -> list[dict[str, Any]]:
        """The newest sessions first (`limit` of them, after skipping `offset`), each with a
        title (its first prompt) and size, as the store's listing gives them (`SessionInfo`):
        no session is loaded. Only a store that cannot count a session's messages without
        reading it (`JsonlSessionStore`) has each changed one read once for its count."""

        def read() -> list[dict[str, Any]]:
            infos: list[SessionInfo] = self.store.list()
            end = len(infos) - offset
            page = infos[max(0, end - limit) : max(0, end)]
            out = []
            for info in reversed(page):
                count = info.message_count
                if count is None:
                    count = self._count(info)
                parent = info.parent
                out.append(
                    {
                        "id": info.id,
                        "title": info.title,
                        "messages": count,
                        "createdAt": info.created_at,
                        "updatedAt": info.updated_at,
                        "parent": None
                        if parent is None
                        else {"sessionId": parent.session_id, "index": parent.index},
                    }
                )
            return out

        return await anyio.to_thread.run_sync(read)

    def _count(self, info: SessionInfo) -> int:
        """The message count of a session whose store does not keep it (read once per change)."""
        known = self._counts.get(info.id)
        if known is not None and known[0] == info.updated_at:
            return known[1]
        try:
            count = len(self.store.load(info.id).messages)
        except Exception as exc:  # a damaged session is listed, not fatal
            _log.warning("cannot read session %s: %s", info.id, exc)
            return 0
        self._counts[info.id] = (info.updated_at, count)
        return count

    async def close(self) -> None:
        """Stop every run (an abort: transcripts stay clean) and close every session."""
        chats = list(self._chats.values())
        for chat in chats:
            chat.abort("the server is shutting down")
        with anyio.move_on_after(10):
            for chat in chats:
                await chat.wait_idle()
        for chat in chats:
            try:
                chat.close()
            except Exception:
                _log.exception("closing session %s", chat.id)
        self._chats.clear()
