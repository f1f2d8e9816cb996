"""agentcore: the agent loop for Python.

Hand it prompts, a context (system prompt, messages, tools) and a configuration; it streams the
model's answer, runs the tools the model calls, feeds the results back, and repeats until the
model is done, publishing every step as an event.
"""

from __future__ import annotations

import logging as _logging
import typing as _typing
from importlib import import_module as _import_module

from ._version import __version__ as __version__

if _typing.TYPE_CHECKING:
    from ._compaction.policy import Compaction as Compaction
    from ._compaction.protocol import CompactionError as CompactionError
    from ._compaction.protocol import CompactionReason as CompactionReason
    from ._compaction.protocol import CompactionRequest as CompactionRequest
    from ._compaction.protocol import CompactionResult as CompactionResult
    from ._compaction.protocol import CompactionStrategy as CompactionStrategy
    from ._compaction.protocol import CompactionSummary as CompactionSummary
    from ._compaction.strategies import DropOldest as DropOldest
    from ._compaction.strategies import KeepToolResultHeads as KeepToolResultHeads
    from ._compaction.strategies import Summarize as Summarize
    from ._engine.entry import agent_loop as agent_loop
    from ._engine.entry import agent_loop_continue as agent_loop_continue
    from ._engine.entry import first_request as first_request
    from ._engine.entry import run_agent_loop as run_agent_loop
    from ._engine.entry import run_agent_loop_continue as run_agent_loop_continue
    from ._engine.event_stream import EventStream as EventStream
    from ._engine.instrumentation import Instrumentation as Instrumentation
    from ._engine.instrumentation import RequestObserver as RequestObserver
    from ._engine.instrumentation import RunInfo as RunInfo
    from ._engine.instrumentation import RunObserver as RunObserver
    from ._engine.instrumentation import ToolObserver as ToolObserver
    from ._engine.instrumentation import get_instrumentation as get_instrumentation
    from ._engine.instrumentation import set_instrumentation as set_instrumentation
    from ._engine.usage import run_usage as run_usage
    from ._tools.agent_tool import agent_tool as agent_tool
    from .abort import AbortController as AbortController
    from .abort import AbortSignal as AbortSignal
    from .abort import cancel_on_abort as cancel_on_abort
    from .agent import Agent as Agent
    from .agent import AgentState as AgentState
    from .agent import Listener as Listener
    from .agent import QueueMode as QueueMode
    from .approvals import ApprovalDecision as ApprovalDecision
    from .approvals import ApprovalRequest as ApprovalRequest
    from .approvals import ApprovedCallStarted as ApprovedCallStarted
    from .config import AfterToolCallContext as AfterToolCallContext
    from .config import AfterToolCallResult as AfterToolCallResult
    from .config import AgentContext as AgentContext
    from .config import AgentLoopConfig as AgentLoopConfig
    from .config import BeforeToolCallContext as BeforeToolCallContext
    from .config import BeforeToolCallResult as BeforeToolCallResult
    from .config import NextTurn as NextTurn
    from .config import PrepareNextTurnContext as PrepareNextTurnContext
    from .config import default_convert_to_llm as default_convert_to_llm
    from .errors import AgentBusyError as AgentBusyError
    from .errors import AgentCoreError as AgentCoreError
    from .errors import ConfigError as ConfigError
    from .errors import MessageFormatError as MessageFormatError
    from .errors import MissingApiKeyError as MissingApiKeyError
    from .errors import MissingExtraError as MissingExtraError
    from .errors import ModelError as ModelError
    from .errors import ModelNotFoundError as ModelNotFoundError
    from .errors import OutputValidationError as OutputValidationError
    from .errors import ToolDefinitionError as ToolDefinitionError
    from .errors import ToolError as ToolError
    from .errors import UnknownApiError as UnknownApiError
    from .errors import UsageError as UsageError
    from .events import AgentEndEvent as AgentEndEvent
    from .events import AgentEvent as AgentEvent
    from .events import AgentEventSink as AgentEventSink
    from .events import AgentStartEvent as AgentStartEvent
    from .events import AgentSwitchEvent as AgentSwitchEvent
    from .events import MemoryUpdateEvent as MemoryUpdateEvent
    from .events import MessageEndEvent as MessageEndEvent
    from .events import MessageStartEvent as MessageStartEvent
    from .events import MessageUpdateEvent as MessageUpdateEvent
    from .events import ToolExecutionEndEvent as ToolExecutionEndEvent
    from .events import ToolExecutionStartEvent as ToolExecutionStartEvent
    from .events import ToolExecutionUpdateEvent as ToolExecutionUpdateEvent
    from .events import TurnEndEvent as TurnEndEvent
    from .events import TurnStartEvent as TurnStartEvent
    from .handoffs import AgentSpec as AgentSpec
    from .handoffs import HandoffTool as HandoffTool
    from .handoffs import HistoryView as HistoryView
    from .handoffs import handoff as handoff
    from .limits import LimitKind as LimitKind
    from .limits import LimitReached as LimitReached
    from .limits import UsageLimits as UsageLimits
    from .llm.registry import StreamFn as StreamFn
    from .llm.types import ThinkingLevel as ThinkingLevel
    from .messages import AgentMessage as AgentMessage
    from .messages import AssistantMessage as AssistantMessage
    from .messages import Cost as Cost
    from .messages import ImageContent as ImageContent
    from .messages import Message as Message
    from .messages import StopReason as StopReason
    from .messages import TextContent as TextContent
    from .messages import ThinkingContent as ThinkingContent
    from .messages import ToolCall as ToolCall
    from .messages import ToolResultMessage as ToolResultMessage
    from .messages import Usage as Usage
    from .messages import UserMessage as UserMessage
    from .messages import register_message_type as register_message_type
    from .output import OutputMode as OutputMode
    from .output import OutputSpec as OutputSpec
    from .sessions import JsonlSessionStore as JsonlSessionStore
    from .sessions import Session as Session
    from .sessions import SessionStore as SessionStore
    from .sessions import SqliteSessionStore as SqliteSessionStore
    from .tools import AgentTool as AgentTool
    from .tools import AgentToolResult as AgentToolResult
    from .tools import ToolExecutionMode as ToolExecutionMode
    from .tools import ToolUpdateCallback as ToolUpdateCallback
    from .tools import tool as tool

