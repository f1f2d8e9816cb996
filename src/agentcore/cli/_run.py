"""What `run` and `chat` share: resolving the model, checking it can be used, running one prompt,
turning Ctrl-C into an abort, and deciding the exit code from how the run ended.

Exit codes: 0 the run succeeded; 1 it failed (the final message has `stop_reason="error"`, e.g.
an unreachable server or a rejected request); 2 a usage or configuration error found before
anything was sent (bad option, unknown model or provider, missing API key or SDK extra);
3 a bound (`--max-turns`, `--max-cost`, `--max-input-tokens`, `--max-output-tokens`) ended the
run; 130 the run was stopped with Ctrl-C.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any, TextIO

import anyio

from .. import run_agent_loop
from ..abort import AbortController
from ..config import AgentContext, AgentLoopConfig
from ..errors import AgentCoreError
from ..events import AgentEvent
from ..guardrails import Guardrail
from ..limits import (
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_TURNS,
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_TOOL_TIMEOUT,
    LimitReached,
    UsageLimits,
)
from ..llm import StreamFn, check_model
from ..llm.model import Model
from ..llm.models import get_model
from ..llm.types import ThinkingLevel
from ..messages import AgentMessage, AssistantMessage, UserMessage
from ..skills import SkillSet
from ..tools import AgentTool
from ._args import split_model_ref
from ._safe import visible

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_LIMIT",
    "EXIT_OK",
    "EXIT_USAGE",
    "CommandError",
    "GuardedOutput",
    "Interrupts",
    "Settings",
    "limit_notice",
    "outcome",
    "resolve_model",
    "run_prompt",
    "write_error",
    "write_notice",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_LIMIT = 3
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a shell reports a process killed by it

# The SDK each built-in wire protocol needs, and the extra that installs it.


class CommandError(Exception):
    """A failure to report as one line on stderr, with the process's exit code."""

    def __init__(self, message: str, exit_code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass(slots=True, kw_only=True)
class Settings:
    """How every prompt of a command is run (the chat may swap `model`)."""

    model: Model
    system: str = ""
    thinking: ThinkingLevel = "off"
    tools: list[AgentTool] = field(default_factory=list)
    max_tokens: int | None = None
    temperature: float | None = None
    stream_fn: StreamFn | None = None
    max_turns: int | None = DEFAULT_MAX_TURNS
    usage_limits: UsageLimits | None = None
    tool_timeout: float | None = DEFAULT_TOOL_TIMEOUT
    request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT
    idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT
    max_retries: int = 3
    prepare_next_turn: Callable[..., Any] | None = None  # e.g. refreshing --mcp servers' tools
    output_type: Any = None  # run --output-schema: an OutputSpec
    guardrails: tuple[Guardrail, ...] = ()  # --max-input-chars, --redact-pii
    skills: SkillSet = field(default_factory=SkillSet)  # --skills, .agents/skills
    handoffs: dict[str, Any] = field(default_factory=dict)  # --agents: agent_name, next_agent...

    @property
    def agent_name(self) -> str | None:
        """The agent that starts, with `--agents` (None: a run without handoffs)."""
        name = self.handoffs.get("agent_name")
        return name if isinstance(name, str) else None

    def bounds(self) -> dict[str, Any]:
        """The bounds of every run, and its handoff options (`--agents`), as keyword arguments
        of `AgentLoopConfig` and `Agent`."""
        return {
            **self.handoffs,
            "max_turns": self.max_turns,
            "usage_limits": self.usage_limits,
            "tool_timeout": self.tool_timeout,
            "request_timeout": self.request_timeout,
            "idle_timeout": self.idle_timeout,
            "max_retries": self.max_retries,
            "guardrails": self.guardrails,
        }

    def config(self) -> AgentLoopConfig:
        """The loop configuration for the next run."""
        return AgentLoopConfig(
            model=self.model,
            reasoning=self.thinking,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            prepare_next_turn=self.prepare_next_turn,
            output_type=self.output_type,
            skills=self.skills.skills,
            **self.bounds(),
        )


def resolve_model(ref: str, *, stream_fn: StreamFn | None = None, check: bool = True) -> Model:
    """The catalogue model for `"provider/id"`, checked to be usable before anything is sent.

    With the default stream function, the model's adapter, SDK and API key must be available;
    a custom `stream_fn` is trusted to serve the model itself. `check=False` skips that check
    (for a model that may not be used: a resumed chat session brings its own).

    Raises:
        CommandError: (exit code 2) naming what is wrong and how to fix it.
    """
    try:
        provider, model_id = split_model_ref(ref)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    try:
        model = get_model(provider, model_id)
        if stream_fn is None and check:
            check_model(model)
    except AgentCoreError as exc:
        raise CommandError(str(exc)) from None
    return model


class Interrupts:
    """Ctrl-C handling: the first press aborts the running answer; pressing again while it is
    stopping, or when nothing runs and there is no `idle` handler, quits the command."""

    def __init__(self, idle: Callable[[], None] | None = None) -> None:
        self._abort: Callable[[], None] | None = None
        self._aborting = False
        self._idle = idle
        self._quit = anyio.CancelScope()
        self.quit_requested = False

    @contextmanager
    def running(self, abort: Callable[[], None]) -> Iterator[None]:
        """Within the block, Ctrl-C calls `abort` (once)."""
        self._abort, self._aborting = abort, False
        try:
            yield
        finally:
            self._abort, self._aborting = None, False

    def interrupt(self) -> None:
        """What a Ctrl-C does (also called by a front end that reads the key itself)."""
        if self._abort is not None and not self._aborting:
            self._aborting = True
            self._abort()
        elif self._abort is None and self._idle is not None:
            self._idle()
        else:
            self.quit_requested = True
            self._quit.cancel()

    @asynccontextmanager
    async def installed(self) -> AsyncIterator[None]:
        """Handle SIGINT inside the block (a no-op where signals cannot be caught, e.g. off
        the main thread). The block is cancelled when the user asks to quit."""
        try:
            receiver = anyio.open_signal_receiver(signal.SIGINT)
            signals = receiver.__enter__()
        except (ValueError, RuntimeError, NotImplementedError):
            with self._quit:
                yield
            return
        try:
            async with anyio.create_task_group() as group:

                async def pump() -> None:
                    async for _ in signals:
                        self.interrupt()

                group.start_soon(pump)
                try:
                    with self._quit:
                        yield
                finally:
                    group.cancel_scope.cancel()
        finally:
            receiver.__exit__(None, None, None)


async def run_prompt(
    prompt: str,
    settings: Settings,
    sink: Callable[[AgentEvent], None],
    interrupts: Interrupts,
) -> tuple[list[AgentMessage], LimitReached | None]:
    """Run the loop on one user prompt; returns the messages the run added and the bound that
    ended it (from its `agent_end`), if one did.

    Ctrl-C during the run aborts it (the run still ends normally, with an aborted message).
    """
    context = AgentContext(system_prompt=settings.system, tools=settings.tools)
    controller = AbortController()
    limit: LimitReached | None = None

    def emit(event: AgentEvent) -> None:
        nonlocal limit
        if event.type == "agent_end":
            limit = event.limit
        sink(event)

    with interrupts.running(controller.abort):
        added = await run_agent_loop(
            [UserMessage(content=prompt)],
            context,
            settings.config(),
            emit,
            signal=controller.signal,
            stream_fn=settings.stream_fn,
        )
    return added, limit


def outcome(
    messages: Sequence[AgentMessage], limit: LimitReached | None = None
) -> tuple[int, str | None]:
    """The exit code of a run from its messages and the bound that ended it, and the error to
    report (if any)."""
    last = next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)
    if last is not None and last.stop_reason == "error":
        return EXIT_FAILED, last.error_message or "the run failed"
    if last is not None and last.stop_reason == "aborted":
        return EXIT_INTERRUPTED, None
    if limit is not None:
        return EXIT_LIMIT, None
    return EXIT_OK, None


