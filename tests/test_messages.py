"""Messages and content: frozen dataclasses, the versioned JSON round trip, Usage totals."""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
import time
from typing import Any

import pytest

from agentcore import (
    AgentMessage,
    AssistantMessage,
    Cost,
    ImageContent,
    MessageFormatError,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from agentcore.messages import (
    FORMAT_VERSION,
    encode_message,
    from_json,
    register_message_type,
    to_json,
)

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/"
    "PchI7wAAAABJRU5ErkJggg=="
)

USAGE = Usage(
    input=1200,
    output=345,
    cache_read=800,
    cache_write=64,
    cost=Cost(input=0.0036, output=0.005175, cache_read=0.00024, cache_write=0.00024),
)

MESSAGES: list[AgentMessage] = [
    UserMessage(content="plain text", timestamp=1_700_000_000_000),
    UserMessage(
        content=[
            TextContent(text="what is in this picture?"),
            ImageContent(data=PNG, mime_type="image/png"),
        ]
    ),
    AssistantMessage(
        content=[
            ThinkingContent(thinking="let me look", thinking_signature="sig-abc=="),
            ThinkingContent(thinking="", thinking_signature="opaque-redacted", redacted=True),
            TextContent(text="A red pixel.", text_signature="msg_01"),
            ToolCall(
                id="call_1",
                name="zoom",
                arguments={"factor": 2.5, "region": [0, 0, 1, 1], "opts": {"sharp": True}},
                thought_signature="ts-1",
            ),
        ],
        api="anthropic-messages",
        provider="anthropic",
        model="claude-sonnet-4-5",
        usage=USAGE,
        stop_reason="tool_use",
        timestamp=1_700_000_000_123,
    ),
    AssistantMessage(
        content=[TextContent(text="partial")],
        api="openai-responses",
        provider="openai",
        model="gpt-5",
        usage=Usage(input=5, output=1),
        stop_reason="error",
        error_message="upstream 529: overloaded",
    ),
    AssistantMessage(stop_reason="aborted", error_message="request was aborted"),
    ToolResultMessage(
        tool_call_id="call_1",
        tool_name="zoom",
        content=[TextContent(text="zoomed"), ImageContent(data=PNG, mime_type="image/png")],
        details={"size": [2, 2], "note": None, "nested": {"ok": True}},
        usage=Usage(input=10, output=20, cost=Cost(input=0.1, output=0.2)),
        added_tool_names=["crop"],
        is_error=False,
    ),
    ToolResultMessage(
        tool_call_id="call_2",
        tool_name="shell",
        content=[TextContent(text="exit code 1")],
        is_error=True,
    ),
]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: f"{m.role}")
def test_json_round_trip(message: AgentMessage) -> None:
    data = to_json(message)
    assert data["v"] == FORMAT_VERSION
    assert data["role"] == message.role
    text = json.dumps(data)  # plain JSON, nothing exotic
    back = from_json(json.loads(text))
    assert back == message
    assert type(back) is type(message)
    if isinstance(message, AssistantMessage | ToolResultMessage) and message.usage is not None:
        assert back.usage.cost == message.usage.cost  # type: ignore[union-attr]
    assert to_json(back) == data


def test_round_trip_keeps_block_types() -> None:
    back = from_json(json.loads(json.dumps(to_json(MESSAGES[2]))))
    assert isinstance(back, AssistantMessage)
    kinds = [type(b) for b in back.content]
    assert kinds == [ThinkingContent, ThinkingContent, TextContent, ToolCall]
    thinking, redacted, text, call = back.content
    assert thinking.thinking_signature == "sig-abc=="
    assert redacted.redacted and redacted.thinking_signature == "opaque-redacted"
    assert text.text_signature == "msg_01"
    assert call.thought_signature == "ts-1" and call.arguments["opts"] == {"sharp": True}
    image = from_json(to_json(MESSAGES[1])).content[1]  # type: ignore[union-attr]
    assert isinstance(image, ImageContent) and image.data == PNG and image.mime_type == "image/png"


def test_usage_total_is_the_sum() -> None:
    assert USAGE.total_tokens == 1200 + 345 + 800 + 64
    assert USAGE.cost.total == pytest.approx(0.0036 + 0.005175 + 0.00024 + 0.00024)
    assert Usage().total_tokens == 0 and Cost().total == 0
    with pytest.raises(TypeError):
        Usage(input=1, total_tokens=99)  # type: ignore[call-arg]
    changed = dataclasses.replace(USAGE, output=0)
    assert changed.total_tokens == 1200 + 800 + 64
    # a stored total that disagrees is recomputed on load
    data = to_json(MESSAGES[2])
    data["usage"]["total_tokens"] = 1
    data["usage"]["cost"]["total"] = 99.0
    loaded = from_json(data)
    assert loaded.usage.total_tokens == USAGE.total_tokens  # type: ignore[union-attr]
    assert loaded.usage.cost.total == USAGE.cost.total  # type: ignore[union-attr]


