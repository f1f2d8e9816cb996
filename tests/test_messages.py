"""Messages and content: frozen dataclasses, the versioned JSON round trip, Usage totals."""

from __future__ import annotations

import dataclasses
import json
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
from agentcore.messages import FORMAT_VERSION, from_json, register_message_type, to_json

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
