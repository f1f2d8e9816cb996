"""The package as a user installs it (issue 8, case 6).

1. Every module that `src/agentcore` imports is the standard library's, agentcore's own, or
   provided by a distribution declared in `pyproject.toml`: at module level only the base
   `[project].dependencies`; inside a function also an optional extra's, behind an
   `except ImportError` fallback; a provider SDK through `import_sdk(module, extra)`, whose
   extra must exist and install it. A new undeclared import fails here, not on a user's machine.
2. The sdist and the wheel, built once per session with `python -m build` (the wheel from the
   sdist), pass `twine check --strict`; the sdist holds the sources, tests, docs, examples,
   LICENSE and CHANGELOG.md and no caches; the wheel holds `py.typed`, the license in its
   dist-info and the project's metadata; the version is written once (`src/agentcore/_version.py`).
3. That wheel, installed with no extras into a fresh virtual environment (the build and the
   install reach PyPI through pip and its cache), imports every public module, runs an agent with
   tools and both session stores, and answers a model of each provider API whose SDK is missing
   with `pip install 'agentcore-loop[extra]'`.
"""

from __future__ import annotations

import ast
import email.message
import email.parser
import functools
import importlib
import importlib.metadata
import json
import re
import subprocess
import sys
import tarfile
import textwrap
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

# the builds (a fixture, timed with the first test that uses it) can pass 60 s on a loaded
# machine running the tests in parallel
pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "agentcore"
DIST = "agentcore_loop"
"""The distribution's name in file names (PEP 625/427: `agentcore-loop` normalised); `agentcore`
on PyPI is an unrelated project, the import name stays `agentcore`."""

PROVIDER_APIS = {
    "openai-completions": "openai",
    "openai-responses": "openai",
    "anthropic-messages": "anthropic",
    "google-generative-ai": "google",
    "bedrock-converse-stream": "bedrock",
}
"""The API of each adapter that needs a vendor SDK, and the extra that installs it."""

NEEDS_EXTRA: dict[str, str] = {}
"""Public modules that cannot be imported without an extra (module: extra). None today: provider
SDKs are imported when a model of their API is first used, and the CLI only colours its output
with rich when rich is there. Such a module must fail with `pip install 'agentcore-loop[extra]'`."""

IMPORTED_WHEN_RUNNING = {
    "trio": "imported only when sniffio reports that trio is running, so trio is installed",
}
"""Undeclared modules imported inside a function where they are known to be installed."""

PYTEST_PLUGINS = {
    "src/agentcore/testing/_pytest_plugin.py": "loaded by pytest through its pytest11 entry "
    "point, never by `import agentcore`, so pytest is installed whenever it runs",
}
"""Modules only pytest loads: their module-level `import pytest` needs no declared dependency."""


# --- the declared dependencies ---------------------------------------------------------------


def _dist_name(requirement: str) -> str:
    """The normalised distribution name of a PEP 508 requirement (`Foo_Bar>=1` -> `foo-bar`)."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert match, f"cannot read the requirement {requirement!r} in pyproject.toml"
    return re.sub(r"[-_.]+", "-", match.group(1)).lower()


@functools.cache
def _project() -> dict[str, object]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        project = tomllib.load(f)["project"]
    assert isinstance(project, dict)
    return project


def _base_dependencies() -> set[str]:
    return {_dist_name(r) for r in _project()["dependencies"]}  # type: ignore[attr-defined]


def _extras() -> dict[str, set[str]]:
    optional = _project()["optional-dependencies"]
    assert isinstance(optional, dict)
    return {extra: {_dist_name(r) for r in reqs} for extra, reqs in optional.items()}


@functools.cache
def _top_level_providers() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def _providers(module: str) -> set[str]:
    """The installed distributions that provide `module` (normalised names). A namespace
    package (`google`) is shared by several; then only those holding the module itself count."""
    top = module.split(".")[0]
    candidates = {_dist_name(d) for d in _top_level_providers().get(top, [])}
    if len(candidates) <= 1 or "." not in module:
        return candidates
    path = module.replace(".", "/")
    holding = set()
    for dist in candidates:
        files = importlib.metadata.files(dist) or []
        if any(str(f).startswith(path + "/") or str(f) == path + ".py" for f in files):
            holding.add(dist)
    return holding


# --- the imports of src/agentcore ------------------------------------------------------------


@dataclass(frozen=True)
class Import:
    module: str
    where: str
    runs: str  # "on import" (module level), "when called" (in a function), "never" (TYPE_CHECKING)
    guarded: bool  # inside a `try:` that catches ImportError


def _catches_import_error(node: ast.Try) -> bool:
    names: list[str] = []
    for handler in node.handlers:
        kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        names += [k.id for k in kinds if isinstance(k, ast.Name)]
    return bool({"ImportError", "ModuleNotFoundError"} & set(names))


def _runs(node: ast.AST, outer: str) -> str:
    """When the imports under `node` run, given when its parent's do."""
    if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
        return "never"
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) and outer != "never":
        return "when called"
    return outer


