"""The ASGI app: the page, the JSON API, and each session's AG-UI event stream over SSE.

```
GET  /                                  the chat page (static files under /static/)
GET  /api/info                          default model, tools
GET  /api/models                        the catalogue, each model with `usable` and why not
GET  /api/sessions                      sessions, newest first
POST /api/sessions            {model?}  a new session -> {id}
GET  /api/sessions/{id}                 {messages, state}: the AG-UI snapshot as JSON
GET  /api/sessions/{id}/events          the AG-UI event stream (SSE; honours Last-Event-ID)
POST /api/sessions/{id}/prompt {text}   start a run, or steer the running one
POST /api/sessions/{id}/steer {text}    steer the running run, or start one -> {became, runId}
POST /api/sessions/{id}/follow-up {text} a follow-up of the running run, or start one (same)
POST /api/sessions/{id}/abort           stop the running run
POST /api/sessions/{id}/model {model}   switch the model (between runs)
POST /api/sessions/{id}/branch {index}  a new session with the first `index` messages -> {id}
POST /api/sessions/{id}/approvals/{tool_call_id} {approved, reason?, arguments?}
POST /api/ag-ui                         the AG-UI run endpoint (RunAgentInput in, SSE out)
GET  /api/memory                        what the agents remember (the `memory` agent option's
DELETE /api/memory/{id}                 scope only), newest first; delete one of them
```
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from importlib import resources
from typing import Any

import anyio

from .. import AgentBusyError, AgentCoreError, AgentTool, __version__
from ..llm import Model, StreamFn, check_model, get_model, get_models, get_providers
from ..memory import Memory, MemoryStoreError
from ..memory.tools import recalled
from ..messages import valid_text
from ..netguard import LOOPBACK_HOSTS
from ..sessions import SessionError, SessionNotFoundError, SessionStore
from ._agui import AgUiEndpoint
from ._chat import Chat, model_ref
from ._chat_guard import ChatGuard
from ._convert import event_json
from ._decisions import DecisionError, apply_decisions, check_decision
from ._deps import applications, requests, responses, routing, staticfiles
from ._forward import ForwardTimeoutError, send_anywhere
from ._hub import Hub, HubSettings
from ._replicas.relay import relay_for, relayed_snapshot
from ._steering import MessageKind, NotStoredError, stored

__all__ = ["create_app"]

PING_SECONDS = 15.0
"""An SSE comment is sent after this much silence, so proxies keep the stream open."""

_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
_HEADERS = {
    "Content-Security-Policy": _CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}

Handler = Callable[[requests.Request], Awaitable[responses.Response]]


class _Problem(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class _Json(responses.JSONResponse):
    """JSON whose text is always valid UTF-8: a lone surrogate from a stored session (which
    `str.encode` refuses) is sent as U+FFFD instead of failing the whole answer."""

    def render(self, content: Any) -> bytes:
        return valid_text(
            json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        ).encode("utf-8")


def _error(status: int, message: str) -> responses.Response:
    return _Json({"error": message}, status_code=status, headers=_HEADERS)


def _ok(value: Any, status: int = 200) -> responses.Response:
    return _Json(value, status_code=status, headers=_HEADERS)


def _handled(fn: Handler) -> Handler:
    async def handler(request: requests.Request) -> responses.Response:
        try:
            return await fn(request)
        except _Problem as exc:
            return _error(exc.status, str(exc))
        except SessionNotFoundError as exc:
            return _error(404, str(exc))
        except AgentBusyError as exc:
            return _error(409, str(exc))
        except (SessionError, AgentCoreError) as exc:
            return _error(409 if "lock" in type(exc).__name__.lower() else 400, str(exc))

    return handler


async def _body(request: requests.Request) -> Mapping[str, Any]:
    raw = await request.body()
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise _Problem(400, f"the body is not JSON: {exc}") from None
    except RecursionError:
        raise _Problem(400, "the body's JSON is nested too deeply") from None
    if not isinstance(value, dict):
        raise _Problem(400, f"expected a JSON object, got {type(value).__name__}")
    return value


def _query_int(request: requests.Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 10 and low <= int(raw) <= high):
        raise _Problem(400, f"expected {name!r} to be a whole number from {low} to {high}")
    return int(raw)


def _field(body: Mapping[str, Any], name: str, kind: type, *, required: bool = True) -> Any:
    value = body.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise _Problem(400, f"expected {name!r} to be a {kind.__name__}, got {value!r}")
    return value


class _Api:
    """The request handlers, over one hub."""

    def __init__(
        self, hub: Hub, default_model: Model, stream_fn: StreamFn | None, max_readers: int
    ) -> None:
        self.hub = hub
        memory = hub.settings.agent_options.get("memory")
        self.memory = memory if isinstance(memory, Memory) else None
        self.max_readers = max_readers
        self.readers = 0  # event streams open, over all sessions
        self.default_model = default_model
        self.stream_fn = stream_fn
        self._models: list[dict[str, Any]] | None = None

    def _model(self, ref: Any) -> Model:
        if not isinstance(ref, str) or "/" not in ref:
            raise _Problem(400, f"expected a model as 'provider/id', got {ref!r}")
        if ref == model_ref(self.default_model):  # also when it is not in the catalogue
            return self.default_model
        provider, _, model_id = ref.partition("/")
        model = get_model(provider, model_id)
        if self.stream_fn is None:
            check_model(model)
        return model

    async def _chat(self, request: requests.Request) -> Chat:
        return await self.hub.get(str(request.path_params["session_id"]))

    async def info(self, request: requests.Request) -> responses.Response:
        return _ok(
            {
                "version": __version__,
                "defaultModel": model_ref(self.default_model),
                "tools": [t.name for t in self.hub.settings.tools],
                "memory": self.memory is not None,
            }
        )

    async def models(self, request: requests.Request) -> responses.Response:
        return _ok(await self.read_models())

    async def read_models(self) -> list[dict[str, Any]]:
        """The models list, read once in a worker thread (the lifespan warms it at startup): SDKs
        and keys do not come and go while serving."""
        if self._models is None:
            self._models = await anyio.to_thread.run_sync(self._read_models)
        return self._models

    def _read_models(self) -> list[dict[str, Any]]:
        out = []
        catalogue = [m for p in get_providers() for m in get_models(p)]
        if not any(m == self.default_model for m in catalogue):  # given, not registered
            catalogue.insert(0, self.default_model)
        for model in catalogue:
            reason = None
            if self.stream_fn is None:
                try:
                    check_model(model)
                except AgentCoreError as exc:
                    reason = str(exc)
            out.append(
                {
                    "ref": model_ref(model),
                    "name": model.name,
                    "provider": model.provider,
                    "usable": reason is None,
                    "reason": reason,
                    "cost": {"input": model.cost.input, "output": model.cost.output},
                }
            )
        return out

    async def sessions(self, request: requests.Request) -> responses.Response:
        limit = _query_int(request, "limit", 100, 1, 1000)
        offset = _query_int(request, "offset", 0, 0, 10**9)
        return _ok(await self.hub.list(limit, offset))

    async def create(self, request: requests.Request) -> responses.Response:
        body = await _body(request)
        ref = body.get("model")
        model = self._model(ref) if ref is not None else None
        chat = await self.hub.create(model)
        return _ok({"id": chat.id}, 201)

    async def show(self, request: requests.Request) -> responses.Response:
        chat = await self._chat(request)
        await self.hub.leases.refresh(chat)
        seq, events = chat.snapshot()
        if not events:  # a run on another replica: its relayed snapshot, and its last state
            return _ok({"events": relayed_snapshot(chat.log.after(seq))})
        return _ok({"events": [e.model_dump(mode="json", by_alias=True) for e in events]})

    async def events(self, request: requests.Request) -> responses.Response:
        if self.readers >= self.max_readers:
            raise _Problem(
                503,
                f"this server already streams events to {self.readers} readers (at most "
                f"{self.max_readers}): close another page first",
            )
        chat = await self._chat(request)
        last = request.headers.get("last-event-id") or request.query_params.get("lastEventId")
        return responses.StreamingResponse(
            self._stream(chat, last),
            media_type="text/event-stream",
            headers={**_HEADERS, "X-Accel-Buffering": "no"},
        )

    async def _stream(self, chat: Chat, last: str | None) -> AsyncIterator[str]:
        chat = await self.hub.get(chat.id)  # the open one (an idle one may have been closed)
        epoch = chat.log.epoch  # ids of an earlier log of this session are foreign
        seq: int | None = None
        if last:  # anything else than an event id of ours starts a fresh stream
            given_epoch, _, number = last.partition(".")
            plain = number.isascii() and number.isdigit() and len(number) <= 18
            if given_epoch == epoch and plain and chat.log.covers(int(number)):
                seq = int(number)
        chat.readers += 1  # before any wait: a chat with readers stays open
        self.readers += 1
        try:
            await self.hub.leases.refresh(chat)
            yield "retry: 1000\n\n"
            while True:
                if seq is None or not chat.log.covers(seq):  # new, or fell behind a trim
                    seq, snapshot = chat.snapshot()
                    for event in snapshot:
                        yield f"id: {epoch}.{seq}\ndata: {event_json(event)}\n\n"
                entries = chat.log.after(seq)
                if entries:  # one write for all that is new: a reader costs little per event
                    yield "".join(f"id: {epoch}.{n}\ndata: {data}\n\n" for n, data in entries)
                    seq = entries[-1][0]
                    continue
                before = chat.log.seq
                await chat.log.wait(PING_SECONDS)
                if chat.log.seq == before:
                    yield ": ping\n\n"
        finally:
            chat.readers -= 1
            self.readers -= 1

    async def prompt(self, request: requests.Request) -> responses.Response:
        body = await _body(request)
        text = _field(body, "text", str)
        if not text.strip():
            raise _Problem(400, "the prompt is empty")
        chat = await self._chat(request)
        async with self.hub.leases.writing(chat):
            delivery = chat.send(self.hub.task_group(), "steer", text)
        try:
            await stored(chat.agent, delivery)
        except NotStoredError as exc:
            raise _Problem(503, str(exc)) from None
        return _ok({"status": "steered" if delivery.became == "queued" else "started"}, 202)

    async def steer(self, request: requests.Request) -> responses.Response:
        return await self._send(request, "steer")

    async def follow_up(self, request: requests.Request) -> responses.Response:
        return await self._send(request, "follow_up")

    async def _send(self, request: requests.Request, kind: MessageKind) -> responses.Response:
        body = await _body(request)
        text = _field(body, "text", str)
        if not text.strip():
            raise _Problem(400, "the message is empty")
        chat = await self._chat(request)
        try:  # here, or forwarded to the replica running the session (`_forward`)
            delivery = await send_anywhere(self.hub, chat, kind, text)
        except ForwardTimeoutError as exc:
            raise _Problem(504, str(exc)) from None
        except NotStoredError as exc:
            raise _Problem(503, str(exc)) from None
        return _ok(delivery.json(), 202)

    async def abort(self, request: requests.Request) -> responses.Response:
        chat = await self._chat(request)
        elsewhere = self.hub.abort_elsewhere
        if elsewhere is not None and elsewhere(chat):  # the run goes on another replica
            return _ok({"running": True})
        chat.abort("stopped from the page")
        return _ok({"running": chat.running})

    async def set_model(self, request: requests.Request) -> responses.Response:
        body = await _body(request)
        model = self._model(body.get("model"))
        chat = await self._chat(request)
        async with self.hub.leases.writing(chat):
            if chat.running:
                raise _Problem(409, "a run is going: switch the model when it has ended")
            chat.agent.state.model = model
            await anyio.to_thread.run_sync(_store_model, chat, model)
            chat.publish_state()
        return _ok({"model": model_ref(model)})

    async def branch(self, request: requests.Request) -> responses.Response:
        body = await _body(request)
        index = _field(body, "index", int)
        source = str(request.path_params["session_id"])
        try:
            chat = await self.hub.branch(source, index)
        except IndexError as exc:
            raise _Problem(400, str(exc)) from None
        return _ok({"id": chat.id}, 201)

    async def decide(self, request: requests.Request) -> responses.Response:
        body = await _body(request)
        approved = _field(body, "approved", bool)
        chat = await self._chat(request)
        async with self.hub.leases.writing(chat):
            self._decide(chat, body, approved, str(request.path_params["tool_call_id"]))
        return _ok({"running": chat.running})

    def _decide(self, chat: Chat, body: Mapping[str, Any], approved: bool, call_id: str) -> None:
        agent = chat.agent
        if chat.running:
            raise _Problem(409, "a run is going: decide when it has ended")
        arguments = _field(body, "arguments", dict, required=False) if approved else None
        reason = None if approved else _field(body, "reason", str, required=False)
        try:
            decision = check_decision(agent, call_id, approved, arguments, reason)
        except DecisionError as exc:
            raise _Problem(exc.status, str(exc)) from None
        apply_decisions(agent, [decision])
        chat.publish_transcript()
        if not agent.state.pending_approvals:
            chat.start(self.hub.task_group(), agent.continue_)

    def _memory(self) -> Memory:
        if self.memory is None:
            raise _Problem(404, "this server keeps no memories (agentcore serve --memory)")
        return self.memory

    async def memories(self, request: requests.Request) -> responses.Response:
        """The memories of the agents' scope (and of no other), newest first."""
        memory = self._memory()
        limit = _query_int(request, "limit", 200, 1, 1000)
        try:
            records = await memory.store.list(scope=memory.scope, limit=limit)
        except MemoryStoreError as exc:
            raise _Problem(503, f"the memory store failed: {exc}") from None
        return _ok({"user": memory.scope.user, "memories": [recalled(r) for r in records]})

    async def forget(self, request: requests.Request) -> responses.Response:
        """Delete one memory of the agents' scope: an id of any other scope is not found."""
        memory = self._memory()
        record_id = str(request.path_params["memory_id"])
        try:
            deleted = await memory.store.delete(record_id, scope=memory.scope)
        except MemoryStoreError as exc:
            raise _Problem(503, f"the memory store failed: {exc}") from None
        if not deleted:
            raise _Problem(404, f"no memory {record_id!r} here (GET /api/memory lists them)")
        return _ok({"deleted": record_id})


