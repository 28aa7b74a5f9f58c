"""Coding grading must fail a program that passes the visible examples only.

The programs are written here: one answers the visible examples from a table (and so passes
them all), one gets the easy cases right and the edge cases wrong. Both must pass every
example under ``run_tests`` and still fail on ``submit``; partial credit counts the hidden
tests they pass, worked out here by hand.
"""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import agentgym_envs  # noqa: F401  (registers the ids)

ENV_ID = "AgentGym/Coding-v0"
EXAMPLES_ONLY = {
    # visible examples: "5\n1 2 3 4 5\n" -> 6, "3\n10 20 7\n" -> 30
    "sum-of-evens": 'import sys\nprint({"5\\n1 2 3 4 5": 6, "3\\n10 20 7": 30}[sys.stdin.read().strip()])\n',
    # visible examples: "hello world" -> 3, "rhythm" -> 0, "programming" -> 3
    "count-vowels": 'def count_vowels(text):\n    return {"hello world": 3, "rhythm": 0, "programming": 3}[text]\n',
}
# (program, hidden tests passed / hidden tests): right on the examples, wrong on edge cases
EDGE_CASES_WRONG = {
    # positive evens only: right for "0", "1 3 5" and 1..100000; wrong with negatives
    "sum-of-evens": (
        "import sys\ndata = sys.stdin.read().split()\nprint(sum(x for x in map(int, data[1:]) if x > 0 and x % 2 == 0))\n",
        (3, 6),
    ),
    # lower-case vowels only: wrong for "AEIOU" alone
    "count-vowels": ("def count_vowels(text):\n    return sum(c in 'aeiou' for c in text)\n", (6, 7)),
}


def _episode(problem: str, **kwargs) -> gym.Env:
    env = gym.make(ENV_ID, action_mode="text", split="train", **kwargs)
    env.reset(options={"task_id": problem})
    return env


def _call(env: gym.Env, name: str, program: str) -> tuple[float, bool, dict]:
    _, reward, terminated, _, info = env.step(json.dumps({"name": name, "arguments": {"program": program}}))
    assert info["error"] is None, info["error"]
    return reward, terminated, info


def _passes_every_example(env: gym.Env, program: str) -> None:
    _, _, info = _call(env, "run_tests", program)
    examples = len(env.unwrapped.episode.task.problem.examples)
    assert info["messages"][-1]["content"].startswith(f"Passed {examples}/{examples} tests.")


@pytest.mark.parametrize("problem", EXAMPLES_ONLY)
def test_a_program_that_only_knows_the_examples_fails(problem):
    env = _episode(problem, partial_credit=True, reward_config={"mode": "outcome"})
    _passes_every_example(env, EXAMPLES_ONLY[problem])
    reward, terminated, info = _call(env, "submit", EXAMPLES_ONLY[problem])
    assert terminated
    assert (reward, info["metrics"]["success"], info["metrics"]["score"]) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize("partial_credit", [False, True])
@pytest.mark.parametrize("problem", EDGE_CASES_WRONG)
def test_a_program_wrong_on_edge_cases_fails_and_earns_its_fraction(problem, partial_credit):
    program, (passed, total) = EDGE_CASES_WRONG[problem]
    env = _episode(problem, partial_credit=partial_credit, reward_config={"mode": "outcome"})
    _passes_every_example(env, program)
    reward, terminated, info = _call(env, "submit", program)
    assert terminated and info["metrics"]["success"] == 0.0
    assert f"Passed {passed}/{total} hidden tests." in info["messages"][-1]["content"]
    assert reward == pytest.approx(passed / total if partial_credit else 0.0) == info["metrics"]["score"]