def _imports_of(path: Path) -> Iterator[Import]:
    where_prefix = path.relative_to(ROOT)

    def visit(node: ast.AST, runs: str, guarded: bool) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield Import(alias.name, f"{where_prefix}:{child.lineno}", runs, guarded)
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                yield Import(child.module, f"{where_prefix}:{child.lineno}", runs, guarded)
            elif isinstance(child, ast.Try):
                catches = _catches_import_error(child)
                for stmt in child.body:
                    yield from visit(ast.Module(body=[stmt], type_ignores=[]), runs, catches)
                for part in (child.handlers, child.orelse, child.finalbody):
                    for stmt in part:
                        yield from visit(ast.Module(body=[stmt], type_ignores=[]), runs, guarded)
            else:
                yield from visit(child, _runs(child, runs), guarded)

    yield from visit(ast.parse(path.read_text(encoding="utf-8")), "on import", False)


def _third_party_imports() -> list[Import]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        for imp in _imports_of(path):
            top = imp.module.split(".")[0]
            if top not in sys.stdlib_module_names and top != "agentcore":
                found.append(imp)
    return found


def test_the_import_walk_sees_what_it_must() -> None:
    """Guard the walk itself: it finds the base dependencies, rich imported in a function with
    a fallback, and an import for the type checker only."""
    imports = _third_party_imports()
    modules = {i.module.split(".")[0] for i in imports}
    assert {"anyio", "sniffio", "httpx", "jiter", "pydantic", "jsonschema"} <= modules
    rich = [i for i in imports if i.module.startswith("rich")]
    assert rich and all(i.runs == "when called" and i.guarded for i in rich), rich
    assert any(i.module == "pydantic" and i.runs == "never" for i in imports)


def test_every_module_imported_at_module_level_is_a_base_dependency() -> None:
    base = _base_dependencies()
    problems = []
    for imp in _third_party_imports():
        if imp.runs != "on import":
            continue
        if imp.where.split(":")[0] in PYTEST_PLUGINS and imp.module.split(".")[0] == "pytest":
            continue
        providers = _providers(imp.module)
        if not providers & base:
            who = ", ".join(sorted(providers)) or "no installed distribution"
            problems.append(
                f"{imp.where}: `import {imp.module}` runs with `import agentcore`, but it comes "
                f"from {who}, which is not in [project].dependencies of pyproject.toml: declare "
                "it there, or import it lazily behind import_sdk(module, extra)"
            )
    assert not problems, "\n".join(problems)


def test_pytest_plugins_are_loaded_by_pytest_only() -> None:
    """What `PYTEST_PLUGINS` lets through holds: no module of agentcore imports them."""
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for plugin in PYTEST_PLUGINS:
            name = plugin.removeprefix("src/").removesuffix(".py").replace("/", ".")
            assert name not in text or path.relative_to(ROOT).as_posix() == plugin, path


