"""RLlib's PPO trains on an agentgym env through the documented wrappers. RLlib pins its own
gymnasium, so it lives in its own install: ``make test-rllib`` runs the suite there."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("ray.rllib", reason="RLlib is not installed here: `make test-rllib` runs this test")
from agentgym_envs.scale.rllib import bag_of_tokens_env, ppo_config  # noqa: E402

CS = "AgentGym/CustomerSupport-v0"


def test_the_rllib_env_creator_gives_a_box_observation():
    env = bag_of_tokens_env({"env_id": CS, "split": "test"})
    observation, _ = env.reset(seed=0)
    assert env.observation_space.contains(observation) and env.unwrapped.split == "test"


def test_rllib_ppo_runs_a_training_iteration():
    algo = ppo_config(CS, batch_size=128).build_algo()
    try:
        result = algo.train()
    finally:
        algo.stop()
    assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 128
    assert math.isfinite(result["learners"]["default_policy"]["total_loss"])
