"""Configuration of a run: `AgentContext`, `AgentLoopConfig`, and the hook payloads.

Every hook may be a plain function or a coroutine function. Hooks that receive a context object
(`before_tool_call`, `after_tool_call`, `prepare_next_turn`, `should_stop_after_turn`) and
`transform_context` may take the run's `AbortSignal` as an optional second argument.
Hooks return decisions as small frozen dataclasses, or None for "no change".
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from ._compaction.policy import Compaction, check_compaction
from ._engine.hooks import Hooks
from ._skills.loader import Skill
from .errors import ConfigError, ToolDefinitionError
from .guardrails._values import Guardrail, check_guardrails
from .limits import UsageLimits
from .llm.fallback import check_fallback_models
from .llm.model import Model
from .llm.types import (
    THINKING_LEVELS,
    CacheRetention,
    OnPayload,
    OnResponse,
    ThinkingBudgets,
    ThinkingLevel,
    Transport,
)
from .memory.inject import Memory
from .messages import (
    AgentMessage,
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultContent,
    ToolResultMessage,
    Usage,
)
from .tools import AgentTool, AgentToolResult, ToolExecutionMode

__all__ = [
    "AfterToolCallContext",
    "AfterToolCallResult",
    "AgentContext",
    "AgentLoopConfig",
    "BeforeToolCallContext",
    "BeforeToolCallResult",
    "NextTurn",
    "PrepareNextTurnContext",
    "default_convert_to_llm",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentContext:
    """What a run works on: the system prompt, the transcript so far and the tools.

    Raises:
        ToolDefinitionError: a tool is not an `AgentTool`, or a name is used twice.
    """

    system_prompt: str = ""
    messages: Sequence[AgentMessage] = field(default_factory=list)
    tools: Sequence[AgentTool] = field(default_factory=list)

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for t in self.tools:
            if not isinstance(t, AgentTool):
                raise ToolDefinitionError(
                    f"AgentContext.tools must hold AgentTool objects (use @tool or AgentTool), "
                    f"got {type(t).__name__}"
                )
            if t.name in seen:
                raise ToolDefinitionError(f"tool name {t.name!r} is used twice in the context")
            seen.add(t.name)


@dataclass(frozen=True, slots=True, kw_only=True)
class BeforeToolCallContext:
    """Passed to `before_tool_call`: `args` are the validated arguments `execute` will get."""

    assistant_message: AssistantMessage
    tool_call: ToolCall
    args: Any
    context: AgentContext


@dataclass(frozen=True, slots=True, kw_only=True)
class BeforeToolCallResult:
    """Returned by `before_tool_call`: `block` the call (with `reason` as the error text);
    `terminate` asks the run to stop after the batch (honoured for blocked calls);
    `require_approval` makes the call wait for a decision (with `reason` in its
    `ApprovalRequest`; `block` wins; ignored for a call already approved)."""

    block: bool = False
    reason: str | None = None
    terminate: bool = False
    require_approval: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class AfterToolCallContext:
    """Passed to `after_tool_call`: the executed `result` and whether it is an error."""

    assistant_message: AssistantMessage
    tool_call: ToolCall
    args: Any
    result: AgentToolResult
    is_error: bool
    context: AgentContext


@dataclass(frozen=True, slots=True, kw_only=True)
class AfterToolCallResult:
    """Returned by `after_tool_call`: each field that is not None replaces the executed value."""

    content: list[ToolResultContent] | None = None
    details: Any = None
    is_error: bool | None = None
    usage: Usage | None = None
    terminate: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PrepareNextTurnContext:
    """Passed to `prepare_next_turn` and `should_stop_after_turn` after each turn.

    Attributes:
        message: the turn's assistant message.
        tool_results: the turn's tool results, in call order.
        context: the context after this turn.
        new_messages: what the run has added so far.
    """

    message: AssistantMessage
    tool_results: list[ToolResultMessage]
    context: AgentContext
    new_messages: list[AgentMessage]


@dataclass(frozen=True, slots=True, kw_only=True)
class NextTurn:
    """Returned by `prepare_next_turn`: each field that is not None applies from the next request
    (`thinking_level="off"` turns reasoning off)."""

    context: AgentContext | None = None
    model: Model | None = None
    thinking_level: ThinkingLevel | None = None


def default_convert_to_llm(messages: Sequence[AgentMessage]) -> list[Message]:
    """Keep user, assistant and tool-result messages; drop application-defined ones."""
    return [m for m in messages if getattr(m, "role", None) in ("user", "assistant", "tool_result")]


Hook: TypeAlias = Callable[..., Any]


def _check_skills(value: Any) -> tuple[Skill, ...]:
    """`skills` as a tuple of `Skill`, each name once."""
    if value is None:
        return ()
    if isinstance(value, str | bytes) or not hasattr(value, "__iter__"):
        raise ConfigError(
            "skills must be what load_skills(...) returns or a sequence of Skill, got "
            f"{type(value).__name__}"
        )
    skills = tuple(value)
    seen: set[str] = set()
    for s in skills:
        if not isinstance(s, Skill):
            raise ConfigError(
                f"skills must hold Skill objects (from load_skills), got {type(s).__name__}"
            )
        if s.name in seen:
            raise ConfigError(f"skill name {s.name!r} is given twice in skills")
        seen.add(s.name)
    return skills


def check_timeout(name: str, value: Any) -> None:
    """Raise `ConfigError` unless `value` is None or a positive, finite number of seconds."""
    if value is None:
        return
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not value > 0
        or value == float("inf")
    ):
        raise ConfigError(f"{name} must be a positive number of seconds or None, got {value!r}")


class _HooksSlot:
    """Gives `AgentLoopConfig` one slot that is not a dataclass field: its normalised hooks
    (absent from `fields()`, `asdict()`, `==` and `replace()`, which rebuilds them)."""

    __slots__ = ("_hooks",)
    _hooks: Hooks


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentLoopConfig(_HooksSlot):
    """How a run talks to the model and runs tools. Only `model` is required.

    Attributes:
        model: the model of every request (a `prepare_next_turn` hook may swap it).
        reasoning: the thinking level ("off" sends none).
        tool_execution: `PARALLEL` (default) or `SEQUENTIAL`.
        max_parallel_tools: bound on concurrently running tools in parallel mode.
        before_tool_call: may block a call. `(ctx) -> BeforeToolCallResult | None`.
        after_tool_call: may rewrite a result. `(ctx) -> AfterToolCallResult | None`.
        prepare_next_turn: may swap context, model, thinking level. `(ctx) -> NextTurn | None`.
        should_stop_after_turn: ends the run after a turn when it returns True.
        convert_to_llm: turns the transcript (with application messages) into model messages.
        transform_context: prunes or rewrites the transcript before `convert_to_llm`.
        get_api_key: resolves a key per request, `(provider) -> str | None`.
        get_steering_messages: polled before the first request and after every turn.
        get_follow_up_messages: polled when the agent would otherwise stop.
        max_turns: end the run cleanly after this many turns (None: no bound).
        usage_limits: end the run cleanly after the turn that reaches a token or cost total.
        tool_timeout: seconds a tool call may run (None: no bound; a tool's own `timeout` takes
            precedence); a call that takes longer is cancelled and gets an error result.
        request_timeout: seconds from a request to its first stream event (None: no bound).
        idle_timeout: longest silence in seconds between stream events (None: no bound).
        max_retries: retries of a transient request failure before the first event.
        output_type: ask for a typed, validated final answer: a pydantic model, a dataclass, a
            `TypedDict`, a plain type, a JSON Schema dict, or an `OutputSpec` (None: plain text;
            see docs/typed-outputs.md). Normalised to an `OutputSpec` when the config is built.
        output_retries: how many invalid final answers the model may correct before the run
            ends with the `output_retries` limit.
        compaction: a `Compaction` policy: summarise or drop older turns when the transcript
            nears the model's context window or a request overflows it (None: never; see
            docs/compaction.md).
        fallback_models: models tried in order when a request fails before its first event
            (see docs/fallback.md).
        guardrails: `Guardrail`s checking the input, the final answer and tool calls (see
            `agentcore.guardrails` and docs/guardrails.md); a tripped input or output guardrail
            ends the run with `agent_end.guardrail` set.
        skills: Agent Skills (`agentcore.skills.load_skills(...)`, or a sequence of `Skill`):
            their catalogue joins the system prompt of every request and the `activate_skill`
            and `read_skill_file` tools join the run (see docs/skills.md). Normalised to a
            tuple of `Skill` when the config is built.
        agent_name: the name of the agent this config runs, in a run with handoffs (tools made
            by `agentcore.handoff`); default "main". Messages and events name it.
        max_handoffs: at most this many handoffs in one run (None: no bound); one more gets an
            error result and ends the run after its turn (`agent_end.limit`, `max_handoffs`).
        next_agent: who answers a run started by new prompts when an earlier handoff moved the
            conversation: `"last"` (the agent that had it, read from the transcript) or
            `"first"` (this config's agent). A continued run, and decisions on approvals, always
            go on in the agent that had the conversation.
        memory: long-term memory (`agentcore.memory.Memory(store, scope)`): the
            `recall_memory` and `remember` tools join the run and the memories recalled for the
            latest user message are injected in each request's system prompt, labelled as
            untrusted data (see docs/memory.md). None: no memory, nothing of it runs.
        the rest: stream options passed to every request (see `agentcore.llm.StreamOptions`).

    Raises:
        ConfigError: a hook or option of the wrong shape.
    """

    model: Model
    reasoning: ThinkingLevel = "off"
    session_id: str | None = None
    on_payload: OnPayload | None = None
    on_response: OnResponse | None = None
    transport: Transport = "auto"
    thinking_budgets: ThinkingBudgets | None = None
    max_retry_delay_ms: int = 60_000
    tool_execution: ToolExecutionMode = ToolExecutionMode.PARALLEL
    max_parallel_tools: int | None = None
    before_tool_call: Callable[..., BeforeToolCallResult | Awaitable[Any] | None] | None = None
    after_tool_call: Callable[..., AfterToolCallResult | Awaitable[Any] | None] | None = None
    prepare_next_turn: Callable[..., NextTurn | Awaitable[Any] | None] | None = None
    should_stop_after_turn: Callable[..., bool | Awaitable[bool]] | None = None
    convert_to_llm: Callable[..., list[Message] | Awaitable[list[Message]]] = default_convert_to_llm
    transform_context: Callable[..., Any] | None = None
    get_api_key: Callable[[str], str | Awaitable[str | None] | None] | None = None
    get_steering_messages: Callable[[], Any] | None = None
    get_follow_up_messages: Callable[[], Any] | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    api_key: str | None = None
    headers: Mapping[str, str] | None = None
    cache_retention: CacheRetention = "short"
    metadata: Mapping[str, Any] | None = None
    max_turns: int | None = None
    usage_limits: UsageLimits | None = None
    tool_timeout: float | None = None
    request_timeout: float | None = None
    idle_timeout: float | None = None
    max_retries: int = 3
    output_type: Any = None
    output_retries: int = 2
    compaction: Compaction | None = None
    fallback_models: Sequence[Model] = ()
    guardrails: Sequence[Guardrail] = ()
    skills: Sequence[Skill] = ()
    agent_name: str | None = None
    max_handoffs: int | None = None
    next_agent: Literal["last", "first"] = "last"
    memory: Memory | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.model, Model):
            raise ConfigError(
                f"AgentLoopConfig.model must be an agentcore.llm.Model, got "
                f"{type(self.model).__name__} (look one up with agentcore.llm.get_model)"
            )
        if self.agent_name is not None and (
            not isinstance(self.agent_name, str) or not self.agent_name.strip()
        ):
            raise ConfigError(
                f"agent_name must be a non-empty string or None, got {self.agent_name!r}"
            )
        if self.max_handoffs is not None and (
            isinstance(self.max_handoffs, bool)
            or not isinstance(self.max_handoffs, int)
            or self.max_handoffs < 0
        ):
            raise ConfigError(
                f"max_handoffs must be a non-negative integer or None, got {self.max_handoffs!r}"
            )
        if self.next_agent not in ("last", "first"):
            raise ConfigError(f"next_agent must be 'last' or 'first', got {self.next_agent!r}")
        if not isinstance(self.tool_execution, ToolExecutionMode):
            raise ConfigError(
                f"tool_execution must be a ToolExecutionMode, got {self.tool_execution!r}"
            )
        if self.max_parallel_tools is not None and (
            not isinstance(self.max_parallel_tools, int) or self.max_parallel_tools < 1
        ):
            raise ConfigError(
                f"max_parallel_tools must be a positive integer or None, "
                f"got {self.max_parallel_tools!r}"
            )
        if self.max_turns is not None and (
            isinstance(self.max_turns, bool)
            or not isinstance(self.max_turns, int)
            or self.max_turns < 1
        ):
            raise ConfigError(
                f"max_turns must be a positive integer or None, got {self.max_turns!r}"
            )
        if self.usage_limits is not None and not isinstance(self.usage_limits, UsageLimits):
            raise ConfigError(
                "usage_limits must be a UsageLimits or None, got "
                f"{type(self.usage_limits).__name__}"
            )
        for name in ("tool_timeout", "request_timeout", "idle_timeout"):
            check_timeout(f"AgentLoopConfig.{name}", getattr(self, name))
        if (
            isinstance(self.max_retries, bool)
            or not isinstance(self.max_retries, int)
            or self.max_retries < 0
        ):
            raise ConfigError(
                f"max_retries must be a non-negative integer, got {self.max_retries!r}"
            )
        if self.output_type is not None:  # normalised once: an OutputSpec from here on
            from .output import OutputSpec

            object.__setattr__(self, "output_type", OutputSpec.of(self.output_type))
        if (
            isinstance(self.output_retries, bool)
            or not isinstance(self.output_retries, int)
            or self.output_retries < 0
        ):
            raise ConfigError(
                f"output_retries must be a non-negative integer, got {self.output_retries!r}"
            )
        if self.reasoning not in THINKING_LEVELS:
            raise ConfigError(f"reasoning must be one of {THINKING_LEVELS}, got {self.reasoning!r}")
        if self.convert_to_llm is None:
            raise ConfigError(
                "convert_to_llm must be a function (messages) -> list[Message], got None "
                "(leave it out to keep user, assistant and tool-result messages)"
            )
        check_compaction(self.compaction)
        check_fallback_models(self.fallback_models, "AgentLoopConfig.fallback_models")
        object.__setattr__(self, "guardrails", check_guardrails(self.guardrails))
        object.__setattr__(self, "skills", _check_skills(self.skills))
        if self.memory is not None and not isinstance(self.memory, Memory):
            raise ConfigError(
                "memory must be an agentcore.memory.Memory(store, scope) or None, got "
                f"{type(self.memory).__name__}"
            )
        object.__setattr__(self, "_hooks", Hooks(self))  # every hook checked, adapted once