def test_messages_are_frozen_slotted_and_keyword_only() -> None:
    message = UserMessage(content="hi")
    with pytest.raises(dataclasses.FrozenInstanceError):
        message.content = "changed"  # type: ignore[misc]
    for cls in (
        TextContent,
        ThinkingContent,
        ImageContent,
        ToolCall,
        UserMessage,
        AssistantMessage,
        ToolResultMessage,
        Usage,
        Cost,
    ):
        assert "__slots__" in vars(cls), cls
        params = dataclasses.fields(cls)
        assert all(f.kw_only for f in params), cls
    with pytest.raises(TypeError):
        UserMessage("positional")  # type: ignore[misc]


def test_defaults() -> None:
    before = time.time_ns() // 1_000_000
    message = UserMessage(content="hi")
    after = time.time_ns() // 1_000_000
    assert isinstance(message.timestamp, int) and before <= message.timestamp <= after
    assert message.role == "user"
    assistant = AssistantMessage()
    assert assistant.content == [] and assistant.stop_reason == "stop"
    assert assistant.error_message is None and assistant.usage == Usage()
    assert AssistantMessage(content=[TextContent(text="a"), TextContent(text="b")]).text == "ab"
    result = ToolResultMessage(tool_call_id="c", tool_name="t")
    assert result.role == "tool_result" and not result.is_error and result.details is None
    assert [TextContent(text="x").type, ImageContent(data="", mime_type="").type] == [
        "text",
        "image",
    ]
    assert ToolCall(id="1", name="t").type == "tool_call"
    assert ThinkingContent(thinking="").type == "thinking"


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({"v": 1, "role": "system", "content": "x"}, "unknown message role 'system'"),
        ({"v": 1, "content": "x"}, "unknown message role None"),
        ({"v": 1, "role": "user", "content": "x", "colour": "red"}, "unknown field 'colour'"),
        ({"v": FORMAT_VERSION + 1, "role": "user", "content": "x"}, "newer"),
        ({"v": 0, "role": "user", "content": "x"}, "invalid format version"),
        ({"v": "1", "role": "user", "content": "x"}, "invalid format version"),
        (
            {"v": 1, "role": "assistant", "content": [{"type": "video"}]},
            r"content\[0\]: expected a content block",
        ),
        ({"v": 1, "role": "assistant", "content": "text"}, "content must be a list"),
        (
            {"v": 1, "role": "tool_result", "tool_call_id": "c", "tool_name": "t", "content": []}
            | {"usage": [1, 2]},
            "usage must be an object",
        ),
        (
            {"v": 1, "role": "assistant", "content": [{"type": "text", "txt": "typo"}]},
            "unknown field 'txt'",
        ),
        ({"v": 1, "role": "tool_result", "content": []}, "tool_call_id"),
    ],
)
def test_from_json_errors(data: dict[str, Any], match: str) -> None:
    with pytest.raises(MessageFormatError, match=match):
        from_json(data)


def test_from_json_rejects_non_objects() -> None:
    with pytest.raises(MessageFormatError, match="expected a JSON object"):
        from_json([1, 2])  # type: ignore[arg-type]


def test_to_json_rejects_unknown_objects() -> None:
    @dataclasses.dataclass
    class Stranger:
        role: str = "stranger"

    with pytest.raises(MessageFormatError, match="Stranger"):
        to_json(Stranger())
    with pytest.raises(MessageFormatError):
        to_json({"role": "user", "content": "x"})


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Bookmark:
    """An application-defined message: a bookmark in the transcript."""

    label: str
    position: int
    tags: list[str] = dataclasses.field(default_factory=list)
    role: str = "bookmark"


def test_register_message_type() -> None:
    assert register_message_type(Bookmark) is Bookmark
    mark = Bookmark(label="before refactor", position=12, tags=["a", "b"])
    data = to_json(mark)
    assert data == {
        "v": FORMAT_VERSION,
        "label": "before refactor",
        "position": 12,
        "tags": ["a", "b"],
        "role": "bookmark",
    }
    assert from_json(json.loads(json.dumps(data))) == mark
    with pytest.raises(MessageFormatError, match="unknown field"):
        from_json({**data, "extra": 1})


