"""The import contract of DESIGN section 1, read from the source (every import statement, those
inside functions and under `TYPE_CHECKING` included):

* shared (`messages`, `errors`, `abort`) imports nothing above it;
* the model layer (`agentcore.llm` and its providers) never imports the agent layer;
* the library never imports the CLI;
* the CLI and the integrations (`cli`, `mcp`, `tracing`, `web`, `temporal`) use only public names:
  no private module (`agentcore._loop`, `agentcore.llm._env`) and no private name
  (`from agentcore.abort import _x`) outside their own package, with one declared exception for
  the integrations: `agentcore._optional` (lazy exports, importing an extra's SDK);
* the core never imports an integration;
* the agent layer uses only the model layer's public names: no private module
  (`agentcore.llm._request`) and no private name (`from agentcore.llm.registry import _x`);
  what it needs of the model layer is a public seam (`agentcore.llm.retries`,
  `agentcore.llm.events.ABORTED_ERROR_MESSAGE`, `agentcore.llm.describe_invalid_json`);
* no private name of a shared module (`from agentcore.abort import _x`) is used outside its
  package, and of its private modules only the declared seams (`SHARED_SEAMS`) are;
* no import circle anywhere (see the end of this file).

Each rule is also checked against a made-up module that breaks it, so that a rule which can no
longer fail is noticed.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

SHARED = ("agentcore.messages", "agentcore.errors", "agentcore.abort")
MODEL = "agentcore.llm"
CLI = "agentcore.cli"
OPTIONAL = "agentcore._optional"  # the one private module the integrations share
INTEGRATIONS = (
    "agentcore.a2a",
    "agentcore.evals",
    "agentcore.mcp",
    "agentcore.temporal",
    "agentcore.tracing",
    "agentcore.web",
)

SHARED_SEAMS = {
    "agentcore.abort._eventloop": "the current event loop's reference, running a callback on it "
    "from any thread (abort, a request's abort listener, the event stream, tool execution)",
    "agentcore.abort._no_signal": "the signal of a run given none (the engine gives it, the model "
    "layer recognises it)",
}
"""Private modules of the shared layer that the other layers may use: declared, documented
seams (each module's docstring says what it is for), not public API."""


@dataclass(frozen=True)
class Import:
    """One imported module (and the name taken from it, for `from m import name`)."""

    module: str
    name: str | None
    line: int


def _under(name: str, *packages: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name: str) -> bool:
    base = SRC.joinpath(*name.split("."))
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def imports_of(module: str, source: str, *, is_package: bool) -> list[Import]:
    """The `agentcore` imports of a module's source, relative ones resolved."""
    package = module if is_package else module.rpartition(".")[0]
    found: list[Import] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [Import(a.name, None, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                if _is_module(submodule):  # `from agentcore.llm import models`
                    found.append(Import(submodule, None, node.lineno))
                else:
                    found.append(Import(target, alias.name, node.lineno))
    return [i for i in found if _under(i.module, "agentcore")]


def violations(module: str, imports: list[Import]) -> list[str]:
    """Every import of `module` that breaks a layer rule, in words."""
    out: list[str] = []
    for imp in imports:
        target, where = imp.module, f"{module}:{imp.line} imports {imp.module}"
        if imp.name is not None:
            where += f".{imp.name}"
        if _under(module, *SHARED) and not _under(target, *SHARED):
            out.append(f"shared layer: {where}")
        if _under(module, MODEL) and not _under(target, MODEL, *SHARED):
            out.append(f"model layer imports above it: {where}")
        if not _under(module, CLI) and _under(target, CLI):
            out.append(f"library imports the CLI: {where}")
        own = next((p for p in (CLI, *INTEGRATIONS) if _under(module, p)), None)
        private_module = any(part.startswith("_") for part in target.split(".")[1:])
        private_name = (
            imp.name is not None and imp.name.startswith("_") and not imp.name.endswith("__")
        )
        agent_layer = own is None and not _under(module, MODEL)
        if agent_layer and _under(target, MODEL) and (private_module or private_name):
            out.append(f"the agent layer uses a private name of the model layer: {where}")
        shared = next((s for s in SHARED if _under(target, s)), None)
        outside = shared is not None and not _under(module, shared)
        if outside and (private_name or (private_module and target not in SHARED_SEAMS)):
            out.append(f"a private name of a shared module is used outside it: {where}")
        private = private_module or private_name
        optional = own in INTEGRATIONS and target == OPTIONAL and not private_name
        if own is not None and not _under(target, own) and private and not optional:
            out.append(f"{own} uses a private name: {where}")
        if own is None and _under(target, *INTEGRATIONS):
            out.append(f"core imports an integration: {where}")
    return out


def _all_modules() -> list[tuple[str, Path]]:
    return sorted((_module_name(p), p) for p in (SRC / "agentcore").rglob("*.py"))


def test_the_layers_hold_in_the_source() -> None:
    broken = []
    modules = _all_modules()
    assert len(modules) > 50  # the walk found the package
    for module, path in modules:
        package = path.name == "__init__.py"
        broken += violations(
            module, imports_of(module, path.read_text("utf-8"), is_package=package)
        )
    assert broken == []


@pytest.mark.parametrize(
    ("module", "source", "rule"),
    [
        ("agentcore.messages._types", "from ..llm import Model", "shared layer"),
        ("agentcore.errors", "import agentcore.events", "shared layer"),
        ("agentcore.llm.providers.faux", "from ...config import AgentLoopConfig", "model layer"),
        ("agentcore.llm.stream", "from agentcore import agent_loop", "model layer"),
        ("agentcore.agent", "from .cli import main", "library imports the CLI"),
        ("agentcore.cli._run", "from .._loop import agent_loop", "agentcore.cli uses a private"),
        ("agentcore.cli._run", "from ..llm import _env", "agentcore.cli uses a private"),
        ("agentcore.mcp._client", "from ..abort import _threadsafe_caller", "agentcore.mcp uses"),
        ("agentcore.tracing._otel", "import agentcore.llm._request", "agentcore.tracing uses"),
        ("agentcore._loop", "from .tracing import tracer", "core imports an integration"),
        ("agentcore.llm.registry", "def f():\n    import agentcore.web", "model layer"),
        ("agentcore._engine.request", "from ..llm._request import watch_retries", "agent layer"),
        (
            "agentcore._output.schema",
            "def f():\n    from ..llm import _sdk",
            "agent layer",
        ),
        ("agentcore.agent", "from .llm.registry import _providers", "agent layer"),
        ("agentcore.web._deps", "from .._optional import _helper", "agentcore.web uses"),
        ("agentcore.cli._run", "from .._optional import import_sdk", "agentcore.cli uses"),
        ("agentcore.mcp._sdk", "from .._tools.values import to_json_value", "agentcore.mcp uses"),
        ("agentcore._engine.loop", "from ..abort import _NEVER_ABORTED", "shared module"),
        ("agentcore.llm._driver", "from ..abort import _threadsafe_caller", "shared module"),
        ("agentcore._engine.loop", "from ..messages._types import Usage", "shared module"),
        ("agentcore.llm._adapter", "import agentcore.abort._signal", "shared module"),
    ],
)
def test_each_rule_can_fail(module: str, source: str, rule: str) -> None:
    found = violations(module, imports_of(module, source, is_package=False))
    assert any(rule in v for v in found), found


def test_what_the_rules_allow() -> None:
    allowed = [
        ("agentcore.llm.builder", "from ..messages import AssistantMessage"),
        ("agentcore.llm.models", "from ..errors import ModelNotFoundError"),
        ("agentcore.llm._driver", "from ..abort._eventloop import threadsafe_caller"),  # a seam
        ("agentcore._engine.loop", "from ..abort._no_signal import NEVER_ABORTED"),  # a seam
        ("agentcore._engine.request", "from ..llm.retries import watch_retries"),
        ("agentcore.web._deps", "from .._optional import import_sdk"),  # the declared exception
        ("agentcore.tracing._otel", "from agentcore._optional import import_sdk"),
        ("agentcore._engine.tool_execution", "from ..llm import describe_invalid_json"),
        ("agentcore.abort._no_signal", "from ._eventloop import current_loop"),  # its own
        ("agentcore.messages._json", "from ._types import Usage"),
        ("agentcore.cli._run", "from agentcore.llm import get_model"),
        ("agentcore.mcp._server", "from ._tools import as_tool"),  # its own private module
        ("agentcore.tracing", "from agentcore import Agent"),
        ("agentcore.mcp._server", "from agentcore import __version__"),
    ]
    for module, source in allowed:
        assert violations(module, imports_of(module, source, is_package=False)) == [], source


# --- no import circle ---------------------------------------------------------------------------


def import_graph(sources: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """Module -> the `agentcore` modules it imports (every import statement: at the top, under
    `TYPE_CHECKING` and inside functions), from `{module: (source, is_package)}`."""
    graph: dict[str, set[str]] = {}
    for module, (source, package) in sources.items():
        graph[module] = {
            i.module
            for i in imports_of(module, source, is_package=package)
            if i.module != module and _is_module(i.module)
        }
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of `graph`: its strongly connected parts of more than one module
    (Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_no_import_circle_in_the_source() -> None:
    sources = {
        module: (path.read_text("utf-8"), path.name == "__init__.py")
        for module, path in _all_modules()
    }
    graph = import_graph(sources)
    assert sum(len(targets) for targets in graph.values()) > 300  # the walk found the imports
    assert circles(graph) == []


def test_a_made_up_circle_is_found() -> None:
    """Type-only and function-local imports close a circle as well as top-level ones."""
    sources = {
        "agentcore._engine.loop": ("from .typed_output import TypedRun", False),
        "agentcore._engine.typed_output": (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .run_types import X",
            False,
        ),
        "agentcore._engine.run_types": ("def f():\n    from . import loop", False),
        "agentcore.output": ("from ._output.answer_tool import final_answer_tool", False),
    }
    assert circles(import_graph(sources)) == [
        ["agentcore._engine.loop", "agentcore._engine.run_types", "agentcore._engine.typed_output"]
    ]
    del sources["agentcore._engine.run_types"]
    assert circles(import_graph(sources)) == []
