"""`agentcore.mcp` as a package: a curated, documented surface, the SDK imported only when
needed, and the direction of imports (the core never imports it; it uses only public names)."""

from __future__ import annotations

import ast
import importlib
import inspect
import types
from pathlib import Path

import pytest

import agentcore
import agentcore.mcp
from support import run_python

SRC = Path(agentcore.__file__).resolve().parent
INTEGRATION = SRC / "mcp"


def test_all_is_sorted_complete_and_documented() -> None:
    exported = list(agentcore.mcp.__all__)
    assert exported == sorted(exported)
    for name in exported:
        value = getattr(agentcore.mcp, name)
        doc = value.__dict__.get("__doc__") if inspect.isclass(value) else value.__doc__
        assert doc and doc.strip(), f"agentcore.mcp.{name} has no docstring"
    public = {
        n
        for n, v in vars(agentcore.mcp).items()
        if not n.startswith("_") and not isinstance(v, types.ModuleType)
    }
    public.discard("annotations")  # the `from __future__` flag
    assert public == set(exported)
    assert set(dir(agentcore.mcp)) >= set(exported)
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        agentcore.mcp.nothing  # noqa: B018


def test_agent_tool_does_not_import_the_sdk() -> None:
    out = run_python(
        "import sys\n"
        "from agentcore import agent_tool\n"
        "import agentcore, agentcore.llm, agentcore.sessions, agentcore.testing\n"
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_'))))\n"
    )
    assert out == "[]"


def test_the_old_name_of_agent_tool_still_works_with_a_deprecation_warning() -> None:
    out = run_python(
        "import sys, warnings\n"
        "sys.modules['mcp'] = None  # as if it were not installed: it needs no MCP\n"
        "import agentcore\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.simplefilter('always')\n"
        "    from agentcore.mcp import agent_tool\n"
        "warning = seen[0]\n"
        "same = agent_tool is agentcore.agent_tool\n"
        "print(same, warning.category.__name__, '|', warning.message)\n"
    )
    assert out == (
        "True DeprecationWarning | agentcore.mcp.agent_tool moved to agentcore.agent_tool "
        "(it needs no MCP); import it from agentcore"
    )


def test_without_the_sdk_the_error_names_the_extra() -> None:
    out = run_python(
        "import sys\n"
        "sys.modules['mcp'] = None  # as if it were not installed\n"
        "import agentcore.mcp\n"
        "try:\n"
        "    from agentcore.mcp import MCPClient\n"
        "except ImportError as exc:\n"
        "    print(type(exc).__name__, '|', exc)\n"
    )
    assert out == (
        "MissingExtraError | agentcore.mcp needs the 'mcp' package, which is not installed: "
        "pip install 'agentcore-loop[mcp]'"
    )


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """(absolute module, imported names) of each import in a module of the package."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(("agentcore", *path.relative_to(SRC).parent.parts))
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.append((module, [alias.name for alias in node.names]))
    return found


def test_the_core_never_imports_the_integration() -> None:
    for path in SRC.rglob("*.py"):
        if INTEGRATION in path.parents or path.name == "_mcp.py":
            continue
        for module, names in _imports(path):
            assert not module.startswith("agentcore.mcp"), path
            assert not (module == "agentcore" and "mcp" in names), path


def test_the_integration_uses_only_public_agentcore_names() -> None:
    for path in INTEGRATION.glob("*.py"):
        for module, names in _imports(path):
            if not module.startswith("agentcore") or module.startswith("agentcore.mcp"):
                continue
            if module == "agentcore._optional":  # the one declared exception (DESIGN section 1)
                continue
            assert not any(part.startswith("_") for part in module.split(".")), (path, module)
            assert not [n for n in names if n.startswith("_") and n != "__version__"], path
            imported = importlib.import_module(module)
            for name in names:
                assert name in getattr(imported, "__all__", ()) or name == "__version__", (
                    f"{path.name} imports {module}.{name}, which is not public"
                )
