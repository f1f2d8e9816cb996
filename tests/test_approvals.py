"""Approvals (deferred tool calls, issue 11) through the loop: what a run that stops for approval
emits and records, and what a run that carries decisions out does. The Agent's side
(`approve`, `deny`, sessions) is in test_approvals_agent.py; kills in test_approvals_crash.py."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentcore import (
    AbortController,
    AgentContext,
    AgentLoopConfig,
    AgentTool,
    AgentToolResult,
    ApprovalDecision,
    ApprovalRequest,
    ApprovedCallStarted,
    AssistantMessage,
    BeforeToolCallContext,
    BeforeToolCallResult,
    ConfigError,
    MessageFormatError,
    ToolDefinitionError,
    ToolExecutionMode,
    ToolResultMessage,
    agent_loop,
    agent_loop_continue,
    tool,
)
from agentcore.approvals import pending_approvals
from agentcore.llm import Context
from agentcore.messages import ToolCall, from_json, to_json
from agentcore.testing import FauxProvider, check_well_formed, faux_message, faux_text
from support import BACKENDS, Run, collect, delete_and_look, make_tool, run, texts, user

pytestmark = pytest.mark.anyio

WAITING = "Tool call was not executed: it is waiting for approval."


def calls(*pairs: tuple[str, str, dict[str, Any]]) -> AssistantMessage:
    """An answer calling tools: (id, name, arguments) each."""
    return faux_message(*(ToolCall(id=i, name=n, arguments=a) for i, n, a in pairs))


class Tools:
    """A tool needing approval (`delete`) and one that does not (`look`), logging their runs."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, Any]] = []
        self.delete, self.look = delete_and_look(self.ran)
        self.all = [self.delete, self.look]


async def stop(tools: Tools, faux: FauxProvider, config: AgentLoopConfig | None = None) -> Run:
    """A run whose model calls delete(a), look(b), delete(c): it stops for approval."""
    faux.set_responses(
        [
            calls(
                ("a", "delete", {"path": "x"}),
                ("b", "look", {"path": "y"}),
                ("c", "delete", {"path": "z"}),
            )
        ]
    )
    return await run(
        "go", AgentContext(tools=tools.all), config or AgentLoopConfig(model=faux.model)
    )


def roles(messages: list[Any]) -> list[str]:
    return [m.role for m in messages]


async def test_a_call_needing_approval_is_not_run_and_the_run_stops_cleanly() -> None:
    tools, faux = Tools(), FauxProvider()
    done = await stop(tools, faux)
    assert tools.ran == [("look", "y")]  # the other call of the batch ran
    assert faux.call_count == 1  # and the model was not asked again
    assert roles(done.result) == [
        "user",
        "assistant",
        "tool_result",
        "approval_request",
        "approval_request",
    ]
    requests = done.result[3:]
    assert [(r.tool_call_id, r.tool_name, r.arguments, r.reason) for r in requests] == [
        ("a", "delete", {"path": "x"}, None),
        ("c", "delete", {"path": "z"}, None),
    ]
    # events: a waiting call has its tool_execution_start/end (the end says it waits), no
    # tool_result; the requests come after the batch's results, before turn_end
    ends = {e.tool_call_id: e for e in done.of("tool_execution_end")}
    assert set(ends) == {"a", "b", "c"}
    assert texts(ends["a"].result) == WAITING and ends["a"].is_error is False
    assert done.compact()[-8:] == [
        "message_start",
        "message_end",  # look's result
        "message_start",
        "message_end",  # request a
        "message_start",
        "message_end",  # request c
        "turn_end",
        "agent_end",
    ]
    (turn_end,) = done.of("turn_end")
    assert [r.tool_call_id for r in turn_end.tool_results] == ["b"]
    assert done.end.pending_approvals == tuple(requests)
    assert pending_approvals(done.result) == requests


async def test_the_stream_reports_the_pending_approvals() -> None:
    tools, faux = Tools(), FauxProvider([calls(("a", "delete", {"path": "x"}))])
    stream = agent_loop([user()], AgentContext(tools=tools.all), AgentLoopConfig(model=faux.model))
    assert stream.pending_approvals == ()
    async with stream:
        messages = await stream.result()
    assert stream.pending_approvals == (messages[-1],)
    assert isinstance(messages[-1], ApprovalRequest)


