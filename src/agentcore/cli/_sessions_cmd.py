"""`agentcore sessions list|show|rm`, and finding a session by id for `chat --session`.

The sessions are the ones `agentcore chat` saves in the command's store (`_store.open_store`).
An id may be given in full or as any unique beginning of it (ids start with their creation time
in hex, so the beginning of a recent id is usually enough).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime

from ..messages import AgentMessage, AssistantMessage, ImageContent, TextContent, ToolResultMessage
from ..sessions import SessionData, SessionError, SessionLockedError, SessionStore
from ._render import Styler, Writable, plural
from ._run import EXIT_OK, CommandError
from ._safe import json_text, visible
from ._store import open_store

__all__ = [
    "find_session",
    "first_prompt",
    "latest_session",
    "sessions_command",
    "transcript_lines",
    "when",
]

_PREVIEW = 60
_RESULT_LINES = 3


def _where(store: SessionStore) -> str:
    return str(getattr(store, "directory", store))


def find_session(store: SessionStore, ref: str) -> str:
    """The id of the session `ref` names: its id, or a unique beginning of it.

    Raises:
        CommandError: no session, or more than one, matches.
    """
    if store.exists(ref):
        return ref
    matches = sorted(info.id for info in store.list() if info.id.startswith(ref)) if ref else []
    if len(matches) == 1:
        return matches[0]
    if matches:
        shown = ", ".join(matches[:5]) + (", …" if len(matches) > 5 else "")
        raise CommandError(f"session id {ref!r} is ambiguous: it begins {shown}")
    raise CommandError(
        f"no session {ref!r} in {_where(store)} ('agentcore sessions list' shows the sessions)"
    )


def latest_session(store: SessionStore) -> str | None:
    """The id of the most recently updated session, or None when there is none."""
    sessions = store.list()
    if not sessions:
        return None
    return max(sessions, key=lambda info: (info.updated_at, info.created_at, info.id)).id


def when(ms: int) -> str:
    """A store time (milliseconds since the epoch) as local `YYYY-MM-DD HH:MM`."""
    return datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M")


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else ():
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ImageContent):
            parts.append(f"[image {block.mime_type}]")
    return "\n".join(parts)


def first_prompt(messages: Sequence[AgentMessage]) -> str:
    """The text of the first user message, on one line ("" when there is none)."""
    for message in messages:
        if getattr(message, "role", None) == "user":
            return " ".join(_text(message.content).split())
    return ""


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def transcript_lines(messages: Sequence[AgentMessage]) -> Iterator[tuple[str, str | None]]:
    """A transcript as lines to show, each with a style for `Styler.write` (None: plain).

    User prompts start with `> `, answers are their text, tool calls and results look like the
    chat shows them live; messages of other roles (an application's) show their role. Control
    characters are made visible (`_safe.visible`): a session file may come from anywhere."""
    for text, style in _lines(messages):
        yield visible(text), style


def _lines(messages: Sequence[AgentMessage]) -> Iterator[tuple[str, str | None]]:
    for message in messages:
        role = getattr(message, "role", None)
        if role == "user":
            text = _text(message.content)
            yield "> " + text.replace("\n", "\n  "), "prompt"
        elif isinstance(message, AssistantMessage):
            if message.text:
                yield message.text.rstrip("\n"), None
            for call in message.tool_calls:
                args = json_text(call.arguments)
                yield f"[tool] {call.name} {_clip(args, 200)}", "tool"
            if message.stop_reason == "error":
                yield f"error: {message.error_message or 'the answer failed'}", "error"
            elif message.stop_reason == "aborted":
                yield "(stopped)", "dim"
        elif isinstance(message, ToolResultMessage):
            lines = _text(message.content).splitlines() or ["(no output)"]
            shown = [_clip(line, 160) for line in lines[:_RESULT_LINES]]
            if len(lines) > _RESULT_LINES:
                shown.append(f"… ({plural(len(lines) - _RESULT_LINES, 'more line')})")
            label = f"[{message.tool_name} {'failed' if message.is_error else 'ok'}]"
            body = "\n".join("  " + line for line in shown)
            yield f"{label}\n{body}", "error" if message.is_error else "ok"
        else:
            yield f"[{role or type(message).__name__}]", "dim"


def _model_ref(data: SessionData) -> str:
    model = data.state.model
    return visible(f"{model.provider}/{model.id}") if model is not None else "-"


def _list(store: SessionStore, out: Writable, styler: Styler) -> int:
    infos = sorted(store.list(), key=lambda i: (i.updated_at, i.created_at, i.id))
    if not infos:
        styler.write(f"(no sessions in {_where(store)})\n", "dim")
        return EXIT_OK
    rows: list[tuple[str, str, str, str, str]] = []
    for info in infos:
        try:
            data = store.load(info.id)
        except SessionError as exc:
            unreadable = f"(unreadable: {visible(str(exc))})"
            rows.append((visible(info.id), when(info.updated_at), "?", "?", unreadable))
            continue
        preview = _clip(visible(first_prompt(data.messages)), _PREVIEW)
        rows.append(
            (
                visible(info.id),
                when(info.updated_at),
                _model_ref(data),
                str(len(data.messages)),
                preview,
            )
        )
    header = ("ID", "UPDATED", "MODEL", "MESSAGES", "FIRST PROMPT")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(4)]
    for row in [header, *rows]:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        out.write("  ".join([*cells, row[4]]).rstrip() + "\n")
    out.flush()
    return EXIT_OK


def _show(store: SessionStore, ref: str, out: Writable) -> int:
    data = store.load(find_session(store, ref))
    out.write(
        f"session {data.id} · {_model_ref(data)} · {plural(len(data.messages), 'message')} · "
        f"created {when(data.created_at)} · updated {when(data.updated_at)}\n"
    )
    if data.state.system_prompt:
        out.write(f"system: {visible(data.state.system_prompt)}\n")
    for text, _ in transcript_lines(data.messages):
        out.write(text + "\n")
    out.flush()
    return EXIT_OK


def _rm(store: SessionStore, refs: Sequence[str], out: Writable) -> int:
    ids = [find_session(store, ref) for ref in refs]  # all found, or nothing is deleted
    for sid in dict.fromkeys(ids):
        try:
            store.delete(sid)
        except SessionLockedError:
            raise CommandError(
                f"session {sid} is in use by another agentcore process; quit that chat first"
            ) from None
        out.write(f"deleted {sid}\n")
    out.flush()
    return EXIT_OK


def sessions_command(
    action: str, ids: Sequence[str], directory: str | None, out: Writable, styler: Styler
) -> int:
    """Run `agentcore sessions ACTION [ID...]`; returns the exit code.

    Raises:
        CommandError: an unknown or ambiguous id, a session that cannot be read or deleted.
    """
    with open_store(directory) as store:
        try:
            if action == "list":
                return _list(store, out, styler)
            if action == "show":
                return _show(store, ids[0], out)
            return _rm(store, ids, out)
        except SessionError as exc:
            raise CommandError(str(exc)) from None
