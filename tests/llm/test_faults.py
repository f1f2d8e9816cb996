"""The cross-provider fault suite (issue 8): every adapter, through its real SDK, against one
fault-injecting server on 127.0.0.1, driven by `agent_loop` with a real tool.

Each case puts one fault in the first answer of a run (a note-saving tool call after some text)
and asserts, for every adapter alike:

* the run ends (within a deadline far below pytest's timeout, with small request and idle
  timeouts, few retries and short retry waits), and its events are well formed;
* each tool call of an executed batch gets exactly one result;
* a failed answer ends with `stop_reason="error"` and a clear text naming the fault (the phrase
  is part of each case), keeping what had arrived; a recovered one equals a clean run;
* the API key appears in no event, message or log record, though the server quotes it back in
  its error bodies, its HTML page and its broken chunk.

The bounds are handed to every request by the stream function as well as set in the loop's
config: the fault cases then test the adapters alone, and `test_the_loop_config_bounds_...`
tests that the loop passes its own bounds on.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest

from agentcore import AgentContext, AgentLoopConfig, agent_loop, tool
from agentcore.events import AgentEvent
from agentcore.llm import stream_simple
from agentcore.llm.model import Model
from agentcore.llm.types import Context, SimpleStreamOptions
from agentcore.messages import (
    AgentMessage,
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    to_json,
)
from agentcore.testing import check_well_formed

from .fault_server import (
    API_KEY,
    APIS,
    CREDENTIALS,
    WIRES,
    Answer,
    Call,
    FaultResponse,
    FaultServer,
    Wire,
)

pytestmark = pytest.mark.anyio

TEXTS = ("Hello", ", wor", "ld")
NOTE = {"title": "rent", "body": "rent for march"}
CUT_NOTE = '{"title": "rent", "body": "rent for ma'  # the model stopped mid-string
BIG_BODY = "0123456789abcdef" * 625_000  # 10 MB of one argument
FINAL = "Saved."
BAD_UTF8 = "@@not-utf-8@@"  # replaced on the wire by two bytes that are not UTF-8
SHORT = 0.3  # the idle timeout of the timeout cases, in seconds
# The request timeout of those cases: longer, so that on a loaded machine an answer that starts at
# once (the retry after a stall, the later turns) still has its first event in time.
SHORT_REQUEST = 1.0

BOUNDS: dict[str, Any] = {
    "request_timeout": 5.0,
    "idle_timeout": 5.0,
    "max_retries": 2,
    "max_retry_delay_ms": 50,
}
"""Every run's bounds: retries and their waits small, timeouts far above a healthy answer's."""

KEEP_ALIVE = b": keep-alive\n\n"
HTML = (
    b"<!DOCTYPE html><html><head><title>Gateway</title></head><body><h1>Sign in</h1>"
    b"<p>Rejected "
    + CREDENTIALS
    + b"</p>"
    + b"<p>Please sign in again.</p>" * 40
    + b"</body></html>"
)


def fragments(text: str, size: int = 7) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def note_call(arguments: str = json.dumps(NOTE), size: int = 7) -> Call:
    return Call("call_fault_1", "save_note", fragments(arguments, size))


# --- the faults -------------------------------------------------------------------------------

Responses = Callable[[Wire, Answer], list[FaultResponse]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Fault:
    """One fault and what every adapter must make of it.

    Attributes:
        name: the test id.
        first_turn: the responses to the first answer's requests (retries included).
        error: a phrase the first answer's `error_message` must contain; None: it succeeds.
        attempts: the requests of the first answer.
        text: the first answer's text (on failure: what had arrived); None: not checked.
        texts: the text deltas of the answer.
        call: the tool call of the answer.
        bounds: bounds in place of `BOUNDS`.
        apis: the APIs whose wire format can carry the fault.
        deadline: seconds the whole run may take.
        same_as_clean: the run must equal one served without the fault.
    """

    name: str
    first_turn: Responses
    error: str | None = None
    attempts: int = 1
    text: str | None = "Hello, world"
    texts: Sequence[str] = TEXTS
    call: Callable[[], Call] = note_call
    bounds: Mapping[str, Any] = field(default_factory=dict)
    apis: Sequence[str] = APIS
    deadline: float = 6.0
    same_as_clean: bool = False

    @property
    def logged(self) -> str | None:
        """What an `agentcore` log record must mention: the timeout that struck, or a retry."""
        for name in ("request_timeout", "idle_timeout"):
            if name in self.bounds:
                return name
        return "retr" if self.attempts > 1 else None


def clean(w: Wire, a: Answer) -> FaultResponse:
    return w.sse(a.events)


def echoing(w: Wire, status: int, headers: dict[str, str] | None = None) -> FaultResponse:
    """An error response whose message quotes the request's credentials."""
    message = b"Request with " + CREDENTIALS + b" failed; try again later."
    return w.error(status, message.decode(), headers)


