"""Compaction (issue 11): a faux model with a small context window and a conversation that
outgrows it, driven by `agent_loop` and the `Agent`.

What is checked: the run completes; what each request sends respects the pairing of tool calls
and results and carries the summary in place of the older turns; the transcript (and the session,
JSONL and SQLite, reloaded) keeps the full history with the compaction marker; the events are
well formed; an overflow is compacted and retried once; each strategy sends what it promises; a
failed compaction is logged and the run goes on.
"""

from __future__ import annotations

import logging
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcore import (
    AbortController,
    Agent,
    AgentContext,
    AgentLoopConfig,
    Compaction,
    CompactionRequest,
    CompactionResult,
    CompactionSummary,
    ConfigError,
    DropOldest,
    KeepToolResultHeads,
    Summarize,
    agent_loop,
    run_usage,
    tool,
)
from agentcore._compaction.view import SUMMARY_PREFIX, compacted_view, split
from agentcore.events import AgentEvent
from agentcore.messages import (
    AgentMessage,
    AssistantMessage,
    Message,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    from_json,
    to_json,
)
from agentcore.sessions import JsonlSessionStore, SessionStore, SqliteSessionStore
from agentcore.testing import (
    FauxCall,
    FauxProvider,
    check_well_formed,
    faux_error,
    faux_text,
    faux_tool_call,
)

pytestmark = pytest.mark.anyio

WINDOW = 2000  # tokens: a few tool results of `read` fill it
OVERFLOW = "prompt is too long: {n} tokens > {window} maximum"


@tool
def read(n: int) -> str:
    """Read page n of the book."""
    return f"page-{n}: " + f"words of page {n} " * 60  # about 260 tokens


def read_calls(count: int, final: str = "done") -> list[Any]:
    return [faux_tool_call("read", {"n": n}, id=f"call_{n}") for n in range(1, count + 1)] + [
        faux_text(final)
    ]


def text_of(message: Any) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    out = []
    for block in content:
        if isinstance(block, TextContent):
            out.append(block.text)
        elif isinstance(block, ToolCall):
            out.append(f"{block.name}({block.arguments})")
    return "".join(out)


def sent_text(call: FauxCall) -> str:
    return "\n".join(text_of(m) for m in call.context.messages)


def assert_paired(messages: Sequence[Message]) -> None:
    """Every tool call of a request has its result after it, and every result its call."""
    called: set[str] = set()
    answered: set[str] = set()
    for message in messages:
        if isinstance(message, AssistantMessage) and message.stop_reason not in (
            "error",
            "aborted",
        ):
            called.update(c.id for c in message.tool_calls)
        elif isinstance(message, ToolResultMessage):
            assert message.tool_call_id in called, f"result {message.tool_call_id} without call"
            answered.add(message.tool_call_id)
    assert called == answered, f"calls without results: {called - answered}"


async def run(
    config: AgentLoopConfig, prompt: str = "Read the book.", messages: Sequence[Any] = ()
) -> tuple[list[AgentEvent], list[AgentMessage]]:
    context = AgentContext(system_prompt="You read books.", messages=list(messages), tools=[read])
    events: list[AgentEvent] = []
    async with agent_loop([UserMessage(content=prompt)], context, config) as stream:
        async for event in stream:
            events.append(event)
        result = await stream.result()
    check_well_formed(events)
    return events, result


def markers(messages: Sequence[Any]) -> list[CompactionSummary]:
    return [m for m in messages if isinstance(m, CompactionSummary)]


# --- the summarising strategy in the loop -------------------------------------------------------


