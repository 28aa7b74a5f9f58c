"""The single-agent team adapter on the features observation: the vector, flat admissible
actions with repeats masked out, and the trainers' features path."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import agentgym_envs  # noqa: F401  (registers the env ids)
from agentgym_envs.multiagent.policies import ExpertTeam
from agentgym_envs.multiagent.support_team_v0 import single_agent_env
from agentgym_envs.wrappers import FlatDiscreteAction
from trainers.lifecycle import train
from trainers.run import TrainRequest, features_kwargs

L0 = "AgentGym/SupportTeam-L0-v0"


def flat_env(env_id: str = L0) -> FlatDiscreteAction:
    """The adapter as the trainers' features path makes it."""
    return FlatDiscreteAction(gym.make(env_id, observation="features", mask_repeats=True), layout="admissible", capacity=32)


def expert_episode(env: FlatDiscreteAction, seed: int):
    """``(observation, info, flat expert action)`` along one expert-team episode, and its last info."""
    active = env.unwrapped
    expert = ExpertTeam(active.team)
    observation, info = env.reset(seed=seed)
    done = False
    while not done:
        action = env.index(expert(active.base.holder, None, {}))
        yield observation, info, action
        observation, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    yield observation, info, None


def test_the_env_checkers_pass_on_flat_features():
    def env() -> FlatDiscreteAction:  # without a spec: gymnasium's checker remakes an env from its spec
        return FlatDiscreteAction(single_agent_env(observation="features", mask_repeats=True, level=0), "admissible", 32)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env(), skip_render_check=True)
        sb3_check_env(env(), warn=False)


def test_the_default_observation_is_still_agent_id_and_token_ids():
    env = gym.make(L0)
    observation, _ = env.reset(seed=0)
    assert observation.dtype == np.int64 and observation[0] == 0
    with pytest.raises(ValueError, match="observation must be one of"):
        gym.make(L0, observation="pixels")
    with pytest.raises(ValueError, match="action_mode=text"):
        gym.make(L0, observation="text")  # the text view is a language model's: text actions


def test_features_end_with_the_holders_one_hot_and_the_expert_team_solves_every_ticket():
    env = flat_env("AgentGym/SupportTeam-v0")
    active = env.unwrapped
    agents = active.base.possible_agents
    holders = set()
    for seed in range(10):
        for observation, info, action in expert_episode(env, seed):
            assert env.observation_space.contains(observation)
            if action is None:
                assert info["metrics"]["success"] == 1.0
                continue
            one_hot = observation[active.features.slices["agent"]]
            assert one_hot.sum() == 1.0 and agents[int(one_hot.argmax())] == active.base.holder
            holders.add(active.base.holder)
            assert info["action_mask"][action], "repeats masked out never hide the expert's call"
    assert len(holders) == 4


def test_masked_in_flat_actions_are_new_valid_calls_of_the_holder():
    env = flat_env("AgentGym/SupportTeam-v0")
    active = env.unwrapped
    rng = np.random.default_rng(0)
    for seed in range(4):
        _, info = env.reset(seed=seed)
        done = False
        while not done:
            episode, holder = active.episode, active.base.holder
            allowed = np.flatnonzero(info["action_mask"])
            assert allowed.size
            for index in allowed:
                structured = env.action(index)
                call, why = episode.decode(structured)
                assert call is not None, why
                assert episode.problem(call, active.base.scenario.holdings[holder]) is None
                tool = int(structured[0])
                assert tuple(structured[1 : 1 + active.tool_arities[tool]]) not in episode.made_rows[tool]
            _, _, terminated, truncated, info = env.step(int(rng.choice(allowed)))
            done = terminated or truncated


def test_features_kwargs_gives_the_adapter_the_features_path():
    assert features_kwargs(L0, {}, True) == {"observation": "features", "mask_repeats": True}
    assert features_kwargs("CartPole-v1", {}, True) == {}


@pytest.mark.parametrize("algo, overrides", [
    ("sb3-maskable-ppo", {"n_envs": 2, "n_steps": 64, "batch_size": 64, "n_epochs": 1}),
    ("ppo", {"observation": "features", "num_envs": 2, "num_steps": 32, "eval_every_steps": 0}),
])
def test_trainers_train_on_the_features_of_the_team(tmp_path, algo, overrides):
    result = train(TrainRequest(L0, algo=algo, total_steps=256 if algo == "ppo" else 512, device="cpu",
                                run_root=str(tmp_path), eval_episodes=2, progress=False, overrides=overrides))
    assert result.test_metrics["episodes"] == 2
    assert result.test_metrics["invalid_calls"] == 0 == result.train_metrics["invalid_calls"]
