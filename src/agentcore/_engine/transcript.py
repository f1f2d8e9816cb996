"""A run's transcript (`Transcript`): the one writer of what the run's turns say.

It holds the conversation as the run goes (the system prompt, the messages, the tools), the
messages the run added, the phase (between turns, in a turn, streaming) and the latest event of
an answer whose request failed while it streamed, and it sends the events that go with each
change: `turn_start`, `turn_end`, and a message's `message_start`/`message_end` as it joins. "A
message joins" is written once, in `join`; the streamed answer, the failure path's error message,
a compaction's marker, the tool results and the approval requests all join through it.

The stages of a run read it (`messages`, `context()`, `tools_by_name`, ...) and return values;
only the driver (`loop.LoopRun`) and the stages it hands the transcript to for that purpose (a
request streaming its answer, a batch publishing its results) call its methods that change it.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol, TypeVar

from .._tools.search import SEARCH_TOOLS
from ..config import AgentContext
from ..errors import ConfigError
from ..events import MessageEndEvent, MessageStartEvent, TurnEndEvent, TurnStartEvent
from ..llm.server_side import found_tool_names
from ..messages import AssistantMessage, ToolResultMessage
from .request import LlmTranscript
from .tool_search import search_tools_tool

if TYPE_CHECKING:
    from .._compaction.protocol import CompactionSummary
    from ..llm.events import AssistantMessageEvent
    from ..llm.types import Tool
    from ..messages import AgentMessage
    from ..tools import AgentTool
    from .emit import Emitter

__all__ = ["Phase", "Transcript"]


_M = TypeVar("_M")


def _named(message: _M, agent: str) -> _M:
    """An answer or a tool result naming `agent` (as it is, if it names one already)."""
    if isinstance(message, AssistantMessage | ToolResultMessage) and message.agent is None:
        return replace(message, agent=agent)
    return message


class _Compacted(Protocol):
    """What `keep` reads of a `compaction.Compacted` (named here: compaction reads the
    transcript, so the transcript does not import it)."""

    @property
    def marker(self) -> CompactionSummary | None: ...
    @property
    def failed(self) -> bool: ...


def _found_names(message: object) -> list[str] | None:
    """The tools a message says were found: a result's `added_tool_names`, or the tools the
    provider's own tool search found in an answer (`llm.server_side.found_tool_names`)."""
    if isinstance(message, ToolResultMessage):
        return message.added_tool_names
    if isinstance(message, AssistantMessage):
        return found_tool_names(message) or None
    return None


class Phase(enum.Enum):
    """Where the run is, for its failure path: which events it must close."""

    BETWEEN_TURNS = "between_turns"  # no turn is open
    IN_TURN = "in_turn"  # a turn is open, no answer is streaming
    STREAMING = "streaming"  # an answer is streaming (failed: `partial_event` is its latest)


