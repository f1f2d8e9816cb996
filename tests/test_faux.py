"""The `faux` provider: chunked streaming, usage and cache estimates, pacing and abort, scripts."""

from __future__ import annotations

import json
import math
import time
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from agentcore import (
    AbortController,
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    UserMessage,
)
from agentcore.llm import (
    Context,
    ModelCost,
    ResponseInfo,
    SimpleStreamOptions,
    StreamOptions,
    Tool,
    complete,
    stream_simple,
)
from agentcore.testing import (
    FauxCall,
    FauxProvider,
    faux_error,
    faux_message,
    faux_text,
    faux_thinking,
    faux_tool_call,
)
from support import BACKENDS

pytestmark = pytest.mark.anyio


def ctx(text: str = "hi", system: str = "") -> Context:
    return Context(system_prompt=system, messages=[UserMessage(content=text)])


async def events_of(
    faux: FauxProvider, context: Context | None = None, **options: Any
) -> list[Any]:
    stream = faux.stream(faux.model, context or ctx(), StreamOptions(**options))
    return [e async for e in stream]


# --- streaming and chunking -------------------------------------------------------------------


async def test_text_is_streamed_in_chunks_of_the_given_size() -> None:
    text = "abcdefghijklmnopqrstuvwxyz0123456789"
    faux = FauxProvider([faux_text(text)], chunk_chars=5)
    events = await events_of(faux)
    types = [e.type for e in events]
    assert types[0] == "start" and types[1] == "text_start"
    assert types[-2:] == ["text_end", "done"]
    deltas = [e.delta for e in events if e.type == "text_delta"]
    assert deltas == [text[i : i + 5] for i in range(0, len(text), 5)]
    assert events[-1].reason == "stop" and events[-1].message.text == text
    assert events[-2].content == text
    # every partial is the message as it stood at that event
    so_far = ""
    for event in events:
        if event.type == "text_delta":
            so_far += event.delta
            assert event.partial.text == so_far
            assert event.content_index == 0


async def test_chunk_sizes_from_a_seeded_range() -> None:
    text = "x" * 500

    async def deltas(seed: int) -> list[str]:
        faux = FauxProvider([faux_text(text)], chunk_chars=(3, 9), seed=seed)
        return [e.delta for e in await events_of(faux) if e.type == "text_delta"]

    first, again, other = await deltas(1), await deltas(1), await deltas(2)
    assert "".join(first) == text
    assert all(3 <= len(d) <= 9 for d in first[:-1])
    assert len({len(d) for d in first}) > 1  # sizes vary
    assert [len(d) for d in first] == [len(d) for d in again]  # the same seed repeats
    assert [len(d) for d in first] != [len(d) for d in other]


@pytest.mark.parametrize("chunk_chars", [0, -1, (0, 4), (5, 2)])
def test_chunk_sizes_must_be_positive(chunk_chars: Any) -> None:
    with pytest.raises(ValueError, match="chunk_chars"):
        FauxProvider(chunk_chars=chunk_chars)


async def test_thinking_and_tool_calls_stream() -> None:
    message = faux_message(
        ThinkingContent(thinking="I should look it up", thinking_signature="sig"),
        ThinkingContent(thinking="", thinking_signature="blob", redacted=True),
        TextContent(text="Looking.", text_signature="t1"),
        ToolCall(
            id="c1",
            name="search",
            arguments={"query": "agentcore " * 5, "n": 3},
            thought_signature="ts",
        ),
    )
    faux = FauxProvider([message], chunk_chars=7)
    events = await events_of(faux)
    types = [e.type for e in events]
    assert types[:2] == ["start", "thinking_start"]
    assert "toolcall_delta" in types and types[-2:] == ["toolcall_end", "done"]
    fragments = "".join(e.delta for e in events if e.type == "toolcall_delta")
    assert json.loads(fragments) == {"query": "agentcore " * 5, "n": 3}
    # the partial arguments grow as the JSON streams
    partial_args = [e.partial.content[3].arguments for e in events if e.type == "toolcall_delta"]
    assert partial_args[0] == {} or "query" in partial_args[0]
    assert partial_args[-1] == {"query": "agentcore " * 5, "n": 3}
    final = events[-1].message
    assert events[-1].reason == "tool_use" and final.stop_reason == "tool_use"
    assert final.content == message.content  # signatures and redaction kept
    end = next(e for e in events if e.type == "toolcall_end")
    assert end.tool_call == message.content[3]


