"""`POST /api/ag-ui`: the AG-UI run endpoint, for existing AG-UI clients (an `HttpAgent`).

The request body is a `RunAgentInput`; the response is that run's events over SSE, from
`RUN_STARTED` to `RUN_FINISHED` (or `RUN_ERROR`). The thread id is the session id (a new session
is created under it when there is none). The server keeps its own transcript: of the input's
messages only the last one is used, and it must be a user message, the prompt. An input with
`resume` entries answers the interrupts of tool calls awaiting approval (`payload`
`{"approved": true}` or `{"approved": false, "reason": "..."}`; status `cancelled` denies) and
continues the run instead; it needs no new message.

Steering over AG-UI: an input whose thread has a run going is not refused; its last (user)
message is queued into that run, as steering, or as a follow-up when the input says so in
`forwardedProps`: `{"agentcore": {"delivery": "follow_up"}}` (`"steer"` is the default). The
response then follows the run in progress: its `RUN_STARTED` (with the server's run id, not the
input's), a `MESSAGES_SNAPSHOT` of the transcript as that run began, the run's events from its
start, until the session is idle (the run that takes the message included). On an idle thread
the message starts a run under the input's run id, whatever the delivery. Right after
`RUN_STARTED`, `CUSTOM agentcore.delivery` says what the message became (`{"became": "queued"
| "started", "as", "runId"}`, as the `POST .../steer` answer does). A thread whose run goes on
another replica (PostgreSQL store) is handled alike: the message is forwarded to that replica
(`_forward`), and the response follows the run as relayed here (a run the message starts there
has that replica's run id, not the input's). 504 when the running replica took the message but
did not say in time what it became.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from ..messages import valid_text
from ..sessions import SessionLockedError, SessionNotFoundError
from ._chat import Chat
from ._convert import block_text, event_json, messages_snapshot
from ._decisions import Decision, DecisionError, apply_decisions, check_decision
from ._deps import ag_ui, requests, responses
from ._forward import ForwardTimeoutError, send_anywhere
from ._hub import Hub
from ._replicas.relay import relayed_snapshot
from ._steering import KINDS, Delivery, MessageKind, NotStoredError

__all__ = ["AgUiEndpoint"]


class AgUiError(Exception):
    """A request the endpoint cannot run: the status and what was wrong."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _prompt_text(run: Any) -> str:
    messages = run.messages or []
    last = messages[-1] if messages else None
    if last is None or getattr(last, "role", None) != "user":
        raise AgUiError(400, "expected the input's last message to be a user message (the prompt)")
    content = last.content
    if not isinstance(content, str):
        content = "".join(getattr(part, "text", "") or "" for part in content)
    text = block_text(content)
    if not text.strip():
        raise AgUiError(400, "the prompt is empty")
    return text


def _delivery(run: Any) -> MessageKind:
    props = run.forwarded_props
    options = props.get("agentcore") if isinstance(props, dict) else None
    kind = options.get("delivery", "steer") if isinstance(options, dict) else "steer"
    if kind not in KINDS:
        raise AgUiError(
            400,
            f"forwardedProps.agentcore.delivery: expected 'steer' or 'follow_up', got {kind!r}",
        )
    return kind


def _decide(chat: Chat, entries: list[Any]) -> None:
    """Check every entry, then apply them all (or none: the first bad one answers 400/403)."""
    agent = chat.agent
    decisions: list[Decision] = []
    for i, entry in enumerate(entries):
        payload = entry.payload if isinstance(entry.payload, dict) else {}
        approved = entry.status == "resolved" and payload.get("approved") is True
        arguments = payload.get("arguments") if approved else None
        if arguments is not None and not isinstance(arguments, dict):
            raise AgUiError(400, f"resume[{i}]: expected 'arguments' to be a JSON object")
        reason = None if approved else payload.get("reason")
        try:
            decisions.append(
                check_decision(
                    agent,
                    entry.interrupt_id,
                    approved,
                    arguments,
                    reason if isinstance(reason, str) else None,
                    taken=[d.call_id for d in decisions],
                )
            )
        except DecisionError as exc:
            raise AgUiError(exc.status, f"resume[{i}]: {exc}") from None
    still = {p.tool_call_id for p in agent.state.pending_approvals} - {d.call_id for d in decisions}
    if still:
        names = ", ".join(repr(k) for k in sorted(still))
        raise AgUiError(400, f"{len(still)} tool calls still await a decision: {names}")
    apply_decisions(agent, decisions)


