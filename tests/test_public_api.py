"""The public surface: `__all__` matches what is defined, every name is documented, and
`import agentcore` stays free of provider SDKs."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
import types
from functools import cache
from typing import Any

import pytest

PUBLIC_MODULES = [
    "agentcore",
    "agentcore.builtin_tools",
    "agentcore.llm",
    "agentcore.memory",
    "agentcore.sessions",
    "agentcore.testing",
    "agentcore.tracing",
]


def _public_names(module: types.ModuleType) -> set[str]:
    """Names a module defines or re-exports on purpose: not private, not a submodule, not the
    `from __future__ import annotations` feature flag."""
    names = set()
    for name, value in vars(module).items():
        if name.startswith("_") or isinstance(value, types.ModuleType):
            continue
        if name == "annotations" and type(value).__name__ == "_Feature":
            continue
        names.add(name)
    return names


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_all_matches_the_public_names(module_name: str) -> None:
    module = importlib.import_module(module_name)
    exported = list(module.__all__)
    assert exported == sorted(exported), "keep __all__ sorted"
    assert len(exported) == len(set(exported)), "duplicates in __all__"
    for name in exported:
        assert hasattr(module, name), f"{module_name}.{name} is exported but not defined"
    assert _public_names(module) == set(exported) - {"__version__"}


def test_star_import_gives_exactly_all() -> None:
    namespace: dict[str, Any] = {}
    exec("from agentcore import *", namespace)
    namespace.pop("__builtins__")
    import agentcore

    assert set(namespace) == set(agentcore.__all__)


@cache
def _module_ast(module_name: str) -> ast.Module:
    return ast.parse(inspect.getsource(importlib.import_module(module_name)))


def _alias_docstring(module_name: str, name: str) -> str | None:
    """The string literal right after `name = ...` at the top level of a module (the attribute
    docstring that documentation tools read for type aliases and constants)."""
    body = _module_ast(module_name).body
    for node, following in zip(body, [*body[1:], None], strict=True):
        if isinstance(node, ast.Assign):
            targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            targets = [node.target.id]
        else:
            continue
        if name in targets:
            if (
                isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            ):
                return following.value.value
            return None
    return None


def _defining_module(public: str, name: str) -> str:
    """Where a re-exported alias is assigned: the agentcore module whose source assigns it."""
    candidates = [
        m
        for m, mod in sorted(sys.modules.items())
        if m.startswith("agentcore") and m != public and name in vars(mod or types.ModuleType(m))
    ]
    for candidate in candidates:
        try:
            body = _module_ast(candidate).body
        except (OSError, TypeError):
            continue
        for node in body:
            target = node.target if isinstance(node, ast.AnnAssign) else None
            targets = node.targets if isinstance(node, ast.Assign) else [target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return candidate
    raise AssertionError(f"cannot find where {public}.{name} is defined")


def _documented(public: str, name: str) -> bool:
    value = getattr(importlib.import_module(public), name)
    if inspect.isclass(value):
        doc = value.__dict__.get("__doc__")
        # a dataclass without a docstring gets its signature as __doc__
        return bool(doc) and not doc.startswith(f"{value.__name__}(")
    if inspect.isfunction(value) or inspect.isbuiltin(value):
        return bool(value.__doc__ and value.__doc__.strip())
    return bool(_alias_docstring(_defining_module(public, name), name))


def _docstring_cases() -> list[Any]:
    cases = []
    for module_name in PUBLIC_MODULES:
        for name in importlib.import_module(module_name).__all__:
            if name == "__version__":
                continue
            cases.append(pytest.param(module_name, name, id=f"{module_name}.{name}"))
    return cases


@pytest.mark.parametrize(("module_name", "name"), _docstring_cases())
def test_every_public_name_has_a_docstring(module_name: str, name: str) -> None:
    assert _documented(module_name, name), f"{module_name}.{name} has no docstring"


def test_modules_have_docstrings() -> None:
    for module_name in [
        *PUBLIC_MODULES,
        "agentcore.messages",
        "agentcore.events",
        "agentcore.limits",
    ]:
        assert importlib.import_module(module_name).__doc__, module_name


def test_import_does_not_pull_in_provider_sdks() -> None:
    code = (
        "import sys, agentcore, agentcore.llm, agentcore.testing\n"
        "from agentcore.testing import FauxProvider\n"
        "FauxProvider()\n"
        "sdks = ('openai', 'anthropic', 'google')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in sdks or m in sdks))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    loaded = ast.literal_eval(out.stdout.strip())
    assert not [m for m in loaded if m.split(".")[0] in ("openai", "anthropic")], loaded
    assert not [m for m in loaded if m.startswith("google")], loaded


def test_version() -> None:
    import agentcore

    assert isinstance(agentcore.__version__, str) and agentcore.__version__.count(".") == 2


def test_pi_names_are_at_top_level() -> None:
    """The event sink type, the Agent's listener type and custom-message registration are public
    at top level (pi exports them), and are the very objects the loop, Agent and codec use."""
    import typing

    import agentcore
    from agentcore import agent, messages
    from agentcore.events import AgentEvent

    assert agentcore.register_message_type is messages.register_message_type
    assert agentcore.Listener is agent.Listener
    hints = typing.get_type_hints(agentcore.run_agent_loop)
    assert hints["emit"] == agentcore.AgentEventSink
    assert typing.get_args(agentcore.AgentEventSink)[0] == [AgentEvent]
    assert typing.get_type_hints(agentcore.Agent.subscribe)["listener"] == agentcore.Listener