async def test_stop_reasons() -> None:
    faux = FauxProvider(
        [
            faux_text("cut off", stop_reason="length"),
            faux_tool_call("t", {}, stop_reason="length"),
            faux_error("rate limited"),
            faux_error("stopped", aborted=True),
        ]
    )
    length = await events_of(faux)
    assert length[-1].type == "done" and length[-1].reason == "length"
    truncated_call = await events_of(faux)
    assert truncated_call[-1].reason == "length"
    error = await events_of(faux)
    assert error[-1].type == "error" and error[-1].reason == "error"
    assert error[-1].error.error_message == "rate limited"
    assert error[-1].error.stop_reason == "error"
    aborted = await events_of(faux)
    assert aborted[-1].reason == "aborted" and aborted[-1].error.stop_reason == "aborted"
    assert faux.pending == 0 and faux.call_count == 4


async def test_empty_queue_is_an_error_not_an_exception() -> None:
    faux = FauxProvider()
    events = await events_of(faux)
    assert [e.type for e in events] == ["error"]
    assert events[0].reason == "error"
    assert "no more faux responses queued" in events[0].error.error_message
    message = await complete(faux.model, ctx())
    assert message.stop_reason == "error"


async def test_function_responses_see_the_request() -> None:
    seen: list[FauxCall] = []

    def sync_response(call: FauxCall) -> AssistantMessage:
        seen.append(call)
        return faux_text(f"you said {call.context.messages[-1].content}")

    async def async_response(call: FauxCall) -> AssistantMessage:
        await anyio.lowlevel.checkpoint()
        seen.append(call)
        return faux_text(f"request #{call.index} with {len(call.context.tools)} tools")

    tool = Tool(name="t", description="d", parameters={"type": "object"})
    faux = FauxProvider([sync_response, async_response])
    first = await faux.stream(faux.model, ctx("hello"), StreamOptions(temperature=0.3)).result()
    second = await faux.stream(
        faux.model, Context(messages=[UserMessage(content="x")], tools=[tool])
    ).result()
    assert first.text == "you said hello"
    assert second.text == "request #1 with 1 tools"
    assert seen[0].options.temperature == 0.3 and seen[0].model is faux.model
    assert [c.index for c in faux.calls] == [0, 1]


async def test_raising_function_response_becomes_an_error() -> None:
    def broken(call: FauxCall) -> AssistantMessage:
        raise RuntimeError("script bug")

    faux = FauxProvider([broken, faux_text("next")])
    message = await faux.stream(faux.model, ctx()).result()
    assert message.stop_reason == "error" and "script bug" in (message.error_message or "")
    assert (message.api, message.provider, message.model) == ("faux", faux.provider_id, "faux-1")
    assert (await faux.stream(faux.model, ctx()).result()).text == "next"


async def test_queue_management() -> None:
    faux = FauxProvider([faux_text("a")])
    faux.append_responses(faux_text("b"), faux_text("c"))
    assert faux.pending == 3
    faux.set_responses([faux_text("z")])
    assert faux.pending == 1
    assert (await faux.stream(faux.model, ctx()).result()).text == "z"
    assert faux.pending == 0 and faux.call_count == 1


async def test_registry_routes_faux_models_to_their_provider() -> None:
    one = FauxProvider([faux_text("from one")])
    two = FauxProvider([faux_text("from two")])
    assert one.model.provider != two.model.provider
    assert (await stream_simple(two.model, ctx()).result()).text == "from two"
    assert (await complete(one.model, ctx())).text == "from one"
    assert (one.call_count, two.call_count) == (1, 1)


async def test_on_response_is_called() -> None:
    seen: list[Any] = []
    faux = FauxProvider([faux_text("ok")])
    await faux.stream(
        faux.model, ctx(), StreamOptions(on_response=lambda info, model: seen.append(info))
    ).result()
    assert seen == [ResponseInfo(status=200, headers={})]


# --- usage and caching ------------------------------------------------------------------------


async def test_usage_estimate_is_four_characters_a_token() -> None:
    faux = FauxProvider([faux_text("x" * 41)])
    message = await faux.stream(faux.model, ctx("hello world", system="be brief")).result()
    prompt = "be brief\nhello world"  # the system prompt and the messages
    assert message.usage.input == math.ceil(len(prompt) / 4)
    assert message.usage.output == math.ceil(41 / 4)
    assert message.usage.cache_read == message.usage.cache_write == 0
    assert message.usage.total_tokens == message.usage.input + message.usage.output


async def test_usage_cost_uses_the_model_prices() -> None:
    faux = FauxProvider(
        [faux_text("y" * 400)], cost=ModelCost(input=3.0, output=15.0, cache_read=0.3)
    )
    usage = (await faux.stream(faux.model, ctx("z" * 4000)).result()).usage
    assert usage.output == 100
    assert usage.cost.input == pytest.approx(usage.input * 3.0 / 1e6)
    assert usage.cost.output == pytest.approx(100 * 15.0 / 1e6)
    assert usage.cost.total == pytest.approx(usage.cost.input + usage.cost.output)


