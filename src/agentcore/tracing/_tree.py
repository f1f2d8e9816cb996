"""`TraceTree`: the span tree of runs kept in memory and drawn as text, with no dependency.

It is an `Instrumentation` like the OpenTelemetry one, and nests the same way (the run's node
is current in the run's task, a tool's node inside the task that runs `execute`), so a run
started by a tool is drawn under that tool. The `agentcore` command's `--trace` prints it.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from agentcore import (
    AgentMessage,
    AgentToolResult,
    AssistantMessage,
    LimitReached,
    RequestObserver,
    RunInfo,
    RunObserver,
    ToolCall,
    ToolObserver,
    Usage,
    run_usage,
)
from agentcore.guardrails import GuardrailTrip
from agentcore.llm import Context, Model

__all__ = ["SpanNode", "TraceTree", "usage_text"]

_current: contextvars.ContextVar[SpanNode | None] = contextvars.ContextVar(
    "agentcore_trace_tree_node", default=None
)


@dataclass(slots=True, eq=False)
class SpanNode:
    """One recorded span: a run, a request or a tool call.

    Attributes:
        name: `invoke_agent`, `chat {model}` or `execute_tool {tool}`, as in OpenTelemetry.
        start: `time.perf_counter()` at its start.
        end: at its end (None while it is open).
        notes: short facts shown after the duration (finish reason, tokens, retries, error).
        children: the spans started under it, in start order.
    """

    name: str
    start: float
    end: float | None = None
    notes: list[str] = field(default_factory=list)
    children: list[SpanNode] = field(default_factory=list)


def usage_text(usage: Usage) -> str:
    """`812 in / 64 out tokens · $0.0031` (cached input tokens counted in, and named)."""
    tokens_in = usage.input + usage.cache_read + usage.cache_write
    text = f"{tokens_in:,} in"
    if usage.cache_read:
        text += f" ({usage.cache_read:,} cached)"
    text += f" / {usage.output:,} out tokens"
    if usage.cost.total:
        text += f" · ${usage.cost.total:.4f}"
    return text


class TraceTree:
    """Records the span tree of every run while installed (`set_instrumentation(tree)`).

    Runs started with no recorded span current become roots; `render()` draws them all,
    `clear()` forgets them.
    """

    def __init__(self) -> None:
        self.roots: list[SpanNode] = []

    def _open(self, name: str, parent: SpanNode | None) -> SpanNode:
        node = SpanNode(name=name, start=time.perf_counter())
        (parent.children if parent is not None else self.roots).append(node)
        return node

    def start_run(self, run: RunInfo) -> RunObserver | None:
        """A run starts: its node becomes current in the run's task."""
        return _TreeRunObserver(self, self._open("invoke_agent", _current.get()))

    def clear(self) -> None:
        """Forget the recorded runs."""
        self.roots = []

    def render(self) -> str:
        """The recorded runs as an indented tree, one span per line."""
        lines: list[str] = []

        def walk(node: SpanNode, prefix: str, last: bool, root: bool) -> None:
            took = f"{node.end - node.start:.3f} s" if node.end is not None else "(open)"
            head = "" if root else prefix + ("└─ " if last else "├─ ")
            notes = f"  {' · '.join(node.notes)}" if node.notes else ""
            lines.append(f"{head}{node.name}  {took}{notes}")
            inner = "" if root else prefix + ("   " if last else "│  ")
            for i, child in enumerate(node.children):
                walk(child, inner, i == len(node.children) - 1, False)

        for root in self.roots:
            walk(root, "", True, True)
        return "\n".join(lines)


class _TreeRunObserver:
    __slots__ = ("node", "token", "tree")

    def __init__(self, tree: TraceTree, node: SpanNode) -> None:
        self.tree = tree
        self.node = node
        self.token = _current.set(node)

    def start_request(self, model: Model, context: Context) -> RequestObserver | None:
        return _Request(self.tree._open(f"chat {model.id}", self.node))

    def start_tool(self, call: ToolCall) -> ToolObserver | None:
        return _Tool(self.tree._open(f"execute_tool {call.name}", self.node))

    def guardrail_tripped(self, trip: GuardrailTrip) -> None:
        """The run's node notes the guardrail that ended it."""
        self.node.notes.append(f"guardrail {trip.guardrail} ({trip.kind})")

    def end_run(
        self,
        messages: Sequence[AgentMessage],
        limit: LimitReached | None,
        error: BaseException | None,
    ) -> None:
        node = self.node
        node.end = time.perf_counter()
        answers = sum(1 for m in messages if isinstance(m, AssistantMessage))
        node.notes.append(f"{answers} turn{'s' if answers != 1 else ''}")
        node.notes.append(usage_text(run_usage(messages)))
        if limit is not None:
            node.notes.append(f"limit {limit.kind}")
        if error is not None:
            node.notes.append(f"error {type(error).__name__}")
        _current.reset(self.token)


class _Request:
    __slots__ = ("first", "node", "retries")

    def __init__(self, node: SpanNode) -> None:
        self.node = node
        self.first: float | None = None
        self.retries = 0

    def on_retry(self, attempt: int, error: str, delay: float) -> None:
        self.retries += 1

    def on_first_event(self) -> None:
        self.first = time.perf_counter()

    def end_request(self, message: AssistantMessage | None, error: BaseException | None) -> None:
        node = self.node
        node.end = time.perf_counter()
        if self.first is not None:
            node.notes.append(f"ttft {self.first - node.start:.3f} s")
        if self.retries:
            node.notes.append(f"{self.retries} retr{'ies' if self.retries > 1 else 'y'}")
        if message is not None:
            node.notes.append(message.stop_reason)
            node.notes.append(usage_text(message.usage))
        if error is not None:
            node.notes.append(f"error {type(error).__name__}")


class _Tool:
    __slots__ = ("node",)

    def __init__(self, node: SpanNode) -> None:
        self.node = node

    @contextmanager
    def _current(self) -> Iterator[object]:
        token = _current.set(self.node)
        try:
            yield self.node
        finally:
            _current.reset(token)

    def executing(self) -> Any:
        return self._current()

    def end_tool(
        self, result: AgentToolResult, is_error: bool, error: BaseException | None
    ) -> None:
        self.node.end = time.perf_counter()
        if error is not None:
            self.node.notes.append(f"error {type(error).__name__}")
        elif is_error:
            self.node.notes.append("error")