async def test_summarize_keeps_the_run_going_within_the_window() -> None:
    main = FauxProvider(read_calls(8), context_window=WINDOW)
    summariser = FauxProvider([faux_text("SUMMARY: pages 1 to 5 were read.")] * 4)
    config = AgentLoopConfig(
        model=main.model,
        compaction=Compaction(strategy=Summarize(model=summariser.model), keep_recent_turns=1),
    )
    events, result = await run(config)

    assert isinstance(result[-1], AssistantMessage) and text_of(result[-1]) == "done"
    found = markers(result)
    assert found, "no compaction happened"
    marker = found[0]
    assert marker.reason == "threshold" and marker.strategy == "Summarize"
    assert marker.summary == "SUMMARY: pages 1 to 5 were read."
    assert marker.tokens_after < marker.tokens_before
    assert marker.usage is not None and marker.usage.output > 0
    # the marker's events: a message_start/message_end pair of its own
    ends = [
        e for e in events if e.type == "message_end" and isinstance(e.message, CompactionSummary)
    ]
    assert [e.message for e in ends] == found
    # the summariser was asked with the older turns, as text
    first = summariser.calls[0]
    asked = sent_text(first)
    assert "page-1:" in asked and "Read the book." in asked
    assert first.options.max_tokens is not None
    # every request fits, is paired, and after the compaction carries the summary instead
    for call in main.calls:
        assert_paired(call.context.messages)
    after = [c for c in main.calls if "SUMMARY: pages" in sent_text(c)]
    assert after, "no request carried the summary"
    assert "page-1:" not in sent_text(after[0])
    assert sent_text(after[0]).startswith(SUMMARY_PREFIX)
    # nothing is lost: the run's messages hold every call and result
    results = [m for m in result if isinstance(m, ToolResultMessage)]
    assert [r.tool_call_id for r in results] == [f"call_{n}" for n in range(1, 9)]


async def test_the_same_model_summarises_when_none_is_given() -> None:
    main = FauxProvider(context_window=WINDOW)
    script = read_calls(8)

    def answer(call: FauxCall) -> AssistantMessage:
        if call.context.system_prompt != "You read books.":
            return faux_text("SELF-SUMMARY")
        return script.pop(0)

    main.set_responses([answer] * 20)
    config = AgentLoopConfig(model=main.model, compaction=Compaction(keep_recent_turns=1))
    _, result = await run(config)
    assert text_of(result[-1]) == "done"
    assert markers(result) and markers(result)[0].summary == "SELF-SUMMARY"
    assert any(c.context.system_prompt != "You read books." for c in main.calls)


async def test_a_second_compaction_summarises_the_first_summary() -> None:
    main = FauxProvider(read_calls(14), context_window=WINDOW)
    summaries = iter(f"SUMMARY-{i}" for i in range(1, 20))
    summariser = FauxProvider([lambda call: faux_text(next(summaries))] * 19)
    config = AgentLoopConfig(
        model=main.model,
        compaction=Compaction(strategy=Summarize(model=summariser.model), keep_recent_turns=1),
    )
    _, result = await run(config)
    found = markers(result)
    assert len(found) >= 2
    # the second summary request saw the first summary, marked as such
    assert "SUMMARY-1" in sent_text(summariser.calls[1])
    assert "[summary of the conversation before]" in sent_text(summariser.calls[1])
    last = main.calls[-1]
    assert sent_text(last).startswith(SUMMARY_PREFIX + found[-1].summary)  # type: ignore[operator]
    assert "SUMMARY-1" not in sent_text(last) or found[-1].summary == "SUMMARY-1"
    for call in main.calls:
        assert_paired(call.context.messages)


async def test_summaries_in_pieces_when_the_summariser_window_is_small() -> None:
    main = FauxProvider(read_calls(8), context_window=WINDOW)
    summariser = FauxProvider(
        [lambda call: faux_text(f"PIECE-{call.index}")] * 30,
        context_window=1500,
        max_tokens=200,
    )
    config = AgentLoopConfig(
        model=main.model,
        compaction=Compaction(
            strategy=Summarize(model=summariser.model, max_tokens=100), keep_recent_turns=1
        ),
    )
    _, result = await run(config)
    assert text_of(result[-1]) == "done"
    assert markers(result)
    assert len(summariser.calls) >= 2
    # every piece after the first carries the summary so far
    assert "PIECE-0" in sent_text(summariser.calls[1])
    for call in summariser.calls:
        assert len(sent_text(call)) // 4 < 1500


# --- overflow ------------------------------------------------------------------------------------


def overflowing(script: list[AssistantMessage], limit: int) -> Any:
    """A faux answer that fails as a context overflow when the request is over `limit` tokens,
    and otherwise gives the next scripted answer."""

    def answer(call: FauxCall) -> AssistantMessage:
        size = len(sent_text(call)) // 4
        if size > limit:
            return faux_error(OVERFLOW.format(n=size, window=limit))
        return script.pop(0)

    return answer


