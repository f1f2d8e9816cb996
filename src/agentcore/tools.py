"""Tools the agent can call: `AgentTool`, its result type, and the `@tool` decorator.

A tool has a name, a description and parameters (a JSON Schema dict or a Pydantic model class),
and an `execute` that may be async or sync (a sync one runs in a worker thread, so it never blocks
the event loop). Arguments are validated before `execute` sees them; a tool that raises, or that
returns `is_error=True`, gives the model an error result it can react to.
"""

from __future__ import annotations

import enum
import inspect
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, overload

from ._tools import pipeline as _pipeline
from ._tools.capping import MAX_IMAGE_CHARS, MAX_RESULT_CHARS, capped_content
from ._tools.result import AgentToolResult, ToolUpdateCallback
from ._tools.search import SEARCH_TOOLS
from ._tools.signature import INJECTED_NAMES, doc_parts, is_signal, parameter_hints
from ._tools.validation import ArgumentsValidator, json_schema_of
from ._tools.values import NotJsonError, json_text, to_json_value
from .abort import AbortSignal
from .errors import ToolDefinitionError
from .llm.types import Tool, ToolCallerKind
from .messages import ImageContent, TextContent

if TYPE_CHECKING:
    import pydantic

__all__ = [
    "MAX_IMAGE_CHARS",
    "MAX_RESULT_CHARS",
    "SEARCH_TOOLS",
    "TASK_SCHEMA",
    "AgentTool",
    "AgentToolResult",
    "ToolExecutionMode",
    "ToolPipeline",
    "ToolUpdateCallback",
    "TaskRunner",
    "capped_content",
    "task_tool",
    "tool",
    "tool_pipeline",
]

_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


class ToolExecutionMode(enum.StrEnum):
    """How the tool calls of one answer run: all at once, or one after another."""

    PARALLEL = "parallel"
    SEQUENTIAL = "sequential"


ExecuteFn: TypeAlias = Callable[
    [str, Any, AbortSignal, ToolUpdateCallback], "AgentToolResult | Awaitable[AgentToolResult]"
]


class AgentTool:
    """A tool the agent can call.

    Either pass `execute`, or subclass and override `execute` (async or sync).

    Args:
        name: what the model calls it (letters, digits, `_` and `-`, at most 64).
        description: what it does, for the model.
        parameters: a JSON Schema dict for the arguments, or a Pydantic model class (then
            `execute` receives a model instance).
        execute: `(tool_call_id, args, signal, on_update) -> AgentToolResult`.
        label: a human-readable name for UIs (default: `name`).
        execution_mode: `SEQUENTIAL` makes every batch containing this tool run sequentially.
        prepare_arguments: turns raw model arguments into the schema's shape before validation
            (for old argument formats); returning None keeps them.
        timeout: seconds one call may run (None: the run's `tool_timeout`, if any); a call that
            takes longer is cancelled and gets an error result naming the timeout.
        requires_approval: True to make every call wait for a person's decision instead of
            running, or a function `(args) -> bool` of the validated arguments deciding per call
            (see docs/approvals.md).
        deferred: True to keep the tool out of the model's requests until the model finds it
            with the run's `search_tools` tool (see "Tool search" in docs/tools.md).
        allowed_callers: who may call the tool: `"direct"` (the model, the default) and/or
            `"hosted_code"` (code the provider runs for the model, on an API that has it:
            Anthropic's programmatic tool calling; elsewhere the tool stays an ordinary one).
            See "Hosted code execution" in docs/code-mode.md.

    Raises:
        ToolDefinitionError: an invalid name, schema or execute function.
    """

    def __init__(
        self,
        *,
        name: str,
        description: str,
        parameters: Mapping[str, Any] | type[pydantic.BaseModel],
        execute: ExecuteFn | None = None,
        label: str | None = None,
        execution_mode: ToolExecutionMode | None = None,
        prepare_arguments: Callable[[Any], Any] | None = None,
        timeout: float | None = None,
        requires_approval: bool | Callable[[Any], bool] = False,
        deferred: bool = False,
        allowed_callers: Sequence[ToolCallerKind] = ("direct",),
    ) -> None:
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ToolDefinitionError(
                f"invalid tool name {name!r}: use 1-64 letters, digits, '_' or '-'"
            )
        if not isinstance(description, str):
            raise ToolDefinitionError(f"tool {name!r}: description must be a string")
        if execute is not None and not callable(execute):
            raise ToolDefinitionError(f"tool {name!r}: execute must be callable")
        if execute is None and type(self).execute is AgentTool.execute:
            raise ToolDefinitionError(
                f"tool {name!r}: pass execute=... or subclass AgentTool and override execute"
            )
        if execution_mode is not None and not isinstance(execution_mode, ToolExecutionMode):
            raise ToolDefinitionError(
                f"tool {name!r}: execution_mode must be a ToolExecutionMode, got {execution_mode!r}"
            )
        if timeout is not None and (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not 0 < timeout < float("inf")
        ):
            raise ToolDefinitionError(
                f"tool {name!r}: timeout must be a positive number of seconds or None, "
                f"got {timeout!r}"
            )
        if not isinstance(requires_approval, bool) and not callable(requires_approval):
            raise ToolDefinitionError(
                f"tool {name!r}: requires_approval must be True, False or a function (args) -> "
                f"bool, got {type(requires_approval).__name__}"
            )
        if deferred is not True and deferred is not False:
            raise ToolDefinitionError(f"tool {name!r}: deferred must be True or False")
        callers = _callers(name, allowed_callers)
        self.name = name
        self.deferred = deferred
        self.requires_approval = requires_approval
        self.label = label or name
        self.timeout = timeout
        self.description = description
        self.parameters = parameters
        self.execution_mode = execution_mode
        self._execute = execute
        self._prepare = prepare_arguments
        target = execute if execute is not None else self.execute
        self._is_async = inspect.iscoroutinefunction(target) or inspect.iscoroutinefunction(
            getattr(target, "__call__", None)  # noqa: B004
        )
        self.validator = ArgumentsValidator(name, parameters)
        self.allowed_callers = callers
        self.llm_tool = Tool(
            name=name,
            description=description,
            parameters=json_schema_of(parameters),
            allowed_callers=callers,
        )

    def execute(
        self,
        tool_call_id: str,
        args: Any,
        signal: AbortSignal,
        on_update: ToolUpdateCallback,
    ) -> AgentToolResult | Awaitable[AgentToolResult]:
        """Run the tool. Raise (or return `is_error=True`) to report a failure to the model."""
        assert self._execute is not None
        return self._execute(tool_call_id, args, signal, on_update)

    def prepare_arguments(self, raw: Any) -> Any:
        """Adapt raw model arguments before validation; None keeps them as they are."""
        return self._prepare(raw) if self._prepare is not None else None

    def is_async(self) -> bool:
        """Whether `execute` is a coroutine function (else it runs in a worker thread)."""
        return self._is_async

    def __repr__(self) -> str:
        return f"AgentTool(name={self.name!r})"


