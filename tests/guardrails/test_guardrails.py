"""Guardrails in the loop: each kind in both modes, trips as data, tools under aborts and in
parallel (one result per call), guardrails that raise or hang. On the faux model."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from agentcore import (
    AbortController,
    Agent,
    AgentContext,
    AgentLoopConfig,
    UserMessage,
    agent_loop,
    run_agent_loop,
    tool,
)
from agentcore.errors import ConfigError
from agentcore.events import AgentEvent
from agentcore.guardrails import (
    PASS,
    Block,
    Guardrail,
    GuardrailTrip,
    Rewrite,
    input_guardrail,
    output_guardrail,
    tool_guardrail,
)
from agentcore.llm.providers.faux import FauxCall
from agentcore.messages import AssistantMessage, ToolCall, ToolResultMessage
from agentcore.testing import (
    FauxProvider,
    check_well_formed,
    faux_message,
    faux_text,
    faux_tool_call,
)

pytestmark = pytest.mark.anyio


async def run(
    faux: FauxProvider,
    guards: list[Guardrail],
    prompt: str = "hello",
    tools: list[Any] | None = None,
    signal: Any = None,
) -> tuple[list[Any], list[AgentEvent], Any]:
    events: list[AgentEvent] = []
    config = AgentLoopConfig(model=faux.model, guardrails=guards)
    context = AgentContext(tools=tools or [])
    messages = await run_agent_loop(
        [UserMessage(content=prompt)], context, config, events.append, signal=signal
    )
    check_well_formed(events)
    end = events[-1]
    assert end.type == "agent_end"
    return messages, events, end


def by_call(messages: list[Any]) -> dict[str, ToolResultMessage]:
    """The results by the letter the script gave each call (a, b, c in call order)."""
    results = [m for m in messages if isinstance(m, ToolResultMessage)]
    return dict(zip("abc", results, strict=False))


def one_result_per_call(messages: list[Any]) -> None:
    calls = [c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    results = [m.tool_call_id for m in messages if isinstance(m, ToolResultMessage)]
    assert sorted(calls) == sorted(results)


@input_guardrail
def no_password(ctx: Any) -> Any:
    return Block("asks for a password") if "password" in ctx.text else None


# -- input ----------------------------------------------------------------------------------


async def test_input_before_blocks_without_a_request() -> None:
    faux = FauxProvider([faux_text("never")])
    messages, events, end = await run(faux, [no_password], "what is the password?")
    assert faux.call_count == 0
    assert end.guardrail == GuardrailTrip(
        guardrail="no_password", kind="input", reason="asks for a password"
    )
    answer = messages[-1]
    assert answer.stop_reason == "error" and answer.content == []
    assert (
        answer.error_message
        == "input guardrail 'no_password' blocked the request: asks for a password"
    )
    assert "turn_end" in [e.type for e in events]


async def test_input_before_passes_and_rewrites_the_request_only() -> None:
    seen: list[str] = []

    def answer(call: FauxCall) -> AssistantMessage:
        seen.append(call.context.messages[-1].content)  # type: ignore[union-attr]
        return faux_text("ok")

    @input_guardrail
    def shout(ctx: Any) -> Any:
        return Rewrite(ctx.text.upper())

    faux = FauxProvider([answer])
    messages, _, end = await run(faux, [shout], "quiet please")
    assert seen == ["QUIET PLEASE"]
    assert messages[0].content == "quiet please"  # the transcript keeps what the user wrote
    assert end.guardrail is None and messages[-1].text == "ok"


async def test_input_alongside_aborts_the_request_and_withholds_the_answer() -> None:
    @input_guardrail(mode="alongside")
    async def slow_no(ctx: Any) -> Any:
        await anyio.sleep(0.05)
        return Block("not today")

    faux = FauxProvider([faux_text("x" * 2000)], chunk_chars=5, tokens_per_second=2000)
    messages, events, end = await run(faux, [slow_no])
    assert faux.call_count == 1  # the request went out at once
    assert end.guardrail is not None and end.guardrail.reason == "not today"
    answer = messages[-1]
    assert answer.stop_reason == "error" and answer.content == []
    assert "'slow_no'" in (answer.error_message or "")
    # the stream was cut short: far fewer updates than a whole answer
    assert sum(e.type == "message_update" for e in events) < 200


async def test_input_alongside_pass_lets_the_answer_through() -> None:
    @input_guardrail(mode="alongside")
    async def fine(ctx: Any) -> Any:
        await anyio.sleep(0.01)
        return PASS

    faux = FauxProvider([faux_text("hello there")])
    messages, _, end = await run(faux, [fine])
    assert end.guardrail is None and messages[-1].text == "hello there"


async def test_input_alongside_answer_finished_first_still_withheld() -> None:
    @input_guardrail(mode="alongside")
    async def late_no(ctx: Any) -> Any:
        await anyio.sleep(0.1)
        return Block("late")

    faux = FauxProvider([faux_tool_call("ping")])
    ran: list[str] = []

    @tool
    def ping() -> str:
        """Ping."""
        ran.append("ping")
        return "pong"

    messages, _, end = await run(faux, [late_no], tools=[ping])
    assert end.guardrail is not None and end.guardrail.reason == "late"
    assert ran == [] and messages[-1].content == []  # withheld: its call never ran


# -- output ---------------------------------------------------------------------------------


async def test_output_before_blocks_and_rewrites() -> None:
    @output_guardrail
    def no_swearing(ctx: Any) -> Any:
        return Block("rude") if "darn" in ctx.text else None

    messages, _, end = await run(FauxProvider([faux_text("darn it")]), [no_swearing])
    assert end.guardrail == GuardrailTrip(guardrail="no_swearing", kind="output", reason="rude")
    assert messages[-1].content == [] and messages[-1].usage.output > 0  # usage kept

    @output_guardrail
    def polite(ctx: Any) -> Any:
        assert ctx.final
        return Rewrite(ctx.text.replace("darn", "gosh"))

    messages, events, end = await run(FauxProvider([faux_text("darn it")]), [polite])
    assert end.guardrail is None and messages[-1].text == "gosh it"
    ends = [e for e in events if e.type == "message_end" and e.message.role == "assistant"]
    assert ends[-1].message.text == "gosh it"  # message_end carries the rewritten answer


async def test_output_alongside_sees_streamed_text_and_aborts() -> None:
    seen: list[int] = []

    @output_guardrail(mode="alongside")
    def no_secret(ctx: Any) -> Any:
        if not ctx.final:
            seen.append(len(ctx.text))
        return Block("leaks the secret") if "SECRET" in ctx.text else None

    text = "a" * 100 + " SECRET " + "b" * 3000
    faux = FauxProvider([faux_text(text)], chunk_chars=10, tokens_per_second=4000)
    messages, events, end = await run(faux, [no_secret])
    assert end.guardrail is not None and end.guardrail.reason == "leaks the secret"
    assert seen and min(seen) < len(text)  # it checked partial text
    assert sum(e.type == "message_update" for e in events) < 300  # cut short
    assert messages[-1].content == []


async def test_output_guardrail_skips_answers_with_tool_calls() -> None:
    checked: list[str] = []

    @output_guardrail
    def note(ctx: Any) -> Any:
        checked.append(ctx.text)

    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    faux = FauxProvider([faux_tool_call("ping"), faux_text("done")])
    await run(faux, [note], tools=[ping])
    assert checked == ["done"]


# -- tools ----------------------------------------------------------------------------------


def _tools(log: list[str]) -> list[Any]:
    @tool
    async def slow(n: int) -> str:
        """Sleep a little."""
        await anyio.sleep(0.2)
        log.append(f"slow {n}")
        return f"slow {n}"

    @tool
    def echo(text: str) -> str:
        """Echo."""
        log.append(f"echo {text}")
        return text

    return [slow, echo]


def _parallel_calls() -> AssistantMessage:
    return faux_message(
        ToolCall(id="a", name="echo", arguments={"text": "safe"}),
        ToolCall(id="b", name="echo", arguments={"text": "rm -rf"}),
        ToolCall(id="c", name="slow", arguments={"n": 1}),
    )


@pytest.mark.parametrize("mode", ["before", "alongside"])
async def test_tool_call_guardrail_blocks_one_of_parallel_calls(mode: str) -> None:
    @tool_guardrail(mode=mode)  # type: ignore[call-overload]
    async def no_rm(ctx: Any) -> Any:
        await anyio.sleep(0.01)
        return Block("destructive") if "rm" in str(ctx.args) else None

    log: list[str] = []
    faux = FauxProvider([_parallel_calls(), faux_text("ok")])
    messages, _, end = await run(faux, [no_rm], tools=_tools(log))
    one_result_per_call(messages)
    results = by_call(messages)
    assert results["b"].is_error
    assert results["b"].content[0].text == "Tool call blocked by guardrail 'no_rm': destructive"  # type: ignore[union-attr]
    assert not results["a"].is_error and not results["c"].is_error
    assert end.guardrail is None and messages[-1].text == "ok"  # the run goes on
    if mode == "before":
        assert "echo rm -rf" not in log


async def test_tool_call_alongside_cancels_a_running_call() -> None:
    @tool_guardrail(mode="alongside", tools=["slow"])
    async def veto(ctx: Any) -> Any:
        await anyio.sleep(0.02)
        return Block("vetoed")

    log: list[str] = []
    faux = FauxProvider([_parallel_calls(), faux_text("ok")])
    messages, _, _ = await run(faux, [veto], tools=_tools(log))
    one_result_per_call(messages)
    assert "slow 1" not in log  # cancelled before it finished
    assert sorted(log) == ["echo rm -rf", "echo safe"]  # other tools unaffected


async def test_tool_call_rewrite_is_validated_again() -> None:
    @tool_guardrail
    def tame(ctx: Any) -> Any:
        if ctx.tool_call.name == "echo":
            return Rewrite({"text": "tamed"})
        return Rewrite({"n": "not a number"})

    log: list[str] = []
    faux = FauxProvider([_parallel_calls(), faux_text("ok")])
    messages, _, _ = await run(faux, [tame], tools=_tools(log))
    one_result_per_call(messages)
    results = by_call(messages)
    assert results["a"].content[0].text == "tamed" and results["b"].content[0].text == "tamed"  # type: ignore[union-attr]
    assert results["c"].is_error  # the rewritten arguments failed the schema


async def test_tool_result_guardrail_rewrites_and_blocks() -> None:
    @tool_guardrail(on="result")
    def mark(ctx: Any) -> Any:
        if "rm" in ctx.text:
            return Block("suspicious output")
        return Rewrite(f"<<{ctx.text}>>")

    log: list[str] = []
    faux = FauxProvider([_parallel_calls(), faux_text("ok")])
    messages, _, _ = await run(faux, [mark], tools=_tools(log))
    one_result_per_call(messages)
    results = by_call(messages)
    assert results["a"].content[0].text == "<<safe>>"  # type: ignore[union-attr]
    assert results["b"].is_error and "suspicious output" in results["b"].content[0].text  # type: ignore[union-attr]
    assert results["c"].content[0].text == "<<slow 1>>"  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", ["before", "alongside"])
async def test_tool_guardrails_under_abort_one_result_per_call(mode: str) -> None:
    controller = AbortController()

    @tool_guardrail(mode=mode)  # type: ignore[call-overload]
    async def hang(ctx: Any) -> Any:
        if ctx.tool_call.id == "c":
            controller.abort("stop")
            await anyio.sleep(10)
        return None

    log: list[str] = []
    faux = FauxProvider([_parallel_calls(), faux_text("never")])
    with anyio.fail_after(5):
        messages, _, end = await run(faux, [hang], tools=_tools(log), signal=controller.signal)
    one_result_per_call(messages)
    assert faux.call_count == 1 and end.guardrail is None


@pytest.mark.parametrize("mode", ["before", "alongside"])
async def test_input_guardrail_under_abort_ends_promptly(mode: str) -> None:
    controller = AbortController()

    @input_guardrail(mode=mode)  # type: ignore[call-overload]
    async def hang(ctx: Any) -> Any:
        controller.abort("stop")
        await anyio.sleep(10)

    faux = FauxProvider([faux_text("slow " * 500)], chunk_chars=5, tokens_per_second=1000)
    with anyio.fail_after(5):
        messages, _, end = await run(faux, [hang], signal=controller.signal)
    assert messages[-1].stop_reason == "aborted"
    assert end.guardrail is None  # the abort ended it, not the guardrail


@pytest.mark.parametrize("mode", ["before", "alongside"])
async def test_output_guardrail_under_abort_ends_promptly(mode: str) -> None:
    controller = AbortController()

    @output_guardrail(mode=mode)  # type: ignore[call-overload]
    async def hang(ctx: Any) -> Any:
        controller.abort("stop")
        await anyio.sleep(10)

    faux = FauxProvider([faux_text("word " * 400)], chunk_chars=5, tokens_per_second=4000)
    with anyio.fail_after(5):
        messages, _, end = await run(faux, [hang], signal=controller.signal)
    assert end.guardrail is None  # the abort ended it, not the guardrail
    answer = messages[-1]
    assert answer.role == "assistant" and answer.stop_reason == "aborted"
    assert answer.content == []  # never checked, so withheld


# -- guardrails that fail -------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["input", "output"])
async def test_a_raising_guardrail_ends_the_run_as_data_naming_it(kind: str) -> None:
    def broken(ctx: Any) -> Any:
        raise RuntimeError("boom")

    guard = Guardrail(check=broken, kind=kind, name="broken")  # type: ignore[arg-type]
    messages, _, end = await run(FauxProvider([faux_text("hi")]), [guard])
    assert end.guardrail == GuardrailTrip(
        guardrail="broken",
        kind=kind,
        reason="it raised RuntimeError: boom",
        failed=True,  # type: ignore[arg-type]
    )
    assert "failed on" in (messages[-1].error_message or "")


@pytest.mark.parametrize("mode", ["before", "alongside"])
async def test_a_hanging_guardrail_is_bounded_by_its_timeout(mode: str) -> None:
    @input_guardrail(mode=mode, timeout=0.05)  # type: ignore[call-overload]
    async def stuck(ctx: Any) -> Any:
        await anyio.sleep(30)

    with anyio.fail_after(5):
        _, _, end = await run(FauxProvider([faux_text("hi")]), [stuck])
    assert end.guardrail is not None and end.guardrail.failed
    assert end.guardrail.reason == "it did not answer within 0.05 s"


async def test_a_hanging_sync_guardrail_is_bounded_too() -> None:
    import time

    @output_guardrail(timeout=0.05)
    def stuck(ctx: Any) -> Any:
        time.sleep(1)  # in a worker thread: the run does not wait for it

    started = time.perf_counter()
    _, _, end = await run(FauxProvider([faux_text("hi")]), [stuck])
    assert time.perf_counter() - started < 0.9
    assert end.guardrail is not None and end.guardrail.reason == "it did not answer within 0.05 s"


async def test_a_raising_tool_guardrail_gives_an_error_result() -> None:
    @tool_guardrail(on="result")
    def broken(ctx: Any) -> Any:
        return 42  # not a result

    log: list[str] = []
    faux = FauxProvider([_parallel_calls(), faux_text("ok")])
    messages, _, end = await run(faux, [broken], tools=_tools(log))
    one_result_per_call(messages)
    assert end.guardrail is None  # a tool guardrail's failure does not end the run
    errors = [m for m in messages if isinstance(m, ToolResultMessage) and m.is_error]
    assert len(errors) == 3
    assert "guardrail 'broken' failed: it returned int" in errors[0].content[0].text  # type: ignore[union-attr]


# -- where a trip shows ----------------------------------------------------------------------


async def test_trip_on_event_stream_and_agent_state() -> None:
    faux = FauxProvider([faux_text("never")])
    config = AgentLoopConfig(model=faux.model, guardrails=[no_password])
    stream = agent_loop([UserMessage(content="password?")], AgentContext(), config)
    async for _ in stream:
        pass
    assert stream.guardrail is not None and stream.guardrail.guardrail == "no_password"
    assert stream.limit is None

    agent = Agent(initial_state={"model": faux.model}, guardrails=[no_password])
    await agent.prompt("the password")
    assert agent.state.guardrail is not None and agent.state.guardrail.kind == "input"
    assert agent.state.error_message == str(agent.state.guardrail)
    faux.set_responses([faux_text("fine")])
    await agent.prompt("something else")
    assert agent.state.guardrail is None  # reset by the next run
    assert GuardrailTrip.from_json(
        GuardrailTrip(guardrail="g", kind="output", reason="r").to_json()
    ) == (GuardrailTrip(guardrail="g", kind="output", reason="r"))


def test_bad_values_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="mode must be one of"):
        Guardrail(check=lambda c: None, kind="input", mode="during")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="tool_result guardrail"):
        tool_guardrail(on="result", mode="alongside")(lambda c: None)
    with pytest.raises(ConfigError, match="guardrails must hold Guardrail"):
        AgentLoopConfig(model=FauxProvider().model, guardrails=[lambda c: None])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match="Block needs a reason"):
        Block("")
    with pytest.raises(ConfigError, match="timeout"):
        input_guardrail(timeout=-1)(lambda c: None)


async def test_an_approved_call_goes_through_the_tool_guardrails_with_its_edited_arguments() -> (
    None
):
    from agentcore import Agent
    from support import delete_and_look

    @tool_guardrail(tools=["delete"])
    def no_root(ctx: Any) -> Any:
        return Block("the root is protected") if ctx.tool_call.arguments["path"] == "/" else None

    ran: list[Any] = []
    delete, look = delete_and_look(ran)
    calls = faux_message(
        ToolCall(id="a", name="delete", arguments={"path": "tmp"}),
        ToolCall(id="b", name="delete", arguments={"path": "/"}),
    )
    faux = FauxProvider([calls, faux_text("done")])
    agent = Agent(
        initial_state={"model": faux.model, "tools": [delete, look]}, guardrails=[no_root]
    )
    await agent.prompt("clean")
    # the blocked call never waits for approval: only the other one does
    assert [r.tool_call_id for r in agent.state.pending_approvals] == ["a"]
    agent.approve("a", arguments={"path": "/"})  # edited to something the guardrail refuses
    await agent.continue_()
    results = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    assert all(r.is_error for r in results) and ran == []
    assert "the root is protected" in results[-1].content[-1].text  # type: ignore[union-attr]
    assert agent.state.guardrail is None and agent.state.messages[-1].text == "done"


@pytest.mark.parametrize("answer_first", [True, False])
async def test_an_abort_during_an_alongside_input_check_keeps_the_unchecked_answer_out(
    answer_first: bool,
) -> None:
    """The run's abort cuts an alongside input check short: the answer (finished meanwhile, or
    still streaming) was never checked, so its text does not join the transcript."""
    controller = AbortController()

    @input_guardrail(mode="alongside")
    async def slow(ctx: Any) -> Any:
        await anyio.sleep(0.05)
        controller.abort()
        await anyio.sleep(10)  # cut short by the abort
        return PASS

    if answer_first:  # the answer has finished before the abort
        faux = FauxProvider([faux_text("the unchecked answer")])
    else:  # still streaming when the abort comes
        faux = FauxProvider([faux_text("x" * 4000)], chunk_chars=5, tokens_per_second=2000)
    messages, events, end = await run(faux, [slow], signal=controller.signal)
    answer = messages[-1]
    assert answer.role == "assistant" and answer.stop_reason == "aborted"
    assert answer.content == []
    assert "'slow'" in (answer.error_message or "")
    assert end.guardrail is None  # an abort, not a trip
    ends = [e for e in events if e.type == "message_end" and e.message.role == "assistant"]
    assert ends[-1].message.content == []
