"""What a `@tool` function's signature and docstring say: the description and per-argument docs
of a Google-style docstring, the resolved parameter annotations, which parameter takes the abort
signal, and the parameters the run fills in itself (`agentcore.tool` builds on these)."""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Any

from ..abort import AbortSignal

__all__ = ["INJECTED_NAMES", "doc_parts", "is_signal", "parameter_hints"]

INJECTED_NAMES = ("on_update", "tool_call_id")
"""Parameters a `@tool` function may declare that the run fills in (not the model)."""


def doc_parts(fn: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    """The description and the per-argument docs of a Google-style docstring."""
    doc = inspect.getdoc(fn) or ""
    description: list[str] = []
    params: dict[str, str] = {}
    section = None
    current = None
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped in ("Args:", "Arguments:", "Parameters:"):
            section = "args"
            continue
        if stripped.endswith(":") and stripped[:-1] in ("Returns", "Raises", "Yields", "Example"):
            section = "other"
            continue
        if section is None:
            description.append(line)
        elif section == "args" and stripped:
            match = re.match(r"^(\w+)(?:\s*\([^)]*\))?\s*:\s*(.*)$", stripped)
            if match and line.startswith((" ", "\t")) and not line.startswith("        "):
                current = match.group(1)
                params[current] = match.group(2)
            elif current:
                params[current] += " " + stripped
    return "\n".join(description).strip(), params


def parameter_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """The resolved annotations of `fn`'s parameters. The return annotation is never evaluated:
    it does not matter to the model, and may name a type that cannot be resolved here."""
    target = inspect.unwrap(fn)
    annotations = getattr(target, "__annotations__", {})
    holder = types.SimpleNamespace(
        __annotations__={k: v for k, v in annotations.items() if k != "return"}
    )
    return typing.get_type_hints(
        holder, globalns=getattr(target, "__globals__", None), include_extras=True
    )


def is_signal(annotation: Any) -> bool:
    """`AbortSignal`, also as `AbortSignal | None` or `Annotated[AbortSignal, ...]`."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return is_signal(typing.get_args(annotation)[0])
    if origin is typing.Union or origin is types.UnionType:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return len(args) == 1 and is_signal(args[0])
    return annotation is AbortSignal
