"""What the loop puts around each request: the stream options built from the config, the answer
of a request an abort stopped before it was prepared, and unique tool-call ids in an answer.

Every bound the config sets on a request (`request_timeout`, `idle_timeout`, `max_retries`) goes
into the options of every request, so each provider honours it. Tool-call ids are made unique
here, for any stream function, because the loop pairs each call with its one result by id: two
calls sharing an id would give overlapping `tool_execution_start` events and a transcript no model
can match up.
"""

from __future__ import annotations

from dataclasses import replace

from .abort import AbortSignal
from .config import AgentLoopConfig
from .llm._adapter import ABORTED
from .llm.model import Model
from .llm.types import SimpleStreamOptions, ThinkingLevel
from .messages import AssistantContent, AssistantMessage, ToolCall

__all__ = ["aborted_answer", "stream_options", "unique_tool_call_ids"]


def stream_options(
    config: AgentLoopConfig, signal: AbortSignal, reasoning: ThinkingLevel
) -> SimpleStreamOptions:
    """The options of every request of a run (until the model or thinking level changes)."""
    return SimpleStreamOptions(
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        signal=signal,
        api_key=config.api_key,
        headers=config.headers,
        session_id=config.session_id,
        on_payload=config.on_payload,
        on_response=config.on_response,
        transport=config.transport,
        max_retry_delay_ms=config.max_retry_delay_ms,
        cache_retention=config.cache_retention,
        metadata=config.metadata,
        request_timeout=config.request_timeout,
        idle_timeout=config.idle_timeout,
        max_retries=config.max_retries,
        reasoning=None if reasoning == "off" else reasoning,
        thinking_budgets=config.thinking_budgets,
    )


def aborted_answer(model: Model) -> AssistantMessage:
    """The answer of a request the run's abort stopped before anything was prepared or sent:
    worded as the providers word an aborted request."""
    return AssistantMessage(
        api=model.api,
        provider=model.provider,
        model=model.id,
        stop_reason="aborted",
        error_message=ABORTED,
    )


def unique_tool_call_ids(message: AssistantMessage) -> AssistantMessage:
    """`message` with every tool-call id unique: a repeated id gets the first free suffix
    (`call_1`, `call_1_2`, ...), the rule `MessageBuilder` applies while streaming. The message
    itself when its ids are already unique (the usual case: no copy)."""
    calls = [b for b in message.content if isinstance(b, ToolCall)]
    if len(calls) < 2 or len({c.id for c in calls}) == len(calls):
        return message
    taken: set[str] = set()
    content: list[AssistantContent] = []
    for block in message.content:
        if isinstance(block, ToolCall):
            candidate, n = block.id, 1
            while candidate in taken:
                n += 1
                candidate = f"{block.id}_{n}"
            taken.add(candidate)
            if candidate != block.id:
                block = replace(block, id=candidate)
        content.append(block)
    return replace(message, content=content)