# Each public name, by the module that defines it. A name is imported when it is first used
# (module `__getattr__`), so that `import agentcore` costs next to nothing and a program pays
# only for what it uses: one calling `agent_loop` does not import the `Agent` and its sessions,
# approvals and guardrails. `from agentcore import *` and `dir(agentcore)` see every name.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "_compaction.policy": ("Compaction",),
    "_compaction.protocol": (
        "CompactionError",
        "CompactionReason",
        "CompactionRequest",
        "CompactionResult",
        "CompactionStrategy",
        "CompactionSummary",
    ),
    "_compaction.strategies": (
        "DropOldest",
        "KeepToolResultHeads",
        "Summarize",
    ),
    "_engine.entry": (
        "agent_loop",
        "agent_loop_continue",
        "first_request",
        "run_agent_loop",
        "run_agent_loop_continue",
    ),
    "_engine.event_stream": ("EventStream",),
    "_engine.instrumentation": (
        "Instrumentation",
        "RequestObserver",
        "RunInfo",
        "RunObserver",
        "ToolObserver",
        "get_instrumentation",
        "set_instrumentation",
    ),
    "_engine.usage": ("run_usage",),
    "abort": (
        "AbortController",
        "AbortSignal",
        "cancel_on_abort",
    ),
    "agent": (
        "Agent",
        "AgentState",
        "Listener",
        "QueueMode",
    ),
    "approvals": (
        "ApprovalDecision",
        "ApprovalRequest",
        "ApprovedCallStarted",
    ),
    "config": (
        "AfterToolCallContext",
        "AfterToolCallResult",
        "AgentContext",
        "AgentLoopConfig",
        "BeforeToolCallContext",
        "BeforeToolCallResult",
        "NextTurn",
        "PrepareNextTurnContext",
        "default_convert_to_llm",
    ),
    "errors": (
        "AgentBusyError",
        "AgentCoreError",
        "ConfigError",
        "MessageFormatError",
        "MissingApiKeyError",
        "MissingExtraError",
        "ModelError",
        "ModelNotFoundError",
        "OutputValidationError",
        "ToolDefinitionError",
        "ToolError",
        "UnknownApiError",
        "UsageError",
    ),
    "_tools.agent_tool": ("agent_tool",),
    "handoffs": ("AgentSpec", "HandoffTool", "HistoryView", "handoff"),
    "events": (
        "AgentEndEvent",
        "AgentEvent",
        "AgentEventSink",
        "AgentStartEvent",
        "AgentSwitchEvent",
        "MemoryUpdateEvent",
        "MessageEndEvent",
        "MessageStartEvent",
        "MessageUpdateEvent",
        "ToolExecutionEndEvent",
        "ToolExecutionStartEvent",
        "ToolExecutionUpdateEvent",
        "TurnEndEvent",
        "TurnStartEvent",
    ),
    "limits": (
        "LimitKind",
        "LimitReached",
        "UsageLimits",
    ),
    "llm.registry": ("StreamFn",),
    "llm.types": ("ThinkingLevel",),
    "messages": (
        "AgentMessage",
        "AssistantMessage",
        "Cost",
        "ImageContent",
        "Message",
        "StopReason",
        "TextContent",
        "ThinkingContent",
        "ToolCall",
        "ToolResultMessage",
        "Usage",
        "UserMessage",
        "register_message_type",
    ),
    "output": (
        "OutputMode",
        "OutputSpec",
    ),
    "sessions": (
        "JsonlSessionStore",
        "Session",
        "SessionStore",
        "SqliteSessionStore",
    ),
    "tools": (
        "AgentTool",
        "AgentToolResult",
        "ToolExecutionMode",
        "ToolUpdateCallback",
        "tool",
    ),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str) -> object:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'agentcore' has no attribute {name!r}")
    value = getattr(_import_module(f".{module}", __name__), name)
    globals()[name] = value  # the next lookup is an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULE_OF))


