"""Public event types behave as the frozen dataclasses they are (issue 9): `replace`, `asdict`,
`fields`, `==`, `match` and pickling work on `message_update` and on the streaming protocol's
events, while their snapshot (`message`, `partial`) stays lazy: built on first access, once."""

from __future__ import annotations

import dataclasses
import pickle
import typing
from typing import Any

import pytest

from agentcore import MessageUpdateEvent
from agentcore.llm import MessageBuilder, Model
from agentcore.llm.events import (
    AssistantMessageEvent,
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    ThinkingDeltaEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
)
from agentcore.messages import AssistantMessage, TextContent, Usage

MODEL = Model(id="m-1", api="faux", provider="prov")


def streamed() -> tuple[MessageBuilder, list[AssistantMessageEvent]]:
    """A builder's events, whose `partial` snapshots are still lazy."""
    builder = MessageBuilder(MODEL)
    events: list[AssistantMessageEvent] = [builder.start()]
    index = builder.text_start().content_index
    events += [builder.text_delta(index, "Hel"), builder.text_delta(index, "lo")]
    events.append(builder.text_end(index))
    return builder, events


def public_fields(event: Any) -> list[str]:
    return [f.name for f in dataclasses.fields(event)]


def test_no_private_field_shows_in_fields_asdict_or_match_args() -> None:
    _, events = streamed()
    update = MessageUpdateEvent(assistant_message_event=events[1])
    for event in [*events, update]:
        assert not any(name.startswith("_") for name in public_fields(event))
        assert type(event).__match_args__ == ()  # keyword-only, as every other event
        as_dict = dataclasses.asdict(event)
        assert not any(key.startswith("_") for key in as_dict)
    assert public_fields(events[1]) == ["content_index", "partial", "delta", "type"]
    assert public_fields(update) == ["assistant_message_event", "message", "type"]
    as_dict = dataclasses.asdict(update)
    assert as_dict["message"]["content"] == [
        {"type": "text", "text": "Hel", "text_signature": None}
    ]
    assert as_dict["assistant_message_event"]["delta"] == "Hel"


def test_replace_keeps_the_snapshot_and_changes_the_field() -> None:
    _, events = streamed()
    delta = events[1]
    assert isinstance(delta, TextDeltaEvent)
    changed = dataclasses.replace(delta, delta="Yo")
    assert (changed.delta, changed.content_index, changed.type) == ("Yo", 0, "text_delta")
    assert changed.partial is delta.partial and changed.partial.text == "Hel"
    other = AssistantMessage(content=[TextContent(text="other")])
    assert dataclasses.replace(delta, partial=other).partial is other
    start = dataclasses.replace(events[0])
    assert isinstance(start, StartEvent) and start.partial == events[0].partial
    update = MessageUpdateEvent(assistant_message_event=delta)
    assert dataclasses.replace(update).message is delta.partial
    # as on any dataclass, the other fields are kept: the snapshot too, unless given
    moved = dataclasses.replace(update, assistant_message_event=events[2])
    assert moved.assistant_message_event is events[2] and moved.message.text == "Hel"
    given = dataclasses.replace(update, message=other)
    assert given.message is other
    with pytest.raises(ValueError, match="type must be 'text_delta'"):
        dataclasses.replace(delta, type="text_end")
    with pytest.raises(dataclasses.FrozenInstanceError):
        delta.partial = other  # type: ignore[misc]


def test_equality_compares_the_fields_not_the_snapshot() -> None:
    _, events = streamed()
    delta = events[1]
    assert isinstance(delta, TextDeltaEvent)
    same = TextDeltaEvent(content_index=0, delta="Hel", partial=AssistantMessage())
    assert delta == same and delta != dataclasses.replace(delta, delta="x")
    update = MessageUpdateEvent(assistant_message_event=delta)
    assert update == MessageUpdateEvent(assistant_message_event=same)
    assert update != MessageUpdateEvent(assistant_message_event=events[2])


