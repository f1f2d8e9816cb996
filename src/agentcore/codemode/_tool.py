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
from anyio.abc import TaskGroup

from ..abort import AbortSignal
from ..approvals import ApprovalRequest, CallSuspended, CallWaits
from ..errors import ToolDefinitionError
from ..messages import TextContent, Usage
from ..tools import AgentTool, AgentToolResult, ToolPipeline, ToolUpdateCallback, tool_pipeline
from ._limits import CodeLimits
from ._saved import DEFAULT_KEY, Saved, SavedStateError, Waiter, seal, unseal
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
    """One snippet's run: its nested calls (run as tasks while the sandbox waits on their
    futures), their count and usage, the limit it reached, the calls waiting for a decision."""

    def __init__(
        self,
        tool_call_id: str,
        tools: dict[str, AgentTool],
        limits: CodeLimits,
        pipeline: ToolPipeline,
        group: TaskGroup,
    ):
        self.tool_call_id = tool_call_id
        self.tools = tools
        self.limits = limits
        self.pipeline = pipeline
        self.group = group
        self.calls = 0
        self.limit: str | None = None
        self.usage: Usage | None = None
        self.in_flight = 0
        self.drained = anyio.Event()
        self.drained.set()
        self.changed = anyio.Event()  # a call in flight settled or started to wait
        self.running: set[int] = set()
        self.done: dict[int, dict[str, Any]] = {}  # Monty call id -> its settled result
        self.waiting: dict[int, Waiter] = {}  # Monty call id -> the call waiting for a decision
        self.requests: list[ApprovalRequest] = []  # their requests, in the order they came

    def functions(self) -> dict[str, Any]:
        """Names for the sandbox to resolve: the tools (answered by `drive`, never called)."""
        return {name: self._never_called for name in self.tools}

    @staticmethod
    async def _never_called(**kwargs: Any) -> Any:  # (drive answers every tool call itself)
        raise RuntimeError("tool functions are answered by the snippet's driver")

    def start(self, snap: Any) -> dict[str, Any]:
        """A call of a tool function: its answer now (an error), or a future (a task runs it)."""
        name = snap.function_name
        if snap.args:
            return {
                "exception": TypeError(
                    f"{name}() takes keyword arguments only, as in {name}(x=...)"
                )
            }
        if self.calls >= self.limits.tool_calls:
            self.limit = f"tool_calls ({self.limits.tool_calls} calls of tools per snippet)"
            return {"exception": _LimitReached(f"the snippet reached its limit of {self.limit}")}
        self.calls += 1
        self.launch(snap.call_id, name, dict(snap.kwargs), None)
        return {"future": ...}

    def launch(self, cid: int, name: str, kwargs: dict[str, Any], call_id: str | None) -> None:
        """Run one nested call as a task (`call_id`: a decided one, carried on)."""
        if self.in_flight == 0:
            self.drained = anyio.Event()
        self.in_flight += 1
        self.running.add(cid)
        self.group.start_soon(self._call, cid, name, kwargs, call_id)

    async def _call(self, cid: int, name: str, kwargs: dict[str, Any], call_id: str | None) -> None:
        try:
            with anyio.CancelScope(shield=True):  # the pipeline ends every call itself
                result = await self.pipeline.call(
                    self.tools[name],
                    kwargs,
                    parent_tool_call_id=self.tool_call_id,
                    call_id=call_id,
                    can_wait=True,
                )
        except CallWaits as waits:  # it waits for a decision: the snippet will suspend
            self.waiting[cid] = Waiter(waits.request.tool_call_id, name, kwargs)
            self.requests.append(waits.request)
        else:
            self.usage = _add(self.usage, result.usage)
            if result.is_error:
                text = f"{name} failed: {_text_of(result)}"
                self.done[cid] = {"exc_type": "RuntimeError", "message": text}
            else:
                self.done[cid] = {"return_value": _value_of(result)}
        finally:
            self.running.discard(cid)
            self.in_flight -= 1
            if self.in_flight == 0:
                self.drained.set()
            self.changed.set()

    async def drive(self, snap: Any) -> Any:
        """Take the sandbox from `snap` to its end (`MontyComplete`), or to an await on calls
        that all wait for a decision (that `AsyncFutureSnapshot`, every other call settled)."""
        while not isinstance(snap, monty.MontyComplete):
            if isinstance(snap, monty.AsyncFunctionSnapshot):
                if snap.is_os_function or snap.function_name not in self.tools:
                    snap = await snap.resume_auto()  # (the OS policy answers)
                else:
                    snap = await snap.resume(self.start(snap))
            elif isinstance(snap, monty.AsyncFutureSnapshot):
                pending = snap.pending_call_ids
                ready = {i: self.done.pop(i) for i in pending if i in self.done}
                if ready:
                    snap = await snap.resume(ready)
                elif any(i in self.running for i in pending):
                    self.changed = anyio.Event()
                    await self.changed.wait()
                elif all(i in self.waiting for i in pending):
                    await self.drained.wait()  # the calls in flight settle first
                    if not self.running and not any(i in self.done for i in pending):
                        return snap
                else:  # (a future this driver never started: not a tool call of its own)
                    raise RuntimeError(f"the snippet awaits calls it never made: {pending}")
            else:
                snap = await snap.resume_auto()  # a name: resolved from `functions`
        return snap


