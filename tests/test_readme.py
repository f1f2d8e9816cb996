"""The README's Python examples run as written (each in a fresh namespace, in order)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
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
    pytest.param(path, line, code, id=f"{path.name}:{line}")
    for path in DOCS
    for line, code in python_blocks(path)
    if not code.lstrip().startswith(SKIP_MARK)
]


def test_readme_has_examples() -> None:
    assert len([c for c in CASES if c.values[0].name == "README.md"]) >= 6


@pytest.mark.parametrize(("path", "line", "code"), CASES)
def test_example_runs(path: Path, line: int, code: str, capsys: pytest.CaptureFixture[str]) -> None:
    compiled = compile(code, f"{path.name}:{line}", "exec")
    exec(compiled, {"__name__": "__readme__"})
