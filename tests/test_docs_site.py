"""The documentation site builds with `mkdocs build --strict`, its navigation covers every page, its
API reference documents every public name, and the benchmark plot is what bench/plot.py draws.

The site's Python examples are run by tests/test_readme.py, with the README's."""

from __future__ import annotations

import ast
import functools
import http.server
import importlib.util
import os
import re
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

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


def built_pages(site: Path) -> list[Path]:
    """Every page of the site built from docs/ (not the search index or assets)."""
    return sorted(p for p in site.rglob("index.html") if "assets" not in p.parts)


def test_no_table_row_is_left_as_text(site: Path) -> None:
    """A table row that Markdown did not take into a table (a row after a paragraph, a missing
    separator line) is shown as literal pipes: `mkdocs --strict` does not see it, this does.
    Issue 26: the calculator row of docs/cli.md's built-in tools table."""
    leftovers = []
    for path in built_pages(site):
        html = path.read_text(encoding="utf-8")
        html = re.sub(r"<pre\b.*?</pre>", "", html, flags=re.S)  # a code block may show pipes
        for paragraph in re.findall(r"<p\b[^>]*>(.*?)</p>", html, flags=re.S):
            text = re.sub(r"<[^>]+>", "", paragraph)
            for line in text.splitlines():
                if re.fullmatch(r"\s*\|.*\|\s*", line):
                    leftovers.append(f"{path.relative_to(site)}: {line.strip()[:80]}")
    assert not leftovers, "table rows rendered as text:\n" + "\n".join(leftovers)


def test_the_first_build_time_reads_the_same_everywhere() -> None:
    """Issue 26: the first build of the local model's server read 6, 8 or 8.5 minutes on
    different pages. Every "about N minutes on 2 cores" says what scripts/local-model says."""
    script = (ROOT / "scripts" / "local-model").read_text()
    formula = re.search(r"est_min=\$\(\( \((\d+) \+ ncpu - 1\) / ncpu \)\)", script)
    assert formula is not None, "scripts/local-model's build estimate moved"
    estimate = (int(formula.group(1)) + 2 - 1) // 2  # its estimate on 2 cores
    found = {}
    for path in [ROOT / "README.md", *sorted(DOCS.rglob("*.md")), ROOT / "scripts" / "local-model"]:
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"about\s+([\d.\-]+)\s+minutes\s+on\s+2\s+cores", text):
            found[f"{path.relative_to(ROOT)}: {match.group(0)}"] = match.group(1)
    assert len(found) >= 4, found  # README, getting started, the local model page, the script
    assert set(found.values()) == {str(estimate)}, found


_EXTERNAL = re.compile(r"^(https?:)?//", re.I)


def test_the_site_needs_no_network(site: Path) -> None:
    """Issue 26: Material loaded Google Fonts and mermaid from CDNs, so without internet the
    timeline diagram showed as source text. No page loads a script, a style sheet, a font or an
    image from another host (links to read elsewhere are fine), nor does any style sheet."""
    found = []
    for path in built_pages(site):
        html = path.read_text(encoding="utf-8")
        html = re.sub(r"<pre\b.*?</pre>", "", html, flags=re.S)  # code showing tags is text
        for tag, attr, url in re.findall(
            r"<(script|link|img|iframe|source)\b[^>]*?\b(src|href)=\"([^\"]*)\"", html
        ):
            if _EXTERNAL.match(url):
                found.append(f"{path.relative_to(site)}: <{tag} {attr}={url}>")
    for css in site.rglob("*.css"):
        for url in re.findall(r"(?:@import\s+|url\()\s*[\"']?([^\"')\s]+)", css.read_text()):
            if _EXTERNAL.match(url):
                found.append(f"{css.relative_to(site)}: {url}")
    assert not found, "the site loads from the network:\n" + "\n".join(found)
    loop = page(site, "concepts/loop.md")
    ours = loop.index('src="../../assets/javascripts/mermaid.min.js"')
    assert ours < loop.index("assets/javascripts/bundle.")  # defined before Material looks
    script = (site / "assets" / "javascripts" / "mermaid.min.js").read_text(encoding="utf-8")
    assert 'globalThis["mermaid"]' in script
    assert "mermaid.min.js" not in page(site, "index.md")  # only pages with a diagram load it