class _Suspend(Exception):
    """The snippet waits on calls that wait for a decision: what to keep of it."""

    def __init__(self, saved: Saved) -> None:
        super().__init__("the snippet suspends")
        self.saved = saved


async def _run(
    snippet: _Snippet, code: str, state: bytes | None, resume: Saved | None
) -> tuple[AgentToolResult, bytes | None]:
    """Run `code` in a fresh worker from `state` (or go on from `resume`); the result and the
    state to keep (None: keep the earlier one).

    Raises:
        _Suspend: every call the snippet awaits waits for a decision.
    """
    limits = snippet.limits
    printed = monty.CollectString(max_bytes=limits.output * 4)
    sandbox_limits: Any = {
        "max_feed_duration_secs": limits.timeout,
        "max_memory": limits.memory,
        "max_recursion_depth": limits.recursion,
        "max_suspensions": limits.tool_calls * 2 + 10,
    }
    policy: Any = {"datetime": "call_host", "random_start": "call_host", "sleep": "zero"}
    before = resume.printed if resume is not None else ""
    async with (
        monty.AsyncMonty(min_processes=1, max_processes=1) as pool,
        pool.checkout(limits=sandbox_limits, os_policy=policy, script_name="snippet.py") as session,
    ):
        if state is not None and resume is None:
            await session.load_session(state)
        try:
            if resume is None:
                snap = await session.feed_start(
                    code, external_lookup=snippet.functions(), print_callback=printed
                )
            else:
                snap = await session.load_snapshot(
                    resume.snapshot, external_lookup=snippet.functions(), print_callback=printed
                )
                for cid, waiter in resume.waiting.items():  # carried on as they were decided
                    snippet.launch(cid, waiter.function, waiter.kwargs, waiter.call_id)
            end = await snippet.drive(snap)
            while not isinstance(end, monty.MontyComplete):  # it awaits calls that wait
                snapshot = end.dump()
                if len(snapshot) <= limits.snapshot:
                    raise _Suspend(
                        Saved(
                            snapshot=snapshot,
                            calls=snippet.calls,
                            printed=before + str(printed.output),
                            done=dict(snippet.done),
                            waiting=dict(snippet.waiting),
                            usage=snippet.usage,
                        )
                    )
                end = await snippet.drive(await end.resume(_refused(snippet, len(snapshot))))
            value = end.output
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
            if f"bytes > {limits.output * 4} bytes" in text:  # the printed output's collector
                return _error(
                    f"Limit reached: output ({limits.output:,} characters of printed output)."
                    "\nPrint less: only what the answer needs."
                ), None
            if "memory limit exceeded" in text:
                return _error(f"Limit reached: memory ({limits.memory:,} bytes).\n{text}"), None
            if "RecursionError" in text:
                text = f"Limit reached: recursion (depth {limits.recursion}).\n{text}"
            out = _output(before + str(printed.output))
            return _error(_cut(out + text, limits.output * 2, "error")), keep
        keep = await session.dump()
    if snippet.limit is not None:  # the code caught the exception: the limit still holds
        return _error(f"Limit reached: {snippet.limit}."), keep
    parts = []
    if out := _output(before + str(printed.output)):
        parts.append(_cut(out, limits.output, "printed output"))
    if value is not None:
        parts.append(_cut(_render(value), limits.output, "value"))
    text = "".join(parts) if parts else "(no value and nothing printed)"
    return AgentToolResult(content=[TextContent(text=text)]), keep