class Transcript:
    """The run's conversation and the events that change it (see the module)."""

    __slots__ = (
        "agent",
        "compaction_failed",
        "deferred",
        "deferred_llm",
        "emitter",
        "llm",
        "llm_tools",
        "messages",
        "native_search",
        "new_messages",
        "partial_event",
        "phase",
        "run_tools",
        "system_prompt",
        "tools",
        "tools_by_name",
    )

    def __init__(self, context: AgentContext, emitter: Emitter) -> None:
        self.emitter = emitter
        self.agent: str | None = None  # who has the conversation, in a run with handoffs
        self.system_prompt = context.system_prompt
        self.messages: list[AgentMessage] = list(context.messages)
        self.run_tools: list[AgentTool] = []  # the run's own (skills'): kept across `replace`
        self.tools: list[AgentTool] = list(context.tools)
        self.tools_by_name = {t.name: t for t in self.tools}
        self.llm_tools: list[Tool] = [t.llm_tool for t in self.tools]
        # the deferred tools (name -> tool) of a context that has any, else None (`defer`)
        self.deferred: dict[str, AgentTool] | None = None
        # the deferred tools as a model with native tool search gets them (marked deferred)
        self.deferred_llm: list[Tool] = []
        self.native_search = False  # the last request went to a model that searches itself
        if any(t.deferred for t in self.tools):
            self.defer()
        self.llm = LlmTranscript()  # the default conversion, kept as the transcript grows
        self.new_messages: list[AgentMessage] = []
        self.phase = Phase.BETWEEN_TURNS
        self.compaction_failed = False  # then only an overflow compacts again (`compaction`)
        # the latest event of an answer whose request failed while it streamed
        self.partial_event: AssistantMessageEvent | None = None

    def context(self) -> AgentContext:
        """A copy of the conversation, for the hooks."""
        return AgentContext(
            system_prompt=self.system_prompt, messages=list(self.messages), tools=self.tools
        )

    # -- turns -----------------------------------------------------------------------------

    async def turn_start(self) -> None:
        self.phase = Phase.IN_TURN
        if (pending := self.emitter.send(TurnStartEvent())) is not None:
            await pending

    async def turn_end(self, message: AssistantMessage, results: list[ToolResultMessage]) -> None:
        self.phase = Phase.BETWEEN_TURNS
        if (
            pending := self.emitter.send(TurnEndEvent(message=message, tool_results=results))
        ) is not None:
            await pending

    # -- messages --------------------------------------------------------------------------

    def open(self, partial: AssistantMessage) -> Awaitable[None] | None:
        """An answer starts streaming: its `message_start` (what to await, or None)."""
        self.phase = Phase.STREAMING
        return self.emitter.send(MessageStartEvent(message=partial))

    def interrupted(self, latest: AssistantMessageEvent | None) -> None:
        """The request failed: the latest event of its answer, for the failure path."""
        self.partial_event = latest

    async def join(self, message: _M, *, started: bool = False) -> _M:
        """A complete message joins the transcript, with its `message_start` (unless it was
        `started`: an answer that streamed) and `message_end`. The one place a message joins.
        Returns the message as it joined (in a run with handoffs, naming its agent)."""
        emitter = self.emitter
        if self.agent is not None:  # (a run with handoffs) the agent's answers and results
            message = _named(message, self.agent)
        if not started:
            pending = emitter.send(MessageStartEvent(message=message))
            if pending is not None:
                await pending
        self.messages.append(message)
        self.new_messages.append(message)
        if self.deferred is not None and (names := _found_names(message)):
            self.found(names)
        if self.phase is Phase.STREAMING:
            self.phase, self.partial_event = Phase.IN_TURN, None
        if (pending := emitter.send(MessageEndEvent(message=message))) is not None:
            await pending
        return message

    async def keep(self, compacted: _Compacted) -> bool:
        """Keep what a compaction returned (`compaction.Compacted`): its marker joins (True), a
        failure is remembered (only an overflow compacts again in this run)."""
        if compacted.failed:
            self.compaction_failed = True
        if compacted.marker is None:
            return False
        await self.join(compacted.marker)
        return True

    # -- a turn's changes ------------------------------------------------------------------

    def replace(self, context: AgentContext) -> None:
        """The conversation `prepare_next_turn` gave (its system prompt, messages, tools)."""
        self.system_prompt = context.system_prompt
        self.messages = list(context.messages)
        self.tools = list(context.tools)
        self.tools_by_name = {t.name: t for t in self.tools}
        self.llm_tools = [t.llm_tool for t in self.tools]
        self.deferred = None
        if any(t.deferred for t in self.tools):
            self.defer()
        self.add_run_tools(self.run_tools)

    def switch(self, agent: str, system_prompt: str, tools: list[AgentTool]) -> None:
        """Another agent has the conversation (a handoff): its name, system prompt and tools;
        the messages stay (each agent's view is computed per request)."""
        self.agent = agent
        self.system_prompt = system_prompt
        self.tools = list(tools)
        self.tools_by_name = {t.name: t for t in self.tools}
        self.llm_tools = [t.llm_tool for t in self.tools]
        self.add_run_tools(self.run_tools)

    def add_run_tools(self, tools: list[AgentTool]) -> None:
        """Tools the run itself adds to those of its context (a skill's), for every request
        and across a `prepare_next_turn` that replaces the context."""
        self.run_tools = tools
        for tool in tools:
            if tool.name not in self.tools_by_name:
                self.tools_by_name[tool.name] = tool
                self.llm_tools.append(tool.llm_tool)

    def defer(self) -> None:
        """Take the deferred tools out of what the model sees and may call, offer
        `search_tools` in their place, and bring back those the transcript has found already
        (a resumed session, a replaced context): tool search (`_tools/search.py`)."""
        deferred = {t.name: t for t in self.tools if t.deferred}
        if SEARCH_TOOLS in self.tools_by_name and SEARCH_TOOLS not in deferred:
            raise ConfigError(
                f"a tool is named {SEARCH_TOOLS!r}, the name of the search tool a run with "
                "deferred tools offers; rename it"
            )
        self.deferred = deferred
        self.deferred_llm = [replace(t.llm_tool, deferred=True) for t in deferred.values()]
        search = search_tools_tool(deferred)
        self.tools_by_name = {t.name: t for t in self.tools if not t.deferred}
        self.tools_by_name[SEARCH_TOOLS] = search
        self.llm_tools = [t.llm_tool for t in self.tools if not t.deferred]
        self.llm_tools.append(search.llm_tool)
        for message in self.messages:
            if names := _found_names(message):
                self.found(names)

    def request_tools(self, native: bool) -> list[Tool]:
        """The tools of the next request: `llm_tools`, or for a model that searches tools itself
        (`native`, `Model.tool_search`) those without `search_tools`, and the deferred tools not
        found yet marked deferred (the provider's search finds them; found ones are sent as
        every other tool)."""
        self.native_search = native
        if not native or self.deferred is None:
            return list(self.llm_tools)
        tools = [t for t in self.llm_tools if t.name != SEARCH_TOOLS]
        tools.extend(t for t in self.deferred_llm if t.name not in self.tools_by_name)
        return tools

    def found(self, names: list[str]) -> None:
        """Deferred tools a result named in `added_tool_names` join the run (from this point
        of the transcript on, for every request). Other names change nothing."""
        deferred = self.deferred
        assert deferred is not None
        for name in names:
            tool = deferred.get(name)
            if tool is not None and name not in self.tools_by_name:
                self.tools_by_name[name] = tool
                self.llm_tools.append(tool.llm_tool)

    def offer(self, tool: AgentTool) -> None:
        """A tool the run adds to those the model may call (the final-answer tool)."""
        self.tools_by_name[tool.name] = tool
