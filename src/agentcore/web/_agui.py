"""`POST /api/ag-ui`: the AG-UI run endpoint, for existing AG-UI clients (an `HttpAgent`).

The request body is a `RunAgentInput`; the response is that run's events over SSE, from
`RUN_STARTED` to `RUN_FINISHED` (or `RUN_ERROR`). The thread id is the session id (a new session
is created under it when there is none). The server keeps its own transcript: of the input's
messages only the last one is used, and it must be a user message, the prompt. An input with
`resume` entries answers the interrupts of tool calls awaiting approval (`payload`
`{"approved": true}` or `{"approved": false, "reason": "..."}`; status `cancelled` denies) and
continues the run instead; it needs no new message.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from ..messages import valid_text
from ..sessions import SessionLockedError, SessionNotFoundError
from ._chat import Chat
from ._convert import block_text
from ._decisions import Decision, DecisionError, apply_decisions, check_decision
from ._deps import ag_ui, requests, responses
from ._hub import Hub

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
        if chat.running:
            raise AgUiError(409, f"thread {run.thread_id!r} has a run going")
        group = self.hub.task_group()
        try:
            async with self.hub.leases.writing(chat):
                start = chat.log.seq
                if run.resume:
                    _decide(chat, list(run.resume))
                    chat.start(group, chat.agent.continue_, run_id=run.run_id)
                else:
                    text = _prompt_text(run)
                    chat.start(group, lambda: chat.agent.prompt(text), run_id=run.run_id)
        except SessionLockedError as exc:
            raise AgUiError(409, str(exc)) from None
        return responses.StreamingResponse(
            self._events(chat, start, run.run_id),
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
    async def _events(chat: Chat, seq: int, run_id: str) -> AsyncIterator[str]:
        """The run's events; other events of the session (state snapshots) are left out."""
        ended = False
        while not ended:
            entries = chat.log.after(seq)
            if not entries:
                await chat.log.wait(15.0)
                continue
            for seq, data in entries:  # noqa: B007 - seq is where the next read starts
                event = json.loads(data)
                kind = event.get("type")
                if kind == "STATE_SNAPSHOT":
                    continue
                yield f"data: {data}\n\n"
                if kind in ("RUN_FINISHED", "RUN_ERROR") and event.get("runId", run_id) == run_id:
                    ended = True
                    break