def storm(status: int, failures: int, then_ok: bool) -> Responses:
    def responses(w: Wire, a: Answer) -> list[FaultResponse]:
        return [echoing(w, status)] * failures + ([clean(w, a)] if then_ok else [])

    return responses


def broken_json(w: Wire, a: Answer) -> list[FaultResponse]:
    chunk = w.raw_event(b"upstream proxy error for " + CREDENTIALS)
    return [w.sse([*a.events[: a.first], chunk, *a.events[a.first :]])]


def bad_utf8(w: Wire, a: Answer) -> list[FaultResponse]:
    bad = BAD_UTF8.encode()
    return [w.sse([event.replace(bad, b"\xff\xfe") for event in a.events])]


FAULTS = [
    Fault(
        name="truncated_stream",
        first_turn=lambda w, a: [w.sse(a.events[: a.middle])],
        error="stream ended before the response finished",
    ),
    Fault(
        name="reset_before_the_response",
        first_turn=lambda w, a: [FaultResponse(reset_at_once=True), clean(w, a)],
        attempts=2,
    ),
    Fault(
        name="reset_before_the_first_event",
        first_turn=lambda w, a: [w.sse(a.events, reset_after=0), clean(w, a)],
        attempts=2,
    ),
    Fault(
        name="reset_after_the_first_event",
        first_turn=lambda w, a: [w.sse(a.events, gate_after=a.first, reset_after=a.first)],
        error="the connection was lost mid-stream",
        text="Hello",
    ),
    Fault(
        name="429_retry_after_beyond_max_retry_delay",
        first_turn=lambda w, a: [echoing(w, 429, {"retry-after": "30"}), clean(w, a)],
        error="max_retry_delay_ms",
        text="",
    ),
    Fault(
        name="429_retry_after_within_max_retry_delay",
        first_turn=lambda w, a: [echoing(w, 429, {"retry-after": "0.02"}), clean(w, a)],
        attempts=2,
    ),
    Fault(name="500_storm", first_turn=storm(500, 4, False), error="500", attempts=3, text=""),
    Fault(name="503_storm", first_turn=storm(503, 4, False), error="503", attempts=3, text=""),
    Fault(name="500_twice_then_ok", first_turn=storm(500, 2, True), attempts=3),
    Fault(name="503_twice_then_ok", first_turn=storm(503, 2, True), attempts=3),
    Fault(
        name="stall_before_the_first_event_then_ok",
        first_turn=lambda w, a: [w.sse([], stall=True), clean(w, a)],
        attempts=2,
        bounds={"request_timeout": SHORT_REQUEST},
    ),
    Fault(
        name="stall_before_every_first_event",
        first_turn=lambda w, a: [w.sse([], stall=True)] * 4,
        error="request_timeout",
        attempts=3,
        text="",
        bounds={"request_timeout": SHORT_REQUEST},
    ),
    Fault(
        name="stall_after_the_first_event",
        first_turn=lambda w, a: [w.sse(a.events[: a.first], stall=True)],
        error="idle_timeout",
        text="Hello",
        bounds={"idle_timeout": SHORT},
    ),
    Fault(
        name="keep_alive_comments_forever",
        first_turn=lambda w, a: [w.sse(a.events[: a.first], forever=KEEP_ALIVE)],
        error="idle_timeout",
        text="Hello",
        bounds={"idle_timeout": SHORT},
    ),
    Fault(
        name="byte_by_byte",
        first_turn=lambda w, a: [w.sse_bytes(a.body(), 1)],
        same_as_clean=True,
    ),
    Fault(
        name="html_200",
        first_turn=lambda w, a: [
            FaultResponse(
                headers={"content-type": "text/html", "content-length": "0"}, chunks=[HTML]
            )
        ],
        error="expected an event stream, got text/html",
        text="",
    ),
    Fault(
        # one way everywhere, the SSE standard's: each invalid byte becomes U+FFFD
        name="invalid_utf8_in_a_text_delta",
        first_turn=bad_utf8,
        texts=("Hello", ", w" + BAD_UTF8 + "or", "ld"),
        text="Hello, w\ufffd\ufffdorld",
    ),
    Fault(
        name="invalid_json_chunk",
        first_turn=broken_json,
        error="malformed JSON in a server event",
        text="Hello",
    ),
    Fault(
        # Gemini sends a call's arguments as a JSON object inside the event: they cannot be cut
        name="truncated_tool_call_json",
        first_turn=lambda w, a: [clean(w, a)],
        call=lambda: note_call(CUT_NOTE),
        apis=[api for api in APIS if api != "google-generative-ai"],
    ),
    Fault(
        name="10_mb_of_tool_arguments",
        first_turn=lambda w, a: [clean(w, a)],
        call=lambda: note_call(json.dumps({"title": "big", "body": BIG_BODY}), 10_000),
        deadline=40.0,
    ),
]