_FLAGS = {
    "max_turns": "--max-turns",
    "input_tokens": "--max-input-tokens",
    "output_tokens": "--max-output-tokens",
    "cost": "--max-cost",
}


def limit_notice(limit: LimitReached) -> str:
    """What to tell the user when a bound ended the run, and which option sets it."""
    flag = _FLAGS.get(limit.kind)
    return f"the run stopped: {limit}" + (f" (set with {flag})" if flag else "")


class GuardedOutput:
    """Stdout that remembers when its reader went away (`agentcore run ... | head`), so the
    command can stop quietly instead of reporting a broken pipe as a failed run."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.broken = False

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            self.broken = True
            raise

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            self.broken = True
            raise

    def isatty(self) -> bool:
        return self.stream.isatty()

    def silence(self) -> None:
        """After a broken pipe on the process's stdout: point it at /dev/null so that the
        interpreter's final flush does not complain again."""
        if self.stream is sys.stdout:
            with contextlib.suppress(OSError, ValueError):
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())


def write_error(stream: TextIO, text: str) -> None:
    """One line on stderr: `agentcore: error: ...`."""
    stream.write(f"agentcore: error: {visible(text)}\n")
    stream.flush()


def write_notice(stream: TextIO, text: str) -> None:
    """One line on stderr that is not an error: `agentcore: ...`."""
    stream.write(f"agentcore: {visible(text)}\n")
    stream.flush()
