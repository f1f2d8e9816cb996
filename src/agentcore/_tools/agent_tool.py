"""Agents as tools: an `Agent`, or a loop configuration, wrapped as an `AgentTool`.

The outer model calls the tool with a `task`; the inner agent runs on it and its final answer is
the tool's result. While it runs, each event of the inner run reaches the outer run as a
`tool_execution_update` whose `partial_result.details` is the inner event and whose text is the
inner answer so far, so a UI can show the nested activity as it happens.

The inner run is never cut off in the middle: an abort of the outer run (or the tool's timeout)
aborts the inner run, which then ends as any aborted run does (every tool call answered,
`agent_end` emitted) before the tool returns. Its usage and cost are summed into the result's
`usage` and `details`; an inner run that fails, or is aborted from elsewhere, gives an error
result with the inner error text.

It needs nothing beyond agentcore itself (it lived in `agentcore.mcp` until issue 34; that
name still works, with a `DeprecationWarning`). Its neighbour for the other way of composing
agents is `agentcore.handoff`: see docs/handoffs.md.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio

from .._engine.entry import run_agent_loop
from ..abort import AbortController, AbortSignal, cancel_on_abort
from ..agent import Agent
from ..config import AgentContext, AgentLoopConfig
from ..errors import AgentBusyError, ConfigError
from ..events import (
    AgentEndEvent,
    AgentEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
)
from ..limits import LimitReached
from ..llm.registry import StreamFn
from ..messages import (
    AgentMessage,
    AssistantMessage,
    Cost,
    ImageContent,
    TextContent,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from ..tools import (
    AgentTool,
    AgentToolResult,
    ToolExecutionMode,
    ToolUpdateCallback,
    task_tool,
)

__all__ = ["agent_tool"]

Emit = Callable[[AgentEvent], None]
Runner = Callable[[str, Emit, AbortSignal, AbortController], Awaitable[list[AgentMessage]]]


class _Forward:
    """Turns inner events into partial results: the inner answer's text so far, and the event."""

    def __init__(self, on_update: ToolUpdateCallback) -> None:
        self.on_update = on_update
        self.text = ""
        self.limit: LimitReached | None = None

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, MessageUpdateEvent):
            delta = event.assistant_message_event
            if delta.type == "text_delta":
                self.text += delta.delta
        elif isinstance(event, MessageStartEvent | MessageEndEvent) and isinstance(
            event.message, AssistantMessage
        ):
            self.text = event.message.text
        elif isinstance(event, AgentEndEvent):
            self.limit = event.limit
        content: list[TextContent | ImageContent] = (
            [TextContent(text=self.text)] if self.text else []
        )
        self.on_update(AgentToolResult(content=content, details=event))


def _total(messages: Sequence[AgentMessage]) -> Usage:
    """The usage of the inner run's requests, and of the tools that reported their own."""
    parts: list[Usage] = []
    for message in messages:
        usage = getattr(message, "usage", None)  # assistant answers, and tools that report any
        if isinstance(message, AssistantMessage | ToolResultMessage) and usage is not None:
            parts.append(usage)
    return Usage(
        input=sum(u.input for u in parts),
        output=sum(u.output for u in parts),
        cache_read=sum(u.cache_read for u in parts),
        cache_write=sum(u.cache_write for u in parts),
        cost=Cost(
            input=sum(u.cost.input for u in parts),
            output=sum(u.cost.output for u in parts),
            cache_read=sum(u.cost.cache_read for u in parts),
            cache_write=sum(u.cost.cache_write for u in parts),
        ),
    )


def _usage_json(usage: Usage) -> dict[str, Any]:
    cost = usage.cost
    return {
        "input": usage.input,
        "output": usage.output,
        "cache_read": usage.cache_read,
        "cache_write": usage.cache_write,
        "total_tokens": usage.total_tokens,
        "cost": {
            "input": cost.input,
            "output": cost.output,
            "cache_read": cost.cache_read,
            "cache_write": cost.cache_write,
            "total": cost.total,
        },
    }


def _result(
    name: str, messages: Sequence[AgentMessage], limit: LimitReached | None
) -> AgentToolResult:
    usage = _total(messages)
    answers = [m for m in messages if isinstance(m, AssistantMessage)]
    last = answers[-1] if answers else None
    details: dict[str, Any] = {
        "usage": _usage_json(usage),
        "turns": len(answers),
        "stop_reason": last.stop_reason if last is not None else None,
    }
    if limit is not None:
        details["limit"] = {"kind": limit.kind, "limit": limit.limit, "used": limit.used}
    if last is None:
        text, failed = f"The agent {name!r} gave no answer.", True
    elif last.stop_reason == "error":
        text, failed = f"The agent {name!r} failed: {last.error_message or 'unknown error'}", True
    elif last.stop_reason == "aborted":
        text, failed = f"The agent {name!r} was aborted before it finished.", True
    else:
        text, failed = last.text, False
        if limit is not None:
            text = (
                f"{text}\n\n[The agent {name!r} stopped early: its {limit.kind} limit of "
                f"{limit.limit:g} was reached.]"
            ).lstrip()
    return AgentToolResult(
        content=[TextContent(text=text)] if text else [],
        details=details,
        usage=usage,
        is_error=failed,
    )


