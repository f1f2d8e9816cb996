"""Guardrails as values: what a check returns (`Pass`, `Block`, `Rewrite`), what it is given (one
context per kind), and `Guardrail`, the check with its kind, mode and timeout."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, overload

from ..errors import ConfigError
from ..llm.model import Model
from ..messages import AssistantMessage, Message, TextContent, ToolCall, UserMessage
from ..tools import AgentToolResult
from ._trip import GuardrailKind

__all__ = [
    "DEFAULT_GUARDRAIL_TIMEOUT",
    "PASS",
    "Block",
    "Guardrail",
    "GuardrailCheck",
    "GuardrailMode",
    "GuardrailResult",
    "InputGuardrailContext",
    "OutputGuardrailContext",
    "Pass",
    "Rewrite",
    "ToolCallGuardrailContext",
    "ToolResultGuardrailContext",
    "check_guardrails",
    "input_guardrail",
    "output_guardrail",
    "tool_guardrail",
]

GuardrailMode: TypeAlias = Literal["before", "alongside"]
"""`"before"`: the step waits for the check (blocking). `"alongside"`: the step goes on while the
check runs, and is aborted (its answer withheld, its tool call cancelled) when the check blocks."""

DEFAULT_GUARDRAIL_TIMEOUT = 30.0
"""Seconds a guardrail may take before it counts as failed (and so blocks: it fails closed)."""

_KINDS = ("input", "output", "tool_call", "tool_result")
_MODES = ("before", "alongside")


@dataclass(frozen=True, slots=True)
class Pass:
    """The check found nothing: the step goes on unchanged (returning None means the same)."""


PASS = Pass()
"""The one `Pass` value."""


@dataclass(frozen=True, slots=True)
class Block:
    """The check refuses: an input or output guardrail ends the run (`agent_end.guardrail`), a
    tool guardrail gives the call an error result with `reason`."""

    reason: str

    def __post_init__(self) -> None:
        if not isinstance(self.reason, str) or not self.reason:
            raise ConfigError(f"Block needs a reason (a non-empty str), got {self.reason!r}")


@dataclass(frozen=True, slots=True)
class Rewrite:
    """The check lets the step go on with `value` instead (a redaction). What `value` is, by
    kind: input, the text of the latest user message (a str) or the request's messages (a list
    of `Message`); output, the answer's text (a str); tool_call, the arguments (a dict, checked
    against the tool's schema again); tool_result, the result's content (a str or a list of
    `TextContent`/`ImageContent`). Only a guardrail in mode `"before"` may rewrite."""

    value: Any
    reason: str = ""


GuardrailResult: TypeAlias = Pass | Block | Rewrite
"""What a check returns (or None, the same as `PASS`)."""


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(c.text for c in content if isinstance(c, TextContent))


@dataclass(frozen=True, slots=True, kw_only=True)
class InputGuardrailContext:
    """What an input guardrail checks: the request about to be sent (every request of a run).

    Attributes:
        messages: the request's messages, as the model will see them.
        system_prompt: the request's system prompt.
        model: the model the request goes to.
    """

    messages: list[Message]
    system_prompt: str
    model: Model

    @property
    def text(self) -> str:
        """The text of the latest user message of the request ("" if there is none)."""
        for message in reversed(self.messages):
            if isinstance(message, UserMessage):
                return _text_of(message.content)
        return ""


@dataclass(frozen=True, slots=True, kw_only=True)
class OutputGuardrailContext:
    """What an output guardrail checks: a final answer (one without tool calls).

    Attributes:
        text: the answer's text so far (`final` False: streamed text, mode `"alongside"`).
        message: the answer (its partial state while it streams).
        final: True for the complete answer.
        model: the model that answered.
    """

    text: str
    message: AssistantMessage
    final: bool
    model: Model


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallGuardrailContext:
    """What a tool guardrail (`on="call"`) checks: a call about to run.

    Attributes:
        tool_call: the call as the model sent it.
        args: its arguments, validated against the tool's schema.
    """

    tool_call: ToolCall
    args: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultGuardrailContext:
    """What a tool guardrail (`on="result"`) checks: a call's result before the model sees it.

    Attributes:
        tool_call: the call.
        args: its validated arguments.
        result: its result (after `after_tool_call`).
    """

    tool_call: ToolCall
    args: Any
    result: AgentToolResult

    @property
    def text(self) -> str:
        """The text of the result's content."""
        return _text_of(self.result.content)