async def test_an_overflow_is_compacted_and_retried_once() -> None:
    script = read_calls(6)
    main = FauxProvider([overflowing(script, 700)] * 20, context_window=WINDOW)
    config = AgentLoopConfig(
        model=main.model,
        compaction=Compaction(strategy=DropOldest(), threshold=None, keep_recent_turns=1),
    )
    events, result = await run(config)
    assert text_of(result[-1]) == "done"
    found = markers(result)
    assert found and all(m.reason == "overflow" for m in found)
    # the failed answer stays in the transcript, right before its marker, and is never resent
    at = result.index(found[0])
    failed = result[at - 1]
    assert isinstance(failed, AssistantMessage) and failed.stop_reason == "error"
    assert "prompt is too long" in (failed.error_message or "")
    for call in main.calls[1:]:
        assert not any(
            isinstance(m, AssistantMessage) and m.stop_reason == "error"
            for m in call.context.messages
        )
        assert_paired(call.context.messages)
    # the turn that overflowed ends with the retried answer
    turn_ends = [e for e in events if e.type == "turn_end"]
    assert all(e.message.stop_reason != "error" for e in turn_ends)  # type: ignore[union-attr]


async def test_an_overflow_that_cannot_be_compacted_ends_the_run() -> None:
    main = FauxProvider(
        [faux_error(OVERFLOW.format(n=9000, window=WINDOW))] * 2, context_window=WINDOW
    )
    config = AgentLoopConfig(model=main.model, compaction=Compaction(strategy=DropOldest()))
    _, result = await run(config)
    assert isinstance(result[-1], AssistantMessage) and result[-1].stop_reason == "error"
    assert not markers(result) and main.call_count == 1


async def test_a_second_overflow_is_not_retried_again() -> None:
    main = FauxProvider(
        [faux_tool_call("read", {"n": 1}, id="c1"), faux_tool_call("read", {"n": 2}, id="c2")]
        + [faux_error(OVERFLOW.format(n=9000, window=WINDOW))] * 3,
        context_window=WINDOW,
    )
    config = AgentLoopConfig(
        model=main.model,
        compaction=Compaction(strategy=DropOldest(), threshold=None, keep_recent_turns=0),
    )
    _, result = await run(config)
    assert isinstance(result[-1], AssistantMessage) and result[-1].stop_reason == "error"
    assert len(markers(result)) == 1 and main.call_count == 4  # two turns, one retry


# --- the other strategies ------------------------------------------------------------------------


async def test_drop_oldest_sends_only_the_recent_turns() -> None:
    main = FauxProvider(read_calls(8), context_window=WINDOW)
    config = AgentLoopConfig(
        model=main.model, compaction=Compaction(strategy=DropOldest(), keep_recent_turns=1)
    )
    _, result = await run(config)
    assert text_of(result[-1]) == "done"
    marker = markers(result)[0]
    assert marker.summary is None and marker.strategy == "DropOldest"
    for call in main.calls:
        assert_paired(call.context.messages)
    last = main.calls[-1].context.messages
    assert not any(isinstance(m, UserMessage) for m in last)  # the prompt was dropped
    assert isinstance(last[0], AssistantMessage)