def _store_model(chat: Chat, model: Model) -> None:
    """Write the new model to the session now (the Agent would at its next run), so a branch
    made before then has it too."""
    session = chat.session
    state = session.load(repair=False).state
    session.update(state=dataclasses.replace(state, model=model, withheld_headers=()))


def _page(request: requests.Request) -> responses.Response:
    html = resources.files(__package__ or "agentcore.web").joinpath("static/index.html")
    return responses.HTMLResponse(html.read_text(encoding="utf-8"), headers=_HEADERS)


def create_app(
    store: SessionStore,
    *,
    model: Model,
    tools: Sequence[AgentTool] = (),
    system_prompt: str = "",
    stream_fn: StreamFn | None = None,
    token: str | None = None,
    allowed_hosts: Sequence[str] | None = LOOPBACK_HOSTS,
    agent_options: Mapping[str, Any] | None = None,
    event_log_size: int = 2000,
    max_open_sessions: int = 64,
    close_idle_after: float = 10.0,
    max_body_bytes: int = 4 * 1024 * 1024,
    max_readers: int = 256,
) -> applications.Starlette:
    """The chat server as an ASGI app (Starlette): the page, the API, AG-UI over SSE.

    Each session runs its own `Agent`, whose transcript is stored in `store` as it happens.

    Args:
        store: where sessions live (`JsonlSessionStore`, `SqliteSessionStore`, your own). With a
            `PostgresSessionStore`, several servers can share it: runs' live events reach the
            readers of every one (docs/concepts/sessions.md, "Several replicas").
        model: the model of new sessions (a session keeps its own once chosen).
        tools: the tools every agent gets.
        system_prompt: the system prompt of new sessions.
        stream_fn: the agents' stream function (default: `agentcore.llm.stream_simple`); with
            one given, models are not checked for SDKs and keys.
        token: if given, every request must carry it (header `Authorization: Bearer`, or the
            cookie set by opening `/?token=...`). `agentcore serve` always gives one unless
            told `--no-token`.
        allowed_hosts: without a token, the `Host` names served (default: loopback names, and
            any loopback address, which defeats DNS rebinding); None serves any (behind your own
            authentication).
        agent_options: keyword arguments for every `Agent` (bounds, hooks, ...). With `memory`
            (an `agentcore.memory.Memory`), `GET /api/memory` lists that memory's scope (and
            no other) and `DELETE /api/memory/{id}` deletes from it; the page shows them.
        event_log_size: events each session keeps for reconnecting clients between runs (the
            run in progress is always kept whole).
        max_open_sessions: sessions kept open in memory; idle ones beyond are closed.
        close_idle_after: seconds after which a session no run, page or request uses is closed
            (dropped from memory). Its store write lock is held only while a run, a decision or
            a model switch writes it, so `agentcore chat --continue`, or another replica, can
            continue an idle session at any time (a change here meanwhile is a 409).
        max_body_bytes: the largest request body accepted; a larger one is answered 413.
        max_readers: event streams open at once over all sessions (each costs a little work
            per event, and keeps its session open); one more is answered 503.

    Raises:
        ValueError: `token` is empty, or a number is out of range.

    The app's lifespan runs the agents: uvicorn runs it; when you mount the app in another
    Starlette app, pass `lifespan=app.router.lifespan_context` to the outer one.
    """
    if token is not None and not token.strip():
        raise ValueError("create_app(): the token is empty; give a real one, or None for none")
    if max_body_bytes < 1 or close_idle_after < 0 or max_readers < 1:
        raise ValueError(
            f"create_app(): expected max_body_bytes >= 1, close_idle_after >= 0 and "
            f"max_readers >= 1, got {max_body_bytes}, {close_idle_after} and {max_readers}"
        )
    settings = HubSettings(
        model=model,
        tools=tuple(tools),
        system_prompt=system_prompt,
        stream_fn=stream_fn,
        agent_options=dict(agent_options or {}),
        event_log_size=event_log_size,
        max_open=max_open_sessions,
        close_idle_after=close_idle_after,
    )
    hub = Hub(store, settings)
    api = _Api(hub, model, stream_fn, max_readers)
    relay = relay_for(store, hub)  # replicas on one PostgreSQL database see each other's runs

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        async with anyio.create_task_group() as group:
            hub.group = group
            group.start_soon(hub.sweep)
            group.start_soon(api.read_models)  # the picker's first request finds it ready
            if relay is not None:
                group.start_soon(relay.publish)
                group.start_soon(relay.receive)
            try:
                yield
            finally:
                hub.group = None
                await hub.close()
                group.cancel_scope.cancel()
                if relay is not None:
                    relay.stop()

    def route(path: str, fn: Handler, method: str = "GET") -> routing.Route:
        return routing.Route(path, _handled(fn), methods=[method])

    s = "/api/sessions/{session_id:str}"
    routes = [
        routing.Route("/", _page, methods=["GET"]),
        routing.Mount(
            "/static",
            staticfiles.StaticFiles(packages=[("agentcore.web", "static")]),
            name="static",
        ),
        route("/api/info", api.info),
        route("/api/models", api.models),
        route("/api/sessions", api.sessions),
        route("/api/sessions", api.create, "POST"),
        route(s, api.show),
        route(s + "/events", api.events),
        route(s + "/prompt", api.prompt, "POST"),
        route(s + "/steer", api.steer, "POST"),
        route(s + "/follow-up", api.follow_up, "POST"),
        route(s + "/abort", api.abort, "POST"),
        route(s + "/model", api.set_model, "POST"),
        route(s + "/branch", api.branch, "POST"),
        route(s + "/approvals/{tool_call_id:str}", api.decide, "POST"),
        routing.Route("/api/ag-ui", AgUiEndpoint(hub).handle, methods=["POST"]),
        route("/api/memory", api.memories),
        route("/api/memory/{memory_id:str}", api.forget, "DELETE"),
    ]
    app = applications.Starlette(routes=routes, lifespan=lifespan)
    app.state.hub = hub
    app.add_middleware(
        ChatGuard, token=token, allowed_hosts=allowed_hosts, max_body_bytes=max_body_bytes
    )
    return app