def test_every_deferred_import_is_declared_and_has_a_fallback() -> None:
    base = _base_dependencies()
    extras = _extras()
    optional = set().union(*(deps for name, deps in extras.items() if name != "dev"))
    declared = base.union(*extras.values())
    problems = []
    for imp in _third_party_imports():
        providers = _providers(imp.module)
        who = ", ".join(sorted(providers)) or "no installed distribution"
        if imp.runs == "never":  # for the type checker: declared anywhere will do
            if not providers & declared:
                problems.append(f"{imp.where}: `import {imp.module}` (from {who}) is not declared")
            continue
        if imp.runs != "when called" or providers & base:
            continue
        if imp.module.split(".")[0] in IMPORTED_WHEN_RUNNING:
            continue
        if not providers & optional:
            problems.append(
                f"{imp.where}: `import {imp.module}` (from {who}) is declared in no extra of "
                "pyproject.toml"
            )
        elif not imp.guarded:
            problems.append(
                f"{imp.where}: `import {imp.module}` needs an extra but has no `except "
                "ImportError` fallback: a plain install would raise a bare ModuleNotFoundError; "
                "use import_sdk(module, extra), which names the extra to install"
            )
    assert not problems, "\n".join(problems)


def _import_sdk_calls() -> Iterator[tuple[str, str, str]]:
    """(module, extra, where) of every `import_sdk(...)` in src/agentcore: literal arguments,
    or `import_sdk(*TABLE[...])` over a module-level dict literal of such pairs."""
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        tables: dict[str, ast.expr] = {}
        for node in tree.body:
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        tables[target.id] = node.value
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "import_sdk"
            ):
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            args = node.args
            if len(args) == 2 and all(isinstance(a, ast.Constant) for a in args):
                yield args[0].value, args[1].value, where  # type: ignore[attr-defined,misc]
                continue
            assert (
                len(args) == 1
                and isinstance(args[0], ast.Starred)
                and isinstance(args[0].value, ast.Subscript)
                and isinstance(args[0].value.value, ast.Name)
            ), f"{where}: cannot read the arguments of import_sdk; use literals or a dict table"
            table = ast.literal_eval(tables[args[0].value.value.id])
            for module, extra in table.values():
                yield module, extra, where


def test_every_sdk_is_asked_for_by_an_extra_that_installs_it() -> None:
    extras = _extras()
    calls = list(_import_sdk_calls())
    assert {(m, e) for m, e, _ in calls} >= {
        ("openai", "openai"),
        ("anthropic", "anthropic"),
        ("google.genai", "google"),
    }
    problems = []
    for module, extra, where in calls:
        if extra not in extras:
            problems.append(f"{where}: import_sdk names the extra {extra!r}, not in pyproject.toml")
        elif not _providers(module) & extras[extra]:
            problems.append(f"{where}: the extra {extra!r} does not install {module!r}")
    assert not problems, "\n".join(problems)


def test_the_all_extra_is_every_runtime_extra() -> None:
    extras = _extras()
    runtime = set().union(*(deps for name, deps in extras.items() if name not in ("all", "dev")))
    assert extras["all"] == runtime


# --- the distributions: built once, checked as an index would ---------------------------------

_BUILD_TIMEOUT = 300


@dataclass(frozen=True)
class Dists:
    sdist: Path
    wheel: Path


