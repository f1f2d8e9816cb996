"""Reading an MCP server's tool listing: every page, one malformed definition left out with a
warning instead of the whole listing refused, and whether the server announces changes."""

from __future__ import annotations

import logging
from typing import Any

import pydantic

from ._sdk import mcp, types
from ._tools import clip

__all__ = ["announces_changes", "list_tools"]

_log = logging.getLogger("agentcore")

_MAX_LIST_PAGES = 100  # a server whose tools/list cursor never ends cannot hang a connect


def announces_changes(client: mcp.Client) -> bool:
    """Whether the server announces changes to its tool list (else the client polls)."""
    if client.protocol_version not in types.version.MODERN_PROTOCOL_VERSIONS:
        return False  # older servers send notifications/tools/list_changed unasked
    tools = client.server_capabilities.tools
    return bool(tools is not None and tools.list_changed)


async def list_tools(client: mcp.Client, server: str) -> list[types.Tool]:
    """Every page of the server's tool listing; a page the SDK refuses for one malformed tool
    is read again leniently (see `_list_leniently`)."""
    listed: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(_MAX_LIST_PAGES):
        try:
            page = await client.list_tools(cursor=cursor)
        except pydantic.ValidationError:  # one malformed tool fails the SDK's whole page
            page = await _list_leniently(client, server, cursor)
            if page is None:
                raise
        listed.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return listed


async def _list_leniently(client: mcp.Client, server: str, cursor: str | None) -> Any:
    """A page of the listing with the tools the SDK cannot read left out, each with a warning
    naming it, so one malformed definition does not make the server's other tools unusable.

    The SDK checks a whole page at once, so the page is fetched again through its dispatcher,
    unchecked, and each tool is read on its own. None when the SDK has no such seam (its
    own error then stands).
    """
    session = client.session
    dispatcher = getattr(session, "_dispatcher", None)
    send_raw = getattr(dispatcher, "send_raw_request", None)
    if not callable(send_raw):
        return None
    request = types.ListToolsRequest(params=types.PaginatedRequestParams(cursor=cursor))
    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    options: dict[str, Any] = {}
    stamp = getattr(session, "_stamp", None)  # the headers and metadata of every request
    if callable(stamp):
        stamp(data, options)
    raw = await send_raw("tools/list", data.get("params"), options)
    entries = raw.get("tools") if isinstance(raw, dict) else None
    if not isinstance(entries, list):
        return None
    tools: list[types.Tool] = []
    for entry in entries:
        try:
            tools.append(types.Tool.model_validate(entry, by_alias=True))
        except pydantic.ValidationError as exc:
            name = entry.get("name") if isinstance(entry, dict) else None
            problem = exc.errors(include_url=False)[0]
            where = ".".join(str(part) for part in problem["loc"]) or "the tool"
            _log.warning(
                "MCP server %r: tool %r left out: its definition is invalid (%s: %s)",
                server,
                clip(name) if isinstance(name, str) else "(no name)",
                where,
                problem["msg"],
            )
    next_cursor = raw.get("nextCursor")
    page = types.ListToolsResult(
        tools=tools, next_cursor=next_cursor if isinstance(next_cursor, str) else None
    )
    # The SDK keeps what it read of a listing (output schemas, for its checks of results);
    # hand it the tools that could be read, else its next check would list (and fail) again.
    absorb = getattr(session, "_absorb_tool_listing", None)
    if callable(absorb):
        page = absorb(page, complete=cursor is None and page.next_cursor is None)
    return page