def test_match_by_class_and_keyword() -> None:
    _, events = streamed()
    seen: list[str] = []
    for event in events:
        match MessageUpdateEvent(assistant_message_event=event):
            case MessageUpdateEvent(assistant_message_event=TextDeltaEvent(delta=d), message=m):
                seen.append(f"{d}:{m.text}")
            case MessageUpdateEvent(assistant_message_event=StartEvent(partial=p)):
                seen.append(f"start:{len(p.content)}")
            case MessageUpdateEvent(assistant_message_event=TextEndEvent(content=c)):
                seen.append(f"end:{c}")
            case _:
                seen.append("other")
    assert seen == ["start:0", "Hel:Hel", "lo:Hello", "end:Hello"]


def test_the_snapshot_is_built_once_on_first_access() -> None:
    _, events = streamed()
    delta = events[1]
    first = delta.partial
    assert delta.partial is first  # materialised once, then kept
    assert delta.partial.text == "Hel"  # as it was at its moment
    update = MessageUpdateEvent(assistant_message_event=events[2])
    assert update.message is events[2].partial and update.message is update.message


def test_pickle_round_trip_keeps_the_snapshot() -> None:
    _, events = streamed()
    update = MessageUpdateEvent(assistant_message_event=events[2])
    back = pickle.loads(pickle.dumps(update))
    assert back == update and back.message.text == "Hello"
    assert back.assistant_message_event.partial.text == "Hello"


def test_every_block_event_type_is_checked() -> None:
    message = AssistantMessage()
    for cls, extra in (
        (ThinkingDeltaEvent, {"delta": "x"}),
        (ToolCallDeltaEvent, {"delta": "{"}),
    ):
        event = cls(content_index=1, partial=message, **extra)
        assert dataclasses.replace(event, content_index=2).content_index == 2
    with pytest.raises(ValueError, match="type must be 'toolcall_end'"):
        ToolCallEndEvent(
            content_index=0,
            tool_call=None,  # type: ignore[arg-type]
            partial=message,
            type="text_delta",
        )


def test_answers_share_one_frozen_zero_usage() -> None:
    # issue 9's cheap speed item: no fresh default `Usage` (and `Cost`) per answer; sharing is
    # safe because both are frozen, and a usage given explicitly is kept as given
    first, second = AssistantMessage(), AssistantMessage()
    assert first.usage is second.usage and first.usage.cost is second.usage.cost
    assert first.usage == Usage() and first.usage.total_tokens == 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.usage.input = 1  # type: ignore[misc]
    own = Usage(input=3)
    assert AssistantMessage(usage=own).usage is own and second.usage.input == 0


def _memory_update() -> Any:
    from agentcore.events import MemoryUpdateEvent
    from agentcore.memory import MemoryRecord, MemoryScope

    record = MemoryRecord(
        id="mem_1",
        text="Prefers French",
        kind="preference",
        scope=MemoryScope(user="alice", keys={"tenant": "acme"}),
        session_id="s-1",
        message_ids=("#0",),
        origin="extractor",
        created_at=10,
        updated_at=11,
    )
    return MemoryUpdateEvent(
        extraction_id="ext_1",
        session_id="s-1",
        model="faux/cheap",
        records=(record,),
        rejected=("memory 2 cites #2 (tool_result)",),
        error=None,
    )


def test_memory_update_is_a_frozen_keyword_only_event_every_mapping_carries() -> None:
    from agentcore import AgentEvent, MemoryUpdateEvent
    from agentcore.cli._json import event_to_json as json_line
    from agentcore.durable import event_from_json, event_to_json

    update = _memory_update()
    assert MemoryUpdateEvent in typing.get_args(AgentEvent)
    assert type(update).__match_args__ == ()
    assert public_fields(update) == [
        "extraction_id",
        "session_id",
        "model",
        "records",
        "rejected",
        "error",
        "type",
    ]
    with pytest.raises(dataclasses.FrozenInstanceError):
        update.error = "x"
    assert pickle.loads(pickle.dumps(update)) == update
    assert dataclasses.asdict(update)["records"][0]["scope"]["keys"] == {"tenant": "acme"}
    # the durable codec (watchers of a durable run) and `agentcore run --json`
    assert event_from_json(event_to_json(update)) == update
    line = json_line(update)
    assert line["type"] == "memory_update" and line["extraction_id"] == "ext_1"
    assert line["records"] == [update.records[0].to_dict()]
    assert line["rejected"] == list(update.rejected) and line["error"] is None