GuardrailCheck: TypeAlias = Callable[
    [Any], "GuardrailResult | Awaitable[GuardrailResult | None] | None"
]
"""A check: a function or coroutine function taking its kind's context."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Guardrail:
    """A check on one step of a run, returning a value: `Pass` (or None), `Block(reason)` or
    `Rewrite(value)`. Give guardrails to `AgentLoopConfig(guardrails=[...])` or
    `Agent(guardrails=[...])`; build them with `input_guardrail`, `output_guardrail` and
    `tool_guardrail`.

    A check that raises, returns something else, or takes longer than `timeout` blocks (fails
    closed), naming what went wrong. A sync check with a timeout runs in a worker thread (so that
    the timeout holds; the thread is abandoned when it passes), one with `timeout=None` on the
    event loop (the built-ins: quick and linear in their input).

    Attributes:
        check: the function, given its kind's context (`InputGuardrailContext`, ...).
        kind: `"input"`, `"output"`, `"tool_call"` or `"tool_result"`.
        name: how trips and error results name it (default: the function's name).
        mode: `"before"` (default; the step waits for it) or `"alongside"` (the step goes on and
            is aborted when it blocks; not for `"tool_result"`).
        timeout: seconds before the check counts as failed; None: no bound.
        tools: for tool guardrails, the names of the tools it applies to (None: all).

    Raises:
        ConfigError: a kind, mode, timeout or tools value that is not one of those.
    """

    check: GuardrailCheck
    kind: GuardrailKind
    name: str = ""
    mode: GuardrailMode = "before"
    timeout: float | None = DEFAULT_GUARDRAIL_TIMEOUT
    tools: frozenset[str] | None = field(default=None)

    def __post_init__(self) -> None:
        if not callable(self.check):
            raise ConfigError(f"Guardrail.check must be callable, got {self.check!r}")
        if self.kind not in _KINDS:
            raise ConfigError(f"Guardrail.kind must be one of {_KINDS}, got {self.kind!r}")
        if self.mode not in _MODES:
            raise ConfigError(f"Guardrail.mode must be one of {_MODES}, got {self.mode!r}")
        if self.kind == "tool_result" and self.mode != "before":
            raise ConfigError(
                "a tool_result guardrail runs before the model sees the result: mode must be "
                f"'before', got {self.mode!r}"
            )
        timeout = self.timeout
        if timeout is not None and (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not timeout > 0
            or math.isinf(timeout)
        ):
            raise ConfigError(
                f"Guardrail.timeout must be a positive, finite number of seconds or None, "
                f"got {timeout!r}"
            )
        if not self.name:
            object.__setattr__(self, "name", getattr(self.check, "__name__", "guardrail"))
        if not isinstance(self.name, str):
            raise ConfigError(f"Guardrail.name must be a str, got {self.name!r}")
        if self.tools is not None:
            if self.kind not in ("tool_call", "tool_result"):
                raise ConfigError(f"Guardrail.tools is for tool guardrails, not {self.kind!r}")
            if isinstance(self.tools, str) or not all(isinstance(t, str) for t in self.tools):
                raise ConfigError(
                    f"Guardrail.tools must be a collection of tool names, got {self.tools!r}"
                )
            object.__setattr__(self, "tools", frozenset(self.tools))

    def applies_to(self, tool_name: str) -> bool:
        """Whether this (tool) guardrail checks calls of `tool_name`."""
        return self.tools is None or tool_name in self.tools


def check_guardrails(guardrails: Any) -> tuple[Guardrail, ...]:
    """`AgentLoopConfig.guardrails` as a tuple, each checked.

    Raises:
        ConfigError: not a sequence of `Guardrail`s.
    """
    if isinstance(guardrails, str | bytes | Guardrail) or not isinstance(guardrails, Collection):
        raise ConfigError(
            f"guardrails must be a sequence of Guardrail, got {type(guardrails).__name__}"
        )
    out = guardrails if isinstance(guardrails, tuple) else tuple(guardrails)
    for guard in out:
        if not isinstance(guard, Guardrail):
            raise ConfigError(
                f"guardrails must hold Guardrail values (from input_guardrail, "
                f"output_guardrail, tool_guardrail), got {type(guard).__name__}"
            )
    return out


_Decorator: TypeAlias = Callable[[GuardrailCheck], Guardrail]


def _make(
    kind: GuardrailKind,
    fn: GuardrailCheck | None,
    name: str | None,
    mode: GuardrailMode,
    timeout: float | None,
    tools: Collection[str] | None = None,
) -> Guardrail | _Decorator:
    def build(check: GuardrailCheck) -> Guardrail:
        return Guardrail(
            check=check,
            kind=kind,
            name=name or "",
            mode=mode,
            timeout=timeout,
            tools=None if tools is None else frozenset(tools),
        )

    return build if fn is None else build(fn)


@overload
def input_guardrail(fn: GuardrailCheck, /) -> Guardrail: ...
@overload
def input_guardrail(
    *,
    name: str | None = None,
    mode: GuardrailMode = "before",
    timeout: float | None = DEFAULT_GUARDRAIL_TIMEOUT,
) -> _Decorator: ...
def input_guardrail(
    fn: GuardrailCheck | None = None,
    /,
    *,
    name: str | None = None,
    mode: GuardrailMode = "before",
    timeout: float | None = DEFAULT_GUARDRAIL_TIMEOUT,
) -> Guardrail | _Decorator:
    """An input guardrail from a function of an `InputGuardrailContext`, checked before every
    request of a run (`@input_guardrail` or `@input_guardrail(mode="alongside", ...)`)."""
    return _make("input", fn, name, mode, timeout)


@overload
def output_guardrail(fn: GuardrailCheck, /) -> Guardrail: ...
@overload
def output_guardrail(
    *,
    name: str | None = None,
    mode: GuardrailMode = "before",
    timeout: float | None = DEFAULT_GUARDRAIL_TIMEOUT,
) -> _Decorator: ...
def output_guardrail(
    fn: GuardrailCheck | None = None,
    /,
    *,
    name: str | None = None,
    mode: GuardrailMode = "before",
    timeout: float | None = DEFAULT_GUARDRAIL_TIMEOUT,
) -> Guardrail | _Decorator:
    """An output guardrail from a function of an `OutputGuardrailContext`, checked on every
    final answer before it joins the transcript; in mode `"alongside"` also on the text while
    it streams."""
    return _make("output", fn, name, mode, timeout)


@overload
def tool_guardrail(fn: GuardrailCheck, /) -> Guardrail: ...
@overload
def tool_guardrail(
    *,
    on: Literal["call", "result"] = "call",
    tools: Collection[str] | None = None,
    name: str | None = None,
    mode: GuardrailMode = "before",
    timeout: float | None = DEFAULT_GUARDRAIL_TIMEOUT,
) -> _Decorator: ...
def tool_guardrail(
    fn: GuardrailCheck | None = None,
    /,
    *,
    on: Literal["call", "result"] = "call",
    tools: Collection[str] | None = None,
    name: str | None = None,
    mode: GuardrailMode = "before",
    timeout: float | None = DEFAULT_GUARDRAIL_TIMEOUT,
) -> Guardrail | _Decorator:
    """A tool guardrail: `on="call"` checks a call's arguments before it runs (a
    `ToolCallGuardrailContext`), `on="result"` its result before the model sees it (a
    `ToolResultGuardrailContext`); `tools` limits it to those tool names.

    Raises:
        ConfigError: `on` is neither "call" nor "result".
    """
    if on not in ("call", "result"):
        raise ConfigError(f"tool_guardrail(on=...) must be 'call' or 'result', got {on!r}")
    kind: GuardrailKind = "tool_call" if on == "call" else "tool_result"
    return _make(kind, fn, name, mode, timeout, tools)
