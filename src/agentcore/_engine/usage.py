"""A run's totals: the usage and cost of its messages (`run_usage`, a public name of
`agentcore`)."""

from __future__ import annotations

from collections.abc import Iterable

from ..messages import Cost, Usage

__all__ = ["add_usage", "run_usage"]


def run_usage(messages: Iterable[object], *, include_tools: bool = True) -> Usage:
    """The total usage and cost of `messages` (a run's `agent_end.messages`, a transcript).

    Sums the `usage` of every assistant message (failed and aborted answers included: their
    tokens were spent), of compaction markers (their summaries') and, with `include_tools` (the
    default), the `usage` tool results report (a sub-agent's, a paid API's), so that the total is
    what the run cost.
    """
    total = Usage()
    for message in messages:
        total = add_usage(total, message, include_tools=include_tools)
    return total


def add_usage(total: Usage, message: object, *, include_tools: bool = True) -> Usage:
    """`total` plus the usage of `message` when it is an answer, a compaction marker (its
    summary's cost) or (with `include_tools`) a tool result that reports usage; `total` itself
    otherwise."""
    role = getattr(message, "role", None)
    if role not in ("assistant", "compaction") and (not include_tools or role != "tool_result"):
        return total
    usage = getattr(message, "usage", None)
    if not isinstance(usage, Usage) or (not usage.total_tokens and not usage.cost.total):
        return total
    a, b = total.cost, usage.cost
    return Usage(
        input=total.input + usage.input,
        output=total.output + usage.output,
        cache_read=total.cache_read + usage.cache_read,
        cache_write=total.cache_write + usage.cache_write,
        cost=Cost(
            input=a.input + b.input,
            output=a.output + b.output,
            cache_read=a.cache_read + b.cache_read,
            cache_write=a.cache_write + b.cache_write,
        ),
    )
