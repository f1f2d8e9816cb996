"""Drift is an error that names the difference, and the three modes: replay only, record what is
missing, record everything anew."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcore.llm import complete
from agentcore.llm.model import Model
from agentcore.llm.types import Context, StreamOptions, Tool
from agentcore.messages import AssistantMessage, UserMessage
from agentcore.testing import Recording, RecordingDriftError, RecordingError, recorded
from agentcore.testing.recording._drift import nearest
from llm.fault_server import API_KEY, FaultServer
from recording.conftest import ALL_WIRES, offline, set_aws_credentials

pytestmark = pytest.mark.anyio

WEATHER = Tool(
    name="get_weather",
    description="The weather in a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)
COMPLETIONS = ALL_WIRES["openai-completions"]


def context(text: str = "Weather in Paris?", tool: Tool = WEATHER) -> Context:
    return Context(messages=[UserMessage(content=text)], tools=[tool])


async def record(path: Path, api: str, *contexts: Context) -> Model:
    """Record one answer per context with the fault server; returns the model, offline."""
    wire = ALL_WIRES[api]
    with FaultServer() as server:
        model = wire.model(server)
        for index in range(len(contexts)):
            server.enqueue(wire.sse(wire.answer([f"Answer {index}."]).events))
        with recorded(path, mode="rerecord"):
            for ctx in contexts:
                message = await complete(model, ctx, StreamOptions(api_key=API_KEY))
                assert message.stop_reason == "stop", message.error_message
    return offline(model)


async def replay_drift(path: Path, model: Model, ctx: Context) -> tuple[AssistantMessage, str]:
    """Replay one request that drifts: the answer it got, and the error leaving raised."""
    with pytest.raises(RecordingDriftError) as raised, recorded(path):
        message = await complete(model, ctx, StreamOptions())
    return message, str(raised.value)


@pytest.mark.parametrize("api", list(ALL_WIRES))
async def test_a_changed_model_is_named(
    api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_aws_credentials(monkeypatch)
    path = tmp_path / "r.json"
    model = await record(path, api, context())
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name)
    other = dataclasses.replace(model, id="other-model")
    message, error = await replay_drift(path, other, context())
    assert message.stop_reason == "error"
    assert "is not in the recording" in (message.error_message or "")
    recorded_id = ALL_WIRES[api].model_id
    assert f'model: recorded "{recorded_id}", sent "other-model"' in error, error
    assert "never requested: exchange 1" in error


async def test_a_changed_message_is_named_with_a_diff(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    model = await record(path, "openai-completions", context("Weather in Paris?"))
    message, error = await replay_drift(path, model, context("Weather in Rome?"))
    assert 'messages[0].content: recorded "Weather in Paris?", sent "Weather in Rome?"' in error
    assert '-    "content": "Weather in Paris?",' in error  # the short diff
    assert '+    "content": "Weather in Rome?",' in error
    assert "Weather in Rome?" in (message.error_message or "")


async def test_a_changed_tool_is_named(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    model = await record(path, "anthropic-messages", context())
    changed = dataclasses.replace(WEATHER, description="Today's weather in a city.")
    _, error = await replay_drift(path, model, context(tool=changed))
    assert (
        'tools[0].description: recorded "The weather in a city.", '
        'sent "Today\'s weather in a city."' in error
    ), error


async def test_a_removed_tool_is_named(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    model = await record(path, "openai-responses", context())
    _, error = await replay_drift(path, model, Context(messages=context().messages))
    assert "tools: recorded [" in error and "not sent" in error


async def test_recorded_exchanges_left_unused_are_an_error(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    model = await record(path, "openai-completions", context("one"), context("two"))
    with pytest.raises(RecordingDriftError) as raised, recorded(path) as recording:
        message = await complete(model, context("one"), StreamOptions())
    assert message.content and message.stop_reason == "stop"
    assert recording.unused == [2]
    assert "1 recorded exchange(s) never requested: exchange 2 (POST /v1/chat/completions" in str(
        raised.value
    )


async def test_one_request_too_many_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    model = await record(path, "openai-completions", context())
    with pytest.raises(RecordingDriftError) as raised, recorded(path):
        await complete(model, context(), StreamOptions())
        extra = await complete(model, context(), StreamOptions())
    assert extra.stop_reason == "error"
    assert "request 2 (POST /v1/chat/completions) is not in the recording: every recorded" in str(
        raised.value
    )


async def test_identical_requests_are_answered_in_recorded_order(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    model = await record(path, "openai-completions", context(), context())
    with recorded(path):
        first = await complete(model, context(), StreamOptions())
        second = await complete(model, context(), StreamOptions())
    assert [first.text, second.text] == ["Answer 0.", "Answer 1."]


async def test_an_error_in_the_block_keeps_the_drift_as_a_note(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    await record(path, "openai-completions", context())
    with pytest.raises(KeyError) as raised, recorded(path):
        raise KeyError("the test's own failure")
    assert any("never requested" in note for note in raised.value.__notes__)


# --- modes ------------------------------------------------------------------------------------


async def test_missing_mode_records_only_what_the_file_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "r.json"
    await record(path, "openai-completions", context("one"))
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    with FaultServer() as server:
        model = COMPLETIONS.model(server)
        server.enqueue(COMPLETIONS.sse(COMPLETIONS.answer(["New."]).events))
        with recorded(path, mode="missing") as recording:
            one = await complete(model, context("one"), StreamOptions())
            two = await complete(model, context("two"), StreamOptions())
        assert len(server.requests) == 1  # only "two" went to the server
        assert server.requests[0].json["messages"][0]["content"] == "two"
    assert (one.text, two.text) == ("Answer 0.", "New.")
    assert recording.replayed == 1 and recording.requests == 2
    exchanges = json.loads(path.read_text())["exchanges"]
    assert [e["request"]["body"]["messages"][0]["content"] for e in exchanges] == ["one", "two"]
    assert API_KEY not in path.read_text()
    monkeypatch.delenv("OPENAI_API_KEY")
    with recorded(path):  # and it all replays
        await complete(offline(model), context("one"), StreamOptions())
        await complete(offline(model), context("two"), StreamOptions())


async def test_missing_mode_without_a_key_names_what_is_missing(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    model = await record(path, "openai-completions", context("one"))
    with pytest.raises(RecordingDriftError) as raised, recorded(path, mode="missing"):
        await complete(model, context("one"), StreamOptions())
        two = await complete(model, context("two"), StreamOptions())
    assert two.stop_reason == "error"
    assert "no API key or credentials" in str(raised.value)


async def test_rerecord_mode_sends_everything_and_rewrites_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "r.json"
    await record(path, "openai-completions", context("one"), context("two"))
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    with FaultServer() as server:
        server.enqueue(COMPLETIONS.sse(COMPLETIONS.answer(["Fresh."]).events))
        with recorded(path, mode="rerecord") as recording:
            message = await complete(COMPLETIONS.model(server), context("one"), StreamOptions())
        assert len(server.requests) == 1
    assert message.text == "Fresh." and recording.replayed == 0
    (exchange,) = json.loads(path.read_text())["exchanges"]
    assert exchange["response"]["events"][1]["data"]["choices"][0]["delta"]["content"] == "Fresh."


async def test_replay_mode_needs_the_file(tmp_path: Path) -> None:
    expected = r"no recording at .*missing\.json: record it first"
    with pytest.raises(RecordingError, match=expected), recorded(tmp_path / "missing.json"):
        pass


def test_an_unknown_mode_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RecordingError, match="unknown recording mode 'record': expected one of"):
        Recording(tmp_path / "r.json", mode="record")  # type: ignore[arg-type]


def test_a_file_that_is_not_a_recording_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"exchanges": 3}')
    with pytest.raises(RecordingError, match="is not an agentcore recording"), recorded(path):
        pass


def test_recordings_do_not_nest(tmp_path: Path) -> None:
    inner = recorded(tmp_path / "b.json", mode="missing")
    with (
        recorded(tmp_path / "a.json", mode="missing"),
        pytest.raises(RecordingError, match="another recording is active"),
    ):
        inner.__enter__()


async def test_missing_mode_keeps_what_it_did_not_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that stops early in `missing` mode loses no recorded exchange."""
    path = tmp_path / "r.json"
    await record(path, "openai-completions", context("one"), context("two"))
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    with FaultServer() as server:
        server.enqueue(COMPLETIONS.sse(COMPLETIONS.answer(["New."]).events))
        with recorded(path, mode="missing") as recording:
            await complete(COMPLETIONS.model(server), context("three"), StreamOptions())
    assert recording.unused == [1, 2]  # not an error in this mode
    exchanges = json.loads(path.read_text())["exchanges"]
    assert [e["request"]["body"]["messages"][0]["content"] for e in exchanges] == [
        "one",
        "two",
        "three",
    ]


