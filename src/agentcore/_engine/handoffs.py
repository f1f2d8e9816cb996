"""Handoffs in a run: who has the conversation, the switch at the turn boundary, each agent's
view of the one transcript.

A run has handoffs when a tool of its context is a `handoffs.HandoffTool` (`RunHandoffs.of`;
None otherwise, and nothing of this module runs: no cost for a run without them). Then:

- every assistant message and tool result joins the transcript naming its agent
  (`Transcript.agent`), and tool events say it too;
- in a batch, the first handoff call of the answer is the one that may switch; any other gets an
  error result saying so (`refusal`, at its preparation, so it never runs), as does one that would
  pass `max_handoffs` or keep two agents bouncing (then the run ends after the turn, as data:
  `agent_end.limit`);
- after the batch has all its results and `turn_end` is out, `after_turn` returns the switch (the
  winning call succeeded) or the return to the caller (an agent entered with `returns=True`
  answered without calling a tool); the driver sends `agent_switch` and swaps the system prompt,
  tools, model, thinking level and guardrails, as `prepare_next_turn` can, before the next
  `turn_start`;
- each request's messages are the current agent's view (`view`), computed from the transcript
  when the request is made, so the transcript itself (and a session) stays whole.

Who has the conversation is read back from the transcript at the start of a run (`resumed`):
the successful handoff results and the answers that returned, replayed by the same rules, so a
session resumed from disk, decisions on approvals made after a restart and a durable run continue
in the right agent. With `next_agent="first"` a run started by new prompts goes back to the first
agent instead.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..handoffs import AgentSpec, HandoffTool
from ..limits import LimitReached
from ..messages import (
    AgentMessage,
    AssistantMessage,
    Message,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

if TYPE_CHECKING:
    from ..config import AgentLoopConfig
    from ..guardrails import Guardrail
    from ..llm.model import Model
    from ..llm.types import ThinkingLevel
    from ..tools import AgentTool

__all__ = ["MAX_BOUNCES", "ROOT_NAME", "RunHandoffs", "Setup", "Switch", "view"]

ROOT_NAME = "main"
"""The first agent's name when the config gives none (`agent_name`)."""

MAX_BOUNCES = 3
"""How many times in a row the conversation may go straight back to the agent it came from
before a handoff is refused (`handoff_loop`)."""

SECOND_HANDOFF = (
    "Handoff not carried out: {first!r} already hands the conversation over in this answer "
    "(only the first handoff of an answer is carried out)."
)


@dataclass(frozen=True, slots=True)
class Setup:
    """What an agent brings to the run: its system prompt, tools, model, thinking level (None:
    keep the run's), guardrails and view."""

    name: str
    system_prompt: str
    tools: list[AgentTool]
    model: Model | None
    thinking_level: ThinkingLevel | None
    guardrails: tuple[Guardrail, ...]
    history: Any


@dataclass(frozen=True, slots=True)
class Switch:
    """A switch at the turn boundary: to `to`, by the call `tool_call_id`; `returns`: a return
    to the agent that handed off."""

    from_agent: str
    to: Setup
    tool_call_id: str
    returns: bool


@dataclass(slots=True)
class _Frame:
    caller: str
    target: str
    tool_call_id: str


