"""Vectorized environments and Stable-Baselines3 on the wrapped environment."""

import gymnasium as gym
import numpy as np
import torch

from agentgym_envs.wrappers import BagOfTokensObservation, FlatDiscreteAction

CS = "AgentGym/CustomerSupport-v0"


def test_async_vector_env_gives_the_sync_observations_step_by_step():
    sync = gym.make_vec(CS, num_envs=2, vectorization_mode="sync")
    asynchronous = gym.make_vec(CS, num_envs=2, vectorization_mode="async", vector_kwargs={"shared_memory": False})
    observations = [sync.reset(seed=0)[0], asynchronous.reset(seed=0)[0]]
    assert tuple(observations[0]) == tuple(observations[1]) and observations[0][0].startswith("TICKET")
    rng = np.random.default_rng(0)
    for _ in range(15):
        action = np.stack([rng.integers(sync.single_action_space.nvec) for _ in range(2)])
        sync_step, async_step = sync.step(action), asynchronous.step(action)
        assert tuple(sync_step[0]) == tuple(async_step[0])
        assert np.array_equal(sync_step[1], async_step[1]) and np.array_equal(sync_step[4]["action_mask"], async_step[4]["action_mask"])
    sync.close()
    asynchronous.close()


def test_sb3_ppo_trains_a_few_thousand_steps():
    from stable_baselines3 import PPO

    model = PPO("MlpPolicy", BagOfTokensObservation(gym.make(CS)), n_steps=512, batch_size=128, n_epochs=2, seed=0)
    before = [parameter.detach().clone() for parameter in model.policy.parameters()]
    model.learn(2048)
    assert model.num_timesteps >= 2048
    assert all(not torch.equal(old, new) for old, new in zip(before, model.policy.parameters()))  # every layer trained


def test_maskable_ppo_only_takes_allowed_flat_actions():
    from sb3_contrib import MaskablePPO

    env = FlatDiscreteAction(BagOfTokensObservation(gym.make(CS)))
    model = MaskablePPO("MlpPolicy", env, n_steps=256, batch_size=64, n_epochs=1, seed=0)
    model.learn(512)
    obs, info = env.reset(seed=3)
    for _ in range(5):
        masks = env.action_masks()
        action, _ = model.predict(obs, action_masks=masks)
        assert masks[int(action)]
        obs, _, terminated, truncated, info = env.step(action)
        assert info["valid"]
        if terminated or truncated:
            break