async def test_a_per_call_function_decides_on_the_validated_arguments() -> None:
    seen: list[Any] = []

    def risky(args: Any) -> bool:
        seen.append(args)
        return bool(args.count > 10)

    @tool(requires_approval=risky)
    def send(count: int) -> str:
        """Send mails."""
        return f"sent {count}"

    faux = FauxProvider(
        [calls(("a", "send", {"count": "3"}), ("b", "send", {"count": 50})), faux_text("ok")]
    )
    done = await run("go", AgentContext(tools=[send]), faux=faux)
    assert [s.count for s in seen] == [3, 50]  # validated (the string "3" became 3)
    assert [r.tool_call_id for r in pending_approvals(done.result)] == ["b"]
    assert [texts(m) for m in done.result if isinstance(m, ToolResultMessage)] == ["sent 3"]


@pytest.mark.parametrize(
    ("flag", "error"),
    [
        (lambda args: 1 / 0, "division by zero"),
        (lambda args: "yes", "requires_approval returned str; expected True or False"),
    ],
)
async def test_a_failing_approval_function_gives_an_error_result(flag: Any, error: str) -> None:
    ran: list[Any] = []
    send = make_tool("send", lambda *a: ran.append(a), requires_approval=flag)
    faux = FauxProvider([calls(("a", "send", {})), faux_text("ok")])
    done = await run("go", AgentContext(tools=[send]), faux=faux)
    (result,) = [m for m in done.result if isinstance(m, ToolResultMessage)]
    assert result.is_error and error in texts(result)
    assert not ran and not done.end.pending_approvals


async def test_invalid_arguments_fail_before_approval_is_asked() -> None:
    tools = Tools()
    faux = FauxProvider([calls(("a", "delete", {"path": 5, "extra": 1})), faux_text("ok")])
    done = await run("go", AgentContext(tools=tools.all), faux=faux)
    assert not done.end.pending_approvals
    (result,) = [m for m in done.result if isinstance(m, ToolResultMessage)]
    assert result.is_error and "path" in texts(result)


async def test_a_hook_can_require_approval_with_a_reason_and_a_block_wins() -> None:
    tools = Tools()

    def hook(ctx: BeforeToolCallContext) -> BeforeToolCallResult | None:
        path = ctx.tool_call.arguments["path"]
        if path == "secret":
            return BeforeToolCallResult(block=True, reason="never", require_approval=True)
        if ctx.tool_call.name == "look":
            return BeforeToolCallResult(require_approval=True, reason="looks at " + path)
        return None

    faux = FauxProvider(
        [
            calls(
                ("a", "look", {"path": "y"}),
                ("b", "delete", {"path": "secret"}),
                ("c", "look", {"path": "secret"}),
            )
        ]
    )
    config = AgentLoopConfig(model=faux.model, before_tool_call=hook)
    done = await run("go", AgentContext(tools=tools.all), config)
    requests = done.end.pending_approvals
    assert [(r.tool_call_id, r.reason) for r in requests] == [("a", "looks at y")]
    results = {m.tool_call_id: m for m in done.result if isinstance(m, ToolResultMessage)}
    assert texts(results["b"]) == "never" and texts(results["c"]) == "never"
    assert not tools.ran


async def test_the_request_carries_the_arguments_after_prepare_arguments() -> None:
    def execute(*args: Any) -> AgentToolResult:
        return AgentToolResult.text("ran")

    schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    old = make_tool(
        "old",
        execute,
        schema,
        requires_approval=True,
        prepare_arguments=lambda raw: {"path": raw["file"]} if "file" in raw else None,
    )
    faux = FauxProvider([calls(("a", "old", {"file": "f"}))])
    done = await run("go", AgentContext(tools=[old]), faux=faux)
    assert done.end.pending_approvals[0].arguments == {"path": "f"}


# --- carrying decisions out -------------------------------------------------------------------


def decide(messages: list[Any], **decisions: Any) -> list[Any]:
    """`messages` with a decision per request: True (approve), a dict (approve with these
    arguments), or a string / None (deny with that reason)."""
    out = list(messages)
    for request in pending_approvals(messages):
        choice = decisions[request.tool_call_id]
        if choice is True:
            out.append(ApprovalDecision.approve(request))
        elif isinstance(choice, dict):
            out.append(ApprovalDecision.approve(request, arguments=choice))
        else:
            out.append(ApprovalDecision.deny(request, choice))
    return out


async def resume(
    tools: Tools,
    faux: FauxProvider,
    messages: list[Any],
    config: AgentLoopConfig | None = None,
    signal: Any = None,
) -> Run:
    context = AgentContext(messages=messages, tools=tools.all)
    return await collect(
        agent_loop_continue(context, config or AgentLoopConfig(model=faux.model), signal=signal)
    )


