"""The built-in tools of `--tools`: read_file, list_files and calculator.

The file tools see one directory tree (the root, `--root`, by default the current directory):
every path is resolved, symlinks included, and refused if it lands outside the root. They only
read. The calculator evaluates arithmetic by walking the syntax tree of the expression: no
`eval`, no names but a fixed set of math functions and constants, and bounds on exponents and
sizes so that an expression cannot hang the process.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ToolError
from ..tools import AgentTool, tool

__all__ = ["builtin_tools", "calculate"]

_MAX_READ_BYTES = 256 * 1024
_DEFAULT_READ_LINES = 2000
_MAX_ENTRIES = 500
_SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__"})


def _inside(root: Path, path: str) -> Path:
    """`path` (relative to `root`, or absolute) resolved, if it lies inside `root`."""
    candidate = (root / path).resolve()
    if not candidate.is_relative_to(root):
        raise ToolError(f"{path!r} is outside the working directory {str(root)!r}")
    return candidate


def _relative(root: Path, path: Path) -> str:
    rel = path.relative_to(root).as_posix()
    return rel if rel != "." else "."


def builtin_tools(root: str | Path = ".") -> list[AgentTool]:
    """The built-in tools, with file access confined to `root`."""
    base = Path(root).resolve()
    if not base.is_dir():
        raise NotADirectoryError(f"the tools' root {str(root)!r} is not a directory")

    @tool
    def read_file(path: str, offset: int = 1, limit: int = _DEFAULT_READ_LINES) -> str:
        """Read a text file in the working directory.

        Args:
            path: the file, relative to the working directory.
            offset: the first line to return (1-based).
            limit: how many lines to return at most.
        """
        target = _inside(base, path)
        if not target.is_file():
            raise ToolError(f"{path!r} is not a file (use list_files to see what there is)")
        with target.open("rb") as f:
            data = f.read(_MAX_READ_BYTES + 1)
        truncated = len(data) > _MAX_READ_BYTES
        data = data[:_MAX_READ_BYTES]
        if b"\x00" in data:
            raise ToolError(f"{path!r} is a binary file")
        lines = data.decode("utf-8", errors="replace").splitlines()
        start = max(offset, 1) - 1
        chosen = lines[start : start + max(limit, 1)]
        text = "\n".join(chosen)
        if start + len(chosen) < len(lines) or truncated:
            shown_to = start + len(chosen)
            text += f"\n[showing lines {start + 1}-{shown_to}; use offset to read further]"
        return text

    @tool
    def list_files(path: str = ".", recursive: bool = False) -> str:
        """List the files and directories in the working directory (directories end with /).

        Args:
            path: the directory, relative to the working directory.
            recursive: also list the contents of subdirectories.
        """
        target = _inside(base, path)
        if not target.is_dir():
            raise ToolError(f"{path!r} is not a directory")
        entries: list[str] = []
        pending = [target]
        while pending and len(entries) <= _MAX_ENTRIES:
            directory = pending.pop(0)
            for child in sorted(directory.iterdir(), key=lambda p: p.name):
                is_dir = child.is_dir()
                entries.append(_relative(base, child) + ("/" if is_dir else ""))
                if recursive and is_dir and child.name not in _SKIP_DIRS and not child.is_symlink():
                    pending.append(child)
        if not entries:
            return "(empty directory)"
        if len(entries) > _MAX_ENTRIES:
            return "\n".join(entries[:_MAX_ENTRIES]) + f"\n[only the first {_MAX_ENTRIES} shown]"
        return "\n".join(entries)

    @tool
    def calculator(expression: str) -> str:
        """Evaluate an arithmetic expression: + - * / // % **, parentheses, and the functions
        and constants of Python's math module (sqrt, sin, log, pi, e, ...).

        Args:
            expression: for example "2**10 / (3 + 5)" or "sqrt(2) * pi".
        """
        return _format(calculate(expression))

    return [read_file, list_files, calculator]


# --- the calculator ------------------------------------------------------------------------

_MAX_EXPRESSION = 1000
_MAX_EXPONENT = 10_000
_MAX_INT_BITS = 100_000

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    name: getattr(math, name)
    for name in [
        *("sqrt", "cbrt", "exp", "log", "log2", "log10", "hypot"),
        *("sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh"),
        *("degrees", "radians", "floor", "ceil", "factorial", "gcd", "lcm", "comb", "perm"),
    ]
    if hasattr(math, name)
}
_FUNCTIONS.update(abs=abs, round=round, min=min, max=max)
_CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau, "inf": math.inf}


def _format(value: float | int) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value)


def _check_size(value: Any) -> Any:
    if isinstance(value, int) and value.bit_length() > _MAX_INT_BITS:
        raise ToolError("the result is too large")
    return value


def _eval(node: ast.AST) -> Any:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and abs(left) > 1:
            too_big = abs(right) > _MAX_EXPONENT or (
                isinstance(left, int)
                and isinstance(right, int)
                and left.bit_length() * right > _MAX_INT_BITS
            )
            if too_big:
                raise ToolError(f"the result of {ast.unparse(node)!r} would be too large")
        if (
            isinstance(node.op, ast.Mult)
            and isinstance(left, int)
            and isinstance(right, int)
            and left.bit_length() + right.bit_length() > _MAX_INT_BITS
        ):
            raise ToolError("the result is too large")
        return _check_size(_BINARY[type(node.op)](left, right))
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
        and not node.keywords
    ):
        args = [_eval(a) for a in node.args]
        if node.func.id in ("factorial", "comb", "perm") and any(abs(a) > 5000 for a in args):
            raise ToolError(f"the argument of {node.func.id} is too large")
        return _check_size(_FUNCTIONS[node.func.id](*args))
    raise ToolError(f"unsupported syntax in the expression: {ast.unparse(node)!r}")


def calculate(expression: str) -> float | int:
    """Evaluate an arithmetic expression safely (see the module docstring).

    Raises:
        ToolError: invalid or unsupported syntax, a math error, or a result too large.
    """
    if len(expression) > _MAX_EXPRESSION:
        raise ToolError(f"the expression is longer than {_MAX_EXPRESSION} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise ToolError(f"invalid expression: {exc.msg}") from None
    try:
        result = _eval(tree)
    except ToolError:
        raise
    except (ArithmeticError, ValueError, TypeError) as exc:
        raise ToolError(f"cannot evaluate {expression!r}: {exc}") from None
    if not isinstance(result, int | float):
        raise ToolError(f"{expression!r} does not evaluate to a number")
    return result
