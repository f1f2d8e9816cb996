"""Cross-provider transcript conversion and outgoing-text hygiene."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentcore.llm import Model
from agentcore.llm.transform import (
    NO_RESULT_TEXT,
    AlnumIdMap,
    normalize_id_alnum,
    normalize_id_openai,
    sanitize_surrogates,
    transform_messages,
)
from agentcore.messages import (
    AssistantMessage,
    Message,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

TARGET = Model(id="gpt-4o", api="openai-completions", provider="openai")


def assistant(
    *content: TextContent | ThinkingContent | ToolCall,
    model: Model = TARGET,
    stop_reason: StopReason = "stop",
) -> AssistantMessage:
    return AssistantMessage(
        content=list(content),
        api=model.api,
        provider=model.provider,
        model=model.id,
        stop_reason=stop_reason,
    )


OTHER = Model(id="claude-sonnet-4-5", api="anthropic-messages", provider="anthropic")


def result(call_id: str, name: str = "f") -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, tool_name=name, content=[TextContent(text="ok")])


def test_same_model_keeps_thinking_signatures_and_ids() -> None:
    message = assistant(
        ThinkingContent(thinking="hmm", thinking_signature="sig"),
        ThinkingContent(thinking="", thinking_signature="enc", redacted=True),
        TextContent(text="hi", text_signature="ts"),
        ToolCall(id="call|odd id", name="f", arguments={"a": 1}, thought_signature="t"),
    )
    out = transform_messages([message, result("call|odd id")], TARGET, normalize_id_openai)
    assert out[0] is message


def test_other_model_thinking_becomes_text_and_signatures_go() -> None:
    message = assistant(
        ThinkingContent(thinking="I should call f", thinking_signature="sig"),
        ThinkingContent(thinking="", thinking_signature="enc", redacted=True),
        ThinkingContent(thinking="   "),
        TextContent(text="calling", text_signature="ts"),
        ToolCall(id="toolu_01|x y", name="f", arguments={"a": 1}, thought_signature="t"),
        model=OTHER,
    )
    out = transform_messages(
        [UserMessage(content="go"), message, result("toolu_01|x y")], TARGET, normalize_id_alnum
    )
    converted = out[1]
    assert isinstance(converted, AssistantMessage)
    assert converted.content == [
        TextContent(text="I should call f"),
        TextContent(text="calling"),
        ToolCall(id="toolu_01_x_y", name="f", arguments={"a": 1}),
    ]
    tool_result = out[2]
    assert isinstance(tool_result, ToolResultMessage)
    assert tool_result.tool_call_id == "toolu_01_x_y"


def test_errored_and_aborted_turns_are_dropped_with_their_results() -> None:
    failed = assistant(ToolCall(id="c1", name="f"), stop_reason="error")
    aborted = assistant(TextContent(text="partial"), stop_reason="aborted")
    messages: list[Message] = [UserMessage(content="a"), failed, result("c1"), aborted]
    out = transform_messages(messages, TARGET)
    assert out == [messages[0]]


def test_missing_results_are_synthesised_before_the_next_message_and_at_the_end() -> None:
    first = assistant(ToolCall(id="c1", name="f"), ToolCall(id="c2", name="g"))
    second = assistant(ToolCall(id="c3", name="h"))
    messages: list[Message] = [first, result("c2", "g"), UserMessage(content="next"), second]
    out = transform_messages(messages, TARGET)
    assert [type(m).__name__ for m in out] == [
        "AssistantMessage",
        "ToolResultMessage",
        "ToolResultMessage",
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
    ]
    synthetic = [m for m in out if isinstance(m, ToolResultMessage) and m.is_error]
    assert [(m.tool_call_id, m.tool_name) for m in synthetic] == [("c1", "f"), ("c3", "h")]
    assert synthetic[0].content == [TextContent(text=NO_RESULT_TEXT)]


def test_normalizers() -> None:
    assert normalize_id_alnum("call.1/ä") == "call_1__"
    assert len(normalize_id_alnum("x" * 100)) == 64
    assert normalize_id_alnum("abc", max_len=2) == "ab"
    assert normalize_id_openai("call_abc|fc_123") == "call_abc"
    assert normalize_id_openai("y" * 50) == "y" * 40


def test_sanitize_surrogates() -> None:
    assert sanitize_surrogates("plain ✓ 😀") == "plain ✓ 😀"
    assert sanitize_surrogates("a\ud83db") == "ab"
    assert sanitize_surrogates("a\ude00b\ud83d") == "ab"
    assert sanitize_surrogates("\ud83d\ude00") == "😀"  # a split pair is joined


@given(st.text(alphabet=st.characters(codec=None, min_codepoint=0, max_codepoint=0x1FFFF)))
def test_sanitized_text_always_encodes(text: str) -> None:
    clean = sanitize_surrogates(text)
    clean.encode("utf-8")
    if not any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        assert clean == text


# --- property: every kept call gets exactly one result, and no real result is lost ------------

_call_ids = st.sampled_from([f"c{i}" for i in range(6)])


@st.composite
def transcripts(draw: st.DrawFn) -> list[Message]:
    messages: list[Message] = []
    used: set[str] = set()
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["user", "assistant", "results"]))
        if kind == "user":
            messages.append(UserMessage(content="u"))
        elif kind == "assistant":
            ids = [i for i in draw(st.lists(_call_ids, max_size=3, unique=True)) if i not in used]
            used.update(ids)
            stop: StopReason = draw(st.sampled_from(["stop", "tool_use", "error", "aborted"]))
            model = draw(st.sampled_from([TARGET, OTHER]))
            calls = [ToolCall(id=i + "|x", name="f") for i in ids]
            messages.append(assistant(TextContent(text="t"), *calls, model=model, stop_reason=stop))
            answered = draw(st.lists(st.sampled_from(ids), unique=True)) if ids else []
            messages.extend(result(i + "|x") for i in answered)
    return messages


@given(transcripts())
def test_every_call_gets_exactly_one_result(messages: list[Message]) -> None:
    out = transform_messages(messages, TARGET, normalize_id_openai)
    kept_calls = {c.id: c for m in out if isinstance(m, AssistantMessage) for c in m.tool_calls}
    results = [m for m in out if isinstance(m, ToolResultMessage)]
    assert sorted(r.tool_call_id for r in results) == sorted(kept_calls)
    assert not any(
        isinstance(m, AssistantMessage) and m.stop_reason in ("error", "aborted") for m in out
    )
    # real results of kept turns survive (not replaced by synthetic ones)
    real = sum(
        1
        for i, m in enumerate(messages)
        if isinstance(m, ToolResultMessage)
        and not any(
            isinstance(a, AssistantMessage)
            and a.stop_reason in ("error", "aborted")
            and any(c.id == m.tool_call_id for c in a.tool_calls)
            for a in messages[:i]
        )
    )
    assert sum(1 for r in results if not r.is_error) == real
    # each result directly follows its call's assistant message (only results in between)
    for index, message in enumerate(out):
        if isinstance(message, ToolResultMessage):
            j = index - 1
            while isinstance(out[j], ToolResultMessage):
                j -= 1
            owner = out[j]
            assert isinstance(owner, AssistantMessage)
            assert message.tool_call_id in {c.id for c in owner.tool_calls}


def test_alnum_id_map_keeps_valid_ids_and_maps_others_stably() -> None:
    ids = AlnumIdMap(9)
    assert ids("D681PevKs") == "D681PevKs"
    mapped = ids("call_abc|fc_123")
    assert len(mapped) == 9 and mapped.isascii() and mapped.isalnum()
    assert ids("call_abc|fc_123") == mapped
    assert AlnumIdMap(9)("call_abc|fc_123") == mapped  # the same in every request
    assert ids("toolu_01A") != mapped


def test_alnum_id_map_never_merges_two_ids() -> None:
    first = AlnumIdMap(9)
    taken = first("some-foreign-id")
    second = AlnumIdMap(9)
    assert second(taken) == taken  # a valid id, kept ...
    assert second("some-foreign-id") != taken  # ... so the foreign one that hashes to it moves


@given(st.lists(st.text(max_size=50), max_size=30))
def test_alnum_id_map_invariants(raw: list[str]) -> None:
    ids = AlnumIdMap(9)
    mapped = [ids(i) for i in raw]
    assert all(len(m) == 9 and m.isascii() and m.isalnum() for m in mapped)
    assert [ids(i) for i in raw] == mapped  # stable
    assert len(set(mapped)) == len(set(raw))  # distinct ids stay distinct
