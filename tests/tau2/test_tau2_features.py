"""The features observation of the tau2 envs hashes the ticket, not the policy every task shares."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from agentgym_envs.core.features import hashed_words
from agentgym_envs.scenarios.tau2.scenario import POLICY_HEADING


def test_task_features_are_the_ticket_alone(data_dir):
    env = gym.make("AgentGym/Tau2Retail-L0-v0", data_dir=data_dir, observation="features")
    obs, _ = env.reset(seed=0)
    encoder, prompt = env.unwrapped.features, env.unwrapped.episode.prompt
    ticket = prompt.split(POLICY_HEADING, 1)[0]
    assert ticket.startswith("TICKET") and len(ticket) < len(prompt) / 4
    np.testing.assert_array_equal(obs[encoder.slices["task"]], hashed_words(ticket, encoder.task_dim))


def test_tickets_that_differ_in_one_reason_have_clearly_different_task_features(data_dir):
    """Two cancellations, one 'no longer needed' and one 'ordered by mistake': their task bags
    are told apart far better than bags of the whole prompt, policy included, would be."""
    env = gym.make("AgentGym/Tau2Retail-L0-v0", data_dir=data_dir, observation="features")
    bags, whole = {}, {}
    for seed in range(20):
        obs, _ = env.reset(seed=seed)
        prompt = env.unwrapped.episode.prompt
        reason = "mistake" if "mistake" in prompt.split(POLICY_HEADING)[0] else "needed"
        bags.setdefault(reason, obs[env.unwrapped.features.slices["task"]])
        whole.setdefault(reason, hashed_words(prompt, env.unwrapped.features.task_dim))
    assert set(bags) == {"mistake", "needed"}
    assert float(whole["mistake"] @ whole["needed"]) > 0.99
    assert float(bags["mistake"] @ bags["needed"]) < 0.95