# --- running one case -------------------------------------------------------------------------


@dataclass(slots=True)
class Run:
    """What a run produced: its events, its messages, the tool's calls, the log (all of it,
    and the messages of agentcore's records)."""

    events: list[AgentEvent]
    messages: list[AgentMessage]
    executed: list[dict[str, str]]
    log: str
    records: list[str]


def save_note_tool(executed: list[dict[str, str]]) -> Any:
    @tool
    def save_note(title: str, body: str) -> str:
        """Save a note."""
        executed.append({"title": title, "body": body})
        return f"saved {title!r}: {len(body)} characters"

    return save_note


async def run_agent(
    server: FaultServer,
    wire: Wire,
    bounds: Mapping[str, Any],
    deadline: float,
    caplog: pytest.LogCaptureFixture,
    *,
    bounds_in_stream_fn: bool = True,
) -> Run:
    """Run the agent loop against `server` until it ends; fail the test if it does not end in
    `deadline` seconds. The first text delta opens the server's gate."""

    def stream_fn(model: Model, context: Context, options: SimpleStreamOptions) -> Any:
        return stream_simple(model, context, dataclasses.replace(options, **bounds))

    executed: list[dict[str, str]] = []
    config = AgentLoopConfig(model=wire.model(server), api_key=API_KEY, **bounds)
    context = AgentContext(system_prompt="Be brief.", tools=[save_note_tool(executed)])
    events: list[AgentEvent] = []
    messages: list[AgentMessage] = []
    caplog.set_level(logging.DEBUG, logger="agentcore")
    with anyio.move_on_after(deadline) as scope:
        async with agent_loop(
            [UserMessage(content="Note the rent.")],
            context,
            config,
            stream_fn=stream_fn if bounds_in_stream_fn else None,
        ) as stream:
            async for event in stream:
                events.append(event)
                if (
                    event.type == "message_update"
                    and event.assistant_message_event.type == "text_delta"
                ):
                    server.gate.set()
            messages = await stream.result()
    if scope.cancelled_caught:
        last = [e.type for e in events[-5:]]
        pytest.fail(f"the run did not end within {deadline} s (a hang); its last events: {last}")
    records = [r.getMessage() for r in caplog.records if r.name.startswith("agentcore")]
    return Run(events, messages, executed, caplog.text, records)


def texts_of(run: Run) -> Iterator[str]:
    """Every text a caller can see: each event (an update without its growing snapshot, whose
    content the deltas already carry), each message as JSON, and the log."""
    for event in run.events:
        if event.type == "message_update":
            inner = event.assistant_message_event
            yield inner.type
            for name in ("delta", "content", "tool_call", "message", "error"):
                value = getattr(inner, name, None)
                if value is not None:
                    yield repr(value)
        else:
            yield repr(event)
    for message in run.messages:
        yield json.dumps(to_json(message))
    yield run.log


def assert_no_key(run: Run) -> None:
    for text in texts_of(run):
        assert API_KEY not in text and "SECRET" not in text, f"the API key leaked: {text[:500]}"


def assert_logged(run: Run, fault: Fault) -> None:
    """Retries and timeouts are logged through the `agentcore` logger."""
    if fault.logged is not None:
        assert any(fault.logged in r.lower() for r in run.records), (fault.logged, run.records)


def assert_one_result_per_call(messages: Sequence[AgentMessage]) -> None:
    results = [m.tool_call_id for m in messages if isinstance(m, ToolResultMessage)]
    calls = [
        call.id
        for m in messages
        if isinstance(m, AssistantMessage) and m.stop_reason not in ("error", "aborted")
        for call in m.tool_calls
    ]
    assert sorted(results) == sorted(calls), f"results {results} for calls {calls}"


def assert_not_executed_with_invalid_json(run: Run, call: Call) -> None:
    """The call whose arguments are not one complete JSON object never runs, and its result
    says so, quoting what was received.

    POST-MERGE: `ToolCall.invalid_arguments` is filled by the builder and honoured by the loop
    on other branches (tools-args); until they are merged the tool runs on repaired arguments.
    """
    first = run.messages[1]
    assert isinstance(first, AssistantMessage) and first.stop_reason == "tool_use"
    (received,) = first.tool_calls
    assert received.invalid_arguments == call.arguments and received.arguments == {}
    assert run.executed == [], f"the tool ran on guessed arguments: {run.executed}"
    (result,) = [m for m in run.messages if isinstance(m, ToolResultMessage)]
    text = "".join(b.text for b in result.content if isinstance(b, TextContent))
    assert result.is_error and "not valid json" in text.lower(), text
    assert call.arguments in text


