"""The loop's side of compaction: building each request's messages from the compacted
transcript, compacting before a request that would pass the threshold, and after one that
overflowed.

The order of a request's preparation, with `config.compaction` set:

1. the view: the transcript with its compactions applied (`compacted_view`);
2. `transform_context` on the view, then `convert_to_llm`;
3. the estimate of the request (system prompt, with the recalled memories' block when `memory=`
   is set, tools, converted messages): the usage the last
   answer since the latest compaction reported (its prompt and output tokens), plus four
   characters a token for the messages after it; four characters a token for everything when no
   such answer exists;
4. past `threshold` x `context_window`: compact (a marker joins the transcript, with its
   `message_start`/`message_end`), then steps 1 and 2 again.

A request that fails as a context overflow (`is_context_overflow`) is compacted the same way and
sent again, once (the failed answer stays in the transcript and is left out of the view).
A compaction that cannot be done (nothing older than the kept turns) or fails (its summary
request failed, the strategy raised) is logged to `agentcore` and the run goes on without it;
after a failure, only an overflow compacts again in that run (a summariser that is down is not
asked again before every request).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .._compaction.protocol import (
    CompactionError,
    CompactionReason,
    CompactionRequest,
    CompactionResult,
    CompactionSummary,
)
from .._compaction.view import compacted_view, estimate_context, estimate_tokens, split
from ..llm.model import Model
from ..llm.overflow import is_context_overflow
from ..llm.registry import call_stream_fn
from ..llm.types import Context, Tool
from ..messages import AgentMessage, AssistantMessage, Message
from .emit import call_hook
from .memory import recall, request_system_prompt
from .request import stream_options

if TYPE_CHECKING:
    from .run_types import CompactionRun, RunInputs

__all__ = ["Compacted", "api_key_for", "convert_view", "request_messages", "retry_after_overflow"]

_log = logging.getLogger("agentcore")


@dataclass(frozen=True, slots=True)
class Compacted:
    """A compaction that was tried, for the loop to keep: the marker that joins the transcript
    (None: nothing was compacted), whether it failed (then only an overflow compacts again in
    the run), and the request's messages as converted before it (used when there is no marker).
    """

    marker: CompactionSummary | None
    failed: bool = False
    messages: list[Message] | None = None


async def api_key_for(inputs: RunInputs, run: CompactionRun, model: Model) -> str | None:
    """The key of a request to `model` that is not the run's own: `get_api_key(provider)`, else
    `config.api_key` when `model` is of the run's provider, else None (the provider's
    environment variable)."""
    config = inputs.config
    if config.get_api_key is not None:
        key = await call_hook(config.get_api_key, model.provider)
        if key:
            return str(key)
    return config.api_key if model.provider == run.model.provider else None


async def _convert(inputs: RunInputs, messages: Sequence[AgentMessage]) -> list[Message] | None:
    """`transform_context` then `convert_to_llm`; None when the abort fired in between."""
    transform = inputs.hooks.transform_context
    if transform is not None:
        messages = await call_hook(transform, list(messages), inputs.signal)
        if inputs.signal.aborted:
            return None
    return list(await call_hook(inputs.config.convert_to_llm, messages))


async def convert_view(
    inputs: RunInputs, transcript: Sequence[AgentMessage]
) -> list[Message] | None:
    """The messages of a request of `transcript` (its compactions applied when the run has a
    policy); None when the abort fired while preparing them."""
    if inputs.config.compaction is None:
        return await _convert(inputs, transcript)
    return await _convert(inputs, compacted_view(transcript))


async def request_messages(
    inputs: RunInputs, run: CompactionRun, recalled: str
) -> list[Message] | Compacted | None:
    """The messages of the next request; `Compacted` when it would pass the threshold and a
    compaction was tried (the loop keeps its marker, then asks `convert_view` again); None
    when the abort fired while preparing them. `recalled`: the request's block of recalled
    memories (see `memory.recall`), counted in the estimate."""
    policy = inputs.config.compaction
    if policy is None:
        return await _convert(inputs, run.transcript.messages)
    view = compacted_view(run.transcript.messages)
    messages = await _convert(inputs, view)
    window = run.model.context_window
    if (
        messages is None
        or policy.threshold is None
        or not window
        or run.transcript.compaction_failed
    ):
        return messages
    tokens = _estimate(inputs, run, messages, recalled)
    if tokens <= policy.threshold * window:
        return messages
    done = await _compact(inputs, run, view, "threshold", tokens, recalled)
    return replace(done, messages=messages) if done.marker is None else done


async def retry_after_overflow(
    inputs: RunInputs, run: CompactionRun, answer: AssistantMessage
) -> Compacted | None:
    """Compact after `answer` failed as a context overflow (None: not one to compact); the
    request is sent again when the result has a marker."""
    policy = inputs.config.compaction
    if (
        policy is None
        or not policy.on_overflow
        or answer.stop_reason != "error"
        or inputs.signal.aborted
        or not is_context_overflow(answer, run.model.context_window)
    ):
        return None
    view = compacted_view(run.transcript.messages)
    if view and view[-1] is answer:
        view.pop()  # left out of the view by the marker, too
    recalled = await recall(inputs.config.memory, run.transcript)
    system = request_system_prompt(inputs.config, run.transcript, recalled)
    tokens = estimate_context(system, _tools(run), view)
    return await _compact(inputs, run, view, "overflow", tokens, recalled)


def _tools(run: CompactionRun) -> list[Tool]:
    return list(run.transcript.llm_tools)


def _estimate(
    inputs: RunInputs, run: CompactionRun, messages: Sequence[Message], recalled: str
) -> int:
    """The estimated size of a request of `messages` (see the module docstring)."""
    transcript = run.transcript.messages
    last = max(
        (i for i, m in enumerate(transcript) if isinstance(m, CompactionSummary)), default=-1
    )
    since = {id(m) for m in transcript[last + 1 :]}
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if (
            isinstance(m, AssistantMessage)
            and id(m) in since
            and m.stop_reason not in ("error", "aborted")
        ):
            usage = m.usage
            prompt = usage.input + usage.cache_read + usage.cache_write
            if prompt:
                return prompt + usage.output + estimate_tokens(messages[i + 1 :])
            break
    system = request_system_prompt(inputs.config, run.transcript, recalled)
    return estimate_context(system, _tools(run), messages)


_NOTHING = Compacted(marker=None)
_FAILED = Compacted(marker=None, failed=True)


async def _compact(
    inputs: RunInputs,
    run: CompactionRun,
    view: list[AgentMessage],
    reason: CompactionReason,
    tokens: int,
    recalled: str,
) -> Compacted:
    """Compact `view` with the run's policy: the marker to add, if any (`recalled`: the
    request's recalled memories, counted in the marker's `tokens_after`)."""
    policy = inputs.config.compaction
    assert policy is not None
    window = run.model.context_window
    share = policy.threshold or 1.0
    cut = split(view, policy.keep_recent_turns, share * window / 2 if window else None)
    name = type(policy.strategy).__name__
    if cut == 0:  # an overflow that cannot be compacted ends the run: worth a warning
        _log.log(
            logging.WARNING if reason == "overflow" else logging.INFO,
            "cannot compact (%s, about %d tokens): nothing is older than the kept turns",
            reason,
            tokens,
        )
        return _NOTHING
    if reason == "threshold":  # the estimate and the threshold it passed, each named
        why = (
            f"the request, about {tokens} tokens, passes the threshold of "
            f"{int(share * window)} ({share:g} x the context window of {window})"
        )
    else:
        why = f"the request, about {tokens} tokens, overflowed the context window of {window}"
    _log.info("compacting %d of %d messages with %s: %s", cut, len(view), name, why)

    async def complete(
        model: Model, context: Context, *, max_tokens: int | None = None
    ) -> AssistantMessage:
        options = replace(
            stream_options(inputs.config, inputs.signal, run.reasoning),
            api_key=await api_key_for(inputs, run, model),
            max_tokens=max_tokens,
            reasoning=None,
            session_id=None,
            output_schema=None,
        )
        stream = await call_stream_fn(inputs.stream_fn, model, context, options)
        async with stream:
            return await stream.result()

    request = CompactionRequest(
        older=view[:cut],
        recent=view[cut:],
        model=run.model,
        system_prompt=run.transcript.system_prompt,
        reason=reason,
        tokens_before=tokens,
        signal=inputs.signal,
        complete=complete,
    )
    result: Any
    try:
        result = await policy.strategy.compact(request)
        if result is not None and not isinstance(result, CompactionResult):
            raise CompactionError(
                f"{name}.compact returned {type(result).__name__}; "
                "expected a CompactionResult or None"
            )
    except Exception as exc:
        _log.warning(
            "compaction with %s failed, going on without (only an overflow compacts again in "
            "this run): %s",
            name,
            exc,
            exc_info=not isinstance(exc, CompactionError),
        )
        return _FAILED
    if result is None:
        _log.info("%s found nothing to compact", name)
        return _NOTHING
    marker = CompactionSummary(
        summary=result.summary,
        kept_messages=len(view) - cut,
        compacted_messages=cut,
        tool_result_chars=result.tool_result_chars,
        strategy=name,
        reason=reason,
        tokens_before=tokens,
        usage=result.usage,
    )
    system = request_system_prompt(inputs.config, run.transcript, recalled)
    after = estimate_context(system, _tools(run), compacted_view([*view, marker]))
    marker = replace(marker, tokens_after=after)
    _log.info("compacted: about %d tokens before, %d after", tokens, after)
    return Compacted(marker=marker)