@pytest.mark.parametrize("anyio_backend", BACKENDS)
async def test_continue_runs_approved_calls_denies_the_others_then_asks_the_model() -> None:
    tools, faux = Tools(), FauxProvider()
    stopped = await stop(tools, faux)
    faux.set_responses([faux_text("all done")])
    done = await resume(tools, faux, decide(stopped.result, a=True, c="too risky"))
    assert tools.ran == [("look", "y"), ("delete", "x")]
    assert roles(done.result) == [
        "approved_call_started",
        "tool_result",
        "tool_result",
        "assistant",
    ]
    a, c = done.result[1], done.result[2]
    assert (a.tool_call_id, texts(a), a.is_error) == ("a", "deleted x", False)
    assert (c.tool_call_id, c.is_error) == ("c", True)
    assert texts(c) == "Tool call was not executed: it was denied: too risky"
    # the decided calls form the first turn; its turn_end carries the stopped batch's message
    first_end = done.of("turn_end")[0]
    assert first_end.message is stopped.result[1]
    assert [r.tool_call_id for r in first_end.tool_results] == ["a", "c"]
    assert [e.tool_call_id for e in done.of("tool_execution_start")] == ["a", "c"]
    assert not done.end.pending_approvals
    # the model sees the calls and their results, in order, without the approval messages
    sent: Context = faux.calls[-1].context
    assert roles(sent.messages) == [
        "user",
        "assistant",
        "tool_result",
        "tool_result",
        "tool_result",
    ]
    assert [m.tool_call_id for m in sent.messages[2:]] == ["b", "a", "c"]


async def test_a_denial_without_reason_says_so() -> None:
    tools, faux = Tools(), FauxProvider()
    stopped = await stop(tools, faux)
    faux.set_responses([faux_text("ok")])
    done = await resume(tools, faux, decide(stopped.result, a=None, c=None))
    assert [texts(m) for m in done.result if isinstance(m, ToolResultMessage)] == [
        "Tool call was not executed: it was denied."
    ] * 2
    assert tools.ran == [("look", "y")]


async def test_edited_arguments_are_validated_again_and_the_model_is_told() -> None:
    tools, faux = Tools(), FauxProvider()
    stopped = await stop(tools, faux)
    faux.set_responses([faux_text("ok")])
    done = await resume(tools, faux, decide(stopped.result, a={"path": "x2"}, c={"path": 7}))
    assert tools.ran == [("look", "y"), ("delete", "x2")]
    results = {m.tool_call_id: m for m in done.result if isinstance(m, ToolResultMessage)}
    assert texts(results["a"]) == 'Approved with edited arguments: {"path": "x2"}deleted x2'
    assert results["c"].is_error and "path" in texts(results["c"])
    starts = {e.tool_call_id: e.args for e in done.of("tool_execution_start")}
    assert starts == {"a": {"path": "x2"}, "c": {"path": 7}}
    ends = {e.tool_call_id: texts(e.result) for e in done.of("tool_execution_end")}
    assert ends["a"] == texts(results["a"])  # the event and the message say the same


async def test_hooks_run_again_for_an_approved_call_a_block_wins_approval_is_not_asked() -> None:
    tools, faux = Tools(), FauxProvider()
    stopped = await stop(tools, faux)
    asked: list[str] = []

    def hook(ctx: BeforeToolCallContext) -> BeforeToolCallResult:
        asked.append(ctx.tool_call.id)
        if ctx.tool_call.id == "c":
            return BeforeToolCallResult(block=True, reason="policy says no")
        return BeforeToolCallResult(require_approval=True)

    faux.set_responses([faux_text("ok")])
    config = AgentLoopConfig(model=faux.model, before_tool_call=hook)
    done = await resume(tools, faux, decide(stopped.result, a=True, c=True), config)
    assert asked == ["a", "c"]
    assert tools.ran == [("look", "y"), ("delete", "x")]
    results = {m.tool_call_id: texts(m) for m in done.result if isinstance(m, ToolResultMessage)}
    assert results == {"a": "deleted x", "c": "policy says no"}
    assert not done.end.pending_approvals
    # a blocked call never started: no marker for it
    assert [m.tool_call_id for m in done.result if isinstance(m, ApprovedCallStarted)] == ["a"]