def _callers(name: str, value: Any) -> tuple[ToolCallerKind, ...]:
    """`allowed_callers` checked: a non-empty sequence of distinct `direct` / `hosted_code`."""
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ToolDefinitionError(
            f"tool {name!r}: allowed_callers must be a sequence of 'direct' and/or "
            f"'hosted_code', got {value!r}"
        )
    callers = tuple(value)
    wrong = [c for c in callers if c not in ("direct", "hosted_code")]
    if not callers or wrong or len(set(callers)) != len(callers):
        raise ToolDefinitionError(
            f"tool {name!r}: allowed_callers must name 'direct' and/or 'hosted_code', each "
            f"once, got {list(callers)!r}"
        )
    return callers


# --- @tool -----------------------------------------------------------------------------------


def _to_result(value: Any, tool_name: str) -> AgentToolResult:
    """What a `@tool` function returned, as a result (the rule is in `_tools.values`)."""
    if isinstance(value, str):
        return AgentToolResult(content=[TextContent(text=value)])
    if isinstance(value, AgentToolResult):
        return value
    if value is None:
        return AgentToolResult()
    if isinstance(value, TextContent | ImageContent):
        return AgentToolResult(content=[value])
    if (
        isinstance(value, list)
        and value
        and all(isinstance(v, TextContent | ImageContent) for v in value)
    ):
        return AgentToolResult(content=list(value))
    try:
        data = to_json_value(value)
    except NotJsonError as exc:
        raise TypeError(f"tool {tool_name!r} returned a value that is not JSON: {exc}") from None
    return AgentToolResult(content=[TextContent(text=json_text(data))], details=data)