__all__ = [
    "AbortController",
    "AbortSignal",
    "AfterToolCallContext",
    "AfterToolCallResult",
    "Agent",
    "AgentBusyError",
    "AgentContext",
    "AgentCoreError",
    "AgentEndEvent",
    "AgentEvent",
    "AgentEventSink",
    "AgentLoopConfig",
    "AgentMessage",
    "AgentSpec",
    "AgentStartEvent",
    "AgentState",
    "AgentSwitchEvent",
    "AgentTool",
    "AgentToolResult",
    "ApprovalDecision",
    "ApprovalRequest",
    "ApprovedCallStarted",
    "AssistantMessage",
    "BeforeToolCallContext",
    "BeforeToolCallResult",
    "Compaction",
    "CompactionError",
    "CompactionReason",
    "CompactionRequest",
    "CompactionResult",
    "CompactionStrategy",
    "CompactionSummary",
    "ConfigError",
    "Cost",
    "DropOldest",
    "EventStream",
    "HandoffTool",
    "HistoryView",
    "ImageContent",
    "Instrumentation",
    "JsonlSessionStore",
    "KeepToolResultHeads",
    "LimitKind",
    "LimitReached",
    "Listener",
    "MemoryUpdateEvent",
    "Message",
    "MessageEndEvent",
    "MessageFormatError",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "MissingApiKeyError",
    "MissingExtraError",
    "ModelError",
    "ModelNotFoundError",
    "NextTurn",
    "OutputMode",
    "OutputSpec",
    "OutputValidationError",
    "PrepareNextTurnContext",
    "QueueMode",
    "RequestObserver",
    "RunInfo",
    "RunObserver",
    "Session",
    "SessionStore",
    "SqliteSessionStore",
    "StopReason",
    "StreamFn",
    "Summarize",
    "TextContent",
    "ThinkingContent",
    "ThinkingLevel",
    "ToolCall",
    "ToolDefinitionError",
    "ToolError",
    "ToolExecutionEndEvent",
    "ToolExecutionMode",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "ToolObserver",
    "ToolResultMessage",
    "ToolUpdateCallback",
    "TurnEndEvent",
    "TurnStartEvent",
    "UnknownApiError",
    "Usage",
    "UsageError",
    "UsageLimits",
    "UserMessage",
    "__version__",
    "agent_loop",
    "agent_loop_continue",
    "agent_tool",
    "cancel_on_abort",
    "default_convert_to_llm",
    "first_request",
    "get_instrumentation",
    "handoff",
    "register_message_type",
    "run_agent_loop",
    "run_agent_loop_continue",
    "run_usage",
    "set_instrumentation",
    "tool",
]

# Retries, timeouts, limits and session recovery are logged on `agentcore` and its children
# (`agentcore.llm`, `agentcore.sessions`). As a library, agentcore leaves output to the
# application: its records reach the application's handlers, never Python's last-resort stderr one.
_logging.getLogger("agentcore").addHandler(_logging.NullHandler())
