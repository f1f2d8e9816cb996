"""`code_mode`: one tool that runs the model's Python in a Monty sandbox, over selected tools.

Each snippet runs in a fresh Monty worker process (a pool of one, for the snippet); the REPL
state of a run (its variables and functions) is carried from one snippet to the next as Monty's
session dump, kept per run (`ToolPipeline.scope`), so nothing of one run is visible to another
and a crashed worker costs only that snippet. A selected tool is an async function of keyword
arguments in the sandbox; each call goes through the run's tool pipeline (`tool_pipeline()`),
shielded from the sandbox's own cancellation so that every nested call gets its end, and the
snippet waits for the calls in flight before it ends.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Sequence
from typing import Any

import anyio
import sniffio

from ..abort import AbortSignal
from ..errors import ToolDefinitionError
from ..messages import TextContent, Usage
from ..tools import AgentTool, AgentToolResult, ToolUpdateCallback, tool_pipeline
from ._limits import CodeLimits
from ._sdk import monty
from ._signatures import function_name, signature

__all__ = ["code_mode"]

_SUBSET = """\
The code runs in Monty, a sandboxed subset of Python: no third-party imports; the standard
modules sys, typing, asyncio, math, json, re, datetime are there, but no files, network,
environment or clock. Call each function with keyword arguments and `await` it; run calls at
once with `await asyncio.gather(f(a=1), f(a=2))` (import asyncio first). The value of the last
expression and what you print come back as the result: return only what the answer needs.
Variables stay defined for the next snippet of this conversation unless you pass reset=true."""

_PARAMETERS = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "description": "The Python code to run."},
        "reset": {
            "type": "boolean",
            "description": "Forget the variables of earlier snippets before running.",
        },
    },
    "required": ["code"],
    "additionalProperties": False,
}

_states: weakref.WeakKeyDictionary[object, bytes] = weakref.WeakKeyDictionary()
"""The REPL state of each run (its session dump), until the run is gone."""


class _LimitReached(Exception):
    """A limit the host counts (tool calls) was reached: uncatchable in effect, as the
    snippet's result names it whatever the code does with the exception."""


def _error(text: str) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text=text)], is_error=True)


def _text_of(result: AgentToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, TextContent))


def _value_of(result: AgentToolResult) -> Any:
    """What a nested call returns to the snippet: its text as JSON if it is JSON, else the text."""
    text = _text_of(result)
    try:
        return json.loads(text)
    except ValueError:
        return text


