from __future__ import annotations

import functools

import gymnasium as gym
import numpy as np
import pytest

from trainers.run import make_env
from trainers.torch_policy import network_env
from trainers.vector_env import SyncStatsVectorEnv


def assert_same(a, b) -> None:
    """Equal observations, arrays and (nested) infos, except the episodes' wall-clock durations."""
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for key in a:
            if key != "t":
                assert_same(a[key], b[key])
    elif isinstance(a, tuple) or (isinstance(a, np.ndarray) and a.dtype == object):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("env", ["CartPole-v1", "AgentGym/CustomerSupport-v0"])
def test_the_sync_vector_env_steps_as_gymnasiums_with_recorded_episode_statistics(env):
    base = functools.partial(make_env, env, "train", {})
    factories = [functools.partial(network_env, base, 64, 8, "bag")] * 4
    ours = SyncStatsVectorEnv(factories)
    theirs = gym.wrappers.vector.RecordEpisodeStatistics(
        gym.vector.SyncVectorEnv(factories, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP))
    assert_same(ours.reset(seed=3), theirs.reset(seed=3))
    rng = np.random.default_rng(0)
    finished = 0
    for step in range(300):
        actions = ours.action_space.sample() if step % 7 else np.zeros_like(ours.action_space.sample())
        if step == 150:  # a reset of some envs mid-way restarts their statistics
            mask = rng.random(4) < 0.5
            mask[0] = True
            assert_same(ours.reset(options={"reset_mask": mask.copy()}), theirs.reset(options={"reset_mask": mask.copy()}))
        ours_step, theirs_step = ours.step(actions), theirs.step(actions)
        assert_same(ours_step, theirs_step)
        finished += int(ours_step[4].get("_episode", np.zeros(4)).sum())
    assert finished >= 4
