"""Math-v0 follows the environment contract: registration, spaces, checkers, determinism."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import agentgym_envs  # noqa: F401  (registers the ids)
from agentgym_envs.evaluation import ExpertPolicy, RandomPolicy, run_episode
from agentgym_envs.wrappers import BagOfTokensObservation, FlatDiscreteAction, TokenIdsObservation

ENV_ID = "AgentGym/Math-v0"


def test_make_without_import_prefix_works():
    env = gym.make("agentgym_envs:AgentGym/Math-v0")
    observation, info = env.reset(seed=0)
    assert observation.startswith("PROBLEM\n")
    assert info["task_id"].startswith("train-")


@pytest.mark.parametrize("action_mode", ["structured", "text"])
def test_gymnasium_env_checker_passes(action_mode):
    check_env(gym.make(ENV_ID, action_mode=action_mode).unwrapped, skip_render_check=True)


def test_sb3_env_checker_passes_through_bag_of_tokens():
    sb3_check_env(BagOfTokensObservation(gym.make(ENV_ID)), warn=True)


def test_token_ids_and_flat_discrete_wrappers_wrap_math():
    env = FlatDiscreteAction(TokenIdsObservation(gym.make(ENV_ID)))
    observation, _ = env.reset(seed=3)
    assert env.observation_space.contains(observation)
    assert env.action_masks().any()


def test_structured_action_space_is_tool_then_three_entity_slots():
    env = gym.make(ENV_ID)
    base = env.unwrapped
    assert base.tool_names == ["calculator", "evaluate_expression", "sum_1_to_n", "submit_answer"]
    assert list(env.action_space.nvec) == [4, 32, 32, 32]
    env.reset(seed=0)
    assert base.action_masks().shape == (4 + 3 * 32,)


def _rollout(action_mode: str, seed: int, actions: list | None = None) -> tuple[list, list, list, dict]:
    """Play one episode (random actions unless ``actions`` is given); return what happened."""
    env = gym.make(ENV_ID, action_mode=action_mode)
    agent = RandomPolicy(env, seed=seed)
    observation, info = env.reset(seed=seed)
    observations, rewards, taken = [observation], [], []
    done = False
    while not done:
        action = actions[len(taken)] if actions is not None else agent(observation, info)
        taken.append(action)
        observation, reward, terminated, truncated, info = env.step(action)
        observations.append(observation)
        rewards.append(reward)
        done = terminated or truncated
    return taken, observations, rewards, info["metrics"]


@pytest.mark.parametrize("action_mode", ["structured", "text"])
@pytest.mark.parametrize("seed", [0, 7, 42])
def test_same_seed_and_actions_give_same_observations_rewards_and_metrics(action_mode, seed):
    actions, observations, rewards, metrics = _rollout(action_mode, seed)
    _, observations_again, rewards_again, metrics_again = _rollout(action_mode, seed, actions)
    assert observations_again == observations
    assert rewards_again == rewards
    assert metrics_again == metrics


def test_both_action_modes_reach_the_same_outcome_for_the_expert():
    for seed in range(20):
        results = []
        for action_mode in ("structured", "text"):
            env = gym.make(ENV_ID, action_mode=action_mode, split="test")
            _, metrics = run_episode(env, ExpertPolicy(env), seed=seed)
            results.append({k: metrics[k] for k in ("success", "score", "turns", "correct_calls", "answer_error")})
        assert results[0] == results[1]


def test_task_id_option_picks_that_problem():
    env = gym.make(ENV_ID)
    _, info = env.reset(options={"task_id": "test-17"})
    assert info["task_id"] == "test-17"


def test_entity_table_stops_at_capacity_without_errors_in_long_episodes():
    env = gym.make(ENV_ID, action_mode="text", max_turns=60)
    base = env.unwrapped
    env.reset(seed=1)
    for k in range(60):
        call = json.dumps({"name": "sum_1_to_n", "arguments": {"n": k + 1}})
        _, _, terminated, truncated, info = env.step(call)
        assert info["valid"] and info["error"] is None
    assert truncated and not terminated
    assert len(base.episode.entities) == base.scenario.max_entities
    assert info["metrics"]["answered"] == 0.0
    assert info["metrics"]["answer_error"] == 1.0


def test_revealed_results_become_number_entities_usable_as_operands():
    env = gym.make(ENV_ID)
    base = env.unwrapped
    env.reset(options={"task_id": "train-5"})  # 91 + 70 * 87 - 18
    rows_before = len(base.episode.entities)
    multiply = base.episode.entities.find("operation", "multiply")
    seventy, eighty_seven = base.episode.entities.find("number", 70), base.episode.entities.find("number", 87)
    _, _, _, _, info = env.step(np.array([0, multiply, seventy, eighty_seven]))
    assert info["error"] is None and info["correct"]
    assert len(base.episode.entities) == rows_before + 1
    assert base.episode.entities.rows[-1].value == 6090