def _build_tool(
    fn: Callable[..., Any],
    name: str | None,
    description: str | None,
    label: str | None,
    execution_mode: ToolExecutionMode | None,
    timeout: float | None = None,
    requires_approval: bool | Callable[[Any], bool] = False,
    deferred: bool = False,
    allowed_callers: Sequence[ToolCallerKind] = ("direct",),
) -> AgentTool:
    import pydantic

    tool_name = name or fn.__name__
    try:
        hints = parameter_hints(fn)
    except Exception as exc:
        raise ToolDefinitionError(f"tool {tool_name!r}: cannot read type hints ({exc})") from exc
    doc, param_docs = doc_parts(fn)
    fields: dict[str, Any] = {}
    injected: dict[str, str] = {}
    for param in inspect.signature(fn).parameters.values():
        annotation = hints.get(param.name, Any)
        if is_signal(annotation) or (param.name == "signal" and annotation in (Any, None)):
            injected[param.name] = "signal"
            continue
        if param.name in INJECTED_NAMES:
            injected[param.name] = param.name
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolDefinitionError(
                f"tool {tool_name!r}: *args/**kwargs cannot be described to a model; "
                "declare each argument"
            )
        if param.kind is param.POSITIONAL_ONLY:
            raise ToolDefinitionError(
                f"tool {tool_name!r}: positional-only argument {param.name!r} is not supported"
            )
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (
            annotation,
            pydantic.Field(default, description=param_docs.get(param.name)),
        )
    try:
        model = pydantic.create_model(f"{tool_name}_arguments", **fields)
        model.model_json_schema()
    except Exception as exc:
        raise ToolDefinitionError(
            f"tool {tool_name!r}: its argument types cannot be turned into a JSON Schema ({exc})"
        ) from exc
    argument_names = list(fields)
    is_async = inspect.iscoroutinefunction(fn)

    def call(
        tool_call_id: str, args: Any, signal: AbortSignal, on_update: ToolUpdateCallback
    ) -> Any:
        kwargs = {k: getattr(args, k) for k in argument_names}
        if injected:
            values = {"signal": signal, "on_update": on_update, "tool_call_id": tool_call_id}
            kwargs.update({param: values[kind] for param, kind in injected.items()})
        return fn(**kwargs)

    if is_async:

        async def execute(
            tool_call_id: str, args: Any, signal: AbortSignal, on_update: ToolUpdateCallback
        ) -> AgentToolResult:
            return _to_result(await call(tool_call_id, args, signal, on_update), tool_name)

        return AgentTool(
            name=tool_name,
            description=description if description is not None else doc,
            parameters=model,
            execute=execute,
            label=label,
            execution_mode=execution_mode,
            timeout=timeout,
            requires_approval=requires_approval,
            deferred=deferred,
            allowed_callers=allowed_callers,
        )

    def execute_sync(
        tool_call_id: str, args: Any, signal: AbortSignal, on_update: ToolUpdateCallback
    ) -> AgentToolResult:
        return _to_result(call(tool_call_id, args, signal, on_update), tool_name)

    return AgentTool(
        name=tool_name,
        description=description if description is not None else doc,
        parameters=model,
        execute=execute_sync,
        label=label,
        execution_mode=execution_mode,
        timeout=timeout,
        requires_approval=requires_approval,
        deferred=deferred,
        allowed_callers=allowed_callers,
    )


@overload
def tool(fn: Callable[..., Any], /) -> AgentTool: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    label: str | None = None,
    execution_mode: ToolExecutionMode | None = None,
    timeout: float | None = None,
    requires_approval: bool | Callable[[Any], bool] = False,
    deferred: bool = False,
    allowed_callers: Sequence[ToolCallerKind] = ("direct",),
) -> Callable[[Callable[..., Any]], AgentTool]: ...
def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    label: str | None = None,
    execution_mode: ToolExecutionMode | None = None,
    timeout: float | None = None,
    requires_approval: bool | Callable[[Any], bool] = False,
    deferred: bool = False,
    allowed_callers: Sequence[ToolCallerKind] = ("direct",),
) -> AgentTool | Callable[[Callable[..., Any]], AgentTool]:
    """Build an `AgentTool` from a typed function, with or without arguments.

    The schema comes from the signature (via Pydantic), the description from the docstring
    (argument docs from its `Args:` section). A parameter annotated `AbortSignal` (or named
    `signal`), `on_update` or `tool_call_id` is injected, not shown to the model. The function may
    be async or sync (sync ones run in a worker thread). It may return an `AgentToolResult`, a
    `str` (one text block), `None` (no content), a content block or a non-empty list of them, or
    any other value, which is made JSON by one rule (datetimes, UUIDs, Decimals, enums, sets,
    tuples, dataclasses and Pydantic models included; see docs/tools.md) and sent as JSON text,
    with the JSON value as `details`. A value that cannot be JSON (bytes, NaN, a cycle, an
    unknown object) gives an error result naming its type and path, never a repr.
    `requires_approval` makes calls wait for a decision, `deferred` keeps the tool out of the
    requests until a search finds it, `allowed_callers` lets code the provider runs call it
    (see `AgentTool`).

    ```python
    @tool
    def add(a: int, b: int) -> str:
        "Add two integers."
        return str(a + b)
    ```
    """

    def decorate(f: Callable[..., Any]) -> AgentTool:
        return _build_tool(
            f,
            name,
            description,
            label,
            execution_mode,
            timeout,
            requires_approval,
            deferred,
            allowed_callers,
        )

    return decorate(fn) if fn is not None else decorate


TASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "task": {
            "type": "string",
            "description": "What the agent should do, with everything it needs to know: it "
            "does not see this conversation.",
        }
    },
    "required": ["task"],
}
"""The parameters of a tool that hands a task to another agent (`task_tool`): one string."""

TaskRunner: TypeAlias = Callable[[str, AbortSignal, ToolUpdateCallback], Awaitable[AgentToolResult]]
"""Runs one task for `task_tool`: `(task, signal, on_update) -> result`."""


def task_tool(
    run: TaskRunner,
    *,
    name: str,
    description: str,
    label: str | None = None,
    timeout: float | None = None,
    execution_mode: ToolExecutionMode | None = None,
) -> AgentTool:
    """A tool the model calls with a `task` (`TASK_SCHEMA`: one string) that another agent does:
    the one skeleton of the agents-as-tools, `agentcore.agent_tool` (an agent of this
    process) and `agentcore.a2a.a2a_tool` (a remote A2A agent).

    Each call gives `run` the task, the call's abort signal and its update callback; what `run`
    returns is the call's result (an error result for a task that failed). Arguments are
    validated against `TASK_SCHEMA` before `run` is called, as for any tool.

    Args:
        run: does one task.
        name: the tool's name, as for `AgentTool`.
        description: the tool's description, as for `AgentTool`.
        label: the tool's label, as for `AgentTool`.
        timeout: seconds one call may run, as for `AgentTool`.
        execution_mode: as for `AgentTool`.

    Raises:
        ToolDefinitionError: an invalid name.
    """

    async def execute(
        tool_call_id: str, args: dict[str, Any], signal: AbortSignal, on_update: ToolUpdateCallback
    ) -> AgentToolResult:
        return await run(args["task"], signal, on_update)

    return AgentTool(
        name=name,
        description=description,
        parameters=TASK_SCHEMA,
        execute=execute,
        label=label,
        timeout=timeout,
        execution_mode=execution_mode,
    )


class ToolPipeline(Protocol):
    """The tool pipeline of the run whose tool is executing: what a direct call goes through
    (validation, the tool guardrails, `before_tool_call`/`after_tool_call`, approvals, the call's
    timeout and the run's abort, its events and its span), for calls that another tool makes."""

    @property
    def scope(self) -> object:
        """An object that lives as long as the run: a key for state kept per run."""
        ...

    async def call(
        self,
        tool: AgentTool,
        arguments: dict[str, Any],
        *,
        parent_tool_call_id: str,
        call_id: str | None = None,
        can_wait: bool = False,
    ) -> AgentToolResult:
        """Run one call of `tool` with `arguments` through the pipeline, its events naming
        `parent_tool_call_id` as the parent; its result (never raises: every failure is an
        error result). A call that would wait for approval or for input is an error result
        too, unless `can_wait`: then it raises `agentcore.approvals.CallWaits` with its request,
        and the calling tool may suspend (`agentcore.approvals.CallSuspended`). `call_id`: the
        id of such a call, carried on after its decision when the suspended tool runs again (a
        denied one ends with the denial as its error result)."""
        ...

    def suspended_state(self, tool_call_id: str) -> dict[str, Any] | None:
        """The state call `tool_call_id` kept when its tool suspended (`CallSuspended`), while
        it runs again after the calls it waited for were decided; else None."""
        ...


def tool_pipeline() -> ToolPipeline | None:
    """The pipeline of the tool batch running now, when called from a tool's `execute` during a
    run (or from a hook of that batch); None outside a run (a tool executed directly) and between
    the batches of a run.

    The pipeline is built on the first call during a batch and is the same object for the rest of
    that batch (each batch has its own). It costs nothing to a batch whose tools never call this:
    the run registers itself once, when it starts, and the batch's pipeline is made only when
    asked for, so no tool has to declare that it uses it. A task that a tool leaves running after
    its batch has ended gets the pipeline of the batch running at the time of its call, or None.
    """
    source = _pipeline.current.get()
    if source is None:
        return None
    pipeline: ToolPipeline | None = source.tool_pipeline()
    return pipeline
