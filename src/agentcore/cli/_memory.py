"""Long-term memory in the command: `chat|run|serve --memory` and `agentcore memory
list|search|delete`.

The memories are in `memory.db` (a `SqliteMemoryStore`) in the sessions directory (`--sessions-dir`,
else the command's default one), or, for `serve --store URL`, in the same PostgreSQL database and
schema as the sessions (`PostgresMemoryStore`). The scope is one user: `--memory-user NAME` (or
`memory ... --user NAME`), else the operating system's user name. The scope separates the people
who share a store by choice; it is no access control: whoever can read the file can read every
user's memories (the file is created readable by its owner only).

Everything a memory holds is shown through `_safe.visible` (it may have been written by a model
told to by a web page); `--json` writes JSON Lines through `_safe.json_text`.
"""

from __future__ import annotations

import getpass
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..memory import Memory, MemoryRecord, MemoryScope, MemoryStoreError
from ..memory.tools import recalled
from ._memory_args import MemoryOptions
from ._render import Styler, Writable
from ._run import EXIT_OK, CommandError, Settings
from ._safe import json_text, visible
from ._store import sessions_directory

if TYPE_CHECKING:
    from ..memory import BackedMemoryStore

__all__ = ["MEMORY_FILE", "memory_command", "memory_scope", "open_memory", "run_memory"]

MEMORY_FILE = "memory.db"
"""The file of the memories in the sessions directory."""

_TEXT_WIDTH = 100


def memory_scope(user: str | None) -> MemoryScope:
    """The scope of `user` (None: the operating system's user name).

    Raises:
        CommandError: no user given and the system's user name cannot be found.
    """
    if user is None:
        try:
            user = getpass.getuser()
        except (OSError, KeyError, ImportError):
            user = ""
        if not user:
            raise CommandError(
                "cannot tell the operating system's user name: give the user (--memory-user "
                "NAME, or --user NAME for 'agentcore memory')"
            )
    return MemoryScope(user=user)


def open_memory(sessions_dir: str | None, store_url: str | None = None) -> BackedMemoryStore:
    """The memory store beside the sessions: `memory.db` in the sessions directory, or the
    PostgreSQL database of `store_url` (its `schema` query parameter, default `agentcore`).

    Raises:
        CommandError: the store cannot be opened.
    """
    try:
        if store_url is not None:
            from ..memory import PostgresMemoryStore

            parts = urlsplit(store_url)
            query = parse_qsl(parts.query, keep_blank_values=True)
            schemas = [value for key, value in query if key == "schema"]
            rest = urlencode([(key, value) for key, value in query if key != "schema"])
            return PostgresMemoryStore(
                urlunsplit(parts._replace(query=rest)),
                schema=schemas[-1] if schemas else "agentcore",
            )
        from ..memory import SqliteMemoryStore

        return SqliteMemoryStore(sessions_directory(sessions_dir) / MEMORY_FILE)
    except (MemoryStoreError, ValueError, OSError) as exc:
        raise CommandError(f"--memory: cannot open the memory store: {exc}") from None


@asynccontextmanager
async def run_memory(
    options: MemoryOptions | None,
    settings: Settings,
    *,
    sessions_dir: str | None,
    store_url: str | None = None,
) -> AsyncIterator[None]:
    """With `--memory`: `settings.memory` is the user's `Memory` (the tools and the injection)
    within the block, and its store is closed after it. Without, nothing."""
    if options is None:
        yield
        return
    scope = memory_scope(options.user)
    store = open_memory(sessions_dir, store_url)
    try:
        settings.memory = Memory(store, scope)
        yield
    finally:
        settings.memory = None
        store.close()


def _where(store: Any) -> str:
    path = getattr(store, "path", None)
    return str(path) if path is not None else str(store)


def _json(record: MemoryRecord) -> str:
    return json_text({**recalled(record), "user": record.scope.user})


def _rows(records: Sequence[MemoryRecord]) -> list[tuple[str, ...]]:
    from ._sessions_cmd import when

    rows: list[tuple[str, ...]] = []
    for r in records:
        text = visible(" ".join(r.text.split()))
        if len(text) > _TEXT_WIDTH:
            text = text[: _TEXT_WIDTH - 1] + "…"
        session = visible(r.session_id) if r.session_id is not None else "-"
        rows.append((visible(r.id), visible(r.kind), when(r.updated_at), session, text))
    return rows


def _table(records: Sequence[MemoryRecord], out: Writable) -> None:
    header = ("ID", "KIND", "UPDATED", "SESSION", "TEXT")
    rows = [header, *_rows(records)]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        out.write("  ".join([*cells, row[4]]).rstrip() + "\n")


def _show(records: Sequence[MemoryRecord], options: MemoryOptions, out: Writable) -> None:
    if options.json:
        for record in records:
            out.write(_json(record) + "\n")
    elif records:
        _table(records, out)
    out.flush()


async def _delete(
    store: BackedMemoryStore, scope: MemoryScope, refs: Sequence[str], out: Writable, json: bool
) -> None:
    """Delete the records `refs` name (ids, or unique beginnings of them): all are found first,
    or nothing is deleted."""
    known = [r.id for r in await store.list(scope=scope)]
    ids: list[str] = []
    for ref in refs:
        matches = [i for i in known if i == ref] or [i for i in known if ref and i.startswith(ref)]
        if len(matches) > 1:
            shown = ", ".join(matches[:5]) + (", …" if len(matches) > 5 else "")
            raise CommandError(f"memory id {ref!r} is ambiguous: it begins {visible(shown)}")
        if not matches:
            raise CommandError(
                f"no memory {ref!r} for user {scope.user!r} in {_where(store)}: nothing was "
                "deleted ('agentcore memory list' shows the ids)"
            )
        ids.append(matches[0])
    for record_id in dict.fromkeys(ids):
        await store.delete(record_id, scope=scope)
        out.write(json_text({"deleted": record_id}) if json else f"deleted {visible(record_id)}")
        out.write("\n")
    out.flush()


async def memory_command(
    options: MemoryOptions, sessions_dir: str | None, out: Writable, styler: Styler
) -> int:
    """Run `agentcore memory list|search QUERY|delete ID...`; returns the exit code.

    Raises:
        CommandError: an unknown or ambiguous id, an empty query, a store that cannot be read.
    """
    scope = memory_scope(options.user)
    where = sessions_directory(sessions_dir) / MEMORY_FILE
    if not where.exists():  # nothing remembered yet: say so without creating the file
        if options.action == "delete":
            raise CommandError(
                f"no memory {options.ids[0]!r}: {where} does not exist yet; nothing was deleted"
            )
        if not options.json:
            styler.write(f"(no memories: {where} does not exist yet; see --memory)\n", "dim")
        return EXIT_OK
    store = open_memory(sessions_dir)
    try:
        if options.action == "delete":
            await _delete(store, scope, options.ids, out, options.json)
            return EXIT_OK
        if options.action == "search":
            query = options.query or ""
            if not query.strip():
                raise CommandError("the query is empty: give the words to search for")
            records = await store.search(query, scope=scope, limit=options.limit)
            empty = f"(no memory of user {scope.user!r} matches {query!r})"
        else:
            records = await store.list(scope=scope, limit=options.limit)
            empty = f"(no memories for user {scope.user!r} in {where})"
        _show(records, options, out)
        if not records and not options.json:
            styler.write(visible(empty) + "\n", "dim")
    except MemoryStoreError as exc:
        raise CommandError(f"the memory store {where}: {exc}") from None
    finally:
        store.close()
    return EXIT_OK