async def test_bedrock_missing_mode_replays_unsigned_and_records_signed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without AWS credentials, `missing` mode still replays what is recorded (unsigned) and
    names what it cannot record; with them, it signs and records the rest."""
    path = tmp_path / "r.json"
    set_aws_credentials(monkeypatch)
    model = await record(path, "bedrock-converse-stream", context("one"))
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name)
    with pytest.raises(RecordingDriftError) as raised, recorded(path, mode="missing"):
        one = await complete(model, context("one"), StreamOptions())
        two = await complete(model, context("two"), StreamOptions())
    assert one.stop_reason == "stop" and two.stop_reason == "error"
    assert "no API key or credentials" in str(raised.value)

    set_aws_credentials(monkeypatch)
    wire = ALL_WIRES["bedrock-converse-stream"]
    with FaultServer() as server:
        server.enqueue(wire.sse(wire.answer(["Two."]).events))
        live = wire.model(server)
        with recorded(path, mode="missing") as recording:
            await complete(live, context("one"), StreamOptions())
            two = await complete(live, context("two"), StreamOptions())
        assert len(server.requests) == 1 and two.text == "Two."
        assert server.requests[0].headers.get("authorization", "").startswith("AWS4-HMAC-SHA256")
    assert recording.replayed == 1
    assert "SECRET" not in path.read_text()


async def test_a_recording_entered_again_starts_afresh(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    model = await record(path, "openai-completions", context())
    recording = Recording(path)
    for _ in range(2):
        with recording:
            message = await complete(model, context(), StreamOptions())
        assert message.text == "Answer 0." and recording.requests == recording.replayed == 1


def _request(question: str, turns: int) -> dict[str, object]:
    messages: list[object] = [{"role": "system", "content": "You answer arithmetic."}]
    messages.append({"role": "user", "content": question})
    for turn in range(turns):
        messages += [
            {"role": "assistant", "content": f"call {turn}"},
            {"role": "tool", "content": "1"},
        ]
    body = {"model": "m", "messages": messages, "stream": True}
    return {"method": "POST", "url": "http://127.0.0.1:1/v1/chat/completions", "body": body}


RECORDED = [_request(q, turns) for q in ("What is 17 * 23?", "What is 17 * 23 + 4?",
            "What is 2 ** 10 - 24?") for turns in range(3)]  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(
    order=st.permutations(list(range(len(RECORDED)))),
    used=st.sets(st.sampled_from([0, 1, 2, 3, 4, 5, 7, 8])),
)
def test_the_nearest_exchange_depends_on_content_not_order(
    order: list[int], used: set[int]
) -> None:
    # whichever other exchanges are used and in whatever order they are offered, a request that
    # changed one question is nearest to the exchange it changed (the old ranking by equal
    # top-level fields tied them all and took the earliest unused)
    sent = _request("What is 2 ** 10 - 25?", 0)
    candidates = [(i, RECORDED[i]) for i in order if i not in used]
    assert nearest(sent, candidates) == 6


@pytest.mark.parametrize("api", list(ALL_WIRES))
async def test_each_adapter_reports_the_drift_the_recording_lists(
    api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the CLI prints a drift once: it leaves out a run error holding the first line of a drift
    # the recording lists on exit, so every adapter's error must hold that line
    set_aws_credentials(monkeypatch)
    path = tmp_path / "r.json"
    model = await record(path, api, context())
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name)
    recording = Recording(path)
    with pytest.raises(RecordingDriftError), recording:
        message = await complete(model, context("Weather in Rome?"), StreamOptions())
    [drift] = recording.drifts()
    assert drift.partition("\n")[0] in (message.error_message or ""), message.error_message
