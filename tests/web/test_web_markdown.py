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
    r"</?(p|br|strong|em|code|pre|h[1-6]|ul|ol|li|blockquote|table|thead|tbody|tr|th|td)>"
    r'|<t[hd] class="align-(left|right|center)">'
    r'|<a href="(https?://|mailto:)[^"<>\s]*" target="_blank" rel="noopener noreferrer">|</a>'
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


def test_tables_nested_lists_and_links() -> None:
    table, lists, links = render(
        "| Name | Qty | Note |\n|:---|---:|:-:|\n| **a** | 2 | x \\| y |\n| b |",
        "- a\n  - b\n    - c\n  - d\n- e\n\n1. x\n   - y\n2. z",
        "[mail](mailto:a@b.c) [js](javascript:alert(1)) [data](data:text/html,x) [f](file:///etc)",
    )
    assert table == (
        '<table><thead><tr><th class="align-left">Name</th>'
        '<th class="align-right">Qty</th><th class="align-center">Note</th></tr>'
        '</thead><tbody><tr><td class="align-left"><strong>a</strong></td>'
        '<td class="align-right">2</td><td class="align-center">x | y</td></tr>'
        '<tr><td class="align-left">b</td><td class="align-right"></td>'
        '<td class="align-center"></td></tr></tbody></table>'
    )
    assert lists == (
        "<ul><li>a<ul><li>b<ul><li>c</li></ul></li><li>d</li></ul></li><li>e</li></ul>"
        "<ol><li>x<ul><li>y</li></ul></li><li>z</li></ol>"
    )
    assert links == (
        '<p><a href="mailto:a@b.c" target="_blank" rel="noopener noreferrer">mail</a>'
        " [js](javascript:alert(1)) [data](data:text/html,x) [f](file:///etc)</p>"
    )


def test_html_in_a_table_cell_stays_in_its_cell() -> None:
    (out,) = render("| a | b |\n|---|---|\n| </td></tr></table><img src=x onerror=alert(1)> | 2 |")
    assert out.count("<td>") == 2 and out.count("</table>") == 1 and "<img" not in out
    assert "&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;&lt;img src=x onerror=alert(1)&gt;" in out


def test_html_in_the_text_is_shown_not_interpreted() -> None:
    (out,) = render('<script>alert("x")</script> <img src=x onerror=alert(1)> **<b>hi</b>**')
    assert "<script" not in out and "<img" not in out and "<b>" not in out
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in out
    assert "<strong>&lt;b&gt;hi&lt;/b&gt;</strong>" in out


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.sampled_from(list("<>\"'&`*_#-[]()/: \n\x00ahjs=1.|")), max_size=80),
        min_size=1,
        max_size=20,
    )
)
def test_only_the_renderers_own_tags_reach_the_output(texts: list[str]) -> None:
    for text, out in zip(texts, render(*texts), strict=True):
        leftover = OWN_TAGS.sub("", out)
        assert "<" not in leftover and ">" not in leftover, (text, out)
        assert '"' not in leftover, (text, out)  # no attribute can be opened or closed