def test_register_message_type_rejects_bad_classes() -> None:
    class NotADataclass:
        role = "x"

    @dataclasses.dataclass
    class NoRole:
        label: str

    @dataclasses.dataclass
    class Reserved:
        role: str = "user"

    with pytest.raises(TypeError, match="dataclass"):
        register_message_type(NotADataclass)
    with pytest.raises(TypeError, match="role"):
        register_message_type(NoRole)
    with pytest.raises(ValueError, match="reserved"):
        register_message_type(Reserved)


def test_older_documents_without_version_load() -> None:
    message = from_json({"role": "user", "content": "hello", "timestamp": 5})
    assert message == UserMessage(content="hello", timestamp=5)


# --- every field's type is checked, both ways (issue 8) ---------------------------------------

CALL = {"type": "tool_call", "id": "c1", "name": "t", "arguments": {}}


def assistant(**fields: Any) -> dict[str, Any]:
    return {"v": 1, "role": "assistant", **fields}


def result(**fields: Any) -> dict[str, Any]:
    return {"v": 1, "role": "tool_result", "tool_call_id": "c1", "tool_name": "t", **fields}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"v": 1, "role": "user", "content": 5},
            "UserMessage.content must be a string or a list of text/image blocks, got int",
        ),
        (
            {"v": 1, "role": "user", "content": "hi", "timestamp": "noon"},
            "UserMessage.timestamp must be an integer (ms since the epoch), got str",
        ),
        (
            {"v": 1, "role": "user", "content": "hi", "timestamp": 1.5},
            "UserMessage.timestamp must be an integer (ms since the epoch), got float",
        ),
        ({"v": 1, "role": "user"}, "UserMessage.content is missing: expected a string or a list"),
        (
            {"v": 1, "role": "user", "content": [CALL]},
            "UserMessage.content[0]: expected a content block of type 'text' or 'image', "
            "got type 'tool_call'",
        ),
        (
            {"v": 1, "role": "user", "content": [{"type": "text", "text": 3}]},
            "UserMessage.content[0].text must be a string, got int",
        ),
        (
            {"v": 1, "role": "user", "content": [{"type": "image", "data": "x"}]},
            "UserMessage.content[0].mime_type is missing: expected a string",
        ),
        (
            assistant(content=[{"type": "text", "text": "a", "text_signature": 1}]),
            "AssistantMessage.content[0].text_signature must be a string or null, got int",
        ),
        (
            assistant(content=[{"type": "thinking", "thinking": "a", "redacted": "yes"}]),
            "AssistantMessage.content[0].redacted must be a boolean, got str",
        ),
        (
            assistant(content=[{**CALL, "arguments": [1, 2]}]),
            "AssistantMessage.content[0].arguments must be an object, got list",
        ),
        (
            assistant(content=[{**CALL, "invalid_arguments": {"a": 1}}]),
            "AssistantMessage.content[0].invalid_arguments must be a string or null, got dict",
        ),
        (
            assistant(content=[{**CALL, "id": None}]),
            "AssistantMessage.content[0].id must be a string, got null",
        ),
        (assistant(content=[7]), "AssistantMessage.content[0]: expected a content block"),
        (assistant(api=3), "AssistantMessage.api must be a string, got int"),
        (
            assistant(stop_reason="done"),
            "AssistantMessage.stop_reason must be one of 'stop', 'length', 'tool_use', 'error', "
            "'aborted', got 'done'",
        ),
        (assistant(error_message=[]), "AssistantMessage.error_message must be a string or null"),
        (assistant(usage=None), "AssistantMessage.usage must be an object (Usage), got null"),
        (
            assistant(usage={"input": "12"}),
            "AssistantMessage.usage.input must be an integer, got str",
        ),
        (
            assistant(usage={"output": True}),
            "AssistantMessage.usage.output must be an integer, got bool",
        ),
        (
            assistant(usage={"cost": {"input": "0.1"}}),
            "AssistantMessage.usage.cost.input must be a finite number, got str",
        ),
        (assistant(usage={"cost": 3}), "AssistantMessage.usage.cost must be an object (Cost)"),
        (
            result(content="text"),
            "ToolResultMessage.content must be a list of text/image blocks, got str",
        ),
        (result(is_error="no"), "ToolResultMessage.is_error must be a boolean, got str"),
        (
            result(added_tool_names="t"),
            "ToolResultMessage.added_tool_names must be a list of strings or null, got str",
        ),
        (
            result(added_tool_names=["a", 2]),
            "ToolResultMessage.added_tool_names[1] must be a string, got int",
        ),
        (
            result(usage=[1]),
            "ToolResultMessage.usage must be an object (Usage) or null, got list",
        ),
        (result(tool_name=None), "ToolResultMessage.tool_name must be a string, got null"),
    ],
)
def test_from_json_names_the_field_and_the_type_it_must_have(
    data: dict[str, Any], message: str
) -> None:
    with pytest.raises(MessageFormatError) as info:
        from_json(data)
    assert message in str(info.value)


