"""The contributor maps (docs/architecture.md, docs/contributing-engine.md) describe the
repository as it is: every file they name exists, every integration is listed, and they point at
nothing outside the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from test_layers import INTEGRATIONS

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "agentcore"
DOCS = ("docs/architecture.md", "docs/contributing-engine.md")
# where a path written in a map is read from: the repository, the package, the engine
BASES = (ROOT, SRC, SRC / "_engine")
_PATH = re.compile(r"`([A-Za-z0-9_./*\-]+/[A-Za-z0-9_.*\-]*|[A-Za-z0-9_*\-]+\.py)`")


def named_paths(text: str) -> list[str]:
    """The file and folder paths a map names in backticks (`web/_app.py`, `tests/web/`)."""
    found = []
    for match in _PATH.finditer(text):
        path = match.group(1).split("::")[0]
        if path.startswith(("http", "/", "..")) or ("." not in path and not path.endswith("/")):
            continue
        found.append(path)
    return found


def exists(path: str) -> bool:
    """A path exists from the repository, the package or the engine; a path a table's row gives
    relative to its package (`models.py` in the model layer's row, `static/` in the web's) exists
    in one of the package's folders or the tests'."""
    path = path.rstrip("/")
    if any(list(base.glob(path)) for base in BASES):
        return True
    return any(list(base.glob(f"**/{path}")) for base in (SRC, ROOT / "tests"))


@pytest.mark.parametrize("doc", DOCS)
def test_every_path_a_map_names_exists(doc: str) -> None:
    missing = [p for p in named_paths((ROOT / doc).read_text("utf-8")) if not exists(p)]
    assert missing == [], f"{doc} names files that do not exist: {missing}"


@pytest.mark.parametrize("doc", DOCS)
def test_a_map_points_at_nothing_outside_the_repository(doc: str) -> None:
    text = (ROOT / doc).read_text("utf-8")
    outside = [
        word for word in ("../shared", "/work/", "DESIGN.md", "hooks/layers.py") if word in text
    ]
    assert outside == [], f"{doc} points outside the repository: {outside}"


def test_every_integration_is_in_the_map() -> None:
    text = (ROOT / "docs/architecture.md").read_text("utf-8")
    integrations = {p.split(".")[1] for p in INTEGRATIONS}
    # the packages of src that are integrations: each has its own tests folder and extra
    assert integrations <= {p.name for p in SRC.iterdir() if p.is_dir()}
    for name in sorted(integrations):
        assert f"| `agentcore.{name}` | integration" in text, name
        assert f"agentcore.{name}" in text.split("```")[1], name  # the layer diagram
    row = next(line for line in text.splitlines() if "use public names |" in line)
    assert all(f"`{name}`" in row for name in integrations), row
    counts = re.findall(r"\b(two|three|four|five|six|seven|eight) integrations\b", text)
    words = ["two", "three", "four", "five", "six", "seven", "eight"]
    assert all(words.index(c) + 2 == len(integrations) for c in counts), counts


def test_the_check_finds_a_missing_path() -> None:
    assert named_paths("see `web/_nothing.py` and `tests/test_layers.py`") == [
        "web/_nothing.py",
        "tests/test_layers.py",
    ]
    assert not exists("web/_nothing.py")
    assert exists("tests/test_layers.py") and exists("web/_app.py") and exists("loop.py")
