"""Closing a run whose process died, for `PostgresSessionStore`.

A run in progress records in its lease row (`writers.run_at`, `writers.partial`) how many messages
were stored and the answer it streams (`PostgresSessionStore.checkpoint`). A store taking over a
lease whose row still says so knows the run never ended: it stores the partial answer as an
`aborted` assistant message (text and thinking; tool calls that were still streaming are left
out, since they never ran), or an empty one after a prompt or tool results, in the takeover's
transaction. A run whose answer was stored after its last checkpoint (`run_at` behind the
message count) and ended with it is left alone.
"""

from __future__ import annotations

import logging
from typing import Any

from ..messages import AssistantMessage, ToolCall, now_ms
from ._base import SessionCorruptError, load_json, message_from_json
from ._sql_records import encode_messages

__all__ = ["INTERRUPTED_RUN", "close_interrupted_run"]

_log = logging.getLogger("agentcore.sessions")

INTERRUPTED_RUN = (
    "interrupted: the process running this session (pid {pid} on {host}) stopped before the run "
    "ended; the answer so far is kept"
)
"""The `error_message` of the aborted assistant message that closes a run whose process died."""


def close_interrupted_run(conn: Any, session_id: str, token: str, where: str) -> None:
    """In the takeover's transaction (the session's row locked): a run that said it was going
    (`checkpoint`) in a store that no longer holds the lease (`token` is the new holder's) ended
    without closing; close it with an aborted assistant message. `where` names the session."""
    row = conn.execute(
        "SELECT w.pid, w.host, w.run_at, w.partial, s.message_count FROM writers w "
        "JOIN sessions s ON s.id = w.session_id WHERE w.session_id=%s AND w.token<>%s "
        "AND w.run_at IS NOT NULL",
        (session_id, token),
    ).fetchone()
    if row is None:
        return
    pid, host, run_at, partial_text, count = row
    partial: AssistantMessage | None = None
    if partial_text is not None and run_at == count:  # the answer was not stored
        try:
            decoded = message_from_json(load_json(partial_text.encode()), f"{where} partial")
        except SessionCorruptError as exc:
            _log.warning("%s: the interrupted run's partial answer is unreadable: %s", where, exc)
        else:
            if isinstance(decoded, AssistantMessage):
                partial = decoded
    if partial is None:
        last = conn.execute(
            "SELECT data FROM messages WHERE session_id=%s AND seq=%s",
            (session_id, count - 1),
        ).fetchone()
        role = None
        if last is not None:
            try:
                role = load_json(last[0].encode()).get("role")
            except (ValueError, AttributeError):
                role = None
        if role not in ("user", "tool_result"):
            return  # the run had ended with an answer: nothing is missing
    closing = AssistantMessage(
        content=[b for b in (partial.content if partial else []) if not isinstance(b, ToolCall)],
        api=partial.api if partial else "",
        provider=partial.provider if partial else "",
        model=partial.model if partial else "",
        usage=partial.usage if partial else AssistantMessage().usage,
        stop_reason="aborted",
        error_message=INTERRUPTED_RUN.format(pid=pid, host=host),
    )
    ((data, crc),) = encode_messages([closing])
    conn.execute(
        "INSERT INTO messages (session_id, seq, data, crc) VALUES (%s, %s, %s, %s)",
        (session_id, count, data, crc),
    )
    conn.execute(
        "UPDATE sessions SET message_count=%s, updated_at=%s WHERE id=%s",
        (count + 1, now_ms(), session_id),
    )
    _log.warning(
        "%s: closed the run interrupted in pid %s on %s (%s answer kept as aborted)",
        where,
        pid,
        host,
        "its partial" if partial else "no",
    )