def test_optional_fields_may_be_null() -> None:
    loaded = from_json(
        assistant(
            content=[{**CALL, "thought_signature": None, "invalid_arguments": None}],
            error_message=None,
        )
    )
    assert loaded == AssistantMessage(
        content=[ToolCall(id="c1", name="t")], timestamp=loaded.timestamp
    )
    assert from_json(result(usage=None, added_tool_names=None, details=None)).usage is None


def test_invalid_arguments_round_trip_and_are_written_only_when_set() -> None:
    plain = ToolCall(id="c1", name="t", arguments={"a": 1})
    assert "invalid_arguments" not in to_json(AssistantMessage(content=[plain]))["content"][0]
    cut = ToolCall(id="c2", name="t", invalid_arguments='{"to": "12345", "memo": "rent for ma')
    message = AssistantMessage(content=[plain, cut], stop_reason="tool_use")
    data = json.loads(json.dumps(to_json(message)))
    assert data["content"][1]["invalid_arguments"] == cut.invalid_arguments
    assert from_json(data) == message


class Opaque:
    """Not a JSON value."""


def cycle() -> list[Any]:
    values: list[Any] = [1]
    values.append(values)
    return values


@pytest.mark.parametrize(
    ("details", "message"),
    [
        ({"x": math.nan}, "ToolResultMessage.details['x'] must be a finite number, got nan"),
        ([1, math.inf], "ToolResultMessage.details[1] must be a finite number, got inf"),
        (
            {"when": datetime.datetime(2024, 1, 1)},
            "ToolResultMessage.details['when'] must be a JSON value (null, boolean, number, "
            "string, list or object), got datetime",
        ),
        (b"\x00\x01", "ToolResultMessage.details must be a JSON value"),
        ({"tags": {1, 2}}, "ToolResultMessage.details['tags'] must be a JSON value"),
        ({(1, 2): "pair"}, "ToolResultMessage.details has a key (1, 2) of type tuple"),
        ((x for x in "ab"), "got generator"),
        ({"o": Opaque()}, "got Opaque"),
        (cycle(), "ToolResultMessage.details[1] contains itself (a cycle)"),
    ],
    ids=["nan", "inf", "datetime", "bytes", "set", "tuple-key", "generator", "object", "cycle"],
)
def test_to_json_refuses_what_it_could_not_read_back(details: Any, message: str) -> None:
    bad = ToolResultMessage(tool_call_id="c", tool_name="t", details=details)
    with pytest.raises(MessageFormatError) as info:
        to_json(bad)
    assert message in str(info.value)


def test_to_json_checks_the_declared_types_too() -> None:
    with pytest.raises(
        MessageFormatError, match=r"UserMessage\.content must be a string or a list"
    ):
        to_json(UserMessage(content=5))  # type: ignore[arg-type]
    with pytest.raises(MessageFormatError, match=r"AssistantMessage.content\[0\] must be a"):
        to_json(AssistantMessage(content=[ImageContent(data="", mime_type="x")]))  # type: ignore[list-item]
    with pytest.raises(MessageFormatError, match=r"arguments\['k'\] must be a finite number"):
        to_json(AssistantMessage(content=[ToolCall(id="1", name="t", arguments={"k": math.nan})]))


def test_encode_message_says_when_the_json_reads_back_differently() -> None:
    exact = ToolResultMessage(tool_call_id="c", tool_name="t", details={"a": [1, {"b": None}]})
    assert encode_message(exact)[1] is True
    for details in ({"pair": (1, 2)}, {1: "one"}, Bookmark(label="x", position=1)):
        data, same = encode_message(
            ToolResultMessage(tool_call_id="c", tool_name="t", details=details)
        )
        assert same is False
        json.dumps(data, allow_nan=False)  # JSON all the same
    data, _ = encode_message(ToolResultMessage(tool_call_id="c", tool_name="t", details={1: (2,)}))
    assert data["details"] == {"1": [2]}


def test_deep_nesting_is_a_clear_error() -> None:
    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(MessageFormatError, match="nested too deeply"):
        to_json(ToolResultMessage(tool_call_id="c", tool_name="t", details=deep))
