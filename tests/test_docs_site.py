"""The documentation site builds with `mkdocs build --strict`, its navigation covers every page, its
API reference documents every public name, and the benchmark plot is what bench/plot.py draws.

The site's Python examples are run by tests/test_readme.py, with the README's."""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

# the site's build (a fixture, timed with the first test that uses it) can pass 60 s on a loaded
# machine running the tests in parallel
pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SRC = ROOT / "src"


def mkdocs(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = mkdocs("build", "--strict", "--site-dir", str(out))
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    return out


def page(site: Path, uri: str) -> str:
    """The HTML of a page, by its path in docs/ (`concepts/loop.md`, `reference/index.md`)."""
    path = Path(uri).with_suffix("")
    html = site / (path.parent if path.name == "index" else path) / "index.html"
    assert html.is_file(), f"{uri} was not built ({html})"
    return html.read_text(encoding="utf-8")


def test_the_site_builds_with_its_key_pages(site: Path) -> None:
    for uri in [
        "index.md",
        "getting-started.md",
        "benchmarks.md",
        "agent.md",
        "mcp.md",
        "reference/index.md",
    ]:
        page(site, uri)
    loop = page(site, "concepts/loop.md")
    assert 'class="mermaid"' in loop and "sequenceDiagram" in loop  # the timeline diagram
    assert 'src="../assets/benchmarks.svg"' in page(site, "benchmarks.md")
    assert (site / "assets" / "benchmarks.svg").is_file()
    assert (site / "search" / "search_index.json").is_file()


def ids(html: str) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', html))


def test_the_reference_renders_signatures_and_docstrings(site: Path) -> None:
    core = page(site, "reference/agentcore.md")
    assert {
        "agentcore.agent_loop",
        "agentcore.AgentLoopConfig",
        "agentcore.tool",
        "agentcore.Agent",
    } <= ids(core)
    # a signature and a docstring, not just a heading
    assert re.search(r"agent_loop.*prompts.*context.*config", core, flags=re.S)
    assert "Yields" in core or "Returns" in core or "Args" in core or "Parameters" in core
    llm = page(site, "reference/llm.md")
    assert {"agentcore.llm.get_model", "agentcore.llm.Model", "agentcore.llm.stream_simple"} <= ids(
        llm
    )
    assert "agentcore.testing.FauxProvider" in ids(page(site, "reference/testing.md"))
    assert "agentcore.sessions.JsonlSessionStore" in ids(page(site, "reference/sessions.md"))


def public_modules() -> dict[str, tuple[Path, list[str] | None]]:
    """Every public module of src/agentcore (no part of its name starts with `_`): its file and
    its `__all__`, read from the source (so the optional extras need not be importable)."""
    modules: dict[str, tuple[Path, list[str] | None]] = {}
    for file in sorted((SRC / "agentcore").rglob("*.py")):
        parts = list(file.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if any(part.startswith("_") for part in parts):
            continue
        names = None
        for node in ast.parse(file.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and any(
                getattr(t, "id", None) == "__all__" for t in node.targets
            ):
                names = list(ast.literal_eval(node.value))
        modules[".".join(parts)] = (file, names)
    return modules


def test_public_modules_are_found() -> None:
    modules = public_modules()
    assert {
        "agentcore",
        "agentcore.llm",
        "agentcore.sessions",
        "agentcore.testing",
        "agentcore.mcp",
    } <= set(modules)
    assert len(modules["agentcore"][1] or []) > 50


def test_every_public_name_is_in_the_reference(site: Path) -> None:
    # A name is documented under its module or under a package that re-exports it
    # (agentcore.events.AgentEndEvent as agentcore.AgentEndEvent).
    documented: set[str] = set()
    for html in (site / "reference").rglob("*.html"):
        documented |= ids(html.read_text(encoding="utf-8"))
    missing = []
    for module, (file, names) in public_modules().items():
        if names is None:
            # A public module without __all__ (a namespace such as agentcore.llm.providers) must
            # define nothing: only its docstring.
            body = ast.parse(file.read_text(encoding="utf-8")).body
            assert all(isinstance(node, ast.Expr) for node in body), f"{module} has no __all__"
            continue
        parts = module.split(".")
        homes = [".".join(parts[:i]) for i in range(len(parts), 0, -1)]
        for name in names:
            if not any(f"{home}.{name}" in documented for home in homes):
                missing.append(f"{module}.{name}")
    assert missing == [], f"not in the API reference (docs/reference/): {missing}"


def nav_pages(nav: object) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [p for value in nav.values() for p in nav_pages(value)]
    if isinstance(nav, list):
        return [p for item in nav for p in nav_pages(item)]
    return []


def test_the_nav_covers_every_page() -> None:
    from mkdocs.config import load_config

    config = load_config(str(ROOT / "mkdocs.yml"))
    listed = nav_pages(config["nav"])
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(set(listed)) == pages, (
        "every page of docs/ once in the nav of mkdocs.yml, and nothing else"
    )
    assert len(listed) == len(set(listed))
    assert {"index.md", "getting-started.md", "concepts/loop.md", "reference/agentcore.md"} <= set(
        listed
    )


def test_links_to_repository_files_are_copied_into_the_site(site: Path) -> None:
    # docs/temporal.md links to ../examples/durable_agent.py, as GitHub shows it
    assert 'href="../repository/examples/durable_agent.py"' in page(site, "temporal.md")
    copied = site / "repository" / "examples" / "durable_agent.py"
    assert copied.read_bytes() == (ROOT / "examples" / "durable_agent.py").read_bytes()


def test_a_link_to_a_missing_repository_file_fails_the_build(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "docs").mkdir(parents=True)
    (project / "real.py").write_text("x = 1\n")
    (project / "docs" / "index.md").write_text(
        "# Home\n\n[real](../real.py) and [gone](../gone.py)\n"
    )
    config = f"""
        site_name: t
        hooks: [{ROOT / "scripts" / "docs_hooks.py"}]
        nav: [index.md]
    """
    (project / "mkdocs.yml").write_text(textwrap.dedent(config))
    done = mkdocs("build", "--strict", "--site-dir", str(tmp_path / "out"), cwd=project)
    assert done.returncode != 0
    assert "index.md: the link '../gone.py' names no file of the repository" in done.stderr

    (project / "docs" / "index.md").write_text("# Home\n\n[real](../real.py)\n")
    done = mkdocs("build", "--strict", "--site-dir", str(tmp_path / "out"), cwd=project)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "repository" / "real.py").read_text() == "x = 1\n"


def load_plot() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_plot", ROOT / "bench" / "plot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_committed_plot_is_what_bench_plot_draws() -> None:
    plot = load_plot()
    committed = (DOCS / "assets" / "benchmarks.svg").read_text(encoding="utf-8")
    assert committed == plot.render(), (
        "docs/assets/benchmarks.svg is out of date: run bench/plot.py"
    )
    assert committed.startswith("<svg") and committed.count("<rect") > 10


def test_the_plot_shows_the_figures_of_the_benchmarks_page() -> None:
    plot = load_plot()
    text = (DOCS / "benchmarks.md").read_text(encoding="utf-8")
    for group in plot.GROUPS:
        for label, value in group.bars:
            assert f"{value}x" in text, (
                f"{group.title} / {label}: {value}x is not in docs/benchmarks.md"
            )
    changed = (plot.Group("A test", (("x", "9.5"),), 2.0),)
    assert plot.render(changed) != plot.render()
    assert ">9.5x<" in plot.render(changed)


def test_the_readme_links_to_files_that_exist() -> None:
    # The README is the GitHub landing page, outside the site: its links are checked here.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    text = re.sub(r"^```.*?^```", "", readme, flags=re.S | re.M)
    targets = re.findall(r"\]\(([^()\s#]+)(?:#[^()\s]*)?\)", text)
    relative = [t for t in targets if "://" not in t]
    assert "docs/getting-started.md" in relative and "docs/concepts/loop.md" in relative
    broken = [t for t in relative if not (ROOT / t).exists()]
    assert broken == [], f"README.md links to missing files: {broken}"
