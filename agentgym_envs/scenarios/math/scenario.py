"""MathScenario: seeded math problems, the calculator tools, partial-credit grading, the expert."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Any

from agentgym_envs.core import GeneratedTasks, Outcome, RewardConfig, Scenario, TaskSource, ToolCall
from agentgym_envs.levels import check_version, latest_version

from .arithmetic import OPERATIONS, Step
from .generator import generate_problem, kinds_of
from .grading import answer_score, relative_error
from .problems import DIFFICULTIES, MAX_ENTITIES, MAX_TURNS, MathProblem, solution_steps
from .tools import NUMBER_ENTITY, TOOLS
from .world import MathWorld

INSTRUCTIONS = (
    "You are solving a math problem with tools, one call per turn: calculator(operation, a, b), "
    "evaluate_expression(expression) and sum_1_to_n(n) compute; submit_answer(value) gives the "
    "final answer and ends the episode."
)
# Outcome-dominated rewards: the final reward is the answer's score (1.0 exact, 0.5..1.0 within
# 10%, else 0). Each new value on the reference solution's path, and the exact submission, earn
# +0.05 (at most 0.25 on a generated problem, below the 0.5 floor of partial credit); any other
# call -0.02.
MATH_REWARDS = RewardConfig(
    success=1.0, failure=0.0, correct_call=0.05, incorrect_call=-0.02, token_efficiency=0.0, speed=0.0
)


def solution_plan(problem: MathProblem, steps: Sequence[Step] | None = None) -> list[ToolCall]:
    """The expert's calls: evaluate the expression the question shows, or perform the
    solution (its ``steps``, computed when not given) one operation per call; then submit."""
    if problem.expression is not None:
        calls = [ToolCall("evaluate_expression", {"expression": problem.expression})]
    else:
        calls = [
            ToolCall("calculator", {"operation": s.operation, "a": s.operands[0], "b": s.operands[1]})
            if s.operation in OPERATIONS
            else ToolCall(s.operation, {"n": s.operands[0]})
            for s in (solution_steps(problem) if steps is None else steps)
        ]
    return calls + [ToolCall("submit_answer", {"value": problem.answer})]


class MathScenario(Scenario):
    """Arithmetic, sums of integer ranges and multi-step word problems, solved with tools.

    Args:
        problems: the kinds of problem generated, from the version's kinds
            (:func:`~.generator.kinds_of`; -v0: ``"addition"``, one addition shown as an
            expression, then the difficulties); None: the three difficulties.
        version: 0 (train and test splits, -v0's templates) or 1 (train, validation and test,
            each with its own phrasing frames and templates: :mod:`.catalogue`); None: the latest.
    """

    name = "math"
    env_id = "AgentGym/Math-v0"
    description = "Solve arithmetic, range-sum and multi-step word problems with a calculator; partial credit within 10%."
    tools = TOOLS
    max_entities = MAX_ENTITIES
    max_turns = MAX_TURNS
    flat_capacity = 256  # at 64, a range sum's subtract(sum, sum) is past the calculator's 64th admissible call
    max_prompt_chars = 1_000
    max_result_chars = 300
    baseline_tokens = 400
    baseline_seconds = 90.0
    success_criteria = {"success": 0.95, "tool_reliability": 0.90, "cost_reduction": 0.30, "time_savings": 0.95}
    default_rewards = MATH_REWARDS
    instructions = INSTRUCTIONS

    def __init__(self, problems: Sequence[str] | None = None, version: int | None = None) -> None:
        version = latest_version(self.name) if version is None else check_version(self.name, version)
        kinds = kinds_of(version)
        if problems is not None and (not problems or set(problems) - set(kinds)):
            raise ValueError(f"problems must be a non-empty subset of {list(kinds)} at version {version}, got {problems!r}")
        self.problems = DIFFICULTIES if problems is None else tuple(problems)
        self.version = version
        self.splits = ("train", "test") if version == 0 else ("train", "validation", "test")

    def task_source(self, split: str) -> TaskSource:
        generate = functools.partial(generate_problem, kinds=self.problems, version=self.version)
        return GeneratedTasks(split, generate, self.splits)

    def unit_id(self, task: MathProblem) -> str:
        """The problem's template (-v1's expression problems: its phrasing frame); a user's
        task without one is its own unit."""
        return task.template or task.task_id

    def task_from_dict(self, data: dict[str, Any]) -> MathProblem:
        return MathProblem.from_dict(data)

    def new_world(self, task: MathProblem) -> MathWorld:
        tools = {tool.name: tool for tool in TOOLS}
        steps = solution_steps(task)
        plan = tuple((call, ToolCall(call.name, tools[call.name].normalize_arguments(call.arguments)))
                     for call in solution_plan(task, steps))
        useful = frozenset([*(step.result for step in steps), task.answer])
        return MathWorld(plan, useful)

    def prompt(self, task: MathProblem) -> str:
        return f"PROBLEM\n{task.question}"

    def initial_entities(self, task: MathProblem) -> Iterable[tuple[str, Any]]:
        for operation in OPERATIONS:
            yield "operation", operation
        for number in task.numbers:
            yield NUMBER_ENTITY, number
        if task.expression is not None:
            yield "expression", task.expression

    def judge_call(self, task: MathProblem, world: MathWorld, call: ToolCall) -> bool:
        """Right: a tool result that is new and on the reference solution's path (any order,
        any operand order), or the exact answer submitted."""
        if call.name == "submit_answer":
            return answer_score(world.submitted, task.answer) == 1.0
        return world.last_result_new and world.last_result in world.useful

    def grade(self, task: MathProblem, world: MathWorld) -> Outcome:
        score = answer_score(world.submitted, task.answer)
        if world.submitted is None:
            reason = "no answer submitted"
        else:
            reason = f"submitted {world.submitted:g}, expected {task.answer} (score {score:.3f})"
        return Outcome(score == 1.0, score, reason)

    def expert_call(self, task: MathProblem, world: MathWorld, history: Sequence[ToolCall]) -> ToolCall:
        done = {call.key for call in history}
        return next((call for call, normalized in world.plan if normalized.key not in done), world.plan[-1][0])

    def extra_metrics(self, task: MathProblem, world: MathWorld) -> dict[str, float]:
        """``answer_error``: relative error of the submitted answer, capped at 1 (1 when none
        was submitted); ``answered``: whether an answer was submitted."""
        answered = world.submitted is not None
        error = min(1.0, relative_error(world.submitted, task.answer)) if answered else 1.0
        return {"answer_error": error, "answered": float(answered)}
