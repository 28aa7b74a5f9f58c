"""The math tools: a two-operand calculator, an expression evaluator, ``sum_1_to_n`` and
``submit_answer``. Every computed value is revealed as a ``number`` entity."""

from __future__ import annotations

import math
from collections.abc import Callable

from agentgym_envs.core import Arg, Tool, ToolError, ToolResult

from . import arithmetic
from .arithmetic import OPERATIONS, CalculationError, Number, format_number
from .world import MathWorld


def _result(world: MathWorld, work: str, compute: Callable[[], Number]) -> ToolResult:
    """Run ``compute()``, record its value in the world, show ``work = value`` and reveal it."""
    try:
        value = compute()
    except CalculationError as exc:
        raise ToolError(str(exc)) from None
    world.last_result, world.last_result_new = value, value not in world.produced
    world.produced.add(value)
    return ToolResult(f"{work} = {format_number(value)}", reveal=(("number", value),))


def calculator(world: MathWorld, operation: str, a: float, b: float) -> ToolResult:
    work = f"{_shown(a)} {OPERATIONS[operation]} {_shown(b)}"
    return _result(world, work, lambda: arithmetic.apply(operation, a, b))


def evaluate_expression(world: MathWorld, expression: str) -> ToolResult:
    return _result(world, expression.strip(), lambda: arithmetic.evaluate(expression))


def sum_1_to_n(world: MathWorld, n: int) -> ToolResult:
    return _result(world, f"1 + 2 + ... + {n}", lambda: arithmetic.sum_1_to_n(n))


def submit_answer(world: MathWorld, value: float) -> str:
    if not math.isfinite(value):
        raise ToolError(f"the answer must be a finite number, got {value}")
    world.submitted = value
    return f"Answer {_shown(value)} submitted."


def _shown(value: Number) -> str:
    try:
        return format_number(value)
    except CalculationError:
        return repr(value)


NUMBER_ENTITY = "number"
TOOLS: tuple[Tool, ...] = (
    Tool("calculator", "Apply an arithmetic operation to two numbers: a <operation> b.",
         (Arg("operation", "string", "operation", "The operation.", enum=tuple(OPERATIONS)),
          Arg("a", "number", NUMBER_ENTITY, "The left operand."),
          Arg("b", "number", NUMBER_ENTITY, "The right operand.")),
         calculator, latency_s=0.2),
    Tool("evaluate_expression",
         "Evaluate an arithmetic expression of numbers, + - * / ** // % and parentheses, e.g. '(3 + 4) * 5'.",
         (Arg("expression", "string", "expression", "The expression (at most 200 characters)."),),
         evaluate_expression, latency_s=0.2),
    Tool("sum_1_to_n", "Sum of the integers 1 + 2 + ... + n.",
         (Arg("n", "integer", NUMBER_ENTITY, "The last integer, 0 <= n <= 10000000."),), sum_1_to_n, latency_s=0.2),
    Tool("submit_answer", "Submit the final answer; ends the episode.",
         (Arg("value", "number", NUMBER_ENTITY, "The answer."),), submit_answer, terminal=True, latency_s=0.1,
         kind="write"),
)
