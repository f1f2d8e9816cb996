"""Python signatures for tools, generated from their JSON schemas, as the code tool's
description shows them to the model."""

from __future__ import annotations

import keyword
from collections.abc import Mapping
from typing import Any

from ..errors import ToolDefinitionError
from ..tools import AgentTool

__all__ = ["function_name", "signature"]

_SCALARS = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "null": "None",
    "object": "dict",
    "array": "list",
}


def function_name(tool: AgentTool) -> str:
    """The name a snippet calls `tool` by: its name with `-` as `_`."""
    name = tool.name.replace("-", "_")
    if not name.isidentifier() or keyword.iskeyword(name) or name[0].isdigit():
        raise ToolDefinitionError(
            f"tool {tool.name!r} cannot be a Python function in code mode: its name, as "
            f"{name!r}, is not an identifier"
        )
    return name


def _type(schema: Any) -> str:
    if not isinstance(schema, Mapping):
        return "Any"
    if "enum" in schema and isinstance(schema["enum"], list):
        return "Literal[" + ", ".join(repr(v) for v in schema["enum"]) + "]"
    if "const" in schema:
        return f"Literal[{schema['const']!r}]"
    for union in ("anyOf", "oneOf"):
        if isinstance(schema.get(union), list):
            return " | ".join(dict.fromkeys(_type(s) for s in schema[union]))
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(_SCALARS.get(k, "Any") for k in kind if isinstance(k, str))
    if kind == "array":
        return f"list[{_type(schema.get('items'))}]"
    if kind == "object" and isinstance(schema.get("additionalProperties"), Mapping):
        return f"dict[str, {_type(schema['additionalProperties'])}]"
    return _SCALARS.get(kind, "Any") if isinstance(kind, str) else "Any"


def signature(tool: AgentTool) -> str:
    """`async def name(*, a: int, b: str = ...) -> Any` with the tool's description and each
    parameter's as a docstring."""
    schema = tool.llm_tool.parameters
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = schema.get("required")
    required = set(required) if isinstance(required, list) else set()
    params: list[str] = []
    docs: list[str] = []
    for name in sorted(properties, key=lambda n: n not in required):  # required ones first
        prop = properties[name]
        text = f"{name}: {_type(prop)}"
        if name not in required:
            default = prop.get("default") if isinstance(prop, Mapping) else None
            text += f" = {default!r}"
        params.append(text)
        if isinstance(prop, Mapping) and isinstance(prop.get("description"), str):
            docs.append(f"        {name}: {' '.join(prop['description'].split())}")
    head = f"async def {function_name(tool)}({'*, ' if params else ''}{', '.join(params)}) -> Any:"
    lines = [head]
    description = " ".join(tool.description.split())
    body = [f"    {description}"] if description else []
    if docs:
        body += ["", "    Args:", *docs]
    if body:
        lines += ['    """' + body[0].strip(), *body[1:], '    """']
    else:
        lines.append("    ...")
    return "\n".join(lines)