def _refused(snippet: _Snippet, size: int) -> dict[int, Any]:
    """The waiting calls' errors when the snippet is too large to keep while they wait."""
    out: dict[int, Any] = {}
    for cid, waiter in snippet.waiting.items():
        text = (
            f"{waiter.function} failed: it needs a decision (approval or input), and the "
            f"snippet's state ({size:,} bytes) is over the {snippet.limits.snapshot:,} bytes "
            "kept while it waits (CodeLimits.snapshot): call it directly instead."
        )
        out[cid] = {"exc_type": "RuntimeError", "message": text}
    snippet.waiting.clear()
    snippet.requests.clear()
    return out


def _output(out: str) -> str:
    return out if not out or out.endswith("\n") else out + "\n"


_DEFAULT_LIMITS = CodeLimits()


def code_mode(
    tools: Sequence[AgentTool],
    *,
    name: str = "run_code",
    limits: CodeLimits = _DEFAULT_LIMITS,
    snapshot_key: bytes | None = None,
) -> AgentTool:
    """One tool that runs the model's Python over `tools` in a Monty sandbox.

    The model sends `{"code": "..."}`; each of `tools` is an async function of its parameters
    in the sandbox (`await get_weather(city="Paris")`), shown in the tool's description as a
    Python signature with its descriptions. The printed output and the value of the last
    expression come back as the result; a syntax error, a runtime error (with its line), a
    failed tool call and a limit reached (`limits`, `CodeLimits()` by default; None also means
    the defaults) come back as an error result the model can correct. Each call a snippet
    makes goes through the run's tool pipeline as a direct call does (validation, guardrails,
    hooks, bounds, events with `parent_tool_call_id`, spans); its id is the snippet's call id
    and its number within the snippet (`<id>.1`, `<id>.2`, ...). Pass the tools only here to
    make them callable only from code, or also to the agent to keep them ordinary tools too.

    A call that needs approval or input suspends the snippet (docs/code-mode.md, "Approvals
    inside a snippet"): the run ends waiting for the decision, the snippet's Monty snapshot is
    kept in the transcript (a `SuspendedCall`, sealed with an HMAC keyed by `snapshot_key`;
    without one it detects damage, not forgery: see docs/security.md), and the next run goes
    on where it stopped, in a new worker, without running again what already ran.

    Raises:
        ToolDefinitionError: no tools, two with the same Python name, a name that is not an
            identifier, a `snapshot_key` that is not bytes (at least 16).
    """
    limits = limits if limits is not None else _DEFAULT_LIMITS
    if snapshot_key is not None and (not isinstance(snapshot_key, bytes) or len(snapshot_key) < 16):
        raise ToolDefinitionError(
            f"code_mode: snapshot_key must be bytes, at least 16 of them (a secret), got "
            f"{type(snapshot_key).__name__}"
        )
    key = snapshot_key if snapshot_key is not None else DEFAULT_KEY
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
        resume: Saved | None = None
        kept = pipeline.suspended_state(tool_call_id)
        if kept is not None:  # it suspended: it goes on where it stopped
            try:
                resume = unseal(kept, tool_call_id, key, limits.snapshot)
            except SavedStateError as exc:
                return _error(
                    f"The snippet suspended, but its saved state was refused: {exc}. "
                    "It was not resumed (nothing it had not run yet ran)."
                )
        scope = pipeline.scope
        state = None if args.get("reset") or resume is not None else _states.get(scope)
        result: AgentToolResult | None = None
        suspended: Saved | None = None
        async with anyio.create_task_group() as group:  # the nested calls in flight
            snippet = _Snippet(tool_call_id, by_name, limits, pipeline, group)
            if resume is not None:
                snippet.calls, snippet.usage = resume.calls, resume.usage
                snippet.done = dict(resume.done)
            try:
                with anyio.move_on_after(limits.timeout + 1.0):
                    try:
                        result, keep = await _run(snippet, args["code"], state, resume)
                    except _Suspend as stop:
                        suspended = stop.saved
                    else:
                        if keep == b"":
                            _states.pop(scope, None)
                        elif keep is not None:
                            _states[scope] = keep
            finally:
                with anyio.CancelScope(shield=True), anyio.move_on_after(limits.timeout):
                    await snippet.drained.wait()  # every nested call has its end before ours
                group.cancel_scope.cancel()  # (a call still running after that is given up)
        if suspended is not None:  # its call waits for the decisions on the calls it made
            raise CallSuspended(snippet.requests, seal(suspended, tool_call_id, key))
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