def _render(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _cut(text: str, limit: int, what: str) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[{what} cut: {len(text) - limit:,} more characters over the limit]"


def _add(total: Usage | None, usage: Usage | None) -> Usage | None:
    if usage is None:
        return total
    if total is None:
        return usage
    from ..messages import Cost

    return Usage(
        input=total.input + usage.input,
        output=total.output + usage.output,
        cache_read=total.cache_read + usage.cache_read,
        cache_write=total.cache_write + usage.cache_write,
        cost=Cost(
            input=total.cost.input + usage.cost.input,
            output=total.cost.output + usage.cost.output,
            cache_read=total.cost.cache_read + usage.cost.cache_read,
            cache_write=total.cost.cache_write + usage.cost.cache_write,
        ),
    )


class _Snippet:
    """One snippet's run: its nested calls, their count and usage, the limit it reached."""

    def __init__(self, tool_call_id: str, tools: dict[str, AgentTool], limits: CodeLimits):
        self.tool_call_id = tool_call_id
        self.tools = tools
        self.limits = limits
        self.calls = 0
        self.limit: str | None = None
        self.usage: Usage | None = None
        self.in_flight = 0
        self.drained = anyio.Event()
        self.drained.set()

    def functions(self) -> dict[str, Any]:
        return {name: self._function(name, tool) for name, tool in self.tools.items()}

    def _function(self, name: str, tool: AgentTool) -> Any:
        async def call(*args: Any, **kwargs: Any) -> Any:
            if args:
                raise TypeError(f"{name}() takes keyword arguments only, as in {name}(x=...)")
            if self.calls >= self.limits.tool_calls:
                self.limit = f"tool_calls ({self.limits.tool_calls} calls of tools per snippet)"
                raise _LimitReached(f"the snippet reached its limit of {self.limit}")
            self.calls += 1
            pipeline = tool_pipeline()
            if pipeline is None:  # (the tool checks this before the snippet starts)
                raise RuntimeError("tools can be called only inside an agent run")
            if self.in_flight == 0:
                self.drained = anyio.Event()
            self.in_flight += 1
            try:
                with anyio.CancelScope(shield=True):  # the pipeline ends every call itself
                    result = await pipeline.call(
                        tool, kwargs, parent_tool_call_id=self.tool_call_id
                    )
            finally:
                self.in_flight -= 1
                if self.in_flight == 0:
                    self.drained.set()
            self.usage = _add(self.usage, result.usage)
            if result.is_error:
                raise RuntimeError(f"{name} failed: {_text_of(result)}")
            return _value_of(result)

        return call


async def _run(
    snippet: _Snippet, code: str, state: bytes | None
) -> tuple[AgentToolResult, bytes | None]:
    """Run `code` in a fresh worker from `state`; the result and the state to keep (None: keep
    the earlier one)."""
    limits = snippet.limits
    printed = monty.CollectString(max_bytes=limits.output * 4)
    sandbox_limits: Any = {
        "max_feed_duration_secs": limits.timeout,
        "max_memory": limits.memory,
        "max_recursion_depth": limits.recursion,
        "max_suspensions": limits.tool_calls * 2 + 10,
    }
    policy: Any = {"datetime": "call_host", "random_start": "call_host", "sleep": "zero"}
    async with (
        monty.AsyncMonty(min_processes=1, max_processes=1) as pool,
        pool.checkout(limits=sandbox_limits, os_policy=policy, script_name="snippet.py") as session,
    ):
        if state is not None:
            await session.load_session(state)
        try:
            value = await session.feed_run(
                code, external_lookup=snippet.functions(), print_callback=printed
            )
        except monty.MontyCrashedError as exc:
            return _error(
                f"The sandbox's worker crashed ({exc}); the next snippet starts "
                "afresh, without the variables of earlier ones."
            ), b""
        except (monty.MontySyntaxError, monty.MontyRuntimeError) as exc:
            text = exc.display()
            keep = await session.dump()
            if snippet.limit is not None:
                return _error(f"Limit reached: {snippet.limit}.\n{text}"), keep
            if "time limit exceeded" in text:
                return _error(f"Limit reached: timeout ({limits.timeout:g} s).\n{text}"), None
            if "memory limit exceeded" in text:
                return _error(f"Limit reached: memory ({limits.memory:,} bytes).\n{text}"), None
            if "RecursionError" in text:
                text = f"Limit reached: recursion (depth {limits.recursion}).\n{text}"
            return _error(_cut(_output(printed) + text, limits.output * 2, "error")), keep
        keep = await session.dump()
    if snippet.limit is not None:  # the code caught the exception: the limit still holds
        return _error(f"Limit reached: {snippet.limit}."), keep
    parts = []
    if out := _output(printed):
        parts.append(_cut(out, limits.output, "printed output"))
    if value is not None:
        parts.append(_cut(_render(value), limits.output, "value"))
    text = "".join(parts) if parts else "(no value and nothing printed)"
    return AgentToolResult(content=[TextContent(text=text)]), keep


def _output(printed: Any) -> str:
    out = str(printed.output)
    return out if not out or out.endswith("\n") else out + "\n"


def code_mode(
    tools: Sequence[AgentTool], *, name: str = "run_code", limits: CodeLimits | None = None
) -> AgentTool:
    """One tool that runs the model's Python over `tools` in a Monty sandbox.

    The model sends `{"code": "..."}`; each of `tools` is an async function of its parameters
    in the sandbox (`await get_weather(city="Paris")`), shown in the tool's description as a
    Python signature with its descriptions. The printed output and the value of the last
    expression come back as the result; a syntax error, a runtime error (with its line), a
    failed tool call and a limit reached (`limits`, `CodeLimits()` by default) come back as an
    error result the model can correct. Each call a snippet makes goes through the run's tool
    pipeline as a direct call does (validation, guardrails, hooks, bounds, events with
    `parent_tool_call_id`, spans). Pass the tools only here to make them callable only from
    code, or also to the agent to keep them ordinary tools too.

    Raises:
        ToolDefinitionError: no tools, two with the same Python name, a name that is not an
            identifier.
    """
    limits = limits if limits is not None else CodeLimits()
    if not isinstance(limits, CodeLimits):
        raise ToolDefinitionError(f"code_mode: limits must be a CodeLimits, got {limits!r}")
    by_name: dict[str, AgentTool] = {}
    for tool in tools:
        if not isinstance(tool, AgentTool):
            raise ToolDefinitionError(f"code_mode: {tool!r} is not an AgentTool")
        fn = function_name(tool)
        if fn in by_name:
            raise ToolDefinitionError(f"code_mode: two tools are called {fn!r} in Python")
        by_name[fn] = tool
    if not by_name:
        raise ToolDefinitionError("code_mode: give it at least one tool")
    description = (
        "Run Python code that calls these async functions:\n\n"
        + "\n\n".join(signature(t) for t in by_name.values())
        + "\n\n"
        + _SUBSET
    )

    async def execute(
        tool_call_id: str, args: Any, signal: AbortSignal, on_update: ToolUpdateCallback
    ) -> AgentToolResult:
        if sniffio.current_async_library() != "asyncio":
            return _error("Code mode runs only on asyncio (Monty's async pool needs it).")
        pipeline = tool_pipeline()
        if pipeline is None:
            return _error(
                "Code mode runs only inside an agent run (its tool calls go through "
                "the run's pipeline)."
            )
        scope = pipeline.scope
        state = None if args.get("reset") else _states.get(scope)
        snippet = _Snippet(tool_call_id, by_name, limits)
        result: AgentToolResult | None = None
        try:
            with anyio.move_on_after(limits.timeout + 1.0):
                result, keep = await _run(snippet, args["code"], state)
                if keep == b"":
                    _states.pop(scope, None)
                elif keep is not None:
                    _states[scope] = keep
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(limits.timeout):
                await snippet.drained.wait()  # every nested call has its end before ours
        if result is None:
            result = _error(
                f"Limit reached: timeout ({limits.timeout:g} s of wall time, tool calls included)."
            )
        if snippet.usage is not None:
            result = AgentToolResult(
                content=result.content, is_error=result.is_error, usage=snippet.usage
            )
        return result

    return AgentTool(name=name, description=description, parameters=_PARAMETERS, execute=execute)