@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="no chromium: scripts/browser")
@pytest.mark.parametrize(
    ("path", "kind"), [("concepts/loop/", "sequenceDiagram"), ("architecture/", "flowchart")]
)
def test_the_diagram_is_drawn_without_network(site: Path, path: str, kind: str) -> None:
    """The timeline of concepts/loop.md and the engine's stages on architecture.md, in headless
    Chromium that can reach no host but the site's own server: Material swaps the diagram's
    source for the drawing (its `<pre>` becomes a `<div>`), and mermaid reports no error."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(site))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        done = subprocess.run(
            [
                "/usr/bin/chromium",
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                "--virtual-time-budget=20000",
                "--enable-logging=stderr",
                "--v=0",
                "--dump-dom",
                f"http://127.0.0.1:{server.server_address[1]}/{path}",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.shutdown()
        server.server_close()
    dom = done.stdout
    assert '<div class="mermaid"></div>' in dom, dom[-2000:]  # drawn (in a shadow root)
    assert f'class="mermaid"><code>{kind}' not in dom  # not left as its source
    console = [line for line in done.stderr.splitlines() if "CONSOLE" in line]
    assert not [line for line in console if "Error" in line], console


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


# --- the contributor map ------------------------------------------------------------------------


def map_section(markdown: str) -> str:
    """The "package map" section of docs/architecture.md: from its heading to the next `## `."""
    start = markdown.index("\n## The package map\n")
    end = markdown.find("\n## ", start + 1)
    return markdown[start : end if end != -1 else len(markdown)]


def unmapped(section: str, src: Path) -> list[str]:
    """Every package under `src/agentcore` (a folder with `__init__.py`) and every module of the
    package root that the section does not name as `` `agentcore.x` `` in a table row."""
    named = set(re.findall(r"^\| `(agentcore(?:\.[\w.]+)?)` \|", section, re.MULTILINE))
    package = src / "agentcore"
    wanted = [".".join(init.parent.relative_to(src).parts) for init in package.rglob("__init__.py")]
    wanted += [f"agentcore.{p.stem}" for p in package.glob("*.py") if p.name != "__init__.py"]
    return sorted(set(wanted) - named)


def test_the_package_map_names_every_package() -> None:
    """docs/architecture.md has a line for every package and root module, so it cannot drift."""
    section = map_section((DOCS / "architecture.md").read_text(encoding="utf-8"))
    assert unmapped(section, SRC) == [], "add a row to the package map of docs/architecture.md"


def test_a_package_without_a_line_in_the_map_is_found(tmp_path: Path) -> None:
    src = tmp_path / "src"
    for folder in ["agentcore", "agentcore/llm", "agentcore/llm/providers", "agentcore/guard"]:
        (src / folder).mkdir(parents=True)
        (src / folder / "__init__.py").write_text('"""x"""\n')
    (src / "agentcore" / "agent.py").write_text('"""x"""\n')
    section = "## The package map\n\n| `agentcore` | x |\n| `agentcore.llm` | x |\n"
    assert unmapped(section, src) == [
        "agentcore.agent",
        "agentcore.guard",
        "agentcore.llm.providers",
    ]
    section += "| `agentcore.llm.providers` | x |\n| `agentcore.guard` | x |\n"
    section += "| `agentcore.agent` | x |\n"
    assert unmapped(section, src) == []
    # a name only mentioned in passing, outside a row of its own, does not count
    assert unmapped("## The package map\n\nsee `agentcore.guard`\n", src)[0] == "agentcore"
