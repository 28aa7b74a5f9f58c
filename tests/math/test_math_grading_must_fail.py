"""Math grading against answers worked out here from the question text (not taken from the
generator): the exact answer succeeds; a wrong answer fails, with partial credit inside the
10% window and none outside it."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import agentgym_envs  # noqa: F401  (registers the ids)
from agentgym_envs.evaluation import ExpertPolicy

ENV_ID = "AgentGym/Math-v0"
# task id -> (the question, its answer computed by hand from the question)
WORKED = {
    "train-0": ("What is the sum of the first 95 positive integers?", 95 * 96 // 2),
    "train-3": ("What is the sum of all integers from 15 to 72?", sum(range(15, 73))),
    "train-5": (
        "Chloe has 91 dollars, earns 70 dollars a day for 87 days, and then spends 18 dollars. "
        "How many dollars does Chloe have now?",
        91 + 70 * 87 - 18,
    ),
    "train-6": ("A baker makes 91 batches of 68 cookies each and sells 81 cookies. How many cookies are left?", 91 * 68 - 81),
    "train-10": ("Compute 20 * 36 + 34 * 79.", 20 * 36 + 34 * 79),
    "test-2": (
        "How much larger is the sum of the first 858 positive integers than the sum of the first 712?",
        858 * 859 // 2 - 712 * 713 // 2,
    ),
    "test-4": (
        "A club collects 686 dollars from each of its 147 members, pays a fee of 512 dollars, and splits "
        "what remains equally among 395 projects. How many dollars does each project get?",
        (686 * 147 - 512) // 395,
    ),
}


def _env(task_id: str):
    split = task_id.split("-")[0]
    env = gym.make(ENV_ID, action_mode="text", split=split, reward_config={"mode": "outcome"})
    observation, info = env.reset(options={"task_id": task_id})
    assert WORKED[task_id][0] in observation
    return env, info


def _submit(task_id: str, value: float) -> tuple[float, dict]:
    env, _ = _env(task_id)
    _, reward, terminated, _, info = env.step(json.dumps({"name": "submit_answer", "arguments": {"value": value}}))
    assert terminated
    return reward, info


@pytest.mark.parametrize("task_id", WORKED)
def test_the_expert_submits_the_worked_answer_and_succeeds(task_id):
    env, info = _env(task_id)
    expert = ExpertPolicy(env)
    done = False
    while not done:
        action = expert(None, info)
        _, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    assert json.loads(action) == {"name": "submit_answer", "arguments": {"value": float(WORKED[task_id][1])}}
    assert info["metrics"]["success"] == 1.0 and reward == 1.0


@pytest.mark.parametrize("task_id", WORKED)
def test_the_worked_answer_submitted_at_once_succeeds(task_id):
    reward, info = _submit(task_id, WORKED[task_id][1])
    assert (reward, info["metrics"]["success"]) == (1.0, 1.0)


@pytest.mark.parametrize("task_id", WORKED)
@pytest.mark.parametrize("factor, score", [(1.05, 0.75), (0.98, 0.9), (1.099, 0.505)])
def test_a_wrong_answer_inside_the_window_earns_partial_credit_but_fails(task_id, factor, score):
    reward, info = _submit(task_id, WORKED[task_id][1] * factor)
    assert info["metrics"]["success"] == 0.0
    assert reward == pytest.approx(score) == info["metrics"]["score"]


@pytest.mark.parametrize("task_id", WORKED)
def test_an_off_by_one_answer_fails(task_id):
    reward, info = _submit(task_id, WORKED[task_id][1] + 1)
    assert info["metrics"]["success"] == 0.0 and reward < 1.0


@pytest.mark.parametrize("task_id", WORKED)
@pytest.mark.parametrize("factor", [1.11, 0.85, 2.0, -1.0, 0.0])
def test_a_wrong_answer_outside_the_window_scores_nothing(task_id, factor):
    reward, info = _submit(task_id, WORKED[task_id][1] * factor)
    assert (reward, info["metrics"]["success"], info["metrics"]["score"]) == (0.0, 0.0, 0.0)


def test_ending_without_an_answer_fails():
    env, _ = _env("train-5")
    call = json.dumps({"name": "calculator", "arguments": {"operation": "multiply", "a": 70, "b": 87}})
    for _ in range(env.unwrapped.max_turns):
        _, reward, terminated, truncated, info = env.step(call)
    assert truncated and not terminated
    assert (reward, info["metrics"]["success"], info["metrics"]["score"]) == (0.0, 0.0, 0.0)