def essence(messages: Sequence[AgentMessage]) -> list[Any]:
    """What two runs of the same answers agree on, however the bytes were cut (tool-call ids
    aside: Gemini sends none, so the adapter makes them up)."""
    out: list[Any] = []
    for m in messages:
        if isinstance(m, AssistantMessage):
            content = [
                dataclasses.replace(b, id="") if isinstance(b, ToolCall) else b for b in m.content
            ]
            out.append((content, m.usage, m.stop_reason, m.error_message))
        elif isinstance(m, ToolResultMessage):
            out.append((m.tool_name, m.content, m.is_error))
        else:
            out.append(m.content)  # type: ignore[union-attr]
    return out


def check_run(run: Run, server: FaultServer, wire: Wire) -> None:
    """What holds whatever the fault: a well-formed run, one result per executed call, every
    request at the API's endpoint (the key is checked last, after the outcome)."""
    check_well_formed(run.events)
    assert run.messages == run.events[-1].messages  # type: ignore[union-attr]
    assert_one_result_per_call(run.messages)
    for request in server.requests:
        assert request.method == "POST" and request.path.endswith(wire.endpoint), request.path


CASES = [
    pytest.param(api, fault, id=f"{fault.name}-{api}") for fault in FAULTS for api in fault.apis
]


@pytest.mark.parametrize(("api", "fault"), CASES)
async def test_fault(api: str, fault: Fault, caplog: pytest.LogCaptureFixture) -> None:
    await run_fault(WIRES[api], fault, caplog)


async def run_fault(wire: Wire, fault: Fault, caplog: pytest.LogCaptureFixture) -> None:
    """One fault on one wire, with every assertion of the suite (other wires' modules reuse it:
    Azure, Vertex, Mistral)."""
    call = fault.call()
    answer = wire.answer(fault.texts, call)
    bounds = {**BOUNDS, **fault.bounds}
    with FaultServer() as server:
        server.enqueue(*fault.first_turn(wire, answer))
        server.enqueue(wire.sse(wire.answer([FINAL]).events))
        run = await run_agent(server, wire, bounds, fault.deadline, caplog)
        requests = len(server.requests)
    check_run(run, server, wire)

    first = run.messages[1]
    assert isinstance(first, AssistantMessage)
    if fault.error is not None:
        assert first.stop_reason == "error" and first.error_message is not None
        assert fault.error in first.error_message, first.error_message
        assert len(first.error_message) <= 2_500  # quoted text is clipped
        assert [m.role for m in run.messages] == ["user", "assistant"]
        assert run.executed == []
        assert requests == fault.attempts
        if fault.text is not None:
            assert first.text == fault.text  # what arrived is kept
        assert_logged(run, fault)
        assert_no_key(run)
        return

    assert first.stop_reason == "tool_use", first.error_message
    if fault.text is not None:
        assert first.text == fault.text
    assert requests == fault.attempts + 1  # and the answer after the tool's result
    assert [m.role for m in run.messages] == ["user", "assistant", "tool_result", "assistant"]
    assert (first.usage.input, first.usage.output) == (50, 20)
    last = run.messages[-1]
    assert isinstance(last, AssistantMessage) and (last.stop_reason, last.text) == ("stop", FINAL)
    (received,) = first.tool_calls
    assert received.name == call.name
    assert_logged(run, fault)
    assert_no_key(run)
    if fault.name == "truncated_tool_call_json":
        assert_not_executed_with_invalid_json(run, call)
        return
    assert run.executed == [json.loads(call.arguments)]
    assert received.arguments == json.loads(call.arguments)
    if fault.same_as_clean:
        with FaultServer() as server:
            server.enqueue(clean(wire, answer), wire.sse(wire.answer([FINAL]).events))
            reference = await run_agent(server, wire, bounds, fault.deadline, caplog)
        assert essence(run.messages) == essence(reference.messages)


@pytest.mark.parametrize("api", APIS)
async def test_the_loop_config_bounds_reach_the_adapter(
    api: str, caplog: pytest.LogCaptureFixture
) -> None:
    """`idle_timeout` set only in `AgentLoopConfig` ends a stalled answer (POST-MERGE: the loop
    passes its bounds to the stream function on the loop-bounds branch)."""
    wire = WIRES[api]
    answer = wire.answer(TEXTS, note_call())
    bounds = {**BOUNDS, "idle_timeout": SHORT}
    with FaultServer() as server:
        server.enqueue(wire.sse(answer.events[: answer.first], stall=True))
        run = await run_agent(server, wire, bounds, 4.0, caplog, bounds_in_stream_fn=False)
    check_run(run, server, wire)
    first = run.messages[1]
    assert isinstance(first, AssistantMessage) and first.stop_reason == "error"
    assert "idle_timeout" in (first.error_message or ""), first.error_message
    assert_no_key(run)