class AgUiEndpoint:
    """The handler of `POST /api/ag-ui` over one hub."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub

    async def handle(self, request: requests.Request) -> responses.Response:
        try:
            return await self._run(request)
        except AgUiError as exc:
            return responses.JSONResponse({"error": valid_text(str(exc))}, status_code=exc.status)

    async def _run(self, request: requests.Request) -> responses.Response:
        try:
            run = ag_ui.RunAgentInput.model_validate_json(await request.body())
        except (ValueError, RecursionError) as exc:
            raise AgUiError(400, f"expected an AG-UI RunAgentInput: {exc}") from None
        chat = await self._chat(run.thread_id)
        group = self.hub.task_group()
        try:
            if run.resume:
                async with self.hub.leases.writing(chat):
                    if chat.running:
                        raise AgUiError(409, f"thread {run.thread_id!r} has a run going")
                    start = chat.log.seq
                    _decide(chat, list(run.resume))
                    chat.start(group, chat.agent.continue_, run_id=run.run_id)
                    events = self._run_events(chat, start, run.run_id, None)
            else:
                kind, text = _delivery(run), _prompt_text(run)
                start = chat.log.seq
                # here, or forwarded to the replica running the thread (`_forward`)
                delivery = await send_anywhere(self.hub, chat, kind, text, run_id=run.run_id)
                if delivery.became == "queued":  # the run's start, taken now (no await)
                    events = self._joined_events(chat, *_run_start(chat), delivery)
                else:
                    events = self._run_events(chat, start, delivery.run_id, delivery)
        except SessionLockedError as exc:
            raise AgUiError(409, str(exc)) from None
        except ForwardTimeoutError as exc:
            raise AgUiError(504, str(exc)) from None
        except NotStoredError as exc:
            raise AgUiError(503, str(exc)) from None
        return responses.StreamingResponse(
            events,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    async def _chat(self, thread_id: str) -> Chat:
        try:
            return await self.hub.get(thread_id)
        except SessionNotFoundError as exc:
            if "invalid session id" in str(exc):
                raise AgUiError(400, f"threadId: {exc}") from None
            return await self.hub.create(session_id=thread_id)

    @staticmethod
    async def _run_events(
        chat: Chat, seq: int, run_id: str, delivery: Delivery | None
    ) -> AsyncIterator[str]:
        """The events of the run `run_id` (from the log after `seq`), including its going on
        under the same id when messages were queued as it ended; other events of the session
        (state snapshots, a run being stopped before it) are left out."""
        started = finished = False
        while True:
            entries = chat.log.after(seq)
            if not entries:
                if not started and not _going(chat):  # it failed before it started
                    error = ag_ui.RunErrorEvent(message="the run ended before it started")
                    yield f"data: {event_json(error)}\n\n"
                    return
                if finished and (not _going(chat) or (chat.running and chat.run_id != run_id)):
                    return  # ended, and did not go on
                await chat.log.wait(15.0)
                continue
            for seq, data in entries:  # noqa: B007 - seq is where the next read starts
                event = json.loads(data)
                kind = event.get("type")
                if kind == "STATE_SNAPSHOT":
                    continue
                if not started:  # what comes before it (a run being stopped) is not this run's
                    started = kind == "RUN_STARTED" and event.get("runId") == run_id
                    if not started:
                        continue
                    if delivery is not None:
                        data += "\n\ndata: " + _delivery_json(delivery)
                elif finished:  # it goes on under its id, or the stream is over
                    if kind != "RUN_STARTED" or event.get("runId") != run_id:
                        return
                    finished = False
                yield f"data: {data}\n\n"
                if kind in ("RUN_FINISHED", "RUN_ERROR") and event.get("runId", run_id) == run_id:
                    finished = True

    @staticmethod
    async def _joined_events(
        chat: Chat, seq: int, messages: ag_ui.MessagesSnapshotEvent, delivery: Delivery
    ) -> AsyncIterator[str]:
        """The run in progress, which took the message, from its start (after `seq`, with
        the transcript `messages` as it began) until the session is idle: its RUN_STARTED, the
        transcript, the delivery, then its events and those of any run that follows it at once
        (here or, relayed, on another replica)."""
        started = False
        while True:
            entries = chat.log.after(seq)
            if not entries:
                if not _going(chat):
                    return
                await chat.log.wait(15.0)
                continue
            out = []
            for seq, data in entries:  # noqa: B007 - seq is where the next read starts
                kind = json.loads(data).get("type")
                if kind == "STATE_SNAPSHOT" or (not started and kind != "RUN_STARTED"):
                    continue
                out.append(f"data: {data}\n\n")
                if not started:
                    started = True
                    out.append(f"data: {event_json(messages)}\n\n")
                    out.append(f"data: {_delivery_json(delivery)}\n\n")
            if out:
                yield "".join(out)


def _going(chat: Chat) -> bool:
    """Whether a run of the session goes, here or (followed by the relay) on another replica."""
    return chat.running or chat.remote_start is not None


def _run_start(chat: Chat) -> tuple[int, ag_ui.MessagesSnapshotEvent]:
    """Where the run in progress starts in the log, and the transcript as it began: this
    replica's run, or the one relayed from another (whose first event is that transcript)."""
    if chat.running or chat.remote_start is None:
        messages = messages_snapshot(chat.run_start_messages)
        return chat.run_start_seq, ag_ui.MessagesSnapshotEvent(messages=messages)
    seq = chat.remote_start
    relayed = relayed_snapshot(chat.log.after(seq))
    if relayed and relayed[0].get("type") == "MESSAGES_SNAPSHOT":
        return seq, ag_ui.MessagesSnapshotEvent.model_validate(relayed[0])
    return seq, ag_ui.MessagesSnapshotEvent(messages=[])


def _delivery_json(delivery: Delivery) -> str:
    return event_json(ag_ui.CustomEvent(name="agentcore.delivery", value=delivery.json()))
