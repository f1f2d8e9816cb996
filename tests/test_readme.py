"""The README's and docs' Python examples run as written (each in a fresh namespace, in order),
to their last line, and print what their comments promise.

A promise is the comment after a `print(...)` call: `print(total)  # 5`. The printed output must
contain it; `...` and `<placeholder>` in a promise stand for anything, a trailing note set off by
two spaces and in parentheses (`# app.min.js   (no .env)`) is not part of it, and a promise ending
in `, ...` is a series whose items are printed in that order (`# agent_start, turn_start, ...`).
Only the comments on `print` lines are read, so prose comments stay free."""

from __future__ import annotations

import asyncio
import io
import os
import re
import subprocess
import sys
import tokenize
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
SKIP_MARK = "# not run by the tests"


def python_blocks(path: Path) -> list[tuple[int, str]]:
    """(line number, code) of each ```python block."""
    text = path.read_text(encoding="utf-8")
    blocks = []
    for match in re.finditer(r"^```python\n(.*?)^```", text, flags=re.S | re.M):
        line = text.count("\n", 0, match.start()) + 1
        blocks.append((line, match.group(1)))
    return blocks


CASES = [
    pytest.param(path, line, code, id=f"{path.relative_to(ROOT).as_posix()}:{line}")
    for path in DOCS
    for line, code in python_blocks(path)
    if not code.lstrip().startswith(SKIP_MARK)
]


def test_readme_has_examples() -> None:
    assert len([c for c in CASES if c.values[0].name == "README.md"]) >= 6


def test_docs_in_subdirectories_are_collected() -> None:
    # The site's pages live in docs/concepts/ and below: their examples run too.
    nested = {c.values[0] for c in CASES if c.values[0].parent != ROOT / "docs"} - {
        ROOT / "README.md"
    }
    assert ROOT / "docs" / "concepts" / "loop.md" in nested


_WILDCARD = re.compile(r"\.\.\.|<[^<>\s]+>")
_NOTE = re.compile(r"\s{2,}\([^()]*\)\s*$")
_FINISHED = "__readme_block_finished__"


def promises(code: str) -> list[tuple[int, list[str]]]:
    """(line in the block, the fragments to find in order) of each print line's comment."""
    out = []
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type != tokenize.COMMENT or "print(" not in token.line[: token.start[1]]:
            continue
        promise = _NOTE.sub("", token.string.lstrip("#").strip())
        series = promise.endswith(", ...")
        fragments = _WILDCARD.split(promise)
        if series:
            fragments = [item for f in fragments for item in f.split(", ")]
        fragments = [f.strip() for f in fragments if f.strip(" ,")]
        if fragments:
            out.append((token.start[0], fragments))
    return out


def broken_promises(code: str, output: str) -> list[str]:
    """The promises of `code` that `output` does not keep, in words."""
    broken = []
    for line, fragments in promises(code):
        position = 0
        for fragment in fragments:
            found = output.find(fragment, position)
            if found < 0:
                broken.append(f"line {line}: {fragment!r} was not printed")
                break
            position = found + len(fragment)
    return broken


def test_promises_are_read_from_print_comments_only() -> None:
    code = (
        "x = 1  # a remark\n"
        "print(x)  # 1\n"
        "print(url)  # http://127.0.0.1:<port>/mcp\n"
        "print(s)   # app.js   (no .env)\n"
        "print(e)  # agent_start, turn_start, ...\n"
    )
    assert promises(code) == [
        (2, ["1"]),
        (3, ["http://127.0.0.1:", "/mcp"]),
        (4, ["app.js"]),
        (5, ["agent_start", "turn_start"]),
    ]
    kept = "1\nhttp://127.0.0.1:8123/mcp\napp.js\n agent_start\n turn_start\n"
    assert broken_promises(code, kept) == []
    assert broken_promises(code, "2\n")[0] == "line 2: '1' was not printed"
    swapped = kept.replace(" agent_start\n turn_start", " turn_start\n agent_start")
    assert broken_promises(code, swapped) == ["line 5: 'turn_start' was not printed"]


def close_leftover_event_loop() -> None:
    """Close an event loop an example left set as this thread's (pydantic-evals'
    `evaluate_sync` makes one and keeps it): else it is finalized, unclosed, whenever the
    garbage collector runs, which fails a later test with a ResourceWarning or, inside
    `ast.parse` on Python 3.11, a SystemError."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            loop = asyncio.get_event_loop_policy().get_event_loop()
        except RuntimeError:  # none set
            return
    if not loop.is_running():
        loop.close()
    asyncio.set_event_loop(None)


@pytest.mark.parametrize(("path", "line", "code"), CASES)
def test_example_runs(path: Path, line: int, code: str, capsys: pytest.CaptureFixture[str]) -> None:
    compiled = compile(f"{code}\n{_FINISHED} = True\n", f"{path.relative_to(ROOT)}:{line}", "exec")
    namespace: dict[str, object] = {"__name__": "__readme__"}
    try:
        exec(compiled, namespace)
    finally:
        close_leftover_event_loop()
    assert namespace.get(_FINISHED) is True, "the example stopped before its last line"
    assert broken_promises(code, capsys.readouterr().out) == []


def test_the_real_model_block_without_a_key_says_which_variable_to_set(tmp_path: Path) -> None:
    """Issue 26: the getting-started block for a real model, run without ANTHROPIC_API_KEY,
    printed an empty line and exited 0. It names the variable and exits 1, sending nothing."""
    path = ROOT / "docs" / "getting-started.md"
    (code,) = [c for _, c in python_blocks(path) if "needs ANTHROPIC_API_KEY" in c]
    script = tmp_path / "block.py"
    script.write_text(code)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    env["PYTHONPATH"] = str(ROOT / "src")
    done = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip() == (
        "error: no API key for provider 'anthropic' (model 'claude-sonnet-4-5'): set the "
        "environment variable ANTHROPIC_API_KEY (in code, api_key=... works too)"
    )
