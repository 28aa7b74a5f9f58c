"""The scripted expert solves every built-in problem in both modes; random play does not."""

from __future__ import annotations

import gymnasium as gym
import pytest

import agentgym_envs  # noqa: F401
from agentgym_envs.evaluation import ExpertPolicy, evaluate, run_episode
from agentgym_envs.scenarios.coding.problems import builtin_problems

ENV_ID = "AgentGym/Coding-v0"


@pytest.mark.parametrize("action_mode", ["structured", "text"])
@pytest.mark.parametrize("split", ["train", "test"])
def test_expert_tests_then_solves_every_problem_with_only_right_calls(split, action_mode):
    env = gym.make(ENV_ID, split=split, action_mode=action_mode)
    expert = ExpertPolicy(env)
    for problem in builtin_problems(split):
        _, metrics = run_episode(env, expert, options={"task_id": f"{problem.id}#1"})
        assert metrics["success"] == 1.0, problem.id
        assert metrics["tool_reliability"] == 1.0, problem.id
        assert metrics["submitted_after_testing"] == 1.0, problem.id
        assert metrics["run_tests_passed"] == len(problem.examples), problem.id


@pytest.mark.parametrize("split", ["train", "test"])
def test_random_policy_is_far_below_the_expert(split):
    metrics = evaluate(ENV_ID, "random", episodes=20, split=split)
    assert metrics["success"] < 0.6
    assert metrics["submitted_without_testing"] > 0.0
    assert metrics["submitted_without_testing"] + metrics["submitted_after_testing"] + metrics["never_submitted"] == 1.0
