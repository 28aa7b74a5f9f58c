"""Generated problems: deterministic, solvable, disjoint splits; users' task files."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import agentgym_envs  # noqa: F401
from agentgym_envs.core import TaskFormatError
from agentgym_envs.scenarios.math import MathProblem, generate_problem
from agentgym_envs.scenarios.math.problems import check_solvable, question_numbers
from agentgym_envs.scenarios.math.templates import NAMES, TEMPLATES, VALUE_RANGES

N = 400


def _problems(split: str) -> list[MathProblem]:
    return [generate_problem(split, index) for index in range(N)]


def test_generation_is_a_pure_function_of_split_and_index():
    assert generate_problem("train", 12) == generate_problem("train", 12)
    assert generate_problem("train", 12) != generate_problem("train", 13)
    assert generate_problem("test", 12).task_id == "test-12"


def test_every_difficulty_and_template_is_generated():
    for split in ("train", "test"):
        problems = _problems(split)
        assert {p.difficulty for p in problems} == {"easy", "medium", "hard"}
        assert {p.template for p in problems} == {t.name for t in TEMPLATES if t.split == split}


def test_generated_problems_are_solvable_and_their_numbers_are_the_templates_values():
    for split in ("train", "test"):
        for problem in _problems(split):
            check_solvable(problem)
            assert problem.answer not in problem.numbers
            assert (problem.expression is not None) == (problem.difficulty == "easy")


def test_splits_use_disjoint_templates_phrasings_and_names():
    train = [t for t in TEMPLATES if t.split == "train"]
    test = [t for t in TEMPLATES if t.split == "test"]
    assert not {t.name for t in train} & {t.name for t in test}
    assert not {t.text for t in train} & {t.text for t in test}
    assert not set(NAMES["train"]) & set(NAMES["test"])


def test_splits_use_disjoint_values():
    numbers = {split: {n for p in _problems(split) for n in p.numbers} for split in ("train", "test")}
    assert not numbers["train"] & numbers["test"]
    for split, values in numbers.items():
        low, high = VALUE_RANGES[split]
        assert all(low <= n <= high for n in values)


def test_question_numbers_ignores_digits_inside_words():
    assert question_numbers("From 3 to 4.5, not x2 or 7th, then 10.") == (3, 4.5, 10)


def test_task_file_round_trip_loads_the_same_problems(tmp_path):
    problems = [generate_problem("test", i) for i in range(30)]
    path = tmp_path / "problems.jsonl"
    path.write_text("\n".join(json.dumps(p.to_dict()) for p in problems) + "\n")
    env = gym.make("AgentGym/Math-v0", task_file=str(path))
    for problem in problems:
        _, info = env.reset(options={"task_id": problem.task_id})
        assert env.unwrapped.episode.task == problem


GOOD = {"task_id": "apples", "question": "Sam has 12 bags of 4 apples and eats 3. How many are left?",
        "answer": 45, "solution": "12 * 4 - 3"}


MISSING = object()


@pytest.mark.parametrize(
    "change, field, message",
    [
        ({"answer": MISSING}, "answer", "missing field 'answer'"),
        ({"answer": "45"}, "answer", "field 'answer' must be int or float, got str"),
        ({"question": 7}, "question", "field 'question' must be str"),
        ({"answer": 46}, "solution", "evaluates to 45, not the answer 46"),
        ({"solution": "12 * 5 - 3"}, "solution", "uses 5, which is not a number of the question"),
        ({"solution": "__import__('os')"}, "solution", "function calls are not allowed"),
        ({"solution": "-3 + 12 * 4"}, "solution", "may not use a sign"),
        ({"difficulty": "extreme"}, "difficulty", "must be one of"),
        ({"expression": "12 * 4 - 3"}, "expression", "must appear verbatim in the question"),
        ({"colour": "red"}, "colour", "unknown field(s) ['colour']"),
        ({"answer": float("inf")}, "answer", "not a finite number"),
    ],
)
def test_malformed_task_file_names_the_line_and_field(tmp_path, change, field, message):
    bad = {k: v for k, v in {**GOOD, **change}.items() if v is not MISSING}
    path = tmp_path / "problems.jsonl"
    path.write_text(json.dumps(GOOD) + "\n\n" + json.dumps({**bad, "task_id": "bad"}) + "\n")
    with pytest.raises(TaskFormatError, match="line 3") as error:
        gym.make("AgentGym/Math-v0", task_file=str(path))
    assert error.value.field == field
    assert message in str(error.value)


def test_task_file_rejects_a_solution_longer_than_the_turn_limit(tmp_path):
    question = "Add 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 and 12."
    data = {"task_id": "long", "question": question, "answer": 77, "solution": " + ".join(map(str, range(2, 13)))}
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps(data) + "\n")
    with pytest.raises(TaskFormatError, match="line 1: field 'solution' needs 10 operations"):
        gym.make("AgentGym/Math-v0", task_file=str(path))


def test_task_file_with_an_expression_and_decimals_is_solved_by_the_expert(tmp_path):
    from agentgym_envs.evaluation import evaluate

    rows = [GOOD, {"task_id": "mix", "question": "What is 2.5 * 4 + 0.75?", "answer": 10.75,
                   "solution": "2.5 * 4 + 0.75", "expression": "2.5 * 4 + 0.75", "difficulty": "easy"}]
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    for action_mode in ("structured", "text"):
        metrics = evaluate("AgentGym/Math-v0", "expert", episodes=10, task_file=str(path), action_mode=action_mode)
        assert metrics["success"] == 1.0
