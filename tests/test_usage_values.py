"""`Usage` and `Cost` hold only finite numbers >= 0 (issue 30): a negative count or a NaN or
infinite cost, from a tool, a peer or a session file, is refused naming the field, since it
would lower a run's totals or make `cost >= limit` never true."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcore import Agent, AgentToolResult, TextContent, tool
from agentcore.errors import MessageFormatError
from agentcore.messages import (
    Cost,
    ToolCall,
    ToolResultMessage,
    Usage,
    from_json,
    to_json,
)
from agentcore.testing import FauxProvider, faux_message, faux_text

PARTS = ("input", "output", "cache_read", "cache_write")
good_count = st.integers(min_value=0, max_value=10**15)
good_cost = st.floats(min_value=0.0, max_value=1e12, allow_nan=False, allow_infinity=False)
bad_number = st.one_of(
    st.integers(max_value=-1),
    st.floats(max_value=-1e-300, allow_nan=False),
    st.just(math.nan),
    st.just(math.inf),
    st.just(-math.inf),
)


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.fixed_dictionaries({p: good_count for p in PARTS}))
def test_no_finite_non_negative_usage_is_refused(counts: dict[str, int]) -> None:
    usage = Usage(**counts)
    assert usage.total_tokens == sum(counts.values())


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.fixed_dictionaries({p: good_cost for p in PARTS}))
def test_no_finite_non_negative_cost_is_refused(parts: dict[str, float]) -> None:
    assert Cost(**parts).total == pytest.approx(sum(parts.values()))


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.sampled_from(PARTS), bad_number, st.sampled_from(["usage", "cost"]))
def test_every_bad_usage_or_cost_is_refused_naming_the_field(
    field: str, value: Any, which: str
) -> None:
    cls = Usage if which == "usage" else Cost
    with pytest.raises(ValueError, match=rf"{cls.__name__}\.{field} must be a finite number >= 0"):
        cls(**{field: value})


def test_a_sum_that_overflows_is_refused() -> None:
    with pytest.raises(ValueError, match=r"Cost\.total must be a finite number >= 0"):
        Cost(input=1e308, output=1e308)


def test_a_session_record_with_a_negative_count_is_a_format_error() -> None:
    message = ToolResultMessage(
        tool_call_id="c1", tool_name="t", content=[], usage=Usage(input=3), is_error=False
    )
    data = to_json(message)
    data["usage"]["input"] = -(10**9)
    with pytest.raises(MessageFormatError, match=r"usage: Usage.input must be a finite number"):
        from_json(data)
    data["usage"]["input"] = 3
    assert from_json(data) == message  # what agentcore wrote loads as before


@pytest.mark.anyio
async def test_a_tool_reporting_bad_usage_gets_an_error_result_and_the_run_goes_on() -> None:
    @tool
    def liar() -> AgentToolResult:
        """Reports usage it never had."""
        return AgentToolResult(content=[TextContent(text="ok")], usage=Usage(input=-(10**9)))

    faux = FauxProvider(
        [faux_message(ToolCall(id="c1", name="liar", arguments={})), faux_text("done")]
    )
    agent = Agent(initial_state={"model": faux.model, "tools": [liar]})
    await agent.prompt("go")
    results = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    assert len(results) == 1 and results[0].is_error
    assert "Usage.input must be a finite number >= 0" in results[0].content[0].text  # type: ignore[union-attr]
    assert agent.state.messages[-1].text == "done"  # type: ignore[union-attr]
    assert agent.state.usage.input >= 0
