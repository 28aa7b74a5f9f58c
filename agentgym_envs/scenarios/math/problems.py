"""Math problems: the task type, its JSON form (the task-file schema) and the check that a
problem is solvable with the environment's tools inside its limits."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

from agentgym_envs.core import TaskFormatError
from agentgym_envs.core.entities import entity_text
from agentgym_envs.core.tasks import require

from .arithmetic import OPERATIONS, SOLUTION_FUNCTIONS, CalculationError, Number, Step, as_number, evaluate
from .grading import EXACT_TOLERANCE, relative_error

DIFFICULTIES = ("easy", "medium", "hard")
MAX_TURNS = 10
MAX_ENTITIES = 32
# A number in the question: digits with an optional decimal part, not glued to a word.
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?!\w)")
FIELDS = ("task_id", "question", "answer", "solution", "difficulty", "expression", "template")


def question_numbers(question: str) -> tuple[Number, ...]:
    """The numbers written in ``question``, in order (canonical: whole numbers as ``int``)."""
    return tuple(as_number(float(m) if "." in m else int(m)) for m in NUMBER.findall(question))


@dataclass(frozen=True)
class MathProblem:
    """One math task.

    ``solution`` is an arithmetic expression over the question's numbers that computes
    ``answer`` and may call ``sum_1_to_n(n)``; the scripted expert performs it one tool call
    per operation. ``expression``, when set, is an arithmetic expression written in the
    question (offered to structured agents as an entity); ``template`` names the generator
    template ("" for a user's task).
    """

    task_id: str
    question: str
    answer: Number
    solution: str
    difficulty: str
    expression: str | None = None
    template: str = ""

    @cached_property
    def numbers(self) -> tuple[Number, ...]:
        return question_numbers(self.question)

    def to_dict(self) -> dict[str, Any]:
        """The task-file form (fields that are unset are left out)."""
        data = {field: getattr(self, field) for field in FIELDS}
        return {k: v for k, v in data.items() if v not in (None, "")}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MathProblem:
        """Parse and check one task-file line (schema in docs); raise TaskFormatError."""
        unknown = sorted(set(data) - set(FIELDS))
        if unknown:
            raise TaskFormatError(f"unknown field(s) {unknown}; fields: {list(FIELDS)}", unknown[0])
        task_id = require(data, "task_id", str)
        question = require(data, "question", str)
        answer = require(data, "answer", (int, float))
        solution = require(data, "solution", str)
        difficulty = data.get("difficulty", "hard")
        if difficulty not in DIFFICULTIES:
            raise TaskFormatError(f"field 'difficulty' must be one of {list(DIFFICULTIES)}, got {difficulty!r}", "difficulty")
        expression = data.get("expression")
        if expression is not None and not isinstance(expression, str):
            raise TaskFormatError("field 'expression' must be a string", "expression")
        template = data.get("template", "")
        if not isinstance(template, str):
            raise TaskFormatError("field 'template' must be a string", "template")
        try:
            answer = as_number(answer)
        except CalculationError as exc:
            raise TaskFormatError(f"field 'answer': {exc}", "answer") from None
        problem = cls(task_id, question, answer, solution, difficulty, expression, template)
        check_solvable(problem)
        return problem


def solution_steps(problem: MathProblem) -> list[Step]:
    """The operations of the problem's solution, in the order the expert performs them."""
    return list(solved(problem.solution)[1])


@lru_cache(maxsize=4096)
def solved(solution: str) -> tuple[Number, tuple[Step, ...]]:
    """The value of a solution expression (which may call ``sum_1_to_n``) and its operations in
    evaluation order. Cached: the generator evaluates a problem's solution, then each episode's
    world on it again."""
    steps: list[Step] = []
    value = evaluate(solution, SOLUTION_FUNCTIONS, steps)
    return value, tuple(steps)


def check_solvable(problem: MathProblem) -> None:
    """Raise :class:`TaskFormatError` unless the scripted expert can solve ``problem`` in
    both action modes: the solution is tool-sized arithmetic over the question's numbers that
    yields the answer within the turn limit, and every value it needs fits the entity table
    and is told apart there (entities show numbers to 2 decimals)."""
    if not problem.question.strip():
        raise TaskFormatError("field 'question' is empty", "question")
    steps: list[Step] = []
    try:
        value = evaluate(problem.solution, SOLUTION_FUNCTIONS, steps)
    except CalculationError as exc:
        raise TaskFormatError(f"field 'solution': {exc}", "solution") from None
    _check_solution_literals(problem)
    if relative_error(value, problem.answer) > EXACT_TOLERANCE:
        raise TaskFormatError(f"field 'solution' evaluates to {value}, not the answer {problem.answer}", "solution")
    if len(steps) + 1 > MAX_TURNS:
        raise TaskFormatError(f"field 'solution' needs {len(steps)} operations; at most {MAX_TURNS - 1} fit in {MAX_TURNS} turns", "solution")
    if problem.expression is not None:
        _check_expression(problem)
    values = [*problem.numbers, *(step.result for step in steps)]
    by_text: dict[str, set[Number]] = {}
    for number in values:
        by_text.setdefault(entity_text(number), set()).add(number)
    clash = next((texts for texts in by_text.values() if len(texts) > 1), None)
    if clash is not None:
        raise TaskFormatError(f"field 'solution': the values {sorted(clash)} look alike in the entity table (2 decimals)", "solution")
    needed = len(OPERATIONS) + (problem.expression is not None) + len(by_text)
    if needed > MAX_ENTITIES:
        raise TaskFormatError(f"the question's numbers and the solution's results need {needed} entity rows; at most {MAX_ENTITIES} exist", "question")


def _check_solution_literals(problem: MathProblem) -> None:
    tree = ast.parse(problem.solution.strip(), mode="eval")
    for node in ast.walk(tree):
        if isinstance(node, ast.UnaryOp):
            raise TaskFormatError("field 'solution' may not use a sign (+x, -x): the calculator has no negation", "solution")
        if isinstance(node, ast.Constant) and as_number(node.value) not in problem.numbers:
            raise TaskFormatError(f"field 'solution' uses {node.value}, which is not a number of the question", "solution")


def _check_expression(problem: MathProblem) -> None:
    expression = problem.expression
    assert expression is not None
    if expression not in problem.question:
        raise TaskFormatError("field 'expression' must appear verbatim in the question", "expression")
    try:
        value = evaluate(expression)
    except CalculationError as exc:
        raise TaskFormatError(f"field 'expression': {exc}", "expression") from None
    if relative_error(value, problem.answer) > EXACT_TOLERANCE:
        raise TaskFormatError(f"field 'expression' evaluates to {value}, not the answer {problem.answer}", "expression")
