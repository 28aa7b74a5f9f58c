"""Small contract details: the per-dimension mask Gymnasium's sampler takes, and outcome reasons
written as sentences."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import agentgym_envs  # noqa: F401  (registers the ids)
from agentgym_envs.evaluation import ExpertPolicy, RandomPolicy


def test_action_space_samples_with_the_env_mask_stay_inside_it():
    env = gym.make("AgentGym/CustomerSupport-v0")
    env.reset(seed=0)
    mask = env.unwrapped.sample_mask()
    assert [len(m) for m in mask] == list(env.action_space.nvec) and all(m.dtype == np.int8 for m in mask)
    assert np.array_equal(np.concatenate(mask).astype(bool), env.unwrapped.action_masks())
    for _ in range(50):
        action = env.action_space.sample(mask=mask)
        assert all(m[a] == 1 for m, a in zip(mask, action))


def final_info(policy_class, task_seed: int, **kwargs) -> dict:
    """The last info of one CustomerSupport-v0 episode played by ``policy_class``."""
    env = gym.make("AgentGym/CustomerSupport-v0")
    _, info = env.reset(seed=task_seed)
    policy, done = policy_class(env.unwrapped, **kwargs), False
    while not done:
        _, _, terminated, truncated, info = env.step(policy(None, info))
        done = terminated or truncated
    return info


def test_outcome_reason_is_a_sentence_naming_the_missing_effects():
    reason = final_info(RandomPolicy, 0, seed=0)["outcome"]["reason"]
    assert reason.startswith("The ticket was not resolved: it still needed to ") and reason.endswith(".")
    assert "(" not in reason and "'" not in reason


def test_resolved_ticket_reason():
    assert final_info(ExpertPolicy, 1)["outcome"]["reason"] == "The ticket was resolved as required."
