"""What both domains' tools share: output formatting, argument helpers and the two generic
tools (``calculate``, ``transfer_to_human_agents``)."""

from __future__ import annotations

import ast
import datetime
import json
import operator
from collections.abc import Callable
from typing import Any, TypeVar

from agentgym_envs.core.tools import Arg, Tool, ToolError

from .arguments import upstream_model
from .records import Record, RecordFormatError
from .toolkit import Tau2World

R = TypeVar("R", bound=Record)


def render(value: Any) -> str:
    """Format a tool's return value as upstream's ``Environment.to_json_str`` does: strings
    verbatim; anything else as ``json.dumps(..., default=str)`` of the value with records
    as their ``model_dump()``, numbers and booleans *inside* containers (not inside records)
    as ``str``, and dates as ISO strings."""
    if isinstance(value, str):
        return value
    return json.dumps(_plain(value), default=str)


def _plain(value: Any) -> Any:
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, (bool, int, float)):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return value


def record_list(world: Tau2World[Any], name: str, value: Any, record_class: type[R], model: str = "") -> Any:
    """A tool's list-of-objects argument as records. Strict mode: every item must fit
    ``record_class`` (extra keys are ignored, as upstream's pydantic models do). Upstream
    mode, as upstream's code: if every item is an object, each is validated as the pydantic
    ``model`` (default: the record's name); otherwise the value is used as it is."""
    if world.tool_arguments == "upstream":
        if all(isinstance(item, dict) for item in value):
            model = model or record_class.__name__
            return [record_class(**upstream_model(world, model, record_class, item)) for item in value]
        return value
    records = []
    for index, item in enumerate(value):
        try:
            records.append(record_class.from_dict(item))
        except RecordFormatError as exc:
            raise ToolError(f"argument '{name}' item {index}: {exc}") from None
    return records


def object_items(properties: dict[str, str]) -> dict[str, Any]:
    """The JSON schema of an array item that is an object of the given required fields."""
    return {
        "type": "object",
        "properties": {field: {"type": kind} for field, kind in properties.items()},
        "required": list(properties),
    }


# ---- calculate -------------------------------------------------------------------------

_ALLOWED_CHARS = frozenset("0123456789+-*/(). ")
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_MAX_EXPONENT = 10_000


def _evaluate(node: ast.AST) -> Any:
    """Evaluate the arithmetic ``node`` as Python's ``eval`` would (without eval)."""
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and _is_int(left) and _is_int(right) and abs(right) > _MAX_EXPONENT:
            raise ToolError("Exponent too large")  # eval would build a huge int (or hang)
        try:
            return _BINARY[type(node.op)](left, right)
        except (ArithmeticError, ValueError) as exc:
            raise ToolError(str(exc)) from None
    if isinstance(node, (ast.Constant, ast.Tuple)):  # '...' or '()': float() rejects them
        kind = type(node.value).__name__ if isinstance(node, ast.Constant) else "tuple"
        raise ToolError(f"float() argument must be a string or a real number, not '{kind}'")
    raise ToolError("Unsupported expression")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def calculate(world: Tau2World[Any], expression: str) -> str:
    """Upstream's ``calculate``: only digits, ``+-*/().`` and spaces; the result as a float
    rounded to 2 decimals."""
    if not all(char in _ALLOWED_CHARS for char in expression):
        raise ToolError("Invalid characters in expression")
    try:
        tree = compile(expression.lstrip(" \t"), "<string>", "eval", ast.PyCF_ONLY_AST)
        return str(round(float(_evaluate(tree)), 2))
    except (SyntaxError, OverflowError, TypeError, MemoryError, RecursionError) as exc:
        # bad syntax, a huge int, a complex power, absurd nesting
        raise ToolError(str(exc) or type(exc).__name__) from None


def transfer_to_human_agents(world: Tau2World[Any], summary: str) -> str:
    """Hand the conversation to a human agent (ends the episode)."""
    return "Transfer successful"


CALCULATE = Tool(
    name="calculate",
    description="Calculate the result of a mathematical expression.",
    args=(
        Arg(
            "expression",
            "string",
            "expression",
            "The mathematical expression to calculate, such as '2 + 2'. The expression can "
            "contain numbers, operators (+, -, *, /), parentheses, and spaces.",
        ),
    ),
    fn=calculate,
    kind="generic",
)

TRANSFER_TO_HUMAN_AGENTS = Tool(
    name="transfer_to_human_agents",
    description=(
        "Transfer the user to a human agent, with a summary of the user's issue.\n\n"
        "Only transfer if\n -  the user explicitly asks for a human agent\n -  given the policy "
        "and the available tools, you cannot solve the user's issue."
    ),
    args=(Arg("summary", "string", "text", "A summary of the user's issue."),),
    fn=transfer_to_human_agents,
    terminal=True,
    kind="generic",
)
