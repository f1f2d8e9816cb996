"""Helpers shared by the tests: run the loop on the faux provider and read what it produced.

Test files import these (`from support import collect, run, user`); fixtures stay in the
`conftest.py` files. `tests/` is on `sys.path` (the `pythonpath` setting in pyproject.toml), so
this package is `support` in every test file, whatever its folder. Feature-specific helpers live
beside this one: `support.temporal` (the dev server's worker pool), `support.tracing` (in-memory
OpenTelemetry), `support.servers` (starting a shared server once under pytest-xdist).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import agentcore
from agentcore import (
    AgentContext,
    AgentEvent,
    AgentLoopConfig,
    AgentMessage,
    AgentTool,
    AgentToolResult,
    AssistantMessage,
    EventStream,
    ToolResultMessage,
    UserMessage,
    agent_loop,
    tool,
)
from agentcore.abort import AbortSignal
from agentcore.llm import (
    AssistantMessageEvent,
    AssistantMessageEventStream,
    Context,
    Model,
)
from agentcore.llm.types import SimpleStreamOptions
from agentcore.testing import (
    FauxProvider,
    check_well_formed,
    event_types,
    faux_text,
    faux_tool_call,
)

__all__ = [
    "BACKENDS",
    "ONE_TURN_NO_UPDATES",
    "ROOT",
    "Recorder",
    "Run",
    "call_tool",
    "delete_and_look",
    "collect",
    "echo_tool",
    "make_tool",
    "replay",
    "run",
    "run_python",
    "texts",
    "user",
]

ROOT = Path(__file__).resolve().parents[2]
"""The repository's root folder."""

BACKENDS = ["asyncio", "trio"]
"""Parametrize `anyio_backend` with this to run a test under both backends."""

ONE_TURN_NO_UPDATES = [
    "agent_start",
    "turn_start",
    "message_start",
    "message_end",
    "message_start",
    "message_end",
    "turn_end",
    "agent_end",
]
"""The event types of a run of one turn whose assistant message came without `message_update`s:
a stream that failed, or one that sent only its final message."""


def user(text: str = "hi") -> UserMessage:
    """A user message."""
    return UserMessage(content=text)


@dataclass
class Run:
    """What one run produced: its events and `result()`."""

    events: list[AgentEvent]
    result: list[AgentMessage]

    @property
    def types(self) -> list[str]:
        return event_types(self.events)

    def of(self, kind: str) -> list[Any]:
        """The events of one type."""
        return [e for e in self.events if e.type == kind]

    @property
    def end(self) -> Any:
        return self.events[-1]

    def compact(self) -> list[str]:
        """Event types with consecutive `message_update`s folded into one `message_update…`."""
        out: list[str] = []
        for kind in self.types:
            if kind == "message_update" and out and out[-1] == "message_update…":
                continue
            out.append("message_update…" if kind == "message_update" else kind)
        return out


async def collect(stream: EventStream[AgentEvent, list[AgentMessage]]) -> Run:
    """Read a stream to its end and check the invariants every run must hold."""
    events: list[AgentEvent] = []
    async with stream:
        async for event in stream:
            events.append(event)
        result = await stream.result()
    check_well_formed(events)
    assert events[-1].type == "agent_end"
    assert result == events[-1].messages  # type: ignore[union-attr]
    return Run(events, result)


async def run(
    prompts: Sequence[AgentMessage] | str,
    context: AgentContext | None = None,
    config: AgentLoopConfig | None = None,
    *,
    faux: FauxProvider | None = None,
    signal: AbortSignal | None = None,
    stream_fn: Any = None,
) -> Run:
    """`agent_loop` over `prompts` (a string is one user message), collected."""
    if isinstance(prompts, str):
        prompts = [user(prompts)]
    if config is None:
        assert faux is not None, "pass a config or a faux provider"
        config = AgentLoopConfig(model=faux.model)
    return await collect(
        agent_loop(prompts, context or AgentContext(), config, signal=signal, stream_fn=stream_fn)
    )


def make_tool(
    name: str,
    execute: Callable[..., Any],
    parameters: dict[str, Any] | None = None,
    **kwargs: Any,
) -> AgentTool:
    """An `AgentTool` with a permissive object schema by default."""
    return AgentTool(
        name=name,
        description=f"the {name} tool",
        parameters=parameters if parameters is not None else {"type": "object"},
        execute=execute,
        **kwargs,
    )


def echo_tool(name: str = "echo", *, log: list[tuple[str, Any]] | None = None) -> AgentTool:
    """An async tool returning its arguments as text (and logging each call)."""

    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        if log is not None:
            log.append((tool_call_id, args))
        return AgentToolResult.text(f"{name}:{args}")

    return make_tool(name, execute)


async def call_tool(tool: AgentTool, args: dict[str, Any]) -> ToolResultMessage:
    """Call `tool` as a model would (validation included), through the loop and the faux
    provider; the result message."""
    faux = FauxProvider([faux_tool_call(tool.name, args), faux_text("done")])
    done = await run("go", AgentContext(tools=[tool]), faux=faux)
    results = [m for m in done.result if isinstance(m, ToolResultMessage)]
    assert len(results) == 1
    return results[0]


def texts(message: AssistantMessage | ToolResultMessage | Any) -> str:
    """The text of a message's text blocks."""
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(getattr(b, "text", "") for b in content)


@dataclass
class Recorder:
    """A stream function that answers from a list of event lists or messages, and records each
    request's context and options."""

    script: list[Callable[[Context, SimpleStreamOptions], AssistantMessageEventStream]]
    contexts: list[Context] = field(default_factory=list)
    options: list[SimpleStreamOptions] = field(default_factory=list)
    models: list[Model] = field(default_factory=list)

    def __call__(
        self, model: Model, context: Context, options: SimpleStreamOptions
    ) -> AssistantMessageEventStream:
        self.models.append(model)
        self.contexts.append(context)
        self.options.append(options)
        step = self.script.pop(0)
        return step(context, options)


def replay(events: Iterable[AssistantMessageEvent]) -> Callable[..., AssistantMessageEventStream]:
    """A script step replaying ready-made protocol events."""
    items = list(events)
    return lambda context, options: AssistantMessageEventStream.from_events(items)


def run_python(code: str) -> str:
    """Run `code` in a fresh interpreter that sees only agentcore's sources (no other
    `PYTHONPATH`, no environment); its stdout, stripped. Fails the test when it exits non-zero."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(Path(agentcore.__file__).resolve().parent.parent)},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def delete_and_look(ran: list[Any]) -> tuple[AgentTool, AgentTool]:
    """A tool needing approval (`delete`) and one that does not (`look`); each appends
    `(name, path)` to `ran` when it runs."""

    @tool(requires_approval=True)
    def delete(path: str) -> str:
        """Delete a file."""
        ran.append(("delete", path))
        return f"deleted {path}"

    @tool
    def look(path: str) -> str:
        """Look at a file."""
        ran.append(("look", path))
        return f"saw {path}"

    return delete, look
