"""RayVectorEnv gives SyncVectorEnv's trajectories (observations, rewards, flags, infos) for
the same seeds and actions, in every autoreset mode, and survives a worker that dies."""

from __future__ import annotations

import functools
import logging
import os
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import agentgym_envs  # noqa: F401  (registers the env ids)
from agentgym_envs.evaluation.vector_random import masked_random_actions
from agentgym_envs.scale import RayVectorEnv

CS = "AgentGym/CustomerSupport-v0"


def short(value) -> str:
    return repr(value)[:120]


def assert_same(a, b, path="") -> None:
    """Deep equality of vector-env outputs: dicts, arrays (object arrays element by element), tuples."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), f"{path}: keys {sorted(a)} != {sorted(b)}"
        for key in a:
            assert_same(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, f"{path}: {short(a)} != {short(b)}"
        if a.dtype == object:
            for x, y in zip(a, b):
                assert_same(x, y, path)
        else:
            np.testing.assert_array_equal(a, b, err_msg=path)
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), f"{path}: {short(a)} != {short(b)}"
        for x, y in zip(a, b):
            assert_same(x, y, path)
    else:
        assert a == b, f"{path}: {short(a)} != {short(b)}"


def play(envs: gym.vector.VectorEnv, steps: int, seed: int = 0) -> list[tuple]:
    """Every output of ``steps`` vector steps under masked random actions drawn from ``seed``;
    with autoreset disabled, ended episodes are reset through ``reset_mask``."""
    rng = np.random.default_rng(seed)
    nvec = envs.single_action_space.nvec
    obs, info = envs.reset(seed=seed)
    outputs, masks = [(obs, info)], info["action_mask"]
    for _ in range(steps):
        output = envs.step(masked_random_actions(masks, nvec, rng))
        outputs.append(output)
        obs, _, terminated, truncated, info = output
        masks, ended = info["action_mask"], terminated | truncated
        if envs.metadata["autoreset_mode"] == AutoresetMode.DISABLED and ended.any():
            obs, info = envs.reset(options={"reset_mask": ended})
            outputs.append((obs, info))
            masks[ended] = info["action_mask"][ended]
    return outputs


def make_cs() -> gym.Env:
    return gym.make(CS)


@pytest.mark.parametrize("mode", list(AutoresetMode))
def test_same_trajectories_as_sync_vector_env(mode):
    sync = gym.vector.SyncVectorEnv([make_cs] * 5, autoreset_mode=mode)
    remote = RayVectorEnv([make_cs] * 5, num_workers=2, autoreset_mode=mode)
    try:
        expected, got = play(sync, 40), play(remote, 40)
    finally:
        sync.close()
        remote.close()
    assert remote.blocks == [[0, 1, 2], [3, 4]]
    assert sum(output[2].sum() + output[3].sum() for output in expected if len(output) == 5) > 5  # episodes ended
    assert len(got) == len(expected)
    for step, (a, b) in enumerate(zip(expected, got)):
        assert_same(a, b, f"output {step}")


def test_same_trajectories_as_async_vector_env():
    # gymnasium's shared memory loses Text observations (they come back as padding): pipes only
    asynchronous = gym.vector.AsyncVectorEnv([make_cs] * 2, shared_memory=False)
    remote = RayVectorEnv([make_cs] * 2, num_workers=1)
    try:
        expected, got = play(asynchronous, 25, seed=3), play(remote, 25, seed=3)
    finally:
        asynchronous.close()
        remote.close()
    for step, (a, b) in enumerate(zip(expected, got)):
        assert_same(a, b, f"output {step}")


class DiesAtStep(gym.Wrapper):
    """Ends its process abruptly at its ``step``-th step, once (a marker file remembers)."""

    def __init__(self, env: gym.Env, step: int, marker: Path) -> None:
        super().__init__(env)
        self.steps, self.die_at, self.marker = 0, step, marker

    def step(self, action):
        self.steps += 1
        if self.steps == self.die_at and not self.marker.exists():
            self.marker.touch()
            os._exit(1)
        return super().step(action)


def make_dying_cs(step: int, marker: Path) -> gym.Env:
    return DiesAtStep(gym.make(CS), step, marker)


@pytest.mark.parametrize("mode", list(AutoresetMode))
def test_a_dead_worker_is_restarted_and_its_episodes_rerun(mode, tmp_path, caplog):
    dying = functools.partial(make_dying_cs, 12, tmp_path / "died")
    sync = gym.vector.SyncVectorEnv([make_cs] * 4, autoreset_mode=mode)
    remote = RayVectorEnv([make_cs, make_cs, dying, make_cs], num_workers=2, autoreset_mode=mode)
    try:
        expected = play(sync, 25)
        with caplog.at_level(logging.WARNING, logger="agentgym_envs.scale.ray_vector"):
            got = play(remote, 25)
    finally:
        sync.close()
        remote.close()
    assert (tmp_path / "died").exists() and remote.restarts == 1
    assert "Ray env worker 1 (sub-environments 2-3) died" in caplog.text and "re-ran its 2 episodes" in caplog.text
    assert len(got) == len(expected)
    for step, (a, b) in enumerate(zip(expected, got)):
        assert_same(a, b, f"output {step}")


def test_a_worker_death_beyond_max_restarts_is_a_clear_error(tmp_path):
    dying = functools.partial(make_dying_cs, 2, tmp_path / "died")
    remote = RayVectorEnv([dying], num_workers=1, max_restarts=0)
    try:
        with pytest.raises(RuntimeError, match="restarts allowed"):
            play(remote, 3)
    finally:
        remote.close()


def test_call_and_get_attr_reach_every_sub_environment():
    remote = RayVectorEnv([make_cs] * 3, num_workers=2)
    try:
        remote.reset(seed=0)
        masks = remote.call("action_masks")
        assert len(masks) == 3 and remote.get_attr("max_turns") == (10, 10, 10)
    finally:
        remote.close()


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="at least one env_fn"):
        RayVectorEnv([])
    remote = RayVectorEnv([make_cs] * 2, num_workers=1)
    try:
        with pytest.raises(ValueError, match="length must match num_envs=2"):
            remote.reset(seed=[1])
        with pytest.raises(TypeError, match="dtype=np.bool_"):
            remote.reset(options={"reset_mask": np.array([1, 0])})
    finally:
        remote.close()