@pytest.fixture(scope="session")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Dists:
    """The sdist and the wheel, built once per session by `python -m build` as a release would
    be: the sdist from the checkout, then the wheel from the unpacked sdist (so a file missing from
    the sdist breaks the wheel), each in an isolated environment with the build backend
    (hatchling) from PyPI or pip's cache."""
    out = tmp_path_factory.mktemp("dist")
    command = [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)]
    try:
        done = subprocess.run(
            command, cwd=out, capture_output=True, text=True, timeout=_BUILD_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`{' '.join(command)}` took more than {_BUILD_TIMEOUT} s: is PyPI reachable?")
    if done.returncode != 0:
        pytest.fail(
            f"`{' '.join(command)}` failed with exit code {done.returncode} (it needs the `build` "
            "package, and fetches hatchling from PyPI or pip's cache):\n"
            f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        )
    (sdist,) = out.glob(f"{DIST}-*.tar.gz")
    (wheel,) = out.glob(f"{DIST}-*.whl")
    return Dists(sdist=sdist, wheel=wheel)


def test_the_distributions_pass_twine_check_strict(dists: Dists) -> None:
    """What PyPI would refuse (metadata, a README that does not render) fails here."""
    done = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(dists.sdist), str(dists.wheel)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2, done.stdout


def _version() -> str:
    """agentcore.__version__, read from the checkout's one place for it."""
    namespace: dict[str, object] = {}
    exec((SRC / "_version.py").read_text("utf-8"), namespace)
    version = namespace["__version__"]
    assert isinstance(version, str)
    return version


def test_the_distribution_name_is_free_and_the_readme_says_how_it_relates() -> None:
    """Issue 26: `agentcore` on PyPI is another project. The distribution is `agentcore-loop`,
    the import name `agentcore`; the README and the changelog say so, and no install line in the
    docs asks pip for the other project."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == "agentcore-loop"
    readme = (ROOT / "README.md").read_text()
    assert "**`agentcore-loop`**" in readme and "the import name is **`agentcore`**" in readme
    assert "`agentcore-loop`" in (ROOT / "CHANGELOG.md").read_text()
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    wrong = [
        f"{page.relative_to(ROOT)}: {match.group(0)}"
        for page in pages
        for match in re.finditer(
            r"pip install ['\"]?agentcore(\[[^\]]*\])?['\"]?(?=\s|$)", page.read_text()
        )
    ]
    assert not wrong, wrong


def test_the_version_is_written_once() -> None:
    """src/agentcore/_version.py holds it; pyproject reads it (dynamic), the package imports it."""
    import agentcore

    assert agentcore.__version__ == _version()
    assert "version" in _project()["dynamic"]  # type: ignore[operator]
    assert "version" not in _project()
    with (ROOT / "pyproject.toml").open("rb") as f:
        hatch = tomllib.load(f)["tool"]["hatch"]
    assert hatch["version"]["path"] == "src/agentcore/_version.py"
    written = [
        str(path.relative_to(ROOT))
        for path in sorted(SRC.rglob("*.py"))
        if re.search(rf"[\"']{re.escape(_version())}[\"']", path.read_text("utf-8"))
    ]
    assert written == ["src/agentcore/_version.py"], "the version is written again elsewhere"


def _metadata(text: str) -> email.message.Message:
    return email.parser.Parser().parsestr(text)


def test_the_sdist_holds_what_a_source_release_needs(dists: Dists) -> None:
    top = f"{DIST}-{_version()}"
    assert dists.sdist.name == f"{top}.tar.gz"
    with tarfile.open(dists.sdist) as sdist:
        names = {name.removeprefix(f"{top}/") for name in sdist.getnames()}
        info = sdist.extractfile(f"{top}/PKG-INFO")
        assert info is not None
        metadata = _metadata(info.read().decode("utf-8"))
    for needed in [
        "PKG-INFO",
        "pyproject.toml",
        "README.md",
        "CHANGELOG.md",
        "LICENSE",
        "src/agentcore/__init__.py",
        "src/agentcore/_version.py",
        "src/agentcore/py.typed",
        "src/agentcore/llm/models.json",
        "src/agentcore/web/static/index.html",
        "tests/conftest.py",
        "tests/test_packaging.py",
        "examples/research_agent.py",
        "examples/research_notes/waggle-dance.md",
        "docs/examples.md",
        "scripts/local-model",
    ]:
        assert needed in names, f"the sdist has no {needed}"
    unwanted = {".venv", "site", ".git", "__pycache__", ".mypy_cache", ".ruff_cache", "bench"}
    for name in names:
        parts = set(name.split("/"))
        assert not parts & unwanted and not name.endswith(".pyc"), f"the sdist has {name}"
    assert metadata["Version"] == _version()


def test_the_wheel_holds_the_package_its_license_and_its_metadata(dists: Dists) -> None:
    version = _version()
    assert dists.wheel.name == f"{DIST}-{version}-py3-none-any.whl"
    info = f"{DIST}-{version}.dist-info"
    with zipfile.ZipFile(dists.wheel) as wheel:
        names = set(wheel.namelist())
        metadata = _metadata(wheel.read(f"{info}/METADATA").decode("utf-8"))
        license_text = wheel.read(f"{info}/licenses/LICENSE").decode("utf-8")
    assert "agentcore/py.typed" in names
    assert "agentcore/llm/models.json" in names
    assert not any(n.startswith(("tests/", "examples/", "docs/")) for n in names)
    assert license_text == (ROOT / "LICENSE").read_text("utf-8")
    assert license_text.startswith("MIT License\n\nCopyright (c) 2026 agentcore developers\n")
    assert metadata["Name"] == "agentcore-loop"  # the import name stays `agentcore`
    assert metadata["Version"] == version
    assert metadata["License-Expression"] == "MIT"
    assert metadata.get_all("License-File") == ["LICENSE"]
    assert metadata["Requires-Python"] == ">=3.11"
    urls = dict(u.split(", ", 1) for u in metadata.get_all("Project-URL") or [])
    assert set(urls) == {"Homepage", "Documentation", "Repository", "Issues", "Changelog"}
    assert all(u.startswith("https://") for u in urls.values())
    classifiers = metadata.get_all("Classifier") or []
    for classifier in [
        "Development Status :: 3 - Alpha",
        "Intended Audience :: Developers",
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: 3.12",
        "Programming Language :: Python :: 3.13",
        "Framework :: AnyIO",
        "Typing :: Typed",
    ]:
        assert classifier in classifiers
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert metadata.get_payload().startswith("# agentcore\n")  # the README is the description


# --- the wheel, installed with no extras -----------------------------------------------------

_PIP_TIMEOUT = 240


def _pip(*args: str, cwd: Path) -> None:
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    try:
        done = subprocess.run(
            command, cwd=cwd, capture_output=True, text=True, timeout=_PIP_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`{' '.join(command)}` took more than {_PIP_TIMEOUT} s: is PyPI reachable?")
    if done.returncode != 0:
        pytest.fail(
            f"`{' '.join(command)}` failed with exit code {done.returncode}. The wheel build "
            "fetches hatchling and the install fetches agentcore's dependencies from PyPI "
            "(or pip's cache): this test needs the package index.\n"
            f"{done.stderr[-3000:]}"
        )


@dataclass(frozen=True)
class BaseInstall:
    python: Path
    wheel: Path
    cwd: Path

    def run(self, code: str, *args: str) -> subprocess.CompletedProcess[str]:
        """Run Python code in the environment, isolated (`-I`: no PYTHONPATH, no user site,
        not the checkout), so only the installed wheel can be imported."""
        return subprocess.run(
            [str(self.python), "-I", "-c", textwrap.dedent(code), *args],
            cwd=self.cwd,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def json(self, code: str, *args: str) -> object:
        done = self.run(code, *args)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def base_install(dists: Dists, tmp_path_factory: pytest.TempPathFactory) -> BaseInstall:
    """The wheel built from this checkout (`dists`), installed with no extras into a fresh
    venv."""
    tmp = tmp_path_factory.mktemp("base-install")
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(tmp / "venv")], check=True, cwd=tmp
    )
    python = tmp / "venv" / "bin" / "python"
    _pip("--python", str(python), "install", str(dists.wheel), cwd=tmp)
    return BaseInstall(python=python, wheel=dists.wheel, cwd=tmp)


def _public_modules(wheel: Path) -> list[str]:
    """Every module of the wheel with no private part in its name (`__init__` is the package)."""
    modules = []
    for name in zipfile.ZipFile(wheel).namelist():
        if not name.endswith(".py"):
            continue
        parts = name[: -len(".py")].split("/")
        if parts[-1] == "__init__":
            parts.pop()
        if parts[-1] == "__main__" or any(p.startswith("_") for p in parts):
            continue
        modules.append(".".join(parts))
    return sorted(modules)


@pytest.mark.timeout(300)
def test_the_base_install_has_agentcore_and_no_extra(base_install: BaseInstall) -> None:
    found = base_install.json(
        """
        import importlib.util, json, agentcore
        names = ["openai", "anthropic", "google.genai", "rich", "trio"]
        print(json.dumps({
            "file": agentcore.__file__,
            "present": [n for n in names if importlib.util.find_spec(n.split(".")[0])
                        and importlib.util.find_spec(n)],
        }))
        """
    )
    assert isinstance(found, dict)
    assert str(base_install.python.parents[1]) in found["file"], found  # the wheel, not src/
    assert found["present"] == [], "the base install pulled in an optional package"


@pytest.mark.timeout(300)
def test_the_installed_version_is_the_metadata_version(base_install: BaseInstall) -> None:
    found = base_install.json(
        """
        import importlib.metadata, json, agentcore, agentcore.tracing
        print(json.dumps([agentcore.__version__, importlib.metadata.version("agentcore-loop")]))
        """
    )
    assert found == [_version(), _version()]


@pytest.mark.timeout(300)
def test_every_public_module_imports_without_extras(base_install: BaseInstall) -> None:
    modules = _public_modules(base_install.wheel)
    assert {
        "agentcore",
        "agentcore.builtin_tools",
        "agentcore.cli",
        "agentcore.llm",
        "agentcore.llm.providers.openai_completions",
        "agentcore.sessions",
        "agentcore.testing",
    } <= set(modules)
    outcome = base_install.json(
        """
        import importlib, json, sys
        out = {}
        for name in sys.argv[1:]:
            try:
                importlib.import_module(name)
                out[name] = None
            except Exception as exc:
                out[name] = f"{type(exc).__name__}: {exc}"
        print(json.dumps(out))
        """,
        *modules,
    )
    assert isinstance(outcome, dict)
    for module, error in outcome.items():
        if module in NEEDS_EXTRA:
            assert error is not None, (
                f"{module} imports without agentcore-loop[{NEEDS_EXTRA[module]}]"
            )
            assert f"pip install 'agentcore-loop[{NEEDS_EXTRA[module]}]'" in error, error
        else:
            assert error is None, f"import {module} failed on a plain install: {error}"


@pytest.mark.timeout(300)
def test_an_agent_runs_on_the_base_install(base_install: BaseInstall) -> None:
    """Beyond imports: the dependencies imported on first use (pydantic for `@tool`, jsonschema
    for a dict schema, sqlite3) and the model catalogue shipped as package data."""
    found = base_install.json(
        """
        import json, sys, tempfile
        import anyio
        from agentcore import Agent, AgentTool, AgentToolResult, tool
        from agentcore.llm import get_providers
        from agentcore.sessions import JsonlSessionStore, SqliteSessionStore
        from agentcore.testing import FauxProvider, faux_text, faux_tool_call

        @tool
        def add(a: int, b: int) -> int:
            "Add two integers."
            return a + b

        async def shout(tool_call_id, args, signal, on_update):
            return AgentToolResult.text(args["text"].upper())

        loud = AgentTool(
            name="shout", description="Upper-case a text.", execute=shout,
            parameters={"type": "object", "properties": {"text": {"type": "string"}},
                        "required": ["text"]},
        )

        async def main():
            roles = {}
            with tempfile.TemporaryDirectory() as tmp:
                for store in (JsonlSessionStore(tmp + "/j"), SqliteSessionStore(tmp + "/s.db")):
                    faux = FauxProvider([
                        faux_tool_call("add", {"a": 2, "b": "40"}),
                        faux_tool_call("shout", {"text": "done"}),
                        faux_text("42"),
                    ])
                    with store:
                        agent = Agent(initial_state={"model": faux.model, "tools": [add, loud]},
                                      session=store.create())
                        await agent.prompt("2 + 40?")
                        loaded = store.load(agent.session.id).messages
                        roles[type(store).__name__] = [
                            [m.role for m in loaded],
                            [b.text for m in loaded if m.role == "tool_result" for b in m.content],
                        ]
            return roles

        print(json.dumps({"roles": anyio.run(main), "providers": len(get_providers())}))
        """
    )
    assert isinstance(found, dict)
    assert found["providers"] >= 4
    expected = [
        ["user", "assistant", "tool_result", "assistant", "tool_result", "assistant"],
        ["42", "DONE"],
    ]
    assert found["roles"] == {"JsonlSessionStore": expected, "SqliteSessionStore": expected}


@pytest.mark.timeout(300)
def test_a_provider_without_its_sdk_names_the_extra(base_install: BaseInstall) -> None:
    found = base_install.json(
        """
        import json, sys
        import anyio
        from agentcore import AgentContext, AgentLoopConfig, MissingExtraError, UserMessage
        from agentcore import agent_loop
        from agentcore.llm import Context, Model, stream_simple
        from agentcore.llm.types import SimpleStreamOptions

        async def main(api, base_url=None):
            # Chat Completions needs its SDK for OpenAI's own service (a compatible server is
            # read directly: the "compatible" case below)
            if base_url is None:
                on_service = api == "openai-completions"
                base_url = "https://api.openai.com/v1" if on_service else "http://127.0.0.1:9"
            model = Model(id="m", api=api, provider="p", base_url=base_url)
            try:
                stream_simple(model, Context(), SimpleStreamOptions(api_key="k"))
                raised = None
            except MissingExtraError as exc:
                raised = str(exc)
            config = AgentLoopConfig(model=model, api_key="k")
            events = agent_loop([UserMessage(content="hi")], AgentContext(), config)
            async for _ in events:
                pass
            last = (await events.result())[-1]
            return {"raised": raised, "stop_reason": last.stop_reason, "error": last.error_message}

        found = {api: anyio.run(main, api) for api in sys.argv[1:]}
        found["compatible"] = anyio.run(main, "openai-completions", "http://127.0.0.1:9/v1")
        print(json.dumps(found))
        """,
        *PROVIDER_APIS,
    )
    assert isinstance(found, dict)
    compatible = found.pop("compatible")  # a compatible server needs no SDK: sent, not refused
    assert compatible["raised"] is None, compatible
    assert compatible["stop_reason"] == "error" and "connect" in compatible["error"], compatible
    for api, extra in PROVIDER_APIS.items():
        advice = f"pip install 'agentcore-loop[{extra}]'"
        assert found[api]["raised"] is not None and advice in found[api]["raised"], found[api]
        assert found[api]["stop_reason"] == "error", found[api]
        assert advice in found[api]["error"], found[api]


@pytest.mark.timeout(300)
def test_the_command_works_and_names_the_extra_it_needs(base_install: BaseInstall) -> None:
    """`agentcore` runs without rich (plain output); a model whose SDK is missing is refused
    with the extra to install (exit code 2), before anything is sent."""
    command = base_install.python.parent / "agentcore"
    assert command.exists(), "the wheel installs no `agentcore` command"
    models = subprocess.run(
        [str(command), "models", "openai", "--json"],
        cwd=base_install.cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert models.returncode == 0, models.stderr
    first = json.loads(models.stdout.splitlines()[0])
    refused = subprocess.run(
        [str(command), "run", "hello", "--model", f"openai/{first['id']}"],
        cwd=base_install.cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"PATH": "/usr/bin:/bin", "OPENAI_API_KEY": "sk-test"},
    )
    assert refused.returncode == 2, (refused.returncode, refused.stderr)
    assert "pip install 'agentcore-loop[openai]'" in refused.stderr


@pytest.mark.timeout(300)
def test_the_web_page_ships_in_the_wheel_and_agentcore_web_names_its_extra(
    base_install: BaseInstall,
) -> None:
    """The page of `agentcore serve` is package data (no build step, no CDN); without the `[web]`
    extra, `import agentcore.web` works and its names say which extra to install."""
    names = set(zipfile.ZipFile(base_install.wheel).namelist())
    for asset in ("index.html", "app.js", "markdown.js", "inputform.js", "app.css", "favicon.svg"):
        assert f"agentcore/web/static/{asset}" in names, asset
    found = base_install.json(
        """
        import json
        import agentcore.web
        try:
            agentcore.web.create_app
        except Exception as exc:
            print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
        else:
            print(json.dumps({"error": None}))
        """
    )
    assert isinstance(found, dict)
    assert found["error"] is not None and "MissingExtraError" in found["error"]
    assert "pip install 'agentcore-loop[web]'" in found["error"]