@dataclass(slots=True)
class RunHandoffs:
    """The handoffs of one run: the agents, who has the conversation, the returns pending."""

    root: Setup
    agents: dict[str, AgentSpec]
    current: str
    max_handoffs: int | None
    stack: list[_Frame] = field(default_factory=list)
    handoffs: int = 0  # carried out in this run
    bounces: int = 0  # handoffs in a row straight back to the agent the last one came from
    last: tuple[str, str] | None = None  # the last handoff (from, to)
    limit: LimitReached | None = None  # a refusal that ends the run after the turn
    routes: dict[str, set[str]] = field(default_factory=dict)  # handoff tool name -> targets
    texts: dict[int, tuple[Any, str]] = field(default_factory=dict)  # a message shown as text
    root_tools: Sequence[AgentTool] = ()  # the first agent's tools, `enabled` not yet checked

    @staticmethod
    def of(
        config: AgentLoopConfig, system_prompt: str, tools: Sequence[AgentTool]
    ) -> RunHandoffs | None:
        """The run's handoffs, or None when none of its tools is a handoff."""
        if not any(isinstance(t, HandoffTool) for t in tools):
            return None
        root_name = config.agent_name or ROOT_NAME
        agents: dict[str, AgentSpec] = {}
        routes: dict[str, set[str]] = {}
        todo = [t for t in tools if isinstance(t, HandoffTool)]
        while todo:
            via = todo.pop()
            spec = via.target
            routes.setdefault(via.name, set()).add(spec.name)
            if spec.name == root_name:  # a handoff back to the first agent: its own setup
                continue
            known = agents.get(spec.name)
            if known is spec:
                continue
            if known is not None:
                raise ConfigError(
                    f"two agents of this run are named {spec.name!r}: every agent a run can "
                    "hand the conversation to needs a name of its own"
                )
            agents[spec.name] = spec
            todo.extend(spec.handoff_tools())
        root = Setup(
            name=root_name,
            system_prompt=system_prompt,
            tools=_enabled(tools),
            model=config.model,
            thinking_level=config.reasoning,
            guardrails=(),
            history="full",
        )
        return RunHandoffs(
            root=root,
            agents=agents,
            current=root_name,
            max_handoffs=config.max_handoffs,
            routes=routes,
            root_tools=tools,
        )

    def setup(self, name: str) -> Setup:
        """The setup of the agent `name` (its handoffs' `enabled` checked now)."""
        if name == self.root.name:  # back to the first agent: its handoffs checked again too
            self.root = replace(self.root, tools=_enabled(self.root_tools))
            return self.root
        spec = self.agents[name]
        return Setup(
            name=spec.name,
            system_prompt=spec.system_prompt,
            tools=_enabled([*spec.tools, *spec.handoff_tools()]),
            model=spec.model,
            thinking_level=spec.thinking_level,
            guardrails=tuple(spec.guardrails),
            history=spec.history,
        )

    # -- reading where a transcript stands ----------------------------------------------

    def resumed(self, messages: Sequence[AgentMessage], *, first: bool) -> str:
        """Who has the conversation at the end of `messages` (also sets the pending returns);
        with `first`, the first agent (no return pending)."""
        current, stack = self.root.name, self.stack
        stack.clear()
        if not first:
            for m in messages:
                role = getattr(m, "role", None)
                if role == "tool_result":
                    to, returns = _handed_to(m)  # type: ignore[arg-type]
                    if to is not None and to in self.routes.get(m.tool_name, ()):  # type: ignore[union-attr]
                        if returns:
                            stack.append(_Frame(current, to, m.tool_call_id))  # type: ignore[union-attr]
                        current = to
                elif role == "assistant" and _returns_here(m, current, stack):  # type: ignore[arg-type]
                    current = stack.pop().caller
        self.current = current
        return current

    # -- the batch -------------------------------------------------------------------------

    def refusal(
        self,
        message: AssistantMessage,
        call: ToolCall,
        tool: HandoffTool,
        tools_by_name: dict[str, AgentTool],
    ) -> str | None:
        """Why this handoff call is not carried out (the error result's text), or None."""
        for other in message.tool_calls:  # the answer's first handoff call
            if isinstance(tools_by_name.get(other.name), HandoffTool):
                if other.id != call.id:
                    return SECOND_HANDOFF.format(first=other.name)
                break
        target = tool.target.name
        if self.max_handoffs is not None and self.handoffs >= self.max_handoffs:
            self.limit = LimitReached(
                kind="max_handoffs", limit=self.max_handoffs, used=self.handoffs + 1
            )
            return f"Handoff not carried out: {self.limit}."
        last = self.last
        if last is not None and last == (target, self.current) and self.bounces >= MAX_BOUNCES:
            self.limit = LimitReached(kind="handoff_loop", limit=MAX_BOUNCES, used=self.bounces + 1)
            return f"Handoff not carried out: {self.limit}."
        return None

    def after_turn(
        self,
        message: AssistantMessage,
        results: list[ToolResultMessage],
        tools_by_name: dict[str, AgentTool],
    ) -> Switch | None:
        """The switch this turn makes, if any (see the module)."""
        current = self.current
        for result in results:
            to, returns = _handed_to(result)
            tool = tools_by_name.get(result.tool_name)
            if to is None or not isinstance(tool, HandoffTool) or tool.target.name != to:
                continue  # (only a handoff tool's own result switches)
            self.handoffs += 1
            self.bounces = self.bounces + 1 if self.last == (to, current) else 0
            self.last = (current, to)
            if returns:
                self.stack.append(_Frame(current, to, result.tool_call_id))
            self.current = to
            return Switch(current, self.setup(to), result.tool_call_id, returns)
        if _returns_here(message, current, self.stack):
            frame = self.stack.pop()
            self.current = frame.caller
            return Switch(current, self.setup(frame.caller), frame.tool_call_id, True)
        return None

    # -- the view --------------------------------------------------------------------------

    def view(self, messages: list[Message], tools_by_name: dict[str, AgentTool]) -> list[Message]:
        """The current agent's view of the request's messages."""
        history = self.root.history if self.current == self.root.name else None
        if history is None:
            history = self.agents[self.current].history
        return view(messages, self.current, tools_by_name, history, self.texts)


