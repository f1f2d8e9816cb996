"""The `calculator` tool behind `agentcore.builtin_tools` (documented there): arithmetic and
`math` functions on an expression parsed with `ast`, never `eval`, with bounded sizes."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

from ..errors import ToolError
from ..tools import AgentTool, tool

__all__ = ["calculator"]


# --- the rules ----------------------------------------------------------------------------

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
