"""agentcore.evals in-process on the faux provider: the task records what the run did, the
evaluators read it (tool calls and their arguments, usage, how the run ended), typed outputs come
back typed, the LLM judge runs on an agentcore model, and reports compare with a baseline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import EqualsExpected

from agentcore import Agent, AgentContext, AgentLoopConfig, tool
from agentcore.evals import (
    CalledTool,
    Judge,
    StoppedWith,
    WithinUsage,
    agent_task,
    find_regressions,
    load_report,
    save_report,
)
from agentcore.llm import ModelCost
from agentcore.testing import FauxProvider, faux_text, faux_tool_call

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> str:
    """Add two numbers."""
    return str(a + b)


class Sum(BaseModel):
    total: int


def adding_agent(**options: Any) -> Agent:
    faux = FauxProvider([faux_tool_call("add", {"a": 1, "b": 2}), faux_text("It is 3.")])
    agent = Agent(initial_state={"model": faux.model, "tools": [add]}, **options)
    agent.faux = faux  # type: ignore[attr-defined]
    return agent


def dataset(*evaluators: Any, expected: Any = "It is 3.") -> Dataset[Any, Any, Any]:
    return Dataset(
        name="adding",
        cases=[Case(name="one_plus_two", inputs="1 + 2?", expected_output=expected)],
        evaluators=list(evaluators),
    )


def verdicts(report: Any) -> dict[str, bool]:
    assert not report.failures, report.failures
    [case] = report.cases
    assert not case.evaluator_failures, case.evaluator_failures
    return {name: result.value for name, result in case.assertions.items()}


async def test_the_task_records_tool_calls_usage_and_the_ending() -> None:
    report = await dataset(EqualsExpected()).evaluate(agent_task(adding_agent), progress=False)
    [case] = report.cases
    assert case.output == "It is 3."
    assert case.attributes == {
        "tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}],
        "stop_reason": "stop",
        "answered": True,
        "limit": None,
        "error": None,
    }
    assert case.metrics["turns"] == 2 and case.metrics["tool_call_count"] == 1
    assert case.metrics["input_tokens"] > 0 and case.metrics["output_tokens"] > 0
    assert verdicts(report) == {"EqualsExpected": True}


async def test_called_tool_reads_names_and_arguments() -> None:
    report = await dataset(
        CalledTool("add"),
        CalledTool("add", arguments={"a": 1}, evaluation_name="a_is_1"),
        CalledTool("add", arguments={"a": 5}, evaluation_name="a_is_5"),
        CalledTool("add", max_times=0, evaluation_name="never_add"),
        CalledTool("search", evaluation_name="searched"),
        CalledTool("search", max_times=0, evaluation_name="never_search"),
    ).evaluate(agent_task(adding_agent), progress=False)
    assert verdicts(report) == {
        "called_add": True,
        "a_is_1": True,
        "a_is_5": False,
        "never_add": False,
        "searched": False,
        "never_search": True,
    }
    reason = report.cases[0].assertions["a_is_5"].reason
    assert reason == "0 matching call(s) of add({'a': 5}); called: add"


async def test_within_usage_names_what_went_over() -> None:
    report = await dataset(
        WithinUsage(turns=2, tool_calls=1, output_tokens=10_000, evaluation_name="roomy"),
        WithinUsage(turns=1, input_tokens=1, evaluation_name="tight"),
    ).evaluate(agent_task(adding_agent), progress=False)
    assert verdicts(report) == {"roomy": True, "tight": False}
    reason = report.cases[0].assertions["tight"].reason or ""
    assert reason.startswith("input_tokens ") and "; turns 2 > 1" in reason


async def test_cost_is_summed_over_the_answers_and_bounded() -> None:
    def priced() -> Agent:
        faux = FauxProvider(
            [faux_tool_call("add", {"a": 1, "b": 2}), faux_text("It is 3.")],
            cost=ModelCost(input=3.0, output=15.0),
        )
        agent = Agent(initial_state={"model": faux.model, "tools": [add]})
        agent.faux = faux  # type: ignore[attr-defined]
        return agent

    report = await dataset(
        WithinUsage(cost=1.0, evaluation_name="under_a_dollar"),
        WithinUsage(cost=1e-9, evaluation_name="free"),
    ).evaluate(agent_task(priced), progress=False)
    metrics = report.cases[0].metrics
    expected = (metrics["input_tokens"] * 3.0 + metrics["output_tokens"] * 15.0) / 1e6
    assert metrics["cost"] == pytest.approx(expected)
    assert verdicts(report) == {"under_a_dollar": True, "free": False}
    assert (report.cases[0].assertions["free"].reason or "").startswith("cost ")


async def test_stopped_with_a_bound_and_with_a_typed_output() -> None:
    def one_turn() -> Agent:
        return adding_agent(max_turns=1)

    report = await dataset(
        StoppedWith(),
        StoppedWith(reason="tool_use", limit="max_turns", evaluation_name="turn_bound"),
    ).evaluate(agent_task(one_turn), progress=False)
    assert verdicts(report) == {"answered": False, "turn_bound": True}
    assert report.cases[0].attributes["limit"] == "max_turns"

    def typed() -> Agent:
        faux = FauxProvider([faux_tool_call("final_answer", {"total": 3})])
        agent = Agent(initial_state={"model": faux.model}, output_type=Sum)
        agent.faux = faux  # type: ignore[attr-defined]
        return agent

    report = await dataset(StoppedWith(), EqualsExpected(), expected=Sum(total=3)).evaluate(
        agent_task(typed), progress=False
    )
    assert report.cases[0].output == Sum(total=3)  # the typed value itself
    assert verdicts(report) == {"answered": True, "EqualsExpected": True}
    report = await dataset(EqualsExpected(), expected={"total": 3}).evaluate(
        agent_task(typed, json_answers=True), progress=False
    )
    assert report.cases[0].output == {"total": 3}  # as a dataset file writes it
    assert verdicts(report) == {"EqualsExpected": True}


async def test_a_loop_config_factory_and_the_inputs() -> None:
    seen: list[Any] = []

    def make(inputs: Any) -> tuple[AgentLoopConfig, AgentContext]:
        seen.append(inputs)
        faux = FauxProvider([faux_tool_call("add", {"a": 1, "b": 2}), faux_text("3")])
        make.faux = faux  # type: ignore[attr-defined]
        return AgentLoopConfig(model=faux.model), AgentContext(system_prompt="", tools=[add])

    data = Dataset[Any, Any, Any](
        name="configs",
        cases=[Case(name="dict", inputs={"prompt": "1 + 2?", "user": "ana"}, expected_output="3")],
        evaluators=[EqualsExpected(), CalledTool("add", arguments={"b": 2})],
    )
    report = await data.evaluate(agent_task(make), progress=False)
    assert verdicts(report) == {"EqualsExpected": True, "called_add": True}
    assert seen == [{"prompt": "1 + 2?", "user": "ana"}]


async def test_inputs_without_a_prompt_fail_the_case_saying_what_is_expected() -> None:
    data = Dataset[Any, Any, Any](name="bad", cases=[Case(name="no_prompt", inputs={"q": "hi"})])
    report = await data.evaluate(agent_task(adding_agent), progress=False)
    [failure] = report.failures
    assert "a case's inputs must be the prompt (a string) or a mapping with a 'prompt'" in (
        failure.error_message
    )


def judge_on(*answers: Any) -> Judge:
    faux = FauxProvider(list(answers))
    judge = Judge("The answer says the sum is 3.", model=faux.model, include_input=True)
    judge.faux = faux  # type: ignore[attr-defined]
    return judge


async def test_the_judge_runs_on_an_agentcore_model() -> None:
    yes = judge_on(
        faux_tool_call("final_answer", {"reason": "It says 3.", "passed": True, "score": 1})
    )
    report = await dataset(yes).evaluate(agent_task(adding_agent), progress=False)
    [case] = report.cases
    assert case.assertions["judge"].value is True
    assert case.assertions["judge"].reason == "It says 3."
    assert case.scores["judge_score"].value == 1.0
    # the judge saw the input, the output and the rubric
    [request] = yes.faux.calls  # type: ignore[attr-defined]
    prompt = request.context.messages[0].content
    assert "<Input>\n1 + 2?\n</Input>" in prompt and "<Output>\nIt is 3.\n</Output>" in prompt
    assert "<Rubric>\nThe answer says the sum is 3.\n</Rubric>" in prompt

    no = judge_on(
        faux_tool_call("final_answer", {"reason": "No sum.", "passed": False, "score": 0})
    )
    report = await dataset(no).evaluate(agent_task(adding_agent), progress=False)
    assert report.cases[0].assertions["judge"].value is False


async def test_a_judge_without_a_verdict_is_an_evaluator_failure_not_a_pass() -> None:
    mute = judge_on(faux_text("I think it is fine."))
    report = await dataset(mute).evaluate(agent_task(adding_agent), progress=False)
    [case] = report.cases
    assert "judge" not in case.assertions
    [failure] = case.evaluator_failures
    assert "the judge's model gave no verdict" in failure.error_message


async def test_regressions_against_a_saved_baseline(tmp_path: Path) -> None:
    evaluators = (EqualsExpected(), CalledTool("add"))
    good = await dataset(*evaluators).evaluate(agent_task(adding_agent), progress=False)
    save_report(good, tmp_path / "good.json")
    baseline = load_report(tmp_path / "good.json")
    assert find_regressions(good, baseline) == []

    def wrong() -> Agent:
        faux = FauxProvider([faux_text("It is 4.")])
        agent = Agent(initial_state={"model": faux.model, "tools": [add]})
        agent.faux = faux  # type: ignore[attr-defined]
        return agent

    worse = await dataset(*evaluators).evaluate(agent_task(wrong), progress=False)
    found = [str(r) for r in find_regressions(worse, baseline)]
    assert found == [
        "one_plus_two: assertion EqualsExpected: True -> False",
        "one_plus_two: assertion called_add: True -> False",
    ]


def test_a_bad_report_file_names_the_problem(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"cannot read the report '.*missing.json'"):
        load_report(tmp_path / "missing.json")
    (tmp_path / "text.json").write_text("not json")
    with pytest.raises(ValueError, match=r"the report '.*text.json' is not JSON"):
        load_report(tmp_path / "text.json")
    (tmp_path / "other.json").write_text('{"cases": 3}')
    with pytest.raises(ValueError, match=r"is not an evaluation report .*: name: Field required"):
        load_report(tmp_path / "other.json")


async def test_the_run_usage_includes_what_tools_report() -> None:
    """A sub-agent's tokens (reported on its tool result) are part of what the case cost, as
    they are for the run's usage limits (`run_usage`)."""
    from agentcore import AgentToolResult, TextContent, Usage
    from agentcore.evals import run_agent

    @tool
    def ask_expert(question: str) -> AgentToolResult:
        """Ask a sub-agent."""
        return AgentToolResult(content=[TextContent(text="3")], usage=Usage(input=100, output=20))

    faux = FauxProvider([faux_tool_call("ask_expert", {"question": "1 + 2?"}), faux_text("3.")])
    agent = Agent(initial_state={"model": faux.model, "tools": [ask_expert]})
    run = await run_agent(agent, "1 + 2?")
    answers = [m for m in run.messages if m.role == "assistant"]
    assert run.usage.input == sum(m.usage.input for m in answers) + 100
    assert run.usage.output == sum(m.usage.output for m in answers) + 20