def _enabled(tools: Sequence[AgentTool]) -> list[AgentTool]:
    return [t for t in tools if not isinstance(t, HandoffTool) or t.is_enabled()]


def _handed_to(result: ToolResultMessage) -> tuple[str | None, bool]:
    """The agent a successful handoff result hands to, and whether it returns."""
    if result.is_error:
        return None, False
    details = result.details
    if not isinstance(details, dict):
        return None, False
    data = details.get("handoff")
    if not isinstance(data, dict) or not isinstance(data.get("to"), str):
        return None, False
    return data["to"], bool(data.get("returns"))


def _returns_here(message: AssistantMessage, current: str, stack: list[_Frame]) -> bool:
    """Whether this answer hands the conversation back: the agent entered with `returns=True`
    answered (no tool call, not an error)."""
    return (
        bool(stack)
        and stack[-1].target == current
        and message.agent == current
        and message.stop_reason == "stop"
        and not message.tool_calls
    )


# -- the view of one agent -------------------------------------------------------------------


def _as_text(message: AssistantMessage) -> str:
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text:
                parts.append(block.text)
        elif isinstance(block, ToolCall):
            parts.append(f"(called {block.name} with {json.dumps(block.arguments)})")
    return "\n".join(parts)


def _result_text(result: ToolResultMessage) -> str:
    text = "".join(b.text for b in result.content if isinstance(b, TextContent))
    status = "error" if result.is_error else "result"
    return f"({status} of {result.tool_name}: {text})"


def _memo(texts: dict[int, tuple[Any, str]] | None, message: Any, render: Any) -> str:
    """`render(message)`, once per message of a run (the view is computed for every request)."""
    if texts is None:
        text: str = render(message)
        return text
    kept = texts.get(id(message))
    if kept is not None and kept[0] is message:
        return kept[1]
    text = render(message)
    texts[id(message)] = (message, text)  # (the message is kept: its id stays its own)
    return text


def view(
    messages: list[Message],
    agent: str,
    tools_by_name: dict[str, AgentTool],
    history: Any,
    texts: dict[int, tuple[Any, str]] | None = None,
) -> list[Message]:
    """What `agent` sees: its own messages (and unnamed ones) whose calls it holds as they are;
    everything else an agent produced (another agent's answers, calls of tools `agent` does not
    hold and their results) as text in a user message naming the agent; then its history
    policy (`"full"`, the last N messages, or a function)."""
    out: list[Message] = []
    as_text: set[str] = set()  # ids of calls shown as text
    pending: list[str] = []  # text not yet in a message (one user message per run of them)
    label = ""

    def flush() -> None:
        if pending:
            out.append(UserMessage(content="\n".join(pending)))
            pending.clear()

    for m in messages:
        if m.role == "assistant":
            calls = m.tool_calls
            if (m.agent is None or m.agent == agent) and all(
                c.name in tools_by_name for c in calls
            ):
                flush()
                out.append(m)
                continue
            if m.stop_reason in ("error", "aborted"):
                continue  # never replayed (as every provider does)
            as_text.update(c.id for c in calls)
            text = _memo(texts, m, _as_text)
            label = m.agent or "another agent"
            if text:
                pending.append(f"[{label}] {text}")
        elif m.role == "tool_result" and m.tool_call_id in as_text:
            pending.append(f"[{m.agent or label}] {_memo(texts, m, _result_text)}")
        else:
            flush()
            out.append(m)
    flush()
    if history == "full":
        return out
    if isinstance(history, int):
        cut = out[-history:]
        while cut and cut[0].role == "tool_result":  # never a result without its call
            cut = cut[1:]
        return cut
    result = history(out)
    if not isinstance(result, list):
        raise ConfigError(
            f"the history function of agent {agent!r} returned {type(result).__name__}; "
            "expected a list of messages"
        )
    return result
