"""The ready-made tools behind `agentcore.builtin_tools` (documented there)."""

from __future__ import annotations

import ast
import math
import operator
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import ToolError
from .tools import AgentTool, tool

__all__ = ["builtin_tools", "calculator", "list_files", "read_file"]


# --- the file tools --------------------------------------------------------------------------

_MAX_READ_BYTES = 256 * 1024
_SKIP_DIRS = frozenset({"venv", "node_modules", "__pycache__"})  # listed, not descended into


def _root(root: str | os.PathLike[str]) -> Path:
    base = Path(root).resolve()
    if not base.is_dir():
        raise NotADirectoryError(f"the tools' root {os.fspath(root)!r} is not a directory")
    return base


def _inside(root: Path, path: str) -> Path:
    """`path` (relative to `root`, or absolute) resolved, if it lies inside `root`."""
    try:
        candidate = (root / path).resolve()
    except (OSError, ValueError) as exc:  # a NUL byte, a name too long, a symlink loop
        raise ToolError(f"invalid path {path!r}: {exc}") from None
    if not candidate.is_relative_to(root):
        raise ToolError(
            f"{path!r} is outside the working directory {str(root)!r}; use a path relative to it"
        )
    return candidate


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def read_file(root: str | os.PathLike[str], *, max_lines: int = 200) -> AgentTool:
    """A `read_file(path, offset=1, max_lines=...)` tool that reads text files under `root`.

    The result starts with the file's line count and which lines it shows, then the lines. At
    most `max_lines` lines and the first 256 KiB of a file are read per call; the model passes
    `offset` to read on. Binary files and paths outside `root` are refused.

    Args:
        root: the directory the tool may read (symlinks are followed only within it).
        max_lines: the most lines one call returns, and what it returns by default.

    Raises:
        NotADirectoryError: `root` is not a directory.
    """
    base = _root(root)
    cap = max(1, max_lines)

    @tool
    def read_file(path: str, offset: int = 1, max_lines: int = cap) -> str:
        """Read a text file in the working directory. The result starts with the file's total
        line count.

        Args:
            path: the file, relative to the working directory, e.g. "pyproject.toml".
            offset: the first line to return (1-based), to read a long file in parts.
            max_lines: how many lines to return.
        """
        target = _inside(base, path)
        if target.is_dir():
            raise ToolError(f"no such file: {path!r} is a directory (list_files shows its files)")
        if not target.is_file():
            raise ToolError(f"no such file: {path!r} (list_files shows what exists)")
        with target.open("rb") as f:
            data = f.read(_MAX_READ_BYTES + 1)
        truncated = len(data) > _MAX_READ_BYTES
        if truncated:  # keep whole lines only
            data = data[: data.rfind(b"\n", 0, _MAX_READ_BYTES) + 1]
        if b"\x00" in data:
            raise ToolError(f"{path!r} is not a text file")
        lines = data.decode("utf-8", errors="replace").splitlines()
        start = max(offset, 1) - 1
        shown = lines[start : start + max(1, min(max_lines, cap))]
        total = f"more than {len(lines)} lines" if truncated else _plural(len(lines), "line")
        if not shown:
            part = f" (nothing from line {start + 1})" if lines else ""
        elif len(shown) == len(lines):
            part = ""
        elif start == 0:
            part = f" (showing the first {len(shown)})"
        else:
            part = f" (showing lines {start + 1}-{start + len(shown)})"
        return f"{path} has {total}{part}:\n" + "\n".join(shown)

    return read_file


def list_files(root: str | os.PathLike[str], *, max_entries: int = 500) -> AgentTool:
    """A `list_files(path=".", recursive=False)` tool that lists directories under `root`.

    Entries are paths relative to `root`, sorted, directories ending in `/`; names starting with
    `.` are left out, and a recursive listing does not descend into symlinks, `node_modules`,
    `venv` or `__pycache__`. Paths outside `root` are refused.

    Args:
        root: the directory the tool may list.
        max_entries: the most entries one call returns.

    Raises:
        NotADirectoryError: `root` is not a directory.
    """
    base = _root(root)
    limit = max(1, max_entries)

    @tool
    def list_files(path: str = ".", recursive: bool = False) -> str:
        """List the files and directories in a directory of the working directory (directories
        end with /).

        Args:
            path: the directory, relative to the working directory; "." is the working directory.
            recursive: also list the contents of subdirectories.
        """
        target = _inside(base, path)
        if not target.is_dir():
            raise ToolError(f"no such directory: {path!r}")
        entries: list[str] = []
        pending = [target]
        while pending and len(entries) <= limit:
            directory = pending.pop(0)
            for child in sorted(directory.iterdir(), key=lambda p: p.name):
                if child.name.startswith("."):
                    continue
                is_dir = child.is_dir()
                entries.append(child.relative_to(base).as_posix() + ("/" if is_dir else ""))
                if recursive and is_dir and child.name not in _SKIP_DIRS and not child.is_symlink():
                    pending.append(child)
        if not entries:
            return "(empty directory)"
        if len(entries) > limit:
            return "\n".join(entries[:limit]) + f"\n[only the first {limit} shown]"
        return "\n".join(entries)

    return list_files