async def test_sequential_mode_marks_each_call_right_before_it_runs() -> None:
    order: list[str] = []

    def delete_fn(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> AgentToolResult:
        order.append(f"run {tool_call_id}")
        return AgentToolResult.text("deleted")

    delete = make_tool(
        "delete",
        delete_fn,
        requires_approval=True,
        execution_mode=ToolExecutionMode.SEQUENTIAL,
    )
    faux = FauxProvider([calls(("a", "delete", {}), ("b", "delete", {})), faux_text("ok")])
    stopped = await run("go", AgentContext(tools=[delete]), faux=faux)

    def listener(event: Any) -> None:
        if event.type == "message_end":
            order.append(f"message_end {event.message.role}")
        elif event.type.startswith("tool_execution"):
            order.append(f"{event.type} {event.tool_call_id}")

    context = AgentContext(messages=decide(stopped.result, a=True, b=True), tools=[delete])
    stream = agent_loop_continue(context, AgentLoopConfig(model=faux.model))
    async with stream:
        async for event in stream:
            listener(event)
    assert order[:10] == [
        "tool_execution_start a",
        "message_end approved_call_started",
        "run a",
        "tool_execution_end a",
        "message_end tool_result",
        "tool_execution_start b",
        "message_end approved_call_started",
        "run b",
        "tool_execution_end b",
        "message_end tool_result",
    ]


async def test_an_approved_call_with_a_start_marker_and_no_result_is_not_run_again() -> None:
    tools, faux = Tools(), FauxProvider()
    stopped = await stop(tools, faux)
    messages = decide(stopped.result, a=True, c="no")
    messages.append(ApprovedCallStarted(tool_call_id="a"))  # then the process died
    faux.set_responses([faux_text("ok")])
    done = await resume(tools, faux, messages)
    assert tools.ran == [("look", "y")]
    results = {m.tool_call_id: m for m in done.result if isinstance(m, ToolResultMessage)}
    assert results["a"].is_error and "may or may not have completed" in texts(results["a"])
    assert roles(done.result) == ["tool_result", "tool_result", "assistant"]


async def test_a_terminating_batch_of_decided_calls_ends_the_run() -> None:
    def finish(*args: Any) -> AgentToolResult:
        return AgentToolResult.text("finished", terminate=True)

    end = make_tool("end", finish, requires_approval=True)
    faux = FauxProvider([calls(("a", "end", {}))])
    stopped = await run("go", AgentContext(tools=[end]), faux=faux)
    context = AgentContext(messages=decide(stopped.result, a=True), tools=[end])
    done = await collect(agent_loop_continue(context, AgentLoopConfig(model=faux.model)))
    assert faux.call_count == 1
    assert roles(done.result) == ["approved_call_started", "tool_result"]


async def test_should_stop_after_turn_is_asked_after_the_decided_calls() -> None:
    tools, faux = Tools(), FauxProvider()
    stopped = await stop(tools, faux)
    seen: list[Any] = []

    def should_stop(ctx: Any) -> bool:
        seen.append(ctx.message)
        return True

    config = AgentLoopConfig(model=faux.model, should_stop_after_turn=should_stop)
    done = await resume(tools, faux, decide(stopped.result, a=True, c="no"), config)
    assert seen == [stopped.result[1]]
    assert faux.call_count == 1 and roles(done.result)[-1] == "tool_result"


async def test_new_prompts_follow_the_results_of_the_decided_calls() -> None:
    tools, faux = Tools(), FauxProvider()
    stopped = await stop(tools, faux)
    faux.set_responses([faux_text("ok")])
    context = AgentContext(messages=decide(stopped.result, a=True, c="no"), tools=tools.all)
    done = await collect(agent_loop([user("next")], context, AgentLoopConfig(model=faux.model)))
    assert roles(done.result) == [
        "approved_call_started",
        "tool_result",
        "tool_result",
        "user",
        "assistant",
    ]
    assert done.compact()[:2] == ["agent_start", "turn_start"]
    assert done.types.count("turn_start") == 2
    assert roles(faux.calls[-1].context.messages)[-2:] == ["tool_result", "user"]


async def test_a_run_cannot_start_while_calls_wait_for_a_decision() -> None:
    tools, faux = Tools(), FauxProvider()
    stopped = await stop(tools, faux)
    context = AgentContext(messages=stopped.result, tools=tools.all)
    config = AgentLoopConfig(model=faux.model)
    with pytest.raises(
        ConfigError, match=r"2 tool calls wait for a decision: delete \(a\), delete \(c\)"
    ):
        agent_loop_continue(context, config)
    half = AgentContext(messages=decide(stopped.result, a=True, c=True)[:-1], tools=tools.all)
    with pytest.raises(ConfigError, match=r"a tool call waits for a decision: delete \(c\)"):
        agent_loop([user()], half, config)


async def test_abort_while_approved_calls_run_keeps_one_result_per_call() -> None:
    started = anyio.Event()

    async def slow(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        started.set()
        await anyio.sleep(60)

    async def quick(*args: Any) -> AgentToolResult:
        await started.wait()
        return AgentToolResult.text("quick")

    tools = [
        make_tool("slow", slow, requires_approval=True),
        make_tool("quick", quick, requires_approval=True),
    ]
    faux = FauxProvider([calls(("a", "slow", {}), ("b", "quick", {}), ("c", "slow", {}))])
    stopped = await run("go", AgentContext(tools=tools), faux=faux)
    controller = AbortController()
    context = AgentContext(messages=decide(stopped.result, a=True, b=True, c="no"), tools=tools)
    stream = agent_loop_continue(context, AgentLoopConfig(model=faux.model), controller.signal)
    events: list[Any] = []
    async with stream:
        async for event in stream:
            events.append(event)
            if event.type == "tool_execution_end" and event.tool_call_id == "b":
                controller.abort()
    done = await collect_events(events)
    results = [m for m in done.result if isinstance(m, ToolResultMessage)]
    assert sorted(m.tool_call_id for m in results) == ["a", "b", "c"]
    texts_by_id = {m.tool_call_id: texts(m) for m in results}
    assert texts_by_id["a"] == "Tool execution was aborted."
    assert texts_by_id["b"] == "quick"
    assert faux.call_count == 1  # no new request after the abort


async def collect_events(events: list[Any]) -> Run:
    check_well_formed(events)
    return Run(events, events[-1].messages)


# --- the messages -------------------------------------------------------------------------


def test_the_messages_round_trip_through_json() -> None:
    request = ApprovalRequest(tool_call_id="a", tool_name="t", arguments={"x": [1]}, reason="r")
    messages = [
        request,
        ApprovalDecision.approve(request, arguments={"x": [2]}),
        ApprovalDecision.deny(request, "no"),
        ApprovedCallStarted(tool_call_id="a"),
    ]
    for message in messages:
        assert from_json(to_json(message)) == message


@pytest.mark.parametrize(
    ("doc", "error"),
    [
        ({"role": "approval_request", "tool_call_id": 1, "tool_name": "t"}, "tool_call_id"),
        (
            {"role": "approval_request", "tool_call_id": "a", "tool_name": "t", "arguments": []},
            "arguments",
        ),
        ({"role": "approval_decision", "tool_call_id": "a", "approved": "yes"}, "approved"),
        ({"role": "approved_call_started"}, "tool_call_id"),
        (
            {"role": "approval_decision", "tool_call_id": "a", "approved": True, "x": 1},
            "unknown field",
        ),
    ],
)
def test_malformed_approval_messages_are_refused(doc: dict[str, Any], error: str) -> None:
    with pytest.raises(MessageFormatError, match=error):
        from_json(doc)


def test_requires_approval_must_be_a_bool_or_a_function() -> None:
    with pytest.raises(
        ToolDefinitionError, match="requires_approval must be True, False or a function"
    ):
        AgentTool(
            name="t",
            description="",
            parameters={"type": "object"},
            execute=lambda *a: None,
            requires_approval="yes",  # type: ignore[arg-type]
        )


# --- invariants over random batches, decisions and aborts -----------------------------------


@st.composite
def approval_scripts(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(1, 5))
    return {
        "needs": [draw(st.sampled_from(["tool", "hook", "none", "blocked"])) for _ in range(n)],
        "decisions": [
            draw(st.sampled_from(["approve", "deny", "edit", "bad_edit"])) for _ in range(n)
        ],
        "outcomes": [draw(st.sampled_from(["ok", "raise", "slow"])) for _ in range(n)],
        "sequential": draw(st.booleans()),
        "abort_after": draw(st.none() | st.integers(1, 20)),
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=approval_scripts())
def test_invariants_hold_over_random_batches_decisions_and_aborts(script: dict[str, Any]) -> None:
    anyio.run(_check_script, script)


async def _check_script(script: dict[str, Any]) -> None:
    ran: list[str] = []
    n = len(script["needs"])
    outcomes = dict(zip([f"c{i}" for i in range(n)], script["outcomes"], strict=True))

    async def act(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> Any:
        ran.append(tool_call_id)
        if outcomes[tool_call_id] == "raise":
            raise RuntimeError("tool failed")
        if outcomes[tool_call_id] == "slow":
            await anyio.sleep(0.01)
        return AgentToolResult.text(f"ran {args['v']}")

    schema = {"type": "object", "properties": {"v": {"type": "integer"}}, "required": ["v"]}
    mode = ToolExecutionMode.SEQUENTIAL if script["sequential"] else None
    gated = make_tool("gated", act, schema, requires_approval=True, execution_mode=mode)
    free = make_tool("free", act, schema, execution_mode=mode)
    kinds = dict(zip([f"c{i}" for i in range(n)], script["needs"], strict=True))

    def hook(ctx: BeforeToolCallContext) -> BeforeToolCallResult | None:
        kind = kinds[ctx.tool_call.id]
        if kind == "hook":
            return BeforeToolCallResult(require_approval=True, reason="hook")
        if kind == "blocked":
            return BeforeToolCallResult(block=True, require_approval=True)
        return None

    answer = calls(
        *(
            (f"c{i}", "gated" if kind == "tool" else "free", {"v": i})
            for i, kind in enumerate(script["needs"])
        )
    )
    faux = FauxProvider([answer, faux_text("ok"), faux_text("ok")])
    config = AgentLoopConfig(model=faux.model, before_tool_call=hook)
    tools = [gated, free]
    first = await run("go", AgentContext(tools=tools), config)
    waiting = {r.tool_call_id for r in first.end.pending_approvals}
    assert waiting == {c for c, k in kinds.items() if k in ("tool", "hook")}
    assert set(ran) == {c for c, k in kinds.items() if k == "none"}
    messages = list(first.result)
    if not waiting:  # nothing to decide: the run went on to the model's answer
        answered = [m.tool_call_id for m in messages if isinstance(m, ToolResultMessage)]
        assert sorted(answered) == sorted(kinds)
        return
    for request in pending_approvals(messages):
        i = int(request.tool_call_id[1:])
        choice = script["decisions"][i]
        if choice == "deny":
            messages.append(ApprovalDecision.deny(request, "no"))
        else:
            edit = {"edit": {"v": 100 + i}, "bad_edit": {"v": "x"}}.get(choice)
            messages.append(ApprovalDecision.approve(request, arguments=edit))
    controller = AbortController()
    events: list[Any] = []
    stream = agent_loop_continue(
        AgentContext(messages=messages, tools=tools), config, controller.signal
    )
    async with stream:
        async for event in stream:
            events.append(event)
            if len(events) == script["abort_after"]:
                controller.abort()
    check_well_formed(events)
    transcript = messages + events[-1].messages
    results = [m.tool_call_id for m in transcript if isinstance(m, ToolResultMessage)]
    assert sorted(results) == sorted(kinds), "every call has exactly one result"
    assert len(ran) == len(set(ran)), "no call ran twice"
    approved = {m.tool_call_id for m in messages if isinstance(m, ApprovalDecision) and m.approved}
    assert set(ran) - {c for c, k in kinds.items() if k == "none"} <= approved
    markers = [m.tool_call_id for m in transcript if isinstance(m, ApprovedCallStarted)]
    assert len(markers) == len(set(markers)) and set(markers) <= approved
    assert set(ran) & approved <= set(markers), "an approved call ran without its marker first"
    if controller.signal.aborted:
        assert faux.call_count <= 2


async def test_an_abort_in_the_stopping_batch_keeps_the_requests_already_made() -> None:
    controller = AbortController()

    def abort(*args: Any) -> AgentToolResult:
        controller.abort()
        return AgentToolResult.text("aborted the run")

    gated = make_tool("gated", lambda *a: AgentToolResult.text("ran"), requires_approval=True)
    stopper = make_tool("stopper", abort, execution_mode=ToolExecutionMode.SEQUENTIAL)
    faux = FauxProvider(
        [calls(("a", "gated", {}), ("b", "stopper", {}), ("c", "gated", {})), faux_text("no")]
    )
    done = await run(
        "go", AgentContext(tools=[gated, stopper]), faux=faux, signal=controller.signal
    )
    assert [r.tool_call_id for r in done.end.pending_approvals] == ["a"]
    results = {m.tool_call_id: texts(m) for m in done.result if isinstance(m, ToolResultMessage)}
    assert results == {
        "b": "Tool execution was aborted.",
        "c": "Tool call was not executed: the run was aborted.",
    }
    assert faux.call_count == 1