async def test_prompt_cache_per_session() -> None:
    faux = FauxProvider([faux_text("one"), faux_text("two"), faux_text("three"), faux_text("4")])
    long = "a long shared prefix " * 20
    s1 = StreamOptions(session_id="s1")
    first = (await faux.stream(faux.model, ctx(long), s1).result()).usage
    assert first.cache_read == 0 and first.cache_write == first.input > 0
    grown = Context(messages=[UserMessage(content=long), UserMessage(content="and a new question")])
    second = (await faux.stream(faux.model, grown, s1).result()).usage
    assert second.cache_read == math.ceil(len("\n" + long) / 4)  # the shared prefix
    assert second.input < first.input  # only the new part is fresh
    other = (await faux.stream(faux.model, grown, StreamOptions(session_id="s2")).result()).usage
    assert other.cache_read == 0
    none = (await faux.stream(faux.model, grown).result()).usage
    assert none.cache_read == 0 and none.cache_write == 0


async def test_no_cache_when_retention_is_none() -> None:
    faux = FauxProvider([faux_text("a"), faux_text("b")])
    options = StreamOptions(session_id="s", cache_retention="none")
    await faux.stream(faux.model, ctx("same prompt"), options).result()
    usage = (await faux.stream(faux.model, ctx("same prompt"), options).result()).usage
    assert usage.cache_read == 0


# --- pacing and abort ----------------------------------------------------------------------------


async def test_pacing_and_latency() -> None:
    faux = FauxProvider([faux_text("x" * 40)], chunk_chars=4, tokens_per_second=200, latency=0.05)
    started = time.monotonic()
    events = await events_of(faux)
    elapsed = time.monotonic() - started
    assert events[-1].message.text == "x" * 40
    assert elapsed >= 0.05 + 10 / 200 * 0.8  # latency plus ten one-token chunks at 200 tok/s


@pytest.mark.parametrize("anyio_backend", BACKENDS)
@pytest.mark.parametrize("paced", [False, True])
async def test_abort_is_honoured_at_every_chunk(paced: bool) -> None:
    message = faux_message(
        ThinkingContent(thinking="t" * 12), TextContent(text="x" * 12), ToolCall(id="c", name="f")
    )
    total = None
    k = 0
    while True:
        faux = FauxProvider([message], chunk_chars=4, tokens_per_second=10_000 if paced else None)
        controller = AbortController()
        options = SimpleStreamOptions(signal=controller.signal)
        stream = faux.stream(faux.model, ctx(), options)
        seen: list[Any] = []
        deltas = 0
        with anyio.fail_after(5):
            async for event in stream:
                seen.append(event)
                if event.type.endswith("_delta"):
                    deltas += 1
                    if deltas == k:
                        controller.abort()
        last = seen[-1]
        if total is None:
            total = deltas
        if k == 0 or k > total:
            assert last.type == "done"
        elif k == total and last.type == "done":
            pass  # aborted after the last chunk: the answer was complete
        else:
            # the abort was honoured before the next chunk
            assert last.type == "error" and last.reason == "aborted", (k, [e.type for e in seen])
            assert deltas == k
            partial = last.error
            assert partial.stop_reason == "aborted"
            assert partial.usage.output > 0 and partial.usage.input > 0
            streamed = "".join(e.delta for e in seen if e.type in ("thinking_delta", "text_delta"))
            got = "".join(
                b.thinking if isinstance(b, ThinkingContent) else getattr(b, "text", "")
                for b in partial.content
            )
            assert got == streamed
        if k > total:
            break
        k += 1
    assert total == 3 + 3 + 1  # thinking, text, tool-call JSON "{}"


async def test_abort_during_latency() -> None:
    controller = AbortController()
    faux = FauxProvider([faux_thinking("hmm", "answer")], latency=10)
    options = SimpleStreamOptions(signal=controller.signal)

    async def abort_soon() -> None:
        await anyio.sleep(0.02)
        controller.abort()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(abort_soon)
            message = await faux.stream(faux.model, ctx(), options).result()
    assert message.stop_reason == "aborted"
    assert faux.pending == 1  # the scripted answer was not consumed


async def test_already_aborted_request() -> None:
    controller = AbortController()
    controller.abort()
    faux = FauxProvider([faux_text("never")])
    events = await events_of(faux, signal=controller.signal)
    assert [e.type for e in events] == ["error"] and events[0].reason == "aborted"
    assert faux.pending == 1
