"""The expert solves everything, random play does not, and answers earn partial credit."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import agentgym_envs  # noqa: F401
from agentgym_envs.evaluation import evaluate
from agentgym_envs.scenarios.math.grading import answer_score

ENV_ID = "AgentGym/Math-v0"


@pytest.mark.parametrize("split", ["train", "test"])
def test_expert_solves_200_problems_exactly_with_only_right_calls(split):
    metrics = evaluate(ENV_ID, "expert", episodes=200, split=split)
    assert metrics["success"] == 1.0
    assert metrics["tool_reliability"] == 1.0
    assert metrics["answer_error"] == 0.0
    assert metrics["invalid_calls"] == 0.0


@pytest.mark.parametrize("split", ["train", "test"])
def test_expert_solves_problems_in_text_mode_too(split):
    assert evaluate(ENV_ID, "expert", episodes=60, split=split, action_mode="text")["success"] == 1.0


@pytest.mark.parametrize("split", ["train", "test"])
def test_random_policy_is_far_below_the_expert(split):
    metrics = evaluate(ENV_ID, "random", episodes=200, split=split)
    assert metrics["success"] < 0.1
    assert metrics["tool_reliability"] < 0.2


@pytest.mark.parametrize(
    "submitted, expected, score",
    [
        (100, 100, 1.0),
        (100.0000000001, 100, 1.0),
        (105, 100, 0.75),
        (95, 100, 0.75),
        (110, 100, 0.5),
        (110.01, 100, 0.0),
        (-100, 100, 0.0),
        (0, 0, 1.0),
        (0.05, 0, 0.75),
        (None, 100, 0.0),
    ],
)
def test_partial_credit_is_linear_from_one_to_a_half_within_ten_percent(submitted, expected, score):
    assert answer_score(submitted, expected) == pytest.approx(score)


def _submit(value, reward_config=None) -> tuple[float, dict]:
    """Submit ``value`` to problem train-5 (answer 6163) as the first call."""
    env = gym.make(ENV_ID, action_mode="text", reward_config=reward_config)
    env.reset(options={"task_id": "train-5"})
    _, reward, terminated, _, info = env.step(json.dumps({"name": "submit_answer", "arguments": {"value": value}}))
    assert terminated
    return reward, info


def test_an_answer_within_ten_percent_earns_partial_credit_but_not_success():
    reward, info = _submit(6163 * 1.04, {"mode": "outcome"})
    assert reward == pytest.approx(0.8)
    assert info["metrics"]["success"] == 0.0
    assert info["metrics"]["score"] == pytest.approx(0.8)
    assert info["metrics"]["answer_error"] == pytest.approx(0.04)


def test_default_rewards_are_the_answer_score_plus_small_shaping():
    exact, info = _submit(6163)
    assert exact == pytest.approx(1.0 + 0.05)
    assert info["metrics"]["success"] == 1.0
    wrong, info = _submit(100_000)  # relative error 15, reported capped at 1
    assert wrong == pytest.approx(-0.02)
    assert info["metrics"]["answer_error"] == 1.0


def test_a_result_off_the_solution_path_is_an_incorrect_call():
    env = gym.make(ENV_ID, action_mode="text")
    env.reset(options={"task_id": "train-5"})  # 91 + 70 * 87 - 18
    call = {"name": "calculator", "arguments": {"operation": "multiply", "a": 70, "b": 87}}
    _, on_path, _, _, info = env.step(json.dumps(call))
    assert info["correct"] and on_path == pytest.approx(0.05)
    swapped = {"name": "calculator", "arguments": {"operation": "multiply", "a": 87, "b": 70}}
    _, again, _, _, info = env.step(json.dumps(swapped))
    assert not info["correct"] and again == pytest.approx(-0.02)  # the same value twice earns once
    off = {"name": "calculator", "arguments": {"operation": "add", "a": 91, "b": 87}}
    _, off_path, _, _, info = env.step(json.dumps(off))
    assert not info["correct"] and off_path == pytest.approx(-0.02)