def _agent_runner(agent: Agent) -> Runner:
    async def run(
        task: str, emit: Emit, outer: AbortSignal, inner: AbortController
    ) -> list[AgentMessage]:
        if agent.signal is not None and agent.signal is outer:
            raise ConfigError("an agent cannot call itself as a tool")
        remove = inner.signal.add_listener(agent.abort)
        unsubscribe = agent.subscribe(emit)
        try:
            while True:  # one run at a time: parallel calls of this tool take turns
                with cancel_on_abort(inner.signal):
                    await agent.wait_for_idle()
                if inner.signal.aborted:
                    return []
                try:
                    return await agent.prompt(task)
                except AgentBusyError:
                    continue
        finally:
            unsubscribe()
            remove()

    return run


def _loop_runner(
    config: AgentLoopConfig, context: AgentContext, stream_fn: StreamFn | None
) -> Runner:
    async def run(
        task: str, emit: Emit, outer: AbortSignal, inner: AbortController
    ) -> list[AgentMessage]:
        fresh = AgentContext(
            system_prompt=context.system_prompt,
            messages=list(context.messages),
            tools=list(context.tools),
        )
        return await run_agent_loop(
            [UserMessage(content=task)], fresh, config, emit, inner.signal, stream_fn
        )

    return run


def agent_tool(
    agent: Agent | AgentLoopConfig,
    *,
    name: str,
    description: str,
    context: AgentContext | None = None,
    stream_fn: StreamFn | None = None,
    label: str | None = None,
    timeout: float | None = None,
    execution_mode: ToolExecutionMode | None = None,
) -> AgentTool:
    """Wrap an agent as a tool another agent can call with a `task` (a string).

    ```python
    researcher = agent_tool(
        AgentLoopConfig(model=model),
        name="research",
        description="Research a question and answer it with sources.",
        context=AgentContext(system_prompt="You research.", tools=[search]),
    )
    ```

    Args:
        agent: an `Agent` (each call prompts it, so it remembers earlier calls; calls take
            turns), or an `AgentLoopConfig` (each call is a fresh run on `context`, and parallel
            calls run in parallel).
        name: the tool's name, as for `AgentTool`.
        description: the tool's description, as for `AgentTool`.
        label: the tool's label, as for `AgentTool`.
        timeout: seconds one call may run, as for `AgentTool`.
        execution_mode: as for `AgentTool`.
        context: for a loop configuration, the system prompt, tools and any leading messages
            of each run (default: empty).
        stream_fn: for a loop configuration, the stream function of its runs (default:
            `agentcore.llm.stream_simple`).

    Raises:
        ConfigError: `agent` is neither, or `context`/`stream_fn` were given with an `Agent`.
        ToolDefinitionError: an invalid name.
    """
    runner: Runner
    if isinstance(agent, Agent):
        if context is not None or stream_fn is not None:
            raise ConfigError(
                "context and stream_fn are for a loop configuration; an Agent has its own"
            )
        runner = _agent_runner(agent)
    elif isinstance(agent, AgentLoopConfig):
        if context is not None and not isinstance(context, AgentContext):
            raise ConfigError(f"context must be an AgentContext, got {type(context).__name__}")
        runner = _loop_runner(agent, context or AgentContext(), stream_fn)
    else:
        raise ConfigError(
            f"agent_tool wraps an Agent or an AgentLoopConfig, got {type(agent).__name__}"
        )

    async def execute(
        task: str, signal: AbortSignal, on_update: ToolUpdateCallback
    ) -> AgentToolResult:
        forward = _Forward(on_update)
        inner = AbortController()
        outcome: list[list[AgentMessage]] = []
        failure: list[Exception] = []
        finished = anyio.Event()

        async def run_inner() -> None:
            # Shielded: the outer cancellation reaches the inner run as its abort, so it ends
            # well formed instead of being cut off.
            with anyio.CancelScope(shield=True):
                try:
                    outcome.append(await runner(task, forward, signal, inner))
                except Exception as exc:
                    failure.append(exc)
                finally:
                    finished.set()

        remove = signal.add_listener(inner.abort)
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(run_inner)
                try:
                    await finished.wait()
                except anyio.get_cancelled_exc_class():
                    inner.abort("the calling run was cancelled")
                    raise
        finally:
            remove()
        if failure:
            exc = failure[0]
            return AgentToolResult.error(
                f"The agent {name!r} could not run: {str(exc) or type(exc).__name__}"
            )
        return _result(name, outcome[0], forward.limit)

    return task_tool(
        execute,
        name=name,
        description=description,
        label=label,
        timeout=timeout,
        execution_mode=execution_mode,
    )