# --- the calculator ----------------------------------------------------------------------------

_MAX_EXPRESSION = 1000
_MAX_INT_BITS = 4096  # about 1,200 digits: quick to compute and to print
_MAX_COMBINATORIC_ARGUMENT = 5000

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
_CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}


def _number(value: Any, expression: str) -> int | float:
    """`value` if it is a real number small enough to go on with, else a `ToolError`."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        if isinstance(value, complex):
            raise ToolError(f"{expression!r} has no real-number result")
        raise ToolError(f"{expression!r} does not evaluate to a number")
    too_large = (
        value.bit_length() > _MAX_INT_BITS if isinstance(value, int) else not math.isfinite(value)
    )
    if too_large:
        raise ToolError(f"the result of {expression!r} is too large")
    return value


def _evaluate(expression: str) -> int | float:
    """Evaluate an arithmetic expression safely (see the module docstring).

    Raises:
        ToolError: the expression is not plain arithmetic, or cannot be computed.
    """
    if len(expression) > _MAX_EXPRESSION:
        raise ToolError(f"the expression is longer than {_MAX_EXPRESSION} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise ToolError(f"not an arithmetic expression: {expression!r} ({exc.msg})") from None

    def walk(node: ast.AST) -> int | float:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            raise ToolError(f"not a number: {node.value!r}")
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return _number(node.value, expression)
        if isinstance(node, ast.Name) and node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _number(_UNARY[type(node.op)](walk(node.operand)), expression)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = walk(node.left), walk(node.right)
            # an integer power is the one operation on bounded numbers that can take long:
            # refuse it before computing when the result would be too large anyway
            if (
                isinstance(node.op, ast.Pow)
                and isinstance(left, int)
                and isinstance(right, int)
                and abs(left) > 1
                and (left.bit_length() - 1) * right > _MAX_INT_BITS
            ):
                raise ToolError(f"exponent too large in {ast.unparse(node)!r}")
            return _number(_BINARY[type(node.op)](left, right), expression)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _FUNCTIONS
            and not node.keywords
        ):
            args = [walk(a) for a in node.args]
            name = node.func.id
            if name in ("factorial", "comb", "perm") and any(
                abs(a) > _MAX_COMBINATORIC_ARGUMENT for a in args
            ):
                raise ToolError(f"the argument of {name} is too large")
            return _number(_FUNCTIONS[name](*args), expression)
        raise ToolError(
            f"unsupported element {type(node).__name__} in {expression!r}: use numbers, "
            "+ - * / // % **, parentheses, and math functions and constants (sqrt, log, pi, ...)"
        )

    try:
        return walk(tree)
    except ZeroDivisionError:
        raise ToolError(f"cannot evaluate {expression!r}: division by zero") from None
    except OverflowError:
        raise ToolError(f"the result of {expression!r} is too large") from None
    except (ArithmeticError, ValueError, TypeError) as exc:
        raise ToolError(f"cannot evaluate {expression!r}: {exc}") from None


def _format(value: int | float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value)


def calculator() -> AgentTool:
    """A `calculator(expression)` tool that evaluates arithmetic without `eval`.

    It accepts numbers, `+ - * / // % **`, parentheses, and a fixed set of `math` functions and
    constants (`sqrt`, `log`, `sin`, `factorial`, `pi`, `e`, ...), and answers
    `"<expression> = <result>"` (a whole float shown as an integer). It refuses any other name or
    call, attribute access, strings, booleans, complex results, and results too large to compute
    quickly (integers over 4096 bits, floats that overflow).
    """

    @tool
    def calculator(expression: str) -> str:
        """Evaluate an arithmetic expression and return the result.

        Args:
            expression: numbers, + - * / // % ** and parentheses, and the functions and constants
                of Python's math module (sqrt, log, sin, pi, e, ...); e.g. "2**10 / (3 + 5)".
        """
        return f"{expression} = {_format(_evaluate(expression))}"

    return calculator


def builtin_tools(root: str | os.PathLike[str] = ".") -> list[AgentTool]:
    """The ready-made tools: `read_file` and `list_files` confined to `root`, and `calculator`.

    Raises:
        NotADirectoryError: `root` is not a directory.
    """
    return [read_file(root), list_files(root), calculator()]