async def test_the_log_line_names_the_estimate_and_the_threshold_apart(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 26: the line said "(threshold: about N tokens ...)", N being the estimate."""
    main = FauxProvider(read_calls(8), context_window=WINDOW)
    config = AgentLoopConfig(
        model=main.model, compaction=Compaction(strategy=DropOldest(), keep_recent_turns=1)
    )
    with caplog.at_level(logging.INFO, logger="agentcore"):
        await run(config)
    [line] = [r.getMessage() for r in caplog.records if r.getMessage().startswith("compacting")][:1]
    threshold = int(Compaction().threshold * WINDOW)  # type: ignore[operator]
    match = re.fullmatch(
        r"compacting \d+ of \d+ messages with DropOldest: the request, about (\d+) tokens, "
        rf"passes the threshold of {threshold} \([\d.]+ x the context window of {WINDOW}\)",
        line,
    )
    assert match is not None, line
    assert int(match.group(1)) > threshold


async def test_keep_tool_result_heads_cuts_older_results() -> None:
    main = FauxProvider(read_calls(8), context_window=WINDOW)
    config = AgentLoopConfig(
        model=main.model,
        compaction=Compaction(strategy=KeepToolResultHeads(chars=12), keep_recent_turns=1),
    )
    _, result = await run(config)
    assert text_of(result[-1]) == "done"
    marker = markers(result)[0]
    assert marker.tool_result_chars == 12 and marker.summary is None
    last = main.calls[-1].context.messages
    assert isinstance(last[0], UserMessage) and text_of(last[0]) == "Read the book."
    results = [m for m in last if isinstance(m, ToolResultMessage)]
    cut = [r for r in results if "cut when the conversation was compacted" in text_of(r)]
    assert cut and text_of(cut[0]).startswith("page-1: word")
    assert text_of(results[-1]).startswith("page-8: words of page 8 words")  # the kept turn
    # the transcript itself keeps the full results
    full = [m for m in result if isinstance(m, ToolResultMessage)]
    assert all("cut when" not in text_of(r) for r in full)
    assert_paired(last)


async def test_heads_write_no_marker_when_nothing_is_long() -> None:
    main = FauxProvider(read_calls(8), context_window=WINDOW)
    config = AgentLoopConfig(
        model=main.model,
        compaction=Compaction(strategy=KeepToolResultHeads(chars=10_000), keep_recent_turns=1),
    )
    _, result = await run(config)
    assert text_of(result[-1]) == "done" and not markers(result)


async def test_a_custom_strategy_gets_older_and_recent() -> None:
    seen: list[CompactionRequest] = []

    class Note:
        async def compact(self, request: CompactionRequest) -> CompactionResult:
            seen.append(request)
            return CompactionResult(summary=f"{len(request.older)} messages before")

    main = FauxProvider(read_calls(8), context_window=WINDOW)
    config = AgentLoopConfig(
        model=main.model, compaction=Compaction(strategy=Note(), keep_recent_turns=1)
    )
    _, result = await run(config)
    request = seen[0]
    assert request.reason == "threshold" and request.model is main.model
    assert isinstance(request.older[0], UserMessage)
    assert isinstance(request.recent[0], AssistantMessage)  # the kept turn starts at its answer
    assert markers(result)[0].strategy == "Note"


async def test_a_failed_summary_is_logged_and_the_run_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    main = FauxProvider(read_calls(6), context_window=WINDOW)
    summariser = FauxProvider([faux_error("summariser down")] * 10)
    config = AgentLoopConfig(
        model=main.model,
        compaction=Compaction(strategy=Summarize(model=summariser.model), threshold=0.5),
    )
    with caplog.at_level(logging.WARNING, logger="agentcore"):
        _, result = await run(config)
    assert text_of(result[-1]) == "done" and not markers(result)
    assert "summariser down" in caplog.text
    assert summariser.call_count == 1  # not asked again before every later request


async def test_transform_context_sees_the_compacted_view() -> None:
    seen: list[list[Any]] = []

    def transform(messages: list[Any]) -> list[Any]:
        seen.append(messages)
        return messages

    main = FauxProvider(read_calls(8), context_window=WINDOW)
    config = AgentLoopConfig(
        model=main.model,
        transform_context=transform,
        compaction=Compaction(strategy=DropOldest(), keep_recent_turns=1),
    )
    _, result = await run(config)
    assert markers(result)
    assert not any(isinstance(m, CompactionSummary) for batch in seen for m in batch)
    assert len(seen[-1]) < len([m for m in result if not isinstance(m, CompactionSummary)])


# --- the Agent and its session ------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["jsonl", "sqlite"])
async def test_the_session_keeps_the_full_history_and_reloads(kind: str, tmp_path: Path) -> None:
    store: SessionStore = (
        JsonlSessionStore(tmp_path / "sessions")
        if kind == "jsonl"
        else SqliteSessionStore(tmp_path / "s.db")
    )
    with store:
        main = FauxProvider(read_calls(8), context_window=WINDOW)
        summariser = FauxProvider([faux_text("SUMMARY of the reading")] * 4)
        compaction = Compaction(strategy=Summarize(model=summariser.model), keep_recent_turns=1)
        session = store.create()
        agent = Agent(
            initial_state={"model": main.model, "tools": [read]},
            session=session,
            compaction=compaction,
        )
        await agent.prompt("Read the book.")
        assert agent.state.error_message is None
        transcript = list(agent.state.messages)
        assert markers(transcript)

        # the summary's cost counts in the Agent's totals and in run_usage
        summary_usage = markers(transcript)[0].usage
        assert summary_usage is not None and summary_usage.output > 0
        answers = run_usage([m for m in transcript if not isinstance(m, CompactionSummary)])
        assert agent.state.usage.output == answers.output + sum(
            m.usage.output for m in markers(transcript) if m.usage is not None
        )
        assert run_usage(transcript) == agent.state.usage

        loaded = store.load(session.id).messages
        assert loaded == transcript  # every message, the marker included
        assert isinstance(markers(loaded)[0], CompactionSummary)

    with (
        JsonlSessionStore(tmp_path / "sessions")
        if kind == "jsonl"
        else SqliteSessionStore(tmp_path / "s.db")
    ) as again:
        main.append_responses(faux_text("the end"))
        resumed = Agent(session=again.open(session.id), compaction=compaction)
        resumed.state.tools = [read]
        await resumed.prompt("And then?")
        sent = main.calls[-1].context.messages
        assert text_of(sent[0]).startswith(SUMMARY_PREFIX + "SUMMARY of the reading")
        assert text_of(sent[-1]) == "And then?"
        assert_paired(sent)
        assert resumed.state.messages[: len(transcript)] == transcript


def test_the_marker_round_trips_through_json() -> None:
    marker = CompactionSummary(
        summary="s", kept_messages=3, compacted_messages=5, strategy="Summarize", tokens_before=9
    )
    assert from_json(to_json(marker)) == marker
    doc = to_json(marker)
    doc["kept_messages"] = "three"
    with pytest.raises(Exception, match="kept_messages"):
        from_json(doc)


# --- the view and the cut -----------------------------------------------------------------------


def random_transcript(rng: random.Random) -> list[AgentMessage]:
    messages: list[AgentMessage] = [UserMessage(content="go")]
    for turn in range(rng.randint(1, 8)):
        calls = [
            ToolCall(id=f"t{turn}_{i}", name="read", arguments={}) for i in range(rng.randint(0, 3))
        ]
        messages.append(AssistantMessage(content=[TextContent(text="x" * 40), *calls]))
        messages += [
            ToolResultMessage(
                tool_call_id=c.id, tool_name="read", content=[TextContent(text="y" * 200)]
            )
            for c in calls
        ]
        if not calls or rng.random() < 0.3:
            messages.append(UserMessage(content="more"))
    return messages


def test_the_cut_never_splits_a_call_from_its_result() -> None:
    rng = random.Random(11)
    for _ in range(500):
        view = random_transcript(rng)
        keep = rng.randint(0, 4)
        budget = rng.choice([None, 50, 200, 10_000])
        cut = split(view, keep, budget)
        older_calls = {
            c.id for m in view[:cut] if isinstance(m, AssistantMessage) for c in m.tool_calls
        }
        recent_results = {m.tool_call_id for m in view[cut:] if isinstance(m, ToolResultMessage)}
        assert not older_calls & recent_results
        assert cut == 0 or not isinstance(view[cut], ToolResultMessage)
        # what the next request answers is always kept
        assert cut < len(view)
        marker = CompactionSummary(summary="S", kept_messages=len(view) - cut)
        compacted = compacted_view([*view, marker])
        assert compacted[1:] == view[cut:]


def test_config_errors_name_what_was_wrong() -> None:
    faux = FauxProvider()
    with pytest.raises(ConfigError, match=r"compaction must be an agentcore\.Compaction"):
        AgentLoopConfig(model=faux.model, compaction="summarize")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="threshold"):
        Compaction(threshold=1.5)
    with pytest.raises(ConfigError, match="keep_recent_turns"):
        Compaction(keep_recent_turns=-1)
    with pytest.raises(ConfigError, match="compact"):
        Compaction(strategy="drop")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"fallback_models\[1\] must be an agentcore\.llm\.Model"):
        AgentLoopConfig(model=faux.model, fallback_models=[faux.model, "gpt-4o"])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match="fallback_models must be a sequence"):
        AgentLoopConfig(model=faux.model, fallback_models=faux.model)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="compaction"):
        Agent(compaction=DropOldest())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not both"):
        CompactionResult(summary="s", tool_result_chars=3)
    with pytest.raises(ValueError, match="tool_result_chars"):
        CompactionResult(tool_result_chars=-1)
    with pytest.raises(ValueError, match="max_tokens"):
        Summarize(max_tokens=0)
    with pytest.raises(TypeError, match=r"Summarize\.model"):
        Summarize(model="gpt-4o")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="chars"):
        KeepToolResultHeads(chars=-5)


async def test_a_strategy_returning_nonsense_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    class Broken:
        async def compact(self, request: CompactionRequest) -> Any:
            return "a summary"

    main = FauxProvider(read_calls(8), context_window=WINDOW)
    config = AgentLoopConfig(
        model=main.model, compaction=Compaction(strategy=Broken(), keep_recent_turns=1)
    )
    with caplog.at_level(logging.WARNING, logger="agentcore"):
        _, result = await run(config)
    assert text_of(result[-1]) == "done" and not markers(result)
    assert "Broken.compact returned str; expected a CompactionResult or None" in caplog.text


async def test_without_compaction_markers_are_not_read() -> None:
    main = FauxProvider([faux_text("ok")])
    history = [
        UserMessage(content="old question"),
        faux_text("old answer"),
        CompactionSummary(summary="S", kept_messages=0, compacted_messages=2),
    ]
    _, _ = await run(AgentLoopConfig(model=main.model), messages=history)
    assert [text_of(m) for m in main.calls[0].context.messages] == [
        "old question",
        "old answer",
        "Read the book.",
    ]


# --- abort, the Agent, fallbacks, and random runs ------------------------------------------------


async def test_an_abort_while_summarising_ends_the_run_aborted() -> None:
    controller = AbortController()

    def summary(call: FauxCall) -> AssistantMessage:
        controller.abort("enough")
        return faux_text("a summary that never arrives " * 5)

    main = FauxProvider(read_calls(8), context_window=WINDOW)
    summariser = FauxProvider([summary])
    config = AgentLoopConfig(
        model=main.model,
        compaction=Compaction(strategy=Summarize(model=summariser.model), keep_recent_turns=1),
    )
    context = AgentContext(system_prompt="You read books.", tools=[read])
    events: list[AgentEvent] = []
    async with agent_loop(
        [UserMessage(content="Read the book.")], context, config, signal=controller.signal
    ) as stream:
        async for event in stream:
            events.append(event)
        result = await stream.result()
    check_well_formed(events)
    last = result[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason == "aborted"
    assert not markers(result)
    assert main.pending == 2  # no request after the abort: call_7 and the final answer wait


async def test_the_agent_recovers_from_an_overflow_without_an_error() -> None:
    script = read_calls(6)
    main = FauxProvider([overflowing(script, 900)] * 20, context_window=WINDOW)
    agent = Agent(
        initial_state={"model": main.model, "tools": [read]},
        compaction=Compaction(strategy=DropOldest(), threshold=None, keep_recent_turns=1),
    )
    seen: list[AgentEvent] = []
    agent.subscribe(seen.append)
    await agent.prompt("Read the book.")
    check_well_formed(seen)
    assert agent.state.error_message is None
    assert text_of(agent.state.messages[-1]) == "done"
    assert markers(agent.state.messages)


async def test_every_model_overflowing_is_compacted_then_retried() -> None:
    script = read_calls(6)
    primary = FauxProvider([overflowing(script, 700)] * 20, context_window=WINDOW)
    fallback = FauxProvider(
        [lambda call: faux_error(OVERFLOW.format(n=9999, window=900))] * 20, context_window=900
    )
    config = AgentLoopConfig(
        model=primary.model,
        fallback_models=[fallback.model],
        compaction=Compaction(strategy=DropOldest(), threshold=None, keep_recent_turns=1),
    )
    _, result = await run(config)
    assert text_of(result[-1]) == "done"
    assert markers(result)
    assert fallback.call_count == 0  # its window is smaller: never tried after an overflow


@st.composite
def runs(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "sizes": draw(st.lists(st.integers(100, 3000), min_size=3, max_size=9)),
        "parallel": draw(st.lists(st.integers(1, 3), min_size=9, max_size=9)),
        "strategy": draw(st.sampled_from(["summarize", "drop", "heads"])),
        "keep": draw(st.integers(0, 3)),
        "threshold": draw(st.sampled_from([None, 0.3, 0.6, 0.9])),
        "limit": draw(st.sampled_from([None, 600, 1200])),
        "summary_fails": draw(st.booleans()),
    }


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(spec=runs())
def test_random_runs_keep_every_promise(spec: dict[str, Any]) -> None:
    anyio.run(check_random_run, spec)


async def check_random_run(spec: dict[str, Any]) -> None:
    sizes: list[int] = spec["sizes"]

    @tool
    def fetch(i: int) -> str:
        """Fetch item i."""
        return f"item-{i}:" + "z" * sizes[i % len(sizes)]

    answers: list[AssistantMessage] = []
    for turn, width in enumerate(spec["parallel"][: len(sizes)]):
        calls = [
            ToolCall(id=f"c{turn}_{k}", name="fetch", arguments={"i": turn * 3 + k})
            for k in range(width)
        ]
        answers.append(AssistantMessage(content=calls, stop_reason="tool_use"))
    answers.append(faux_text("finished"))
    limit = spec["limit"]

    def answer(call: FauxCall) -> AssistantMessage:
        if limit is not None and len(sent_text(call)) // 4 > limit:
            return faux_error(OVERFLOW.format(n=len(sent_text(call)) // 4, window=limit))
        return answers.pop(0)

    main = FauxProvider([answer] * 40, context_window=WINDOW)
    summariser = FauxProvider(
        [faux_error("down") if spec["summary_fails"] else faux_text("SUM")] * 40
    )
    strategy: Any = {
        "summarize": Summarize(model=summariser.model),
        "drop": DropOldest(),
        "heads": KeepToolResultHeads(chars=50),
    }[spec["strategy"]]
    config = AgentLoopConfig(
        model=main.model,
        compaction=Compaction(
            strategy=strategy, threshold=spec["threshold"], keep_recent_turns=spec["keep"]
        ),
    )
    context = AgentContext(tools=[fetch])
    events: list[AgentEvent] = []
    with anyio.fail_after(10):
        async with agent_loop([UserMessage(content="go")], context, config) as stream:
            async for event in stream:
                events.append(event)
            result = await stream.result()
    check_well_formed(events)
    # every request sent tool calls and results in pairs, and never a marker
    for call in main.calls:
        assert_paired(call.context.messages)
    # the transcript keeps everything: one result per call of every executed answer
    called = [c.id for m in result if isinstance(m, AssistantMessage) for c in m.tool_calls]
    answered = [m.tool_call_id for m in result if isinstance(m, ToolResultMessage)]
    executed = [
        c.id
        for m in result
        if isinstance(m, AssistantMessage) and m.stop_reason == "tool_use"
        for c in m.tool_calls
    ]
    assert sorted(answered) == sorted(executed) and set(answered) <= set(called)
    # an overflow retry happens at most once per request: never two overflows in a row retried
    for i, m in enumerate(result):
        if isinstance(m, CompactionSummary) and m.reason == "overflow":
            assert isinstance(result[i - 1], AssistantMessage)
            assert result[i - 1].stop_reason == "error"  # type: ignore[union-attr]
    # the session form of every marker reads back equal
    for marker in markers(result):
        assert from_json(to_json(marker)) == marker
    # what the transcript would send next is paired too
    view = compacted_view(result)
    assert_paired([m for m in view if getattr(m, "role", None) != "compaction"])  # type: ignore[misc]


def test_keeping_no_turn_keeps_only_what_the_request_answers() -> None:
    def answer(*calls: str) -> AssistantMessage:
        return AssistantMessage(
            content=[ToolCall(id=c, name="read", arguments={}) for c in calls]
            or faux_text("a").content
        )

    def result(call: str) -> ToolResultMessage:
        return ToolResultMessage(tool_call_id=call, tool_name="read")

    prompt = UserMessage(content="next")
    # a new prompt after a finished turn: only the prompt is kept
    view: list[AgentMessage] = [
        UserMessage(content="q"),
        answer("c1"),
        result("c1"),
        answer(),
        prompt,
    ]
    assert split(view, 0, None) == 4
    # the request continues the last turn (its tool results): that turn is kept, with its prompt
    view = [
        UserMessage(content="q"),
        answer("c1"),
        result("c1"),
        prompt,
        answer("c2"),
        result("c2"),
    ]
    assert split(view, 0, None) == 3
    assert split(view, 1, None) == 3
    assert split(view, 2, None) == 0
    # nothing answered yet: nothing to compact
    assert split([UserMessage(content="q"), prompt], 0, None) == 0


def test_a_cut_never_separates_a_batch_from_its_approvals() -> None:
    """Approval messages sit among a batch's results: no cut falls inside the batch."""
    from agentcore import ApprovalDecision, ApprovalRequest, ApprovedCallStarted

    calls = [ToolCall(id="a", name="t", arguments={}), ToolCall(id="b", name="t", arguments={})]

    def result(call_id: str) -> ToolResultMessage:
        return ToolResultMessage(tool_call_id=call_id, tool_name="t", content=[])

    request = ApprovalRequest(tool_call_id="a", tool_name="t", arguments={}, reason=None)
    view: list[Any] = [
        UserMessage(content="go"),
        AssistantMessage(content=list(calls), stop_reason="tool_use"),
        result("b"),
        request,
        ApprovalDecision.approve(request),
        ApprovedCallStarted(tool_call_id="a"),
        result("a"),
        AssistantMessage(content=[TextContent(text="done")]),
        UserMessage(content="next"),
    ]
    for keep in range(4):
        cut = split(view, keep, None)
        assert cut <= 1 or cut >= 7, (keep, cut)
    view = view[:-2]  # the request continues the batch: keeping no turn keeps the whole batch
    assert split(view, 0, None) <= 1


# --- the estimate counts the recalled memories ---------------------------------------------


async def test_the_estimate_counts_the_injected_memories() -> None:
    """The first request of a run (no usage reported yet) is estimated with the
    `<recalled_memories>` block the request will carry: a transcript of ~800 tokens with a
    block of ~1,000 passes 80% of a 2,000-token window, and is compacted before it is sent;
    the store is searched once for the request, not again for its estimate."""
    from agentcore.memory import InMemoryMemoryStore, Memory, MemoryScope

    class CountingStore(InMemoryMemoryStore):
        searches = 0

        async def search(self, query: str, **kw: Any) -> Any:
            CountingStore.searches += 1
            return await super().search(query, **kw)

    store = CountingStore()
    scope = MemoryScope(user="alice")
    await store.add("The book is about whales. " + "whale facts " * 330, scope=scope)
    earlier: list[Any] = []
    for n in range(4):
        earlier.append(UserMessage(content=f"Question {n}: " + "tell me more " * 30))
        earlier.append(faux_text(f"Answer {n}: " + "here is more " * 30))
    main = FauxProvider([faux_text("done")], context_window=WINDOW)
    config = AgentLoopConfig(
        model=main.model,
        compaction=Compaction(strategy=DropOldest(), keep_recent_turns=1),
        memory=Memory(store, scope, tools=False, inject_tokens=1500),
    )
    _, result = await run(config, "What is the book about? whales", messages=earlier)
    assert CountingStore.searches == 1  # one request, one search: the estimate shares its block
    sent = main.calls[0].context
    assert "<recalled_memories>" in sent.system_prompt
    found = markers(result)
    assert [m.reason for m in found] == ["threshold"]
    assert found[0].tokens_before > 1600
    assert (
        found[0].tokens_after is not None and found[0].tokens_after > len(sent.system_prompt) // 4
    )
