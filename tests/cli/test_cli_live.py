"""The parts of the chat's terminal UI that need no terminal: splitting streamed Markdown into
blocks, rendering them, the usage line. The UI itself runs in a pseudo-terminal in
test_cli_tty.py."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentcore.cli._live import MarkdownBlocks, render_markdown, usage_line
from agentcore.messages import AssistantMessage, Cost, TextContent, Usage, UserMessage

ANSI = re.compile(r"\x1b\[[0-9;]*m")

ANSWER = """\
# Title

First paragraph,
on two lines.

```python
x = 1

y = 2
```

- one
- two
"""


def feed_all(text: str, size: int) -> tuple[list[str], str]:
    blocks = MarkdownBlocks()
    done: list[str] = []
    for i in range(0, len(text), size):
        done += blocks.feed(text[i : i + size])
    return done, blocks.rest()


@pytest.mark.parametrize("size", [1, 3, 7, 1000])
def test_blocks_end_at_blank_lines_outside_code_fences(size: int) -> None:
    done, rest = feed_all(ANSWER, size)
    assert done == [
        "# Title",
        "First paragraph,\non two lines.",
        "```python\nx = 1\n\ny = 2\n```",  # the blank line inside the fence does not split
    ]
    assert rest == "- one\n- two"


def test_the_block_being_written_is_pending() -> None:
    blocks = MarkdownBlocks()
    assert blocks.feed("Hello **wor") == []
    assert blocks.pending == "Hello **wor"
    assert blocks.feed("ld**\n\nNext") == ["Hello **world**"]
    assert blocks.pending == "Next"
    assert blocks.rest() == "Next" and blocks.pending == ""


@given(st.text(alphabet="ab `~\n#*-", max_size=200), st.integers(min_value=1, max_value=9))
def test_no_text_is_lost(text: str, size: int) -> None:
    done, rest = feed_all(text, size)
    kept = "".join([*done, rest]).replace("\n", "").replace(" ", "")
    assert kept == text.replace("\n", "").replace(" ", "")


def test_markdown_is_rendered_for_a_terminal() -> None:
    pytest.importorskip("rich")
    out = render_markdown("Some **bold** and `code`.\n\n- one\n- two", 40)
    plain = ANSI.sub("", out)
    assert plain.splitlines() == ["Some bold and code.", "", " • one", " • two"]
    assert "\x1b[1m" in out  # bold
    assert all(len(line) <= 40 for line in plain.splitlines())


def test_the_usage_line_names_tokens_cost_and_model() -> None:
    def answer(cost: float, model: str) -> AssistantMessage:
        usage = Usage(input=1200, output=34, cache_read=800, cost=Cost(input=cost))
        return AssistantMessage(
            content=[TextContent(text="hi")], provider="anthropic", model=model, usage=usage
        )

    added = [UserMessage(content="hi"), answer(0.0012, "claude-x")]
    total = Usage(cost=Cost(input=0.0112))
    assert usage_line(added, total, "fallback/model") == (
        "2,000 in (800 cached) / 34 out tokens · $0.0012 · anthropic/claude-x "
        "· conversation $0.0112"
    )
    assert usage_line([UserMessage(content="x")], Usage(), "local/qwen") == (
        "0 in / 0 out tokens · free · local/qwen"  # not $0.0000 (issue 26)
    )
