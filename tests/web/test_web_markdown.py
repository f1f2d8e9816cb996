"""The page's Markdown renderer (`static/markdown.js`), run in Node when it is installed (the
browser tests run it in Chromium too): it formats, and whatever the text, the only markup in its
output is its own."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

RENDERER = Path(__file__).parents[2] / "src" / "agentcore" / "web" / "static" / "markdown.js"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

# Read texts as JSON lines on stdin, write their rendering as JSON lines.
_DRIVER = """
const window = {};
eval(require("fs").readFileSync(process.argv[1], "utf8"));
const lines = require("fs").readFileSync(0, "utf8").split("\\n").filter(Boolean);
const render = window.agentcoreMarkdown.render;
for (const line of lines) console.log(JSON.stringify(render(JSON.parse(line))));
"""


def render(*texts: str) -> list[str]:
    assert NODE is not None
    done = subprocess.run(
        [NODE, "-e", _DRIVER, str(RENDERER)],
        input="\n".join(json.dumps(t) for t in texts) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


OWN_TAGS = re.compile(
    r"</?(p|br|strong|em|code|pre|h[1-6]|ul|ol|li|blockquote)>"
    r'|<a href="https?://[^"<>\s]*" target="_blank" rel="noopener noreferrer">|</a>'
)


def test_markdown_is_formatted() -> None:
    out = render(
        "# Title\n\nSome **bold**, *italic* and `code`.\n\n- one\n- two\n\n1. first",
        "```python\nprint('<hi>')\n```",
        "[docs](https://example.com/a_b_c?x=1&y=2) and [bad](javascript:alert(1))",
    )
    assert out[0] == (
        "<h1>Title</h1><p>Some <strong>bold</strong>, <em>italic</em> and <code>code</code>.</p>"
        "<ul><li>one</li><li>two</li></ul><ol><li>first</li></ol>"
    )
    assert out[1] == "<pre><code>print(&#39;&lt;hi&gt;&#39;)</code></pre>"
    assert out[2] == (
        '<p><a href="https://example.com/a_b_c?x=1&amp;y=2" target="_blank" '
        'rel="noopener noreferrer">docs</a> and [bad](javascript:alert(1))</p>'
    )


def test_html_in_the_text_is_shown_not_interpreted() -> None:
    (out,) = render('<script>alert("x")</script> <img src=x onerror=alert(1)> **<b>hi</b>**')
    assert "<script" not in out and "<img" not in out and "<b>" not in out
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in out
    assert "<strong>&lt;b&gt;hi&lt;/b&gt;</strong>" in out


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.sampled_from(list("<>\"'&`*_#-[]()/: \n\x00ahjs=1.")), max_size=80),
        min_size=1,
        max_size=20,
    )
)
def test_only_the_renderers_own_tags_reach_the_output(texts: list[str]) -> None:
    for text, out in zip(texts, render(*texts), strict=True):
        leftover = OWN_TAGS.sub("", out)
        assert "<" not in leftover and ">" not in leftover, (text, out)
        assert '"' not in leftover, (text, out)  # no attribute can be opened or closed
