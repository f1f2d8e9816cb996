"""`OutputSpec.partial` on every prefix of an answer: it never raises, and the whole answer gives
the value itself (hypothesis over JSON values, in tool and native form)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentcore import OutputSpec
from agentcore.llm.builder import MessageBuilder
from agentcore.llm.model import Model
from agentcore.messages import AssistantMessage, ToolCall
from agentcore.testing import faux_text

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
ANY = OutputSpec({})  # a JSON Schema that accepts anything: answers travel wrapped
MODEL = Model(id="m", api="faux", provider="p")


def streamed_call(arguments_text: str) -> AssistantMessage:
    """The partial message a model streaming these tool-call arguments has built so far."""
    builder = MessageBuilder(MODEL)
    builder.start()
    index = builder.toolcall_start(id="c", name="final_answer").content_index
    if arguments_text:
        builder.toolcall_delta(index, arguments_text)
    return builder.snapshot()


@settings(max_examples=150, deadline=None)
@given(JSON)
@example({"```": None})  # a fence inside a string value is not the answer's closing fence
@example(["a\n```", "```"])
def test_partial_never_raises_and_ends_with_the_value(value: Any) -> None:
    text = json.dumps({"value": value})
    for cut in range(len(text) + 1):
        ANY.partial(faux_text(text[:cut]))
        ANY.partial(streamed_call(text[:cut]))
    assert ANY.partial(faux_text(text)) == value
    assert ANY.partial(streamed_call(text)) == value
    assert ANY.validate_object(json.loads(text)) == value
    assert ANY.partial(AssistantMessage(content=[ToolCall(id="c", name="final_answer")])) is None
