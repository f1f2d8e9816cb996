"""The `search_tools` tool a run with deferred tools offers in their place (tool search; the
ranking and the answer's text are `_tools/search.py`), and the error text of a call of a
deferred tool no search has returned yet.

The tool is an ordinary `AgentTool` of the run, so its calls pass the one pipeline (validation,
hooks, guardrails, approvals, bounds, events). What it finds joins the run through its result's
`added_tool_names` (`transcript.Transcript.found`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from .._tools.search import (
    DEFAULT_SEARCH_RESULTS,
    SEARCH_PARAMETERS,
    SEARCH_TOOLS,
    ToolIndex,
)
from ..abort import AbortSignal
from ..messages import TextContent
from ..tools import AgentTool, AgentToolResult, ToolUpdateCallback

__all__ = ["not_loaded", "search_tools_tool"]


def not_loaded(name: str, native: bool = False) -> str:
    """The error text of a call of a deferred tool no search has returned yet (`native`: the
    model searches with its provider's own tool search, `Model.tool_search`)."""
    search = "your tool search" if native else SEARCH_TOOLS
    return (
        f"Tool {name} is not loaded yet: call {search} first with words describing "
        "what you need; the tools it returns can be called after that"
    )


_KEPT = 16
_TOOLS: OrderedDict[tuple[AgentTool, ...], AgentTool] = OrderedDict()
"""The search tools of the deferred tool lists used last: runs over the same tools (every run of
an agent) share one, so its schema is checked and its index built once."""


def search_tools_tool(deferred: Mapping[str, AgentTool]) -> AgentTool:
    """The `search_tools` tool over `deferred` (name -> tool): a query in, the best matches
    out (name, description, parameters as JSON), named in `added_tool_names` so that they join
    the run. (It keeps no state of a run: the same tool serves every run over these tools.)"""
    key = tuple(deferred.values())
    made = _TOOLS.get(key)
    if made is None:
        made = _TOOLS[key] = _search_tool(dict(deferred))
        if len(_TOOLS) > _KEPT:
            _TOOLS.popitem(last=False)
    else:
        _TOOLS.move_to_end(key)
    return made


def _search_tool(deferred: dict[str, AgentTool]) -> AgentTool:
    tools = list(deferred.values())
    index = ToolIndex(tools)

    async def execute(
        tool_call_id: str, args: Any, signal: AbortSignal, on_update: ToolUpdateCallback
    ) -> AgentToolResult:
        query = args["query"]
        found = [
            deferred[t.name] for t in index.search(query, args.get("limit", DEFAULT_SEARCH_RESULTS))
        ]
        if not found:
            return AgentToolResult(
                content=[
                    TextContent(
                        text=f"No tool matches {query!r}. Try other words (what the tool acts "
                        "on, what it does)."
                    )
                ],
                details={"query": query, "tools": []},
            )
        names = [t.name for t in found]
        text = ToolIndex.answer([(t.name, t.description, t.llm_tool.parameters) for t in found])
        return AgentToolResult(
            content=[TextContent(text=text)],
            details={"query": query, "tools": names},
            added_tool_names=names,
        )

    return AgentTool(
        name=SEARCH_TOOLS,
        label="Search tools",
        description=(
            f"Find tools by what they do. {len(tools)} more tools are available but not loaded; "
            "search for the one you need with a few words, and the tools found can be called "
            "from then on."
        ),
        parameters=SEARCH_PARAMETERS,
        execute=execute,
    )
