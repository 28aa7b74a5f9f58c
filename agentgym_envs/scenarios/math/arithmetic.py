"""Safe arithmetic: an ``ast``-based evaluator of numbers, + - * / ** // % and parentheses.

Nothing is ever passed to ``eval``: the text is parsed with :func:`ast.parse` and only
number literals, the arithmetic operators, unary signs and (where the caller allows them)
calls of named one-argument functions such as ``sum_1_to_n(85)`` are evaluated; anything
else is a :class:`CalculationError` that says what was refused. Sizes are bounded: the
text's length, every operand and result (at most :data:`MAX_MAGNITUDE` in absolute value),
and powers are checked *before* they are computed.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

Number = int | float

MAX_EXPRESSION_CHARS = 200
MAX_MAGNITUDE = 10**15
DECIMALS = 9  # results are rounded to this many decimals, so that 0.1 + 0.2 == 0.3

OPERATIONS: dict[str, str] = {
    "add": "+",
    "subtract": "-",
    "multiply": "*",
    "divide": "/",
    "power": "**",
    "floor_divide": "//",
    "modulo": "%",
}
_AST_OPERATIONS: dict[type, str] = {
    ast.Add: "add",
    ast.Sub: "subtract",
    ast.Mult: "multiply",
    ast.Div: "divide",
    ast.Pow: "power",
    ast.FloorDiv: "floor_divide",
    ast.Mod: "modulo",
}
ALLOWED = "only numbers, + - * / ** // %, and parentheses are allowed"


class CalculationError(ValueError):
    """The input is not allowed arithmetic, or its value is undefined or too large."""


@dataclass(frozen=True)
class Step:
    """One evaluated operation: ``operation`` (an :data:`OPERATIONS` name or a function's
    name), its operands and its result."""

    operation: str
    operands: tuple[Number, ...]
    result: Number


def as_number(value: Number) -> Number:
    """The canonical form of a result: finite, rounded to :data:`DECIMALS` decimals, an
    ``int`` when whole, at most :data:`MAX_MAGNITUDE` in absolute value."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CalculationError(f"not a real number: {value!r}")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CalculationError("the result is not a finite number")
        value = round(value, DECIMALS)
        if value.is_integer():
            value = int(value)
    if abs(value) > MAX_MAGNITUDE:
        raise CalculationError(f"numbers are limited to {MAX_MAGNITUDE:.0e} in absolute value")
    return value


def format_number(value: Number) -> str:
    """How results are written in tool outputs: whole numbers without a decimal point."""
    return str(as_number(value))


def apply(operation: str, a: Number, b: Number) -> Number:
    """``a <operation> b`` for an :data:`OPERATIONS` name, checked and canonical."""
    if operation not in OPERATIONS:
        raise CalculationError(f"unknown operation {operation!r}; choose from {list(OPERATIONS)}")
    a, b = as_number(a), as_number(b)
    if operation in ("divide", "floor_divide", "modulo") and b == 0:
        raise CalculationError("division by zero")
    if operation == "power":
        return as_number(_power(a, b))
    if operation == "add":
        return as_number(a + b)
    if operation == "subtract":
        return as_number(a - b)
    if operation == "multiply":
        return as_number(a * b)
    if operation == "divide":
        return as_number(a / b)
    if operation == "floor_divide":
        return as_number(a // b)
    return as_number(a % b)


def _power(base: Number, exponent: Number) -> Number:
    if base == 0 and exponent < 0:
        raise CalculationError("zero cannot be raised to a negative power")
    if base < 0 and not float(exponent).is_integer():
        raise CalculationError("a negative number to a fractional power is not a real number")
    if base != 0 and exponent * math.log10(abs(base)) > math.log10(MAX_MAGNITUDE):
        raise CalculationError(f"the power is too large (numbers are limited to {MAX_MAGNITUDE:.0e})")
    return base**exponent


Function = Callable[[Number], Number]


def evaluate(
    text: str,
    functions: Mapping[str, Function] | None = None,
    steps: list[Step] | None = None,
) -> Number:
    """The value of the arithmetic expression ``text``.

    ``functions`` maps the names of one-argument functions the text may call; ``steps``,
    when given, receives every operation in evaluation order (operands before results).
    Raises :class:`CalculationError` for anything else than allowed arithmetic.
    """
    if not isinstance(text, str):
        raise CalculationError(f"the expression must be a string, got {type(text).__name__}")
    if len(text) > MAX_EXPRESSION_CHARS:
        raise CalculationError(f"the expression is longer than {MAX_EXPRESSION_CHARS} characters")
    if not text.strip():
        raise CalculationError("the expression is empty")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise CalculationError(f"not a valid arithmetic expression: {text!r}; {ALLOWED}") from None
    return _Evaluator(functions or {}, steps).visit(tree.body)


class _Evaluator:
    """Evaluates an expression tree node by node, refusing every node it does not know."""

    def __init__(self, functions: Mapping[str, Function], steps: list[Step] | None) -> None:
        self.functions, self.steps = functions, steps

    def visit(self, node: ast.AST) -> Number:
        if isinstance(node, ast.Constant):
            return self._constant(node.value)
        if isinstance(node, ast.BinOp):
            return self._binary(node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = self.visit(node.operand)
            return as_number(-value if isinstance(node.op, ast.USub) else value)
        if isinstance(node, ast.Call):
            return self._call(node)
        raise CalculationError(_refusal(node))

    def _constant(self, value: object) -> Number:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise CalculationError(f"{value!r} is not a number; {ALLOWED}")
        return as_number(value)

    def _binary(self, node: ast.BinOp) -> Number:
        operation = _AST_OPERATIONS.get(type(node.op))
        if operation is None:
            hint = "; write powers with **" if isinstance(node.op, ast.BitXor) else ""
            raise CalculationError(f"the operator {type(node.op).__name__} is not allowed{hint}; {ALLOWED}")
        left, right = self.visit(node.left), self.visit(node.right)
        result = apply(operation, left, right)
        self._record(operation, (left, right), result)
        return result

    def _call(self, node: ast.Call) -> Number:
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name not in self.functions:
            raise CalculationError(f"function calls are not allowed; {ALLOWED}")
        if len(node.args) != 1 or node.keywords:
            raise CalculationError(f"{name} takes exactly one argument")
        argument = self.visit(node.args[0])
        result = as_number(self.functions[name](argument))
        self._record(name, (argument,), result)
        return result

    def _record(self, operation: str, operands: tuple[Number, ...], result: Number) -> None:
        if self.steps is not None:
            self.steps.append(Step(operation, operands, result))


def _refusal(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return f"names are not allowed ({node.id!r}); {ALLOWED}"
    if isinstance(node, ast.Attribute):
        return f"attribute access is not allowed; {ALLOWED}"
    return f"{type(node).__name__} is not allowed; {ALLOWED}"


MAX_SUM_N = 10**7


def sum_1_to_n(n: Number) -> int:
    """``1 + 2 + ... + n`` for a whole ``n`` in ``[0, MAX_SUM_N]`` (by the closed formula)."""
    n = as_number(n)
    if not isinstance(n, int):
        raise CalculationError(f"n must be a whole number, got {n}")
    if not 0 <= n <= MAX_SUM_N:
        raise CalculationError(f"n must be between 0 and {MAX_SUM_N}, got {n}")
    return n * (n + 1) // 2


SOLUTION_FUNCTIONS: dict[str, Function] = {"sum_1_to_n": sum_1_to_n}
